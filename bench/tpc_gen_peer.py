"""Generate TPC-H or TPC-DS data as Parquet, with the query texts (runs in bench/.venv).

Why here: the project's DuckDB 2.x wheel has no ``tpch``/``tpcds`` extension and the machine
has no network for ``INSTALL``, but PyPI's ``duckdb-extension-tpch``/``-tpcds`` 1.5.5 wheels
ship them for DuckDB 1.5.5, which only bench/.venv has. dbgen and dsdgen are deterministic,
so the same scale factor gives the same rows.

Job (JSON on stdin): ``{"kind": "tpch" | "tpcds", "sf": 1, "out": "<folder>"}``. Writes
``<out>/<table>.parquet`` (zstd) for every table and ``<out>/meta.json``: ``tables``,
``queries`` ({number: SQL}), ``duckdb_version``. Must not import iceduck.
"""

from __future__ import annotations

import json
import os
import sys

import duckdb
from duckdb_sql_peer import extension_path

GENERATORS = {"tpch": "CALL dbgen(sf={sf})", "tpcds": "CALL dsdgen(sf={sf})"}


def main() -> None:
    job = json.load(sys.stdin)
    kind, sf, out = job["kind"], job["sf"], job["out"]
    os.makedirs(out, exist_ok=True)
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.load_extension(extension_path(kind))
    con.execute(GENERATORS[kind].format(sf=sf))
    queries = dict(con.execute(f"SELECT query_nr, query FROM {kind}_queries()").fetchall())
    tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
    for table in tables:
        con.execute(f"COPY {table} TO '{out}/{table}.parquet' (FORMAT parquet, COMPRESSION zstd)")
    meta = {
        "tables": tables,
        "queries": {str(k): v for k, v in queries.items()},
        "duckdb_version": duckdb.__version__,
    }
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    json.dump({"tables": len(tables), "queries": len(queries)}, sys.stdout)


if __name__ == "__main__":
    main()
