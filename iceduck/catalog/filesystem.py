"""A file-system catalog in the layout of Spark's Hadoop catalog (``type=hadoop``).

The warehouse folder *is* the catalog, as in Iceberg Java's ``HadoopCatalog``:

* a namespace is a folder ``<warehouse>/<level>/<level>`` that is not a table;
* a table is a folder whose ``metadata/`` holds at least one ``*.metadata.json``
  (``HadoopCatalog.isTableDir``), with its versions as ``metadata/v<N>.metadata.json`` and
  the current version number in ``metadata/version-hint.text`` (spec, "File System
  Tables"; see :func:`~iceduck.catalog.metadata_files.current_hadoop_metadata_file` for how
  a missing or stale hint is handled).

There are no catalog rows: the newest metadata file is the table's state, so this catalog
needs nothing but the folders. The catalog name only labels the catalog; unlike the SQLite
catalog, it is not stored anywhere.
"""

from __future__ import annotations

import os
from pathlib import Path

from iceduck.catalog.base import LoadedTable, Namespace, TableIdentifier
from iceduck.catalog.metadata_files import (
    METADATA_DIR,
    MetadataCache,
    current_hadoop_metadata_file,
    has_metadata_files,
)
from iceduck.catalog.names import namespace_display
from iceduck.errors import NotFoundError, ValidationError

DEFAULT_CATALOG_NAME = "iceduck"
NAMESPACE_LOCATION_PROPERTY = "location"


class HadoopCatalog:
    """Tables and namespaces as folders under ``warehouse``; see the module docstring."""

    def __init__(self, warehouse: str | Path, name: str = DEFAULT_CATALOG_NAME) -> None:
        self.name = name
        self.warehouse = Path(warehouse)
        self._metadata = MetadataCache()

    def __repr__(self) -> str:
        return f"HadoopCatalog({self.name!r}, {str(self.warehouse)!r})"

    # -- namespaces --------------------------------------------------------------------

    def list_namespaces(self, parent: Namespace = ()) -> list[Namespace]:
        """The namespace folders directly under ``parent``, sorted (none for a warehouse
        folder that does not exist yet)."""
        folder = self._folder(parent)
        if parent and not self._is_namespace(folder):
            raise self._namespace_not_found(parent)
        return sorted((*parent, entry.name) for entry in _subfolders(folder) if not _is_table_dir(entry))

    def namespace_exists(self, namespace: Namespace) -> bool:
        return not namespace or self._is_namespace(self._folder(namespace))

    def load_namespace_properties(self, namespace: Namespace) -> dict[str, str]:
        """Only ``location``, as Java's ``HadoopCatalog.loadNamespaceMetadata``: a folder
        has nowhere to keep properties."""
        if not namespace or not self.namespace_exists(namespace):
            raise self._namespace_not_found(namespace)
        return {NAMESPACE_LOCATION_PROPERTY: str(self._folder(namespace))}

    # -- tables ------------------------------------------------------------------------

    def list_tables(self, namespace: Namespace) -> list[TableIdentifier]:
        if not self.namespace_exists(namespace):
            raise self._namespace_not_found(namespace)
        folder = self._folder(namespace)
        return sorted(
            (TableIdentifier(namespace, entry.name) for entry in _subfolders(folder) if _is_table_dir(entry)),
            key=lambda t: t.name,
        )

    def table_exists(self, identifier: TableIdentifier) -> bool:
        metadata_dir = self._folder((*identifier.namespace, identifier.name)) / METADATA_DIR
        return current_hadoop_metadata_file(metadata_dir) is not None

    def load_table(self, identifier: TableIdentifier) -> LoadedTable:
        """The newest ``v<N>.metadata.json`` of the table's folder.

        A folder with metadata files but no ``v<N>`` one (a table of a metastore catalog,
        whose files are ``<NNNNN>-<uuid>.metadata.json``) is not a Hadoop table: Java
        reports such a table as missing, and so do we, saying why.
        """
        table_dir = self._folder((*identifier.namespace, identifier.name))
        current = current_hadoop_metadata_file(table_dir / METADATA_DIR)
        if current is None:
            why = (
                f": {table_dir / METADATA_DIR} has no v<N>.metadata.json file (not a Hadoop-catalog "
                "table; read its metadata file directly)"
                if has_metadata_files(table_dir)
                else ""
            )
            raise NotFoundError(f"table '{identifier}' not found in catalog '{self.name}'{why}")
        location = str(current)
        return LoadedTable(identifier, location, self._metadata.load(location))

    # -- folders -----------------------------------------------------------------------

    def _folder(self, levels: Namespace) -> Path:
        for level in levels:
            if not level or level in (".", "..") or "/" in level or os.sep in level:
                raise ValidationError(f"invalid name {level!r} for a folder of catalog '{self.name}'")
        return self.warehouse.joinpath(*levels)

    def _is_namespace(self, folder: Path) -> bool:
        """Java's ``HadoopCatalog.isNamespace``: a folder that is not a table."""
        return folder.is_dir() and not has_metadata_files(folder)

    def _namespace_not_found(self, namespace: Namespace) -> NotFoundError:
        return NotFoundError(f"namespace '{namespace_display(namespace)}' not found in catalog '{self.name}'")


def _subfolders(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return [entry for entry in it if entry.is_dir()]
    except (FileNotFoundError, NotADirectoryError):
        return []


def _is_table_dir(entry: os.DirEntry[str]) -> bool:
    return has_metadata_files(Path(entry.path))
