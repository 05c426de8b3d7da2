"""A test's own namespace in the shared Spark fixture warehouse, emptied before use."""

from __future__ import annotations

from iceduck.catalog.base import Catalog


def drop_namespace_with_tables(catalog: Catalog, namespace: str) -> None:
    """Drop ``namespace`` and purge its tables, if it exists (a previous run's leftovers)."""
    levels = (namespace,)
    if catalog.namespace_exists(levels):
        for table in catalog.list_tables(levels):
            catalog.drop_table(table, purge=True)
        catalog.drop_namespace(levels)
