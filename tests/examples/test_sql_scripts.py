"""Every SQL script under sql/ runs in the shell as the README shows it, and says what it should."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from iceduck.sql.parse import split_statements

SQL = Path(__file__).resolve().parents[2] / "sql"


README = SQL.parent / "README.md"


def _shell(cwd: Path, *args: str) -> str:
    # the installed ``iceduck`` command, as the README runs it (CI installs it with pip install -e)
    beside_python = Path(sys.executable).parent / "iceduck"  # pyenv may not have rehashed its shims
    command = shutil.which("iceduck") or (str(beside_python) if beside_python.exists() else None)
    assert command is not None, "the iceduck command is not installed: pip install -e ."
    done = subprocess.run([command, *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_script_is_tested() -> None:
    assert sorted(p.name for p in SQL.glob("*.sql")) == ["events.sql", "quickstart.sql"]


def test_quickstart_as_the_readme_runs_it(tmp_path: Path) -> None:
    (tmp_path / "sql").mkdir()
    shutil.copy(SQL / "quickstart.sql", tmp_path / "sql")
    out = _shell(tmp_path, "warehouse", "-f", "sql/quickstart.sql", "--csv")
    assert (tmp_path / "warehouse" / "catalog.db").is_file()
    assert "Harlem,1,23.00" in out  # the first aggregate
    assert "2,2024-03-01 09:40:00+00:00,Upper Manhattan,23.00" in out  # after DELETE and UPDATE
    assert "trips_at_first_load\n4" in out  # time travel to the tag
    assert "manifests: 2 total, 1 read, 1 skipped" in out  # EXPLAIN
    # running it again starts over (DROP ... PURGE) and gives the same answers
    assert _shell(tmp_path, "warehouse", "-f", "sql/quickstart.sql", "--csv").count("Harlem,1,23.00") == 1


def test_events_query_of_the_metadata_indexing_post(tmp_path: Path) -> None:
    out = _shell(tmp_path, str(tmp_path / "wh"), "-f", str(SQL / "events.sql"), "--csv")
    assert "69,2021-10-01 10:26:22+00:00,2021-10-04 19:59:42+00:00" in out
    assert "manifests: 7 total, 4 read, 3 skipped" in out
    assert "data files: 4 read, 184 skipped (184 by partition, 0 by column metrics)" in out


def test_the_readme_set_up_commands_and_tour(tmp_path: Path) -> None:
    """The README's second set-up command as written, then its tour, statement by statement."""
    text = README.read_text()
    setup = re.search(r"## Set-up: two commands.*?```sh\n(.*?)```", text, re.S)
    assert setup is not None
    commands = [line.split("#")[0].strip() for line in setup.group(1).splitlines()]
    assert commands == ["pip install -e .", "iceduck warehouse -f sql/quickstart.sql"]
    shutil.copytree(SQL, tmp_path / "sql")
    assert "Harlem,1,23.00" in _shell(tmp_path, *commands[1].split()[1:], "--csv")

    tour = re.search(r"## A 60-second tour.*?```sql\n(.*?)```", text, re.S)
    assert tour is not None
    lines = [re.sub(r"^(iceduck|    \.\.\.)> ", "", line) for line in tour.group(1).splitlines()]
    sql = "\n".join(line for line in lines if not line.startswith(("$", "inserted")))
    statements = split_statements(sql)
    assert len(statements) == 9
    first = None
    for statement in statements:
        if "VERSION AS OF 1234567890" in statement:  # the tour's placeholder for a snapshot id
            statement = statement.replace("1234567890", str(first))
        out = _shell(tmp_path, "tour-wh", "--csv", "-c", statement.rstrip(";") + ";")
        if statement.startswith("INSERT"):
            first = _shell(
                tmp_path, "tour-wh", "--csv", "-c", "SELECT min(snapshot_id) FROM shop.orders.snapshots;"
            ).split()[-1]
        if statement.startswith("EXPLAIN"):
            assert "data files: 1 read" in out
