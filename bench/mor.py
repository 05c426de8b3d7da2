"""Merge-on-read: what reading a table with deletes costs, against reading its data files without.

One table per (kind, layout, fraction) in ``bench/.warehouse/mor-<rows>/`` (namespace ``mor``),
each ``CREATE TABLE ... AS`` the same deterministic ``rows`` rows (``id``, ``v``, ``s``), then
one delete of 1, 10 or 50% of them:

* kinds: ``dv`` deletion vectors (v3, ``write.delete.mode=merge-on-read``, iceduck's DELETE),
  ``position`` position-delete files (v2, same DELETE), ``equality`` an equality-delete file on
  ``id`` (iceduck's SQL never writes those, so it is written as Parquet with the field id and
  committed through iceduck's lower layers: ``SnapshotChanges`` + ``produce`` + the catalog);
* layouts: ``clustered`` (``id < N``: whole row groups go) and ``scattered`` (``id % k = 0``:
  every row group loses some rows).

The query is ``SELECT count(*), sum(v), count(DISTINCT s)``. The limit is DuckDB reading the
same data files without deletes (the target: iceduck with 10% deleted at most 1.25x of it, 1%
at most 1.10x). Also timed: iceduck on the snapshot before the delete (``VERSION AS OF``:
the same files, no deletes) to separate the cost of deletes from iceduck's other costs, DuckDB
1.5.5's Iceberg extension and PyIceberg where they read the deletes. Every answer is compared
with DuckDB computing the query over the data files ``WHERE NOT (<delete predicate>)``.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import (
    WAREHOUSE_ROOT,
    Measure,
    Section,
    Timing,
    duckdb_connection,
    fmt_ratio,
    peer_missing,
    peer_timing,
    ratio,
    read_marker,
    run_sql_peer,
    sql_list,
    table_lines,
    time_query,
    write_marker,
)

import iceduck

NAMESPACE = "mor"
KINDS = ("dv", "position", "equality")
LAYOUTS = ("clustered", "scattered")
PERCENTS = (1, 10, 50)
#: bump when the data or the deletes change, so cached tables are rebuilt
GENERATOR_VERSION = 1
DATA = (
    "SELECT i::BIGINT AS id, ((i * 7919) % 1000003) / 100.0 AS v, 's' || (i % 100003) AS s "
    "FROM range({rows}) r(i)"
)
QUERY = "SELECT count(*), sum(v), count(DISTINCT s) FROM {table}"
FORMAT_VERSION = {"dv": 3, "position": 2, "equality": 2}
SUM_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Variant:
    kind: str
    layout: str
    percent: int

    @property
    def table(self) -> str:
        return f"{self.kind}_{self.layout}_{self.percent}"

    def predicate(self, rows: int) -> str:
        """The deleted rows: a prefix of ids (clustered) or every k-th id (scattered)."""
        if self.layout == "clustered":
            return f"id < {rows * self.percent // 100}"
        return f"id % {100 // self.percent} = 0"


def variants(kinds: tuple[str, ...] = KINDS, percents: tuple[int, ...] = PERCENTS) -> list[Variant]:
    return [Variant(k, lay, p) for k in kinds for lay in LAYOUTS for p in percents]


# -- build -------------------------------------------------------------------------------------


def build(
    rows: int, chosen: list[Variant], root: Path | None = None, *, force: bool = False
) -> tuple[Path, dict[str, int]]:
    """The tables (cached by rows and variants); (warehouse, table -> snapshot before the delete)."""
    warehouse = root or WAREHOUSE_ROOT / f"mor-{rows}"
    key = {"rows": rows, "variants": [v.table for v in chosen], "generator": GENERATOR_VERSION}
    marker = None if force else read_marker(warehouse / "bench-mor.json", key)
    if marker is not None:
        return warehouse, marker["base_snapshots"]
    shutil.rmtree(warehouse, ignore_errors=True)
    warehouse.mkdir(parents=True)
    con = iceduck.connect(warehouse)
    con.execute(f"CREATE NAMESPACE {NAMESPACE}")
    base: dict[str, int] = {}
    for v in chosen:
        name = f"{NAMESPACE}.{v.table}"
        props = f"'format-version'='{FORMAT_VERSION[v.kind]}', 'write.delete.mode'='merge-on-read'"
        con.execute(f"CREATE TABLE {name} TBLPROPERTIES ({props}) AS {DATA.format(rows=rows)}")
        base[v.table] = int(con.execute(f"SELECT snapshot_id FROM {name}.snapshots").fetchall()[-1][0])
        if v.kind == "equality":
            commit_equality_deletes(warehouse, v, rows)
        else:
            con.execute(f"DELETE FROM {name} WHERE {v.predicate(rows)}")
    con.close()
    write_marker(warehouse / "bench-mor.json", key, base_snapshots=base)
    return warehouse, base


def commit_equality_deletes(warehouse: Path, v: Variant, rows: int) -> None:
    """Write the deleted ids as an equality-delete file on ``id`` and commit it as a delete
    snapshot (iceduck reads equality deletes but its SQL writes position deletes or DVs)."""
    from iceduck.catalog.base import TableIdentifier
    from iceduck.catalog.sqlite import SqliteCatalog
    from iceduck.scan.manifest_cache import ManifestCache
    from iceduck.spec.manifest import DataFile, FileContent, FileFormat
    from iceduck.spec.snapshot import Operation
    from iceduck.txn.snapshot import SnapshotChanges, produce

    catalog = SqliteCatalog(warehouse)
    try:
        loaded = catalog.load_table(TableIdentifier((NAMESPACE,), v.table))
        md = loaded.metadata
        field_id = md.schema().find_field("id").field_id
        location = md.location.removeprefix("file://")
        path = f"{location}/data/{uuid.uuid4()}-eq-deletes.parquet"
        duck = duckdb_connection()
        duck.execute(
            f"COPY (SELECT id FROM (SELECT i::BIGINT AS id FROM range({rows}) r(i)) "
            f"WHERE {v.predicate(rows)}) TO '{path}' (FORMAT parquet, FIELD_IDS {{id: {field_id}}})"
        )
        (count,) = duck.execute(f"SELECT count(*) FROM read_parquet('{path}')").fetchone() or (0,)
        duck.close()
        delete_file = DataFile(
            content=FileContent.EQUALITY_DELETES,
            file_path=path,
            file_format=FileFormat.PARQUET,
            partition=(),
            record_count=int(count),
            file_size_in_bytes=Path(path).stat().st_size,
            equality_ids=[field_id],
            spec_id=md.default_spec_id,
        )
        current = md.current_snapshot()
        changes = SnapshotChanges(
            Operation.DELETE,
            added_delete_files=(delete_file,),
            validate_from_snapshot_id=current.snapshot_id if current else None,
        )
        pending = produce(md, changes, table_location=md.location, cache=ManifestCache())
        catalog.commit_table(loaded, pending.metadata)
    finally:
        catalog.close()


# -- measure -----------------------------------------------------------------------------------


@dataclass
class VariantResult:
    variant: Variant
    deleted: int
    delete_files: int
    expected: tuple[Any, ...]
    limit: Timing
    iceduck: Timing
    iceduck_no_deletes: Timing
    duckdb_ext: Timing | None = None
    pyiceberg: Timing | None = None


def same_answer(row: Any, expected: tuple[Any, ...]) -> bool:
    """count and count(DISTINCT) exact, sum(v) within a relative 1e-9 (summation order)."""
    if row is None:
        return False
    count, total, distinct = (*tuple(row), None, None, None)[:3]
    e_count, e_total, e_distinct = expected
    if count is None or int(count) != int(e_count) or distinct is None or int(distinct) != int(e_distinct):
        return False
    if total is None or e_total is None:
        return total is None and e_total is None
    return abs(float(total) - float(e_total)) <= SUM_TOLERANCE * max(1.0, abs(float(e_total)))


def measure(
    warehouse: Path,
    rows: int,
    chosen: list[Variant],
    base: dict[str, int],
    runs: int,
    *,
    peers: bool = True,
    timeout: float = 30.0,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[VariantResult], dict[str, Any]]:
    con = iceduck.connect(warehouse)
    duck = duckdb_connection()
    results = []
    for v in chosen:
        name = f"{NAMESPACE}.{v.table}"
        files = [r[0] for r in con.execute(f"SELECT file_path FROM {name}.data_files").fetchall()]
        deletes = con.execute(f"SELECT count(*), sum(record_count) FROM {name}.delete_files").fetchone()
        scan = f"read_parquet({sql_list(files)})"
        expected_row = duck.execute(QUERY.format(table=scan) + f" WHERE NOT ({v.predicate(rows)})").fetchone()
        assert expected_row is not None
        limit_sql = QUERY.format(table=scan)
        limit = time_query(lambda sql=limit_sql: duck.execute(sql).fetchall(), runs)
        ice_sql = QUERY.format(table=name)
        ice = time_query(lambda sql=ice_sql: con.execute(sql).fetchall(), runs)
        old_sql = QUERY.format(table=f"{name} VERSION AS OF {base[v.table]}")
        old = time_query(lambda sql=old_sql: con.execute(sql).fetchall(), runs)
        results.append(
            VariantResult(v, int(deletes[1] or 0), int(deletes[0]), tuple(expected_row), limit, ice, old)
        )
        if progress is not None:
            progress(f"MoR {v.table}: limit {limit.cell()} ms, iceduck {ice.cell()} ms")
    con.close()
    duck.close()
    info: dict[str, Any] = {}
    if peers:
        info["duckdb_ext"] = run_extension(warehouse, results, runs, timeout)
        info["pyiceberg"] = run_pyiceberg(warehouse, results, runs)
    return results, info


def run_extension(warehouse: Path, results: list[VariantResult], runs: int, timeout: float) -> str:
    """DuckDB 1.5.5's ``iceberg_scan`` of each table's metadata JSON (bench/.venv), each run
    interrupted after ``timeout`` seconds: its equality-delete reads grow much faster than the
    deletes (minutes per query at 5M rows, 10% deleted), and one such query must become a
    "timeout" cell, not hold the machine for the rest of the run."""
    why = peer_missing("duckdb_extension_iceberg", "duckdb_extension_avro")
    if why is not None:
        return why
    from tpc import metadata_location

    queries = [
        {
            "id": r.variant.table,
            "sql": QUERY.format(
                table=f"iceberg_scan('{metadata_location(warehouse, NAMESPACE, r.variant.table)}')"
            ),
        }
        for r in results
    ]
    try:
        out = run_sql_peer(
            {"extensions": ["avro", "iceberg"], "queries": queries, "runs": runs, "timeout": timeout},
            # a backstop in case an interrupt does not stop the extension
            timeout=len(queries) * (runs + 1) * timeout + 120,
        )
    except Exception as e:
        return f"failed: {e}"
    for r in results:
        t = peer_timing(out["results"][r.variant.table])
        r.duckdb_ext = t
    return f"DuckDB {out['duckdb_version']}, extensions {out['extension_versions']}"


def run_pyiceberg(warehouse: Path, results: list[VariantResult], runs: int) -> str:
    """PyIceberg: ``scan(selected_fields=("v", "s")).to_arrow()``, then the aggregates in
    pyarrow (the table is loaded once, untimed, as a warm connection would hold it)."""
    try:
        import pyarrow.compute as pc
        import pyiceberg
        from pyiceberg.catalog.sql import SqlCatalog
    except ImportError as e:
        return f"not installed: {e}"
    catalog = SqlCatalog("iceduck", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=f"file://{warehouse}")
    for r in results:
        table = catalog.load_table(f"{NAMESPACE}.{r.variant.table}")

        def run(table: Any = table) -> list[tuple[Any, ...]]:
            arrow = table.scan(selected_fields=("v", "s")).to_arrow()
            return [(arrow.num_rows, pc.sum(arrow["v"]).as_py(), pc.count_distinct(arrow["s"]).as_py())]

        r.pyiceberg = time_query(run, runs)
    catalog.engine.dispose()
    return f"PyIceberg {pyiceberg.__version__}"


# -- report ------------------------------------------------------------------------------------


def _peer_cell(t: Timing | None, expected: tuple[Any, ...]) -> str:
    if t is None:
        return "-"
    if not t.ok:
        return t.cell()
    if not same_answer(t.rows[0] if t.rows else None, expected):
        return f"{t.cell()} WRONG ANSWER"
    return t.cell()


def section(
    rows: int, results: list[VariantResult], info: dict[str, Any], runs: int, warehouse: Path
) -> Section:
    sec = Section("mor")
    sec.lines.append(
        f"== merge-on-read: {rows:,} rows per table, {QUERY.format(table='<table>')}; medians of {runs} runs "
        f"after one untimed run; tables in {warehouse}"
    )
    sec.lines.append(
        "limit = DuckDB read_parquet of the table's data files without deletes; "
        "iceduck no-deletes = the same files at the snapshot before the delete (VERSION AS OF)"
    )
    for k, v in info.items():
        sec.lines.append(f"{k}: {v}")
    header = [
        "table",
        "deleted rows",
        "delete files",
        "limit ms",
        "iceduck no-deletes",
        "iceduck ms",
        "vs limit",
        "vs no-deletes",
        "DuckDB ext",
        "PyIceberg",
        "answers",
    ]
    table_rows = []
    for r in results:
        answer = r.iceduck.rows[0] if r.iceduck.ok and r.iceduck.rows else None
        ok = same_answer(answer, r.expected)
        if not ok:
            sec.mismatches.append(
                f"MoR {r.variant.table}: iceduck {answer or r.iceduck.error}, expected {r.expected}"
            )
        table_rows.append(
            [
                r.variant.table,
                f"{r.deleted:,}",
                r.delete_files,
                r.limit.cell(),
                r.iceduck_no_deletes.cell(),
                r.iceduck.cell(),
                fmt_ratio(ratio(r.iceduck.ms, r.limit.ms)),
                fmt_ratio(ratio(r.iceduck.ms, r.iceduck_no_deletes.ms)),
                _peer_cell(r.duckdb_ext, r.expected),
                _peer_cell(r.pyiceberg, r.expected),
                "ok" if ok else "MISMATCH",
            ]
        )
        sec.measures.append(
            Measure(
                f"MoR {r.variant.kind} {r.variant.layout} {r.variant.percent}% deleted ({rows:,} rows)",
                r.iceduck.ms,
                r.limit.ms,
                _measure_cell(r.duckdb_ext, r.expected, info.get("duckdb_ext")),
                _measure_cell(r.pyiceberg, r.expected, info.get("pyiceberg")),
                note=f"vs no-deletes {fmt_ratio(ratio(r.iceduck.ms, r.iceduck_no_deletes.ms))}",
            )
        )
    sec.lines += table_lines(header, table_rows)
    for r in results:
        for label, t in (("DuckDB ext", r.duckdb_ext), ("PyIceberg", r.pyiceberg)):
            if t is not None and not t.ok:
                sec.lines.append(f"  {r.variant.table} {label}: {t.error}")
    sec.data = {
        "rows": rows,
        "runs": runs,
        "peers": info,
        "tables": {
            r.variant.table: {
                "deleted": r.deleted,
                "delete_files": r.delete_files,
                "expected": list(r.expected),
                "limit_ms": r.limit.ms,
                "iceduck_ms": r.iceduck.ms,
                "iceduck_no_deletes_ms": r.iceduck_no_deletes.ms,
                "duckdb_ext_ms": r.duckdb_ext.ms if r.duckdb_ext else None,
                "duckdb_ext_error": r.duckdb_ext.error if r.duckdb_ext else None,
                "pyiceberg_ms": r.pyiceberg.ms if r.pyiceberg else None,
                "pyiceberg_error": r.pyiceberg.error if r.pyiceberg else None,
            }
            for r in results
        },
    }
    return sec


def _measure_cell(t: Timing | None, expected: tuple[Any, ...], why: str | None = None) -> float | str | None:
    """The performance table's cell: ms, or what went wrong (the peer's own failure when it
    never answered)."""
    if t is None:
        return "not run" if why is None else f"not run: {why[:80]}"
    if not t.ok:
        return t.cell() if t.error == "timeout" else "cannot read"
    if not same_answer(t.rows[0] if t.rows else None, expected):
        return "wrong answer"
    return t.ms


def run_section(
    rows: int,
    runs: int,
    *,
    kinds: tuple[str, ...] = KINDS,
    percents: tuple[int, ...] = PERCENTS,
    peers: bool = True,
    timeout: float = 30.0,
    root: Path | None = None,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Section:
    chosen = variants(kinds, percents)
    warehouse, base = build(rows, chosen, root, force=force)
    results, info = measure(
        warehouse, rows, chosen, base, runs, peers=peers, timeout=timeout, progress=progress
    )
    return section(rows, results, info, runs, warehouse)
