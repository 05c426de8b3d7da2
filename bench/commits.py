"""One-row commits: the median time of ``INSERT INTO t VALUES (...)`` on a warm connection.

A streaming or interactive writer commits small batches, so the fixed cost of a commit
(write one data file, a manifest, a manifest list, the table metadata, swap the catalog row)
is what it pays. The limit is DuckDB writing the one-row Parquet file alone (a commit cannot
do less); PyIceberg's ``table.append`` of a one-row Arrow table on the same catalog is the peer.
The tables are made fresh every run (each commit grows the metadata, so the count matters).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from statistics import median

from common import WAREHOUSE_ROOT, Measure, Section, duckdb_connection, fmt_ms, fmt_ratio, ratio, timed_ms

import iceduck


def run_section(commits: int = 30, root: Path | None = None) -> Section:
    warehouse = root or WAREHOUSE_ROOT / "commits"
    shutil.rmtree(warehouse, ignore_errors=True)
    warehouse.mkdir(parents=True)
    con = iceduck.connect(warehouse)
    con.execute("CREATE NAMESPACE c")
    con.execute("CREATE TABLE c.t (id bigint, v double, s string)")
    con.execute("CREATE TABLE c.p (id bigint, v double, s string)")
    con.execute("INSERT INTO c.t VALUES (0, 0.0, 's0')")  # untimed: first-commit costs
    ice = [
        timed_ms(lambda i=i: con.execute(f"INSERT INTO c.t VALUES ({i}, {i / 2}, 's{i}')"))
        for i in range(1, commits + 1)
    ]
    ice_count = con.execute("SELECT count(*) FROM c.t").fetchone()

    duck = duckdb_connection()
    files = warehouse / "plain"
    files.mkdir()
    limit = [
        timed_ms(
            lambda i=i: duck.execute(
                f"COPY (SELECT {i}::BIGINT AS id, {i / 2} AS v, 's{i}' AS s) "
                f"TO '{files}/{i}.parquet' (FORMAT parquet)"
            )
        )
        for i in range(commits + 1)
    ][1:]
    duck.close()

    pyi: float | str
    pyi_count = None
    try:
        import pyarrow as pa
        from pyiceberg.catalog.sql import SqlCatalog

        catalog = SqlCatalog(
            "iceduck", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=f"file://{warehouse}"
        )
        table = catalog.load_table("c.p")
        schema = table.schema().as_arrow()
        times = []
        for i in range(commits + 1):
            batch = pa.Table.from_pylist([{"id": i, "v": i / 2, "s": f"s{i}"}], schema=schema)
            times.append(timed_ms(lambda batch=batch: table.append(batch)))
        pyi = median(times[1:])
        catalog.engine.dispose()
        pyi_count = con.execute("SELECT count(*) FROM c.p").fetchone()
    except Exception as e:
        pyi = f"failed: {type(e).__name__}: {e}"
    con.close()

    sec = Section("commits")
    ice_ms, limit_ms = median(ice), median(limit)
    sec.lines.append(
        f"== one-row commits: {commits} commits after one untimed, medians; tables in {warehouse}"
    )
    sec.lines.append(
        f"iceduck INSERT INTO t VALUES (...): {fmt_ms(ice_ms)} ms; "
        "limit (DuckDB COPY of the row to Parquet): "
        f"{fmt_ms(limit_ms)} ms ({fmt_ratio(ratio(ice_ms, limit_ms))}); "
        f"PyIceberg append of a one-row Arrow table: {fmt_ms(pyi) if isinstance(pyi, float) else pyi} ms"
    )
    expected = commits + 1
    if ice_count != (expected,):
        sec.mismatches.append(f"commits: iceduck table holds {ice_count}, expected {expected}")
    if pyi_count is not None and pyi_count != (expected,):
        sec.mismatches.append(f"commits: PyIceberg table holds {pyi_count}, expected {expected}")
    sec.lines.append(
        f"rows after the commits: iceduck {ice_count}, PyIceberg {pyi_count} (expected {expected})"
    )
    sec.measures.append(
        Measure(
            "one-row commit (INSERT VALUES, warm connection)",
            ice_ms,
            limit_ms,
            "n/a (no writes to a SQL catalog)",
            pyi,
        )
    )
    sec.data = {"commits": commits, "iceduck_ms": ice, "limit_ms": limit, "pyiceberg_ms": pyi}
    return sec
