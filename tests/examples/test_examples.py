"""The runnable examples run, on tables Spark wrote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.spark_warehouse import SparkWarehouse

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _run(*args: str, timeout: int = 120, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / args[0]), *args[1:]],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_inspect_table_on_a_merge_on_read_v3_table(spark_warehouse: SparkWarehouse) -> None:
    out = _run("inspect_table.py", str(spark_warehouse.path / "dml" / "mor_partitioned_v3"))
    assert "format v3" in out
    assert "cat = identity(field 3)" in out
    assert "position_deletes" in out and ".puffin" in out


def test_inspect_table_on_an_empty_table(spark_warehouse: SparkWarehouse) -> None:
    assert "no current snapshot" in _run("inspect_table.py", str(spark_warehouse.path / "fmt" / "empty_v2"))


def test_inspect_table_without_arguments_prints_usage() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "inspect_table.py")], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "python3 examples/inspect_table.py PATH" in done.stderr


def test_dbapi_tour(tmp_path: Path) -> None:
    out = _run("dbapi_tour.py", str(tmp_path / "wh"))
    assert "inserted 240 rows" in out
    assert "deleted 24 rows" in out
    assert "rows now: 216, at tag before_cleanup: 240" in out
    # rows per snapshot account for the deletion vectors
    rows = "[('append', 240, 0, 240), ('delete', 240, 24, 216)]"
    assert f"snapshots (operation, rows in files, deleted, live): {rows}" in out
    assert "live files by content (0 data, 1 position deletes and deletion vectors): [(0, 6), (1, 2)]" in out
    assert "data files: 1 read, 5 skipped (5 by partition" in out


def test_dataframes(tmp_path: Path) -> None:
    out = _run("dataframes.py", str(tmp_path / "wh"))
    assert "arrow: ['region', 'total', 'n'] 3 rows" in out
    assert "pl.DataFrame(cursor): (3, 3)" in out
    assert "batches: [100, 100, 100]" in out
    assert "pd.read_sql: 300" in out and "pl.read_database: 300" in out
    frames_in = "[('east', 100, 70), ('north', 101, 90), ('south', 100, 80), ('west', 1, 1)]"
    assert f"joined with a registered polars frame: {frames_in}" in out
    assert "from ?: (2,)" in out


@pytest.mark.spark
def test_spark_sharing(tmp_path: Path) -> None:
    """The example starts its own Spark (a second JVM) on its own warehouse, run as the README
    says: no class path given, ``spark_conf(warehouse, jars=True)`` assembles it, building the
    Jackson shim into an empty cache as on a user's first run."""
    cache = tmp_path / "cache"
    out = _run(
        "spark_sharing.py", str(tmp_path / "wh"), timeout=600, env={**os.environ, "ICEDUCK_CACHE": str(cache)}
    )
    assert "spark reads: 86 rows, total 6406.5" in out
    assert "iceduck reads: 87 rows, total 6448.5" in out
    assert "snapshots: [('append', 'iceduck'), ('delete', 'iceduck'), ('append', 'spark')]" in out
    assert [p.name.startswith("iceberg-jackson-shim-") for p in (cache / "jars").iterdir()] == [True]
