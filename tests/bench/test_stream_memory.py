"""Smoke run of bench/stream_memory.py on a small lineitem-shaped file, so the benchmark
cannot rot. No figure is asserted (targets are met in the benchmark, not in tests): each
form runs in its own process, reads every row and reports a peak and a first batch."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
ROWS = 20_000


@pytest.fixture(scope="module")
def stream_memory() -> Any:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module("stream_memory")


def test_every_form_reads_every_row(stream_memory: Any, tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    duckdb.connect().execute(
        f"COPY (SELECT i AS l_orderkey, i % 7 AS l_linenumber, 'x' || i AS l_comment "
        f"FROM range({ROWS}) t(i)) "
        f"TO '{source / 'lineitem.parquet'}'"
    )
    sec = stream_memory.run_section(0.01, 1, tmp_path / "wh", source)
    assert sec.mismatches == []
    figures = sec.data
    assert set(figures) == {"duckdb-reader", "duckdb-table", "iceduck-reader", "iceduck-table"}
    for figure in figures.values():
        assert figure["rows"] == ROWS
        assert figure["peak_mb"] >= figure["start_mb"] > 0
        assert 0 < figure["first_ms"] <= figure["total_ms"]
    assert [m.name for m in sec.measures] == [
        "SELECT * of lineitem SF0.01 via fetch_record_batch: time to the first batch",
        "peak RSS of SELECT * of lineitem SF0.01 via fetch_record_batch",
        "SELECT * of lineitem SF0.01 via fetch_arrow_table: time",
        "peak RSS of SELECT * of lineitem SF0.01 via fetch_arrow_table",
    ]
    # the peak memory rows carry their unit and the process's high-water marks
    peaks = [m for m in sec.measures if m.unit == "MB"]
    assert [(m.iceduck, m.limit) for m in peaks] == [
        (figures["iceduck-reader"]["peak_mb"], figures["duckdb-reader"]["peak_mb"]),
        (figures["iceduck-table"]["peak_mb"], figures["duckdb-table"]["peak_mb"]),
    ]
    # cached: a second build reuses the table
    assert stream_memory.build(0.01, tmp_path / "wh", source)[0] == tmp_path / "wh"
