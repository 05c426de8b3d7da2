"""Smoke run of bench/ at a tiny scale (5 appends of 500 rows), so the benchmark cannot rot.

No timing is asserted: speed targets are met in the benchmark, never asserted in tests. What
is asserted: the table has the events shape (one manifest per append, one file per day and
bucket), its metadata says what its files hold (partition tuples from Iceberg's transforms,
bounds from the footers), other readers read it, and run.py runs every engine it can find and
gets the same answers from each.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

import iceduck
from iceduck.formats.manifest_list import read_manifest_list
from iceduck.formats.manifests import read_manifest
from iceduck.formats.metadata_json import read_table_metadata
from iceduck.spec import values
from iceduck.spec.types import LongType, TimestamptzType

BENCH = Path(__file__).resolve().parents[2] / "bench"
DAYS, ROWS, DEVICES = 5, 500, 25


@pytest.fixture(scope="module")
def events() -> Any:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module("events")


@pytest.fixture(scope="module")
def table(events: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    shape = events.EventsShape(days=DAYS, rows_per_day=ROWS, devices=DEVICES)
    return events.build(tmp_path_factory.mktemp("bench") / "wh", shape, quiet=True)


def test_build_is_cached(events: Any, table: Any) -> None:
    before = Path(table.metadata_location).stat().st_mtime_ns
    again = events.build(table.warehouse, table.shape, quiet=True)
    assert again == table
    assert Path(again.metadata_location).stat().st_mtime_ns == before
    other = events.load(
        table.warehouse, events.EventsShape(days=DAYS + 1, rows_per_day=ROWS, devices=DEVICES)
    )
    assert other is None


def test_one_manifest_per_append_one_file_per_day_and_bucket(events: Any, table: Any) -> None:
    path = table.metadata_location
    md = read_table_metadata(Path(path).read_bytes(), path)
    assert len(md.snapshots) == DAYS
    assert [s.sequence_number for s in md.snapshots] == list(range(1, DAYS + 1))
    current = md.current_snapshot()
    assert current is not None and current.summary["total-records"] == str(DAYS * ROWS)
    manifests = read_manifest_list(Path(current.manifest_list).read_bytes(), current.manifest_list)
    assert len(manifests) == DAYS
    assert sorted(m.sequence_number for m in manifests) == list(range(1, DAYS + 1))
    entries = []
    for m in manifests:
        _, es = read_manifest(Path(m.manifest_path).read_bytes(), m.manifest_path, m, md.specs_by_id())
        assert {e.data_file.partition[0] for e in es} == {table.shape.first_epoch_day + m.sequence_number - 1}
        entries += es
    assert len(entries) == DAYS * table.shape.buckets == len(table.files)
    assert sum(e.data_file.record_count for e in entries) == DAYS * ROWS


def test_partition_tuples_and_bounds_describe_the_files(events: Any, table: Any) -> None:
    path = table.metadata_location
    md = read_table_metadata(Path(path).read_bytes(), path)
    current = md.current_snapshot()
    assert current is not None
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    for m in read_manifest_list(Path(current.manifest_list).read_bytes(), current.manifest_list):
        for e in read_manifest(Path(m.manifest_path).read_bytes(), m.manifest_path, m).entries:
            df = e.data_file
            day, bucket = df.partition
            lo, hi, n, days = con.execute(
                "SELECT min(device_id), max(device_id), count(*), "
                "list(DISTINCT (epoch_us(ts) // 86400000000)::INT) FROM read_parquet(?)",
                [df.file_path],
            ).fetchone()
            assert n == df.record_count
            assert days == [day]
            devices = con.execute("SELECT DISTINCT device_id FROM read_parquet(?)", [df.file_path]).fetchall()
            assert {events.bucket_of(d, table.shape.buckets) for (d,) in devices} == {bucket}
            assert values.from_bytes(LongType(), df.lower_bounds[1]) == lo
            assert values.from_bytes(LongType(), df.upper_bounds[1]) == hi
            ts_lo = values.from_bytes(TimestamptzType(), df.lower_bounds[2])
            assert day * 86_400_000_000 <= ts_lo < (day + 1) * 86_400_000_000
            assert df.value_counts == {1: n, 2: n, 3: n, 4: n}
            assert df.null_value_counts == {1: 0, 2: 0, 3: 0, 4: 0}


def test_pyiceberg_reads_the_table(table: Any) -> None:
    pytest.importorskip("sqlalchemy")
    sql = pytest.importorskip("pyiceberg.catalog.sql")
    catalog = sql.SqlCatalog(
        "iceduck", uri=f"sqlite:///{table.warehouse}/catalog.db", warehouse=f"file://{table.warehouse}"
    )
    loaded = catalog.load_table(table.identifier)
    assert loaded.metadata_location == table.metadata_location
    assert loaded.scan().to_arrow().num_rows == DAYS * ROWS
    # PyIceberg prunes by its own bucket hash: the right rows come back only if ours agrees
    device_7 = loaded.scan(row_filter="device_id = 7")
    assert len(list(device_7.plan_files())) == DAYS
    assert device_7.to_arrow().num_rows == DAYS * ROWS // DEVICES
    catalog.engine.dispose()


def test_run_script_smoke(table: Any, tmp_path: Path) -> None:
    """run.py over the tiny table; the DuckDB-extension peer only where bench/.venv exists."""
    peers = ["baseline", "iceduck", "pyiceberg"]
    if (BENCH / ".venv" / "bin" / "python").exists():
        peers.append("duckdb-iceberg")
    out = tmp_path / "results.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "run.py"),
            *("--days", str(DAYS), "--rows-per-day", str(ROWS), "--devices", str(DEVICES)),
            *("--warehouse", str(table.warehouse), "--peers", ",".join(peers), "--no-setup"),
            *("--repeat", "2", "--cold", "1", "--full-repeat", "1", "--full-cold", "1"),
            *("--json", str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "point" in proc.stdout and "full" in proc.stdout
    results = json.loads(out.read_text())["results"]
    baseline = results[0]
    assert baseline["measurements"]["point"]["count"] > 0
    assert baseline["measurements"]["full"]["count"] == DAYS * ROWS
    ran = [r for r in results if r["unavailable"] is None]
    for r in ran:
        if "planning" not in r["name"]:
            assert r["answers_match_baseline"] == {"point": True, "full": True}, r["name"]
    if "duckdb-iceberg" in peers:
        assert any("iceberg extension" in r["name"] for r in ran), proc.stdout
    if hasattr(iceduck, "connect"):  # once the connection API exists, iceduck must run
        assert any(r["name"] == f"iceduck {iceduck.__version__}" for r in ran), proc.stdout
