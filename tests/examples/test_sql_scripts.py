"""Every SQL script under sql/ runs in the shell as the README shows it, and says what it should."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

SQL = Path(__file__).resolve().parents[2] / "sql"


def _shell(cwd: Path, *args: str) -> str:
    return _run_shell(cwd, *args).stdout


def _run_shell(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # the installed ``iceduck`` command, as the README runs it (CI installs it with pip install -e)
    beside_python = Path(sys.executable).parent / "iceduck"  # pyenv may not have rehashed its shims
    command = shutil.which("iceduck") or (str(beside_python) if beside_python.exists() else None)
    assert command is not None, "the iceduck command is not installed: pip install -e ."
    done = subprocess.run([command, *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def test_every_script_is_tested() -> None:
    assert sorted(p.name for p in SQL.glob("*.sql")) == ["events.sql", "quickstart.sql"]


def test_quickstart_as_the_readme_runs_it(tmp_path: Path) -> None:
    """The README's tour as a script (tests/test_readme.py checks the statements are the tour's)."""
    (tmp_path / "sql").mkdir()
    shutil.copy(SQL / "quickstart.sql", tmp_path / "sql")
    first = _run_shell(tmp_path, "warehouse", "-f", "sql/quickstart.sql", "--csv")
    out = first.stdout
    # a first run says nothing that reads as an error (its DROP TABLE IF EXISTS finds no table)
    assert "does not exist" not in first.stderr and "rror" not in first.stderr, first.stderr
    assert (tmp_path / "warehouse" / "catalog.db").is_file()
    assert "c7,1491.00\nc10,1481.00\nc13,1471.00" in out  # the first aggregate
    assert "deleted 2,000 rows from shop.orders" in first.stderr
    assert "count_star()\n100000" in out  # time travel to the tag, before the DELETE
    assert "data files: 1 read, 559 skipped (492 by partition, 67 by column metrics)" in out  # EXPLAIN
    # running it again starts over (DROP ... PURGE) and gives the same answers
    again = _run_shell(tmp_path, "warehouse", "-f", "sql/quickstart.sql", "--csv")
    assert again.stdout.count("c7,1491.00") == 1 and "count_star()\n100000" in again.stdout
    assert "deleted 2,000 rows from shop.orders" in again.stderr


def test_events_query_of_the_metadata_indexing_post(tmp_path: Path) -> None:
    out = _shell(tmp_path, str(tmp_path / "wh"), "-f", str(SQL / "events.sql"), "--csv")
    assert "69,2021-10-01 10:26:22+00:00,2021-10-04 19:59:42+00:00" in out
    assert "manifests: 7 total, 4 read, 3 skipped" in out
    assert "data files: 4 read, 184 skipped (184 by partition, 0 by column metrics)" in out
