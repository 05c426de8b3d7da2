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
import re
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


# -- run.py --only ...: every section of the one command at a tiny scale -------------------------

TPC_EXTENSIONS = ("duckdb_extension_tpch", "duckdb_extension_tpcds")
#: a few TPC-DS queries of different shapes (CTEs, rollups, correlated subqueries, unions)
TPCDS_QUERIES = "1,3,7,14,19,42,52,96"
MOR_ROWS = 20_000


def _bench_module(name: str) -> Any:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(name)


def _tpc_missing() -> str | None:
    """Why TPC-H/TPC-DS cannot run here: their data comes from extensions only bench/.venv has."""
    return _bench_module("common").peer_missing(*TPC_EXTENSIONS)


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run.py of every section at a tiny scale (one process: the sections share its start-up)."""
    tmp = tmp_path_factory.mktemp("suite")
    sections = ["mor", "writes", "commits", "cli"]
    if _tpc_missing() is None:
        sections = ["tpch", "tpcds", *sections]
    out = tmp / "suite.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "run.py"),
            *("--only", ",".join(sections), "--cache-dir", str(tmp / "cache"), "--no-setup"),
            *("--tpch-sf", "0.01", "--tpcds-sf", "0.01", "--tpcds-queries", TPCDS_QUERIES, "--tpc-runs", "1"),
            *("--mor-rows", str(MOR_ROWS), "--mor-runs", "1", "--writes-rows", "20000"),
            *("--commits", "3", "--commit-catalogs", "sqlite"),
            *("--cli-runs", "1", "--markdown", "--json", str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {"stdout": proc.stdout, "json": json.loads(out.read_text()), "sections": sections}


def _section(suite: dict[str, Any], name: str) -> dict[str, Any]:
    section = suite["json"]["sections"][name]
    assert section["mismatches"] == [], section["mismatches"]
    return section


def test_suite_prints_header_summary_and_markdown(suite: dict[str, Any]) -> None:
    out = suite["stdout"]
    assert "machine:" in out and "DuckDB" in out and "load average" in out
    assert "answers: every iceduck answer agreed with its baseline" in out
    assert "| measure | iceduck ms | limit ms | ratio | target | DuckDB ext ms | PyIceberg ms |" in out
    assert set(suite["json"]["sections"]) == set(suite["sections"])


def test_suite_checks_each_target_against_its_row(suite: dict[str, Any]) -> None:
    """bench/targets.py names the promises; the run says of each row with one whether it
    was kept, and counts them (the figures themselves are this run's, never asserted)."""
    out = suite["stdout"]
    assert re.search(r"^targets: \d+ met, \d+ missed$", out, re.M), out[-2000:]
    cli = next(m for m in suite["json"]["sections"]["cli"]["measures"] if m["name"].startswith("cold CLI"))
    assert re.fullmatch(r"<= 400 ms \((met|MISSED)\)", cli["target"]), cli
    verdict = "met" if cli["iceduck_ms"] <= 400 else "MISSED"
    assert f"{verdict:6} {cli['name']}: " in out


@pytest.mark.parametrize("name, count", [("tpch", 22), ("tpcds", len(TPCDS_QUERIES.split(",")))])
def test_tpc_answers_agree_with_duckdb_on_the_same_files(
    suite: dict[str, Any], name: str, count: int
) -> None:
    why = _tpc_missing()
    if why is not None:
        pytest.skip(f"TPC data is generated by DuckDB's tpch/tpcds extensions in bench/.venv: {why}")
    queries = _section(suite, name)["data"]["queries"]
    assert len(queries) == count
    for number, q in queries.items():
        assert q["limit_error"] is None and q["iceduck_error"] is None, (number, q)
        assert q["iceduck_rows"] == q["rows"], number
        for key, extra in q.items():
            if key.startswith("iceduck ") and isinstance(extra, dict):  # the PyIceberg-written load
                assert extra["error"] is None, (number, key, extra)


def test_tpch_loads_through_iceduck_and_pyiceberg(suite: dict[str, Any]) -> None:
    if _tpc_missing() is not None:
        pytest.skip(f"TPC data needs bench/.venv's tpch extension: {_tpc_missing()}")
    pytest.importorskip("pyiceberg.catalog.sql")
    load = _section(suite, "tpch")["data"]["load_ms"]
    assert set(load) == {"tpch", "tpch_pyiceberg"}
    assert len(load["tpch"]) == len(load["tpch_pyiceberg"]) == 8


def test_mor_answers_agree_with_the_deletes_applied_by_hand(suite: dict[str, Any]) -> None:
    tables = _section(suite, "mor")["data"]["tables"]
    assert len(tables) == 3 * 2 * 3  # kinds x layouts x fractions
    for name, t in tables.items():
        assert t["delete_files"] >= 1, name
        percent = int(name.rsplit("_", 1)[1])
        assert t["deleted"] == MOR_ROWS * percent // 100, name
        assert t["expected"][0] == MOR_ROWS - t["deleted"], name
        assert t["iceduck_ms"] is not None and t["iceduck_no_deletes_ms"] is not None, name


def test_writes_commits_and_cli_sections_run(suite: dict[str, Any]) -> None:
    writes = _section(suite, "writes")["data"]["statements"]
    assert [w["rowcount"] for w in writes if w["label"].startswith("INSERT")] == [20000, 20000]
    assert len(_section(suite, "commits")["data"]["catalogs"]["sqlite"]["ms"]) == 3
    cli = _section(suite, "cli")["data"]
    assert cli["iceduck CLI"]["ms"] is not None
