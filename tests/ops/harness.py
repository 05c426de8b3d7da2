"""Run DML statements on an iceduck warehouse and the same statements on plain DuckDB tables.

:class:`Pair` executes every statement twice: through ``iceduck.connect`` and on an
in-memory DuckDB database whose tables are ordinary DuckDB tables (the reference answer,
via :func:`tests.support.reference_sql.translate`). :meth:`Pair.check` compares full
sorted result sets.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import duckdb

import iceduck
from iceduck.catalog.base import TableIdentifier
from iceduck.engine.read import scan_to_arrow
from iceduck.ops.context import OpContext
from iceduck.scan.planner import plan_scan
from iceduck.spec.schema import LAST_UPDATED_SEQUENCE_NUMBER_ID, ROW_ID_ID
from tests.support.reference_sql import translate
from tests.support.scenario_rows import assert_same, duck_rows, iceduck_rows


class Iceduck:
    """iceduck on a warehouse folder, through the public API: ``execute`` runs any
    statement and returns its rowcount, ``rows`` a query's sorted rows."""

    def __init__(self, warehouse: Path) -> None:
        self.con = iceduck.connect(warehouse)

    def close(self) -> None:
        self.con.close()

    def execute(self, sql: str, params: Any = None) -> int:
        return self.con.execute(sql, params).rowcount

    def rows(self, sql: str) -> Any:
        return iceduck_rows(self.con, sql)

    def context(self, duck: Any, resolve_target: Any = None) -> OpContext:
        """The context the session hands an operation, on cursor ``duck`` (for calling
        operations directly: racing commits, uncommitted writes)."""
        ctx = self.con.session.op_context(duck, None)
        return ctx if resolve_target is None else dataclasses.replace(ctx, resolve_target=resolve_target)

    def fetch(self, sql: str) -> list[tuple[Any, ...]]:
        return self.con.execute(sql).fetchall()

    def scalar(self, sql: str) -> Any:
        return self.con.execute(sql).fetchone()[0]

    def lineage(self, table: str) -> dict[Any, tuple[int | None, int | None]]:
        """``id -> (_row_id, _last_updated_sequence_number)`` of the current rows, read by
        iceduck's engine (the metadata columns Spark exposes as ``_row_id`` ...)."""
        session = self.con.session
        namespace, name = table.rsplit(".", 1)
        loaded = session.catalog.load_table(TableIdentifier(tuple(namespace.split(".")), name))
        plan = plan_scan(loaded.metadata, cache=session.manifests)
        schema = loaded.metadata.schema()
        ids = [schema.find_field("id").field_id, ROW_ID_ID, LAST_UPDATED_SEQUENCE_NUMBER_ID]
        cursor = session.database.cursor()
        try:
            rows = scan_to_arrow(cursor, plan, ids).to_pylist()
        finally:
            cursor.close()
        return {r["id"]: (r["_row_id"], r["_last_updated_sequence_number"]) for r in rows}


class Pair:
    """iceduck and the DuckDB reference, run statement by statement."""

    def __init__(self, warehouse: Path) -> None:
        self.ice = Iceduck(warehouse)
        self.ref = duckdb.connect()

    def close(self) -> None:
        self.ice.close()
        self.ref.close()

    def run(self, sql: str, reference: str | None = None) -> int:
        """Run ``sql`` on both; ``reference`` overrides the translated reference statement.
        Returns iceduck's rowcount (checked against DuckDB's for DML)."""
        count = self.ice.execute(sql)
        ref_sql = reference if reference is not None else translate(sql)
        if ref_sql:
            ref_result = self.ref.execute(ref_sql)
            if re.match(r"^\s*(INSERT|DELETE|UPDATE|MERGE)\b", ref_sql, re.IGNORECASE) and reference is None:
                expected = ref_result.fetchone()[0]
                assert count == expected, f"{sql}: rowcount {count}, DuckDB says {expected}"
        return count

    def check(self, table: str, columns: str = "*") -> None:
        query = f"SELECT {columns} FROM {table}"
        assert_same(query, self.ice.rows(query), duck_rows(self.ref, query))
