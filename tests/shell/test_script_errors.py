"""Errors of script runs: where the failing statement is, --continue-on-error, bad warehouses.

What a user running ``iceduck WAREHOUSE -f load.sql`` (or piping SQL in) sees when a statement
fails: the file and line it starts on, in the ``FILE:LINE: Error: ...`` form of psql and
sqlite3, and an exit code that says a statement failed, whether the run stopped or went on.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.shell.test_batch import TIMEOUT_S, iceduck

SCRIPT = (
    "-- a comment line, then a blank one\n"
    "\n"
    "SELECT 1 AS one;\n"
    "SELECT count(*)\n"
    "  FROM shop.orders\n"
    "  WHERE;\n"
    ".bogus\n"
    "SELECT 2 AS two; SELEC 3;\n"
    "SELECT 4 AS four;\n"
)


def test_a_failing_file_statement_names_its_file_and_line_and_stops_the_run(
    warehouse: Path, tmp_path: Path
) -> None:
    script = tmp_path / "load.sql"
    script.write_text(SCRIPT)
    run = iceduck(str(warehouse), "--csv", "-f", str(script))
    assert run.returncode == 1
    assert run.stdout == "one\n1\n"
    assert (
        run.stderr == f"{script}:4: Error: syntax error at end of input: expected a condition after WHERE\n"
    )


def test_continue_on_error_runs_every_statement_and_still_fails(warehouse: Path) -> None:
    run = iceduck(str(warehouse), "--csv", "--continue-on-error", stdin=SCRIPT)
    assert run.returncode == 1
    assert run.stdout == "one\n1\ntwo\n2\nfour\n4\n"
    assert run.stderr.splitlines() == [
        "<stdin>:4: Error: syntax error at end of input: expected a condition after WHERE",
        "<stdin>:7: Error: unknown command .bogus: try .help",
        '<stdin>:8: Error: syntax error at or near "SELEC" (line 1, column 1): did you mean SELECT?',
    ]
    fine = iceduck(str(warehouse), "--csv", "--continue-on-error", "-c", "SELECT 5 AS five")
    assert (fine.returncode, fine.stdout, fine.stderr) == (0, "five\n5\n", "")


def test_continue_on_error_goes_on_to_the_next_file(warehouse: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "first.sql", tmp_path / "second.sql"
    first.write_text("SELECT * FROM shop.nope;\n")
    second.write_text("SELECT 6 AS six;\n")
    stopped = iceduck(str(warehouse), "--csv", "-f", str(first), "-f", str(second))
    assert (stopped.returncode, stopped.stdout) == (1, "")
    went_on = iceduck(str(warehouse), "--csv", "--continue-on-error", "-f", str(first), "-f", str(second))
    assert (went_on.returncode, went_on.stdout) == (1, "six\n6\n")
    assert went_on.stderr.startswith(f"{first}:1: Error: ")


def test_read_names_the_file_it_reads(warehouse: Path, tmp_path: Path) -> None:
    inner = tmp_path / "inner.sql"
    inner.write_text("SELECT 1;\n\nSELECT * FROM shop.nope;\n")
    run = iceduck(str(warehouse), "--csv", "-c", f".read {inner}")
    assert run.returncode == 1
    assert run.stderr.startswith(f"{inner}:3: Error: table shop.nope not found")


def test_a_warehouse_that_is_a_file_is_refused_by_name(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# not a warehouse\n")
    run = iceduck(str(readme), "-c", "SELECT 1")
    assert run.returncode == 1
    assert run.stderr == (
        f"Error: the warehouse {readme} is a file, not a folder: "
        "name a warehouse folder (created if missing)\n"
    )
    assert readme.read_text() == "# not a warehouse\n"


def test_python_dash_m_iceduck_is_the_iceduck_command(warehouse: Path) -> None:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "iceduck",
            str(warehouse),
            "--csv",
            "-c",
            "SELECT count(*) AS n FROM shop.orders",
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert (run.returncode, run.stdout, run.stderr) == (0, "n\n3\n", "")
    version = subprocess.run([sys.executable, "-m", "iceduck", "--version"], capture_output=True, text=True)
    assert version.stdout.startswith("iceduck ")
