"""Spark's introspection statements answered: ``DESCRIBE EXTENDED t``, ``SHOW COLUMNS FROM
t``, ``SHOW PARTITIONS t`` (rows: :mod:`iceduck.sql.spark_describe`,
:mod:`iceduck.sql.partition_paths`).

The table is resolved as SHOW CREATE TABLE's (:func:`iceduck.session.answers.show_table`):
a table, not a metadata table, branch or snapshot. ``SHOW PARTITIONS`` reads the current
snapshot's manifests through the session's manifest cache, as ``SELECT partition FROM
t.partitions`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iceduck.engine import queries
from iceduck.engine.results import StatementRows
from iceduck.errors import NotFoundError, UserError
from iceduck.scan.metadata.partitioning import table_partition_type
from iceduck.scan.metadata.partitions_table import partitions_rows
from iceduck.scan.metadata.reader import ManifestSource
from iceduck.session.iceberg_sources import Lookup
from iceduck.session.name_resolution import not_found_message, resolve_table_name
from iceduck.session.result import Result
from iceduck.sql.partition_paths import partition_paths
from iceduck.sql.references import ResolvedName
from iceduck.sql.spark_describe import COLUMNS, EXTENDED, TableInfo, describe_extended, show_columns

if TYPE_CHECKING:
    from iceduck.engine.connection import Duck

#: how each statement is named in its errors
_NAMES = {EXTENDED: "DESCRIBE EXTENDED", COLUMNS: "SHOW COLUMNS"}


def table_info(
    duck: Duck, text: str, statement: TableInfo, lookup: Lookup, manifests: ManifestSource
) -> Result:
    """The rows of ``statement`` for its table, as a query's on ``duck``."""
    what = _NAMES.get(statement.what, "SHOW PARTITIONS")
    catalog = lookup.catalog
    name = resolve_table_name(catalog, statement.name, lookup.namespace)
    if name is None:
        raise NotFoundError(not_found_message(catalog, statement.name, lookup.namespace))
    if name != ResolvedName(name.identifier):
        raise UserError(f"{what} takes a table: {'.'.join(statement.name)} is not one")
    metadata = catalog.load_table(name.identifier).metadata
    partition_type = table_partition_type(metadata)
    if statement.what == EXTENDED:
        columns = describe_extended(catalog.name, name.identifier, metadata, partition_type)
    elif statement.what == COLUMNS:
        columns = show_columns(metadata)
    else:
        if not partition_type.fields:
            raise UserError(f"SHOW PARTITIONS: table {catalog.name}.{name.identifier} is not partitioned")
        rows = partitions_rows(metadata, metadata.current_snapshot(), manifests)
        columns = {"partition": list(partition_paths(partition_type, [row[0] for row in rows]))}
    queries.select_lists(duck, columns)
    return Result(StatementRows(duck), text)
