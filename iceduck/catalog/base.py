"""What every catalog offers: find tables and namespaces, load a table's current metadata.

A catalog maps ``namespace.table`` to the location of the table's current metadata file;
everything else about a table lives in that file. Commits (an atomic swap of that
location) arrive with writes in step 3, as :meth:`Catalog.commit`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from iceduck.spec.table_metadata import TableMetadata

Namespace = tuple[str, ...]


@dataclass(frozen=True)
class TableIdentifier:
    namespace: Namespace
    name: str

    def __str__(self) -> str:
        return ".".join((*self.namespace, self.name))


@dataclass(frozen=True)
class LoadedTable:
    """A table as loaded: where its current metadata is, and that metadata."""

    identifier: TableIdentifier
    metadata_location: str
    metadata: TableMetadata


class Catalog(Protocol):
    name: str

    def list_namespaces(self, parent: Namespace = ()) -> list[Namespace]: ...

    def namespace_exists(self, namespace: Namespace) -> bool: ...

    def load_namespace_properties(self, namespace: Namespace) -> dict[str, str]:
        """The namespace's properties (with ``location``); NotFoundError when it does not exist."""
        ...

    def list_tables(self, namespace: Namespace) -> list[TableIdentifier]: ...

    def table_exists(self, identifier: TableIdentifier) -> bool: ...

    def load_table(self, identifier: TableIdentifier) -> LoadedTable:
        """The table's current metadata; :class:`~iceduck.errors.NotFoundError` naming
        the table when it does not exist."""
        ...
