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

Writes follow Java's ``HadoopTableOperations.commit``: a commit on ``v<N>`` creates
``v<N+1>.metadata.json`` atomically and without overwriting (:func:`iceduck.io.fileio.write_new`
links the finished file into place; the link fails if another writer created that version
first, which is the conflict), then rewrites ``version-hint.text``. A table's metadata stays
in ``<table>/metadata`` whatever ``write.metadata.path`` says, because that folder is how
this catalog finds tables. As in Java, a table's location is always its folder, tables
cannot be renamed, namespaces have no properties, and dropping a table deletes its folder
(with ``PURGE`` first deleting every file its metadata reaches, wherever they are).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from iceduck.catalog.base import LoadedTable, Namespace, TableIdentifier
from iceduck.catalog.metadata_files import (
    METADATA_DIR,
    VERSION_HINT,
    MetadataCache,
    current_hadoop_metadata_file,
    delete_quietly,
    delete_removed_metadata_files,
    has_metadata_files,
    with_previous_file,
)
from iceduck.catalog.names import check_namespace, check_new_table, folder_name_problem, namespace_display
from iceduck.catalog.purge import purge_table_files
from iceduck.catalog.views_refused import NoViews
from iceduck.errors import (
    AlreadyExistsError,
    CommitConflictError,
    IceduckError,
    NotFoundError,
    UnsupportedError,
    UserError,
    ValidationError,
)
from iceduck.formats.metadata_json import hadoop_metadata_file_name, metadata_file_version
from iceduck.io.fileio import to_local_path
from iceduck.io.object_store import is_object_store
from iceduck.spec.table_metadata import TableMetadata

DEFAULT_CATALOG_NAME = "iceduck"
NAMESPACE_LOCATION_PROPERTY = "location"


class HadoopCatalog(NoViews):
    """Tables and namespaces as folders under ``warehouse``; see the module docstring."""

    views_kind = "the file-system (Hadoop) catalog"
    # Java's HadoopCatalog is no ViewCatalog: its folders cannot tell a view from a table
    views_reason = (
        "a warehouse of folders cannot tell a view from a table (Java's HadoopCatalog keeps no "
        "views either); use the JDBC catalog (catalog.db) or a REST catalog"
    )

    def __init__(
        self, warehouse: str | Path, name: str = DEFAULT_CATALOG_NAME, *, read_only: bool = False
    ) -> None:
        self.name = name
        if is_object_store(str(warehouse)):
            # Java's HadoopCatalog: "atomic rename" of the metadata file is the commit, and
            # object stores have none (its docs send S3 users to a metastore catalog)
            raise UnsupportedError(
                f"the file-system (Hadoop) catalog cannot keep a warehouse in an object store "
                f"({warehouse}): its commits need an atomic rename, which object stores lack; "
                "use the JDBC catalog (catalog.db) with the warehouse there"
            )
        self.warehouse = Path(warehouse).absolute()  # table locations must not depend on the cwd
        self.read_only = read_only
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

    def update_namespace_properties(
        self, namespace: Namespace, updates: dict[str, str], removals: list[str]
    ) -> tuple[list[str], list[str], list[str]]:
        """Refused, as Java's ``HadoopCatalog.setProperties``: a folder keeps no properties."""
        raise UnsupportedError("a Hadoop catalog keeps no namespace properties: they cannot be changed")

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

    # -- writes ------------------------------------------------------------------------

    def create_namespace(self, namespace: Namespace, properties: dict[str, str] | None = None) -> None:
        """A new folder (Java's ``HadoopCatalog.createNamespace``, which refuses properties)."""
        self._check_writable(f"create namespace '{namespace_display(namespace)}'")
        check_namespace(namespace)
        if properties:
            raise UnsupportedError(
                f"catalog '{self.name}' is a file-system (Hadoop) catalog: namespaces cannot have properties"
            )
        folder = self._folder(namespace)
        if folder.exists():
            raise AlreadyExistsError(
                f"namespace '{namespace_display(namespace)}' already exists in catalog '{self.name}'"
            )
        folder.mkdir(parents=True, exist_ok=True)

    def drop_namespace(self, namespace: Namespace) -> None:
        """Remove an empty namespace folder (Java: anything inside makes it not empty)."""
        self._check_writable(f"drop namespace '{namespace_display(namespace)}'")
        if not namespace or not self.namespace_exists(namespace):
            raise self._namespace_not_found(namespace)
        folder = self._folder(namespace)
        inside = sorted(os.listdir(folder))
        if inside:
            raise ValidationError(
                f"namespace '{namespace_display(namespace)}' is not empty: its folder {folder} "
                f"holds {inside[0]!r}"
            )
        folder.rmdir()

    def default_table_location(self, identifier: TableIdentifier) -> str:
        """``<warehouse>/<level>/.../<table>``: the only location a Hadoop table may have."""
        return str(self._folder((*identifier.namespace, identifier.name)))

    def create_table(self, identifier: TableIdentifier, metadata: TableMetadata) -> LoadedTable:
        """Write ``v1.metadata.json`` (no overwrite) and ``version-hint.text``."""
        self._check_writable(f"create table '{identifier}'")
        check_new_table(identifier)
        if not self.namespace_exists(identifier.namespace):
            raise self._namespace_not_found(identifier.namespace)
        expected = self.default_table_location(identifier)
        if to_local_path(metadata.location).rstrip("/") != expected:
            raise ValidationError(
                f"a table of the file-system catalog '{self.name}' lives in its folder {expected}; "
                f"it cannot have location {metadata.location}"
            )
        metadata_dir = Path(expected) / METADATA_DIR
        if self.table_exists(identifier) or has_metadata_files(Path(expected)):
            raise AlreadyExistsError(f"table '{identifier}' already exists in catalog '{self.name}'")
        location = str(metadata_dir / hadoop_metadata_file_name(1))
        try:
            metadata = self._metadata.write(location, metadata)
        except AlreadyExistsError:
            raise AlreadyExistsError(
                f"table '{identifier}' already exists in catalog '{self.name}'"
            ) from None
        _try_version_hint(metadata_dir, 1)
        return LoadedTable(identifier, location, metadata)

    def commit_table(self, base: LoadedTable, metadata: TableMetadata) -> LoadedTable:
        """Create ``v<N+1>.metadata.json`` from base ``v<N>``; a conflict if it exists."""
        identifier = base.identifier
        self._check_writable(f"commit to table '{identifier}'")
        version = metadata_file_version(base.metadata_location)
        if version is None or not Path(to_local_path(base.metadata_location)).name.startswith("v"):
            raise ValidationError(
                f"{base.metadata_location} is not a file-system catalog metadata file (v<N>.metadata.json)"
            )
        metadata_dir = Path(to_local_path(base.metadata_location)).parent
        self._check_base_is_current(base, metadata_dir)
        metadata = with_previous_file(metadata, base.metadata, base.metadata_location)
        location = str(metadata_dir / hadoop_metadata_file_name(version + 1))
        try:
            metadata = self._metadata.write(location, metadata)
        except AlreadyExistsError:
            raise CommitConflictError(
                f"table '{identifier}' changed since it was loaded: version {version + 1} was "
                "committed by another writer"
            ) from None
        _try_version_hint(metadata_dir, version + 1)
        delete_removed_metadata_files(base.metadata, metadata)
        return LoadedTable(identifier, location, metadata)

    def _check_base_is_current(self, base: LoadedTable, metadata_dir: Path) -> None:
        """Java's ``HadoopTableOperations.commit`` first refreshes and refuses a base that is
        not the current metadata ("Cannot commit changes based on stale table metadata").
        Creating ``v<N+1>`` without overwriting catches a concurrent commit, but not a table
        dropped and created again, whose ``v1.metadata.json`` has the same name as ours: the
        current file must also carry the base's ``table-uuid``."""
        current = current_hadoop_metadata_file(metadata_dir)
        stale = current is None or str(current) != str(Path(to_local_path(base.metadata_location)))
        if not stale and current is not None and base.metadata.table_uuid is not None:
            stale = self._metadata.load(str(current)).table_uuid not in (None, base.metadata.table_uuid)
        if stale:
            raise CommitConflictError(
                f"table '{base.identifier}' changed since it was loaded (base {base.metadata_location} "
                f"is no longer current, now {current}): cannot commit changes based on stale table metadata"
            )

    def commit_tables(self, changes: Sequence[tuple[LoadedTable, TableMetadata]]) -> list[LoadedTable]:
        """Refused: each table's commit is its own file rename, and no rename moves two
        tables at once (Java's ``HadoopCatalog`` has no multi-table commit either)."""
        raise UnsupportedError("a Hadoop catalog cannot commit to several tables atomically")

    def register_table(self, identifier: TableIdentifier, metadata_location: str) -> LoadedTable:
        """Java's ``HadoopCatalog`` refuses: a table here is its folder, whose newest metadata
        file is the current one, so a file elsewhere cannot become a table by name."""
        raise UnsupportedError(
            f"cannot register table '{identifier}': the file-system catalog '{self.name}' does not "
            "register tables (a table there is its folder)"
        )

    def drop_table(self, identifier: TableIdentifier, purge: bool = False) -> None:
        """Java's ``HadoopCatalog.dropTable``: purge if asked, then delete the table folder."""
        self._check_writable(f"drop table '{identifier}'")
        loaded = self.load_table(identifier)
        if purge:
            purge_table_files(loaded.metadata, loaded.metadata_location)
        shutil.rmtree(self._folder((*identifier.namespace, identifier.name)), ignore_errors=True)

    def rename_table(self, source: TableIdentifier, target: TableIdentifier) -> None:
        raise UnsupportedError(
            f"cannot rename table '{source}': catalog '{self.name}' is a file-system (Hadoop) catalog, "
            "where a table's name is its folder (Spark's Hadoop catalog cannot rename either)"
        )

    def _check_writable(self, action: str) -> None:
        if self.read_only:
            raise UserError(f"the catalog is read-only: cannot {action} (catalog '{self.name}')")

    # -- folders -----------------------------------------------------------------------

    def _folder(self, levels: Namespace) -> Path:
        """The folder of a namespace or table; a level that is not one folder name
        (:func:`~iceduck.catalog.names.folder_name_problem`) could only name a folder
        elsewhere, or none, so it is refused for reads as well as writes."""
        for level in levels:
            problem = folder_name_problem(level)
            if problem is not None:
                raise ValidationError(
                    f"invalid name {level!r} in file-system catalog '{self.name}': {problem}; "
                    "its namespaces and tables are folders under the warehouse"
                )
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


def _try_version_hint(metadata_dir: Path, version: int) -> None:
    """Update the hint after ``v<version>.metadata.json`` landed; a failure is ignored.

    The new metadata file *is* the commit (it was created without overwriting), so an
    error here must not be reported as a failed commit: the caller would delete files the
    table now references. Readers move past a stale or missing hint
    (:func:`current_hadoop_metadata_file`); Java's ``writeVersionHint`` ignores failures too.
    """
    try:
        _write_version_hint(metadata_dir, version)
    except (OSError, IceduckError):
        pass


def _write_version_hint(metadata_dir: Path, version: int) -> None:
    """Replace ``version-hint.text`` atomically (temporary file + rename), as Java's
    ``writeVersionHint`` does; the hint only speeds readers up, the files decide."""
    fd, tmp = tempfile.mkstemp(prefix=f".{VERSION_HINT}.", suffix=".tmp", dir=metadata_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(str(version))
        os.replace(tmp, metadata_dir / VERSION_HINT)
    except BaseException:
        delete_quietly(tmp)
        raise
