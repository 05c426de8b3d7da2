"""``CALL system.register_table(table, metadata_file)``: give an existing table metadata
file a name in the catalog.

For a table whose catalog entry was lost, or to open another engine's table (a copy,
a backup) under a name. Nothing is copied or rewritten: the catalog entry points at the
file as it is, and the table's files stay where its metadata says (Java's
``Catalog.registerTable``; see :meth:`~iceduck.catalog.base.Catalog.register_table`). Both
names then share those files, so registering a table that another name still writes to is
a way to lose data: use it for tables nothing else commits to.

Spark's result: one row, ``current_snapshot_id``, ``total_records_count`` and
``total_data_files_count`` (longs: the current snapshot's id and its summary's
``total-records`` and ``total-data-files``; null for a table without snapshots, or a
summary without the total). A relative path is taken from the current directory and
registered as an absolute path, so the catalog does not depend on where it is opened.
"""

from __future__ import annotations

import os

import pyarrow as pa

from iceduck.errors import UserError
from iceduck.ops.context import OpContext
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows
from iceduck.sql.classify import dotted_name


def _location(text: str) -> str:
    """The metadata file's location as the catalog keeps it."""
    if not text.strip():
        raise UserError("register_table: metadata_file is empty")
    if "://" in text or text.startswith("file:") or os.path.isabs(text):
        return text
    return os.path.abspath(text)


def _total(summary: dict[str, str], key: str) -> int | None:
    value = summary.get(key)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def register_table(ctx: OpContext, args: Arguments) -> Rows:
    name = args.required("table")
    identifier = ctx.new_identifier(dotted_name(name, "register_table's table argument"))
    loaded = ctx.catalog.register_table(identifier, _location(args.required("metadata_file")))
    snapshot = loaded.metadata.current_snapshot()
    if snapshot is None:
        return [(None, None, None)]
    summary = snapshot.summary
    return [(snapshot.snapshot_id, _total(summary, "total-records"), _total(summary, "total-data-files"))]


PROCEDURE = Procedure(
    name="register_table",
    parameters=(
        Parameter("table", Kind.STRING, required=True),
        Parameter("metadata_file", Kind.STRING, required=True),
    ),
    output=pa.schema(
        [
            pa.field("current_snapshot_id", pa.int64()),
            pa.field("total_records_count", pa.int64()),
            pa.field("total_data_files_count", pa.int64()),
        ]
    ),
    run=register_table,
    summary="register an existing metadata file as a table",
)
