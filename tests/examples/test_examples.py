"""The runnable examples run, on tables Spark wrote."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.spark_warehouse import SparkWarehouse

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _run(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / args[0]), *args[1:]], capture_output=True, text=True, timeout=120
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
