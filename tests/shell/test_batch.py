"""``iceduck WAREHOUSE -c/-f/stdin``: what scripts and CI see (stdout, stderr, exit status)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TIMEOUT_S = 60


def iceduck(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "iceduck.cli", *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=env,
    )


def test_command_prints_a_box_and_writes_report_on_stderr(warehouse: Path) -> None:
    run = iceduck(
        str(warehouse),
        "-c",
        "SELECT id, customer FROM shop.orders WHERE id <= 2 ORDER BY id",
        "-c",
        "INSERT INTO shop.orders VALUES (9, 'zed', 0); DELETE FROM shop.orders WHERE id = 9;",
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == (
        "┌────────┬──────────┐\n"
        "│   id   │ customer │\n"
        "│ bigint │ varchar  │\n"
        "├────────┼──────────┤\n"
        "│      1 │ ann      │\n"
        "│      2 │ bob      │\n"
        "└────────┴──────────┘\n"
        "2 rows\n"
    )
    assert run.stderr.splitlines() == ["inserted 1 row into shop.orders", "deleted 1 row from shop.orders"]


def test_csv_and_json_output(warehouse: Path) -> None:
    run = iceduck(str(warehouse), "--csv", "-c", "SELECT * FROM shop.orders ORDER BY id")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "id,customer,amount\n1,ann,10.50\n2,bob,3.25\n3,,7.00\n"
    run = iceduck(str(warehouse), "--json", "-c", "SELECT id, customer, amount FROM shop.orders ORDER BY id")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [
        {"id": 1, "customer": "ann", "amount": 10.5},
        {"id": 2, "customer": "bob", "amount": 3.25},
        {"id": 3, "customer": None, "amount": 7},
    ]


def test_file_with_dot_commands_read_and_output(warehouse: Path, tmp_path: Path) -> None:
    (tmp_path / "inner.sql").write_text("SELECT count(*) AS n\nFROM shop.orders;\n")
    out = tmp_path / "out.csv"
    script = tmp_path / "script.sql"
    script.write_text(
        "-- a comment line\n"
        ".mode csv\n"
        f".output {out}\n"
        "SELECT id\n  FROM shop.orders\n  WHERE customer = 'bob';\n"
        ".output stdout\n"
        f".read {tmp_path / 'inner.sql'}\n"
        ".mode line\n"
        "SELECT 'x;y' AS s; -- a semicolon in a string ends nothing\n"
    )
    run = iceduck(str(warehouse), "-f", str(script))
    assert run.returncode == 0, run.stderr
    assert out.read_text() == "id\n2\n"
    assert run.stdout == "n\n3\ns = x;y\n"


def test_stdin_and_exit_status_on_error(warehouse: Path) -> None:
    run = iceduck(
        str(warehouse), "--csv", stdin="SELECT 1 AS one;\nSELECT * FROM shop.missing;\nSELECT 2 AS two;\n"
    )
    assert run.returncode == 1
    assert run.stdout == "one\n1\n"  # the statement after the error did not run
    assert run.stderr == "<stdin>:2: Error: table shop.missing not found in catalog 'iceduck'\n"
    syntax = iceduck(str(warehouse), "-c", "SELEC 1")
    assert syntax.returncode == 1
    assert syntax.stderr.startswith("Error: ") and len(syntax.stderr.splitlines()) == 1
    debug = iceduck(str(warehouse), "--debug", "-c", "SELECT * FROM shop.missing")
    assert debug.returncode == 1
    assert "Traceback (most recent call last)" in debug.stderr
    assert debug.stderr.rstrip().endswith("Error: table shop.missing not found in catalog 'iceduck'")
    missing = iceduck(str(warehouse), "-f", str(warehouse / "no-such.sql"))
    assert missing.returncode == 1 and missing.stderr.startswith("Error: cannot read ")


def test_a_call_that_rewrites_nothing_says_why_under_its_rows(warehouse: Path) -> None:
    run = iceduck(str(warehouse), "-c", "CALL system.rewrite_data_files('shop.orders')")
    assert run.returncode == 0, run.stderr
    assert "rewritten_data_files_count" in run.stdout
    assert run.stderr.startswith("nothing rewritten: ") and "rewrite-all" in run.stderr


def test_leaving_inside_a_transaction_says_it_was_rolled_back(warehouse: Path) -> None:
    run = iceduck(str(warehouse), "-c", "BEGIN; INSERT INTO shop.orders VALUES (77, 'tx', 0);")
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines()[-1] == (
        "Warning: the open transaction was rolled back on leaving (COMMIT keeps its changes)."
    )
    after = iceduck(str(warehouse), "--csv", "-c", "SELECT count(*) FROM shop.orders WHERE id = 77")
    assert after.stdout.splitlines()[-1] == "0"  # rolled back indeed
    committed = iceduck(str(warehouse), "-c", "BEGIN; SELECT 1; COMMIT;")
    assert "rolled back" not in committed.stderr
