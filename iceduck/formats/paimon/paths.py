"""Where a Paimon table keeps its files (Java ``FileStorePathFactory``/``IndexPathFactory``).

A table folder holds ``schema/schema-<id>``, ``snapshot/snapshot-<id>`` (and the
``LATEST``/``EARLIEST`` hints), ``tag/tag-<name>``, ``manifest/`` (manifest lists, data
and index manifests), ``index/`` (deletion-vector and hash index files) and the data
files in ``<partition folder>bucket-<n>/``. The partition folder is derived from the
values (:mod:`iceduck.spec.paimon.partition_names`); option ``data-file.path-directory``
puts the partition folders under a sub-folder of the table; a file written to an
external path (``data-file.external-paths``) records it in ``_EXTERNAL_PATH``.
"""

from __future__ import annotations

from typing import Any

from iceduck.spec.paimon.manifest import DataFileMeta, IndexManifestEntry
from iceduck.spec.paimon.partition_names import partition_folder
from iceduck.spec.paimon.schema import TableSchema

#: ``BucketMode.POSTPONE_BUCKET``: files written before their bucket is known
POSTPONE_BUCKET = -2


def table_path(table: str, *parts: str) -> str:
    """``table`` joined with ``parts`` by ``/`` (local paths, ``file:`` URIs and object
    store locations alike)."""
    return "/".join([table.rstrip("/"), *parts])


def partition_path(schema: TableSchema, partition: tuple[Any, ...]) -> str:
    """``"dt=2024-01-01/hr=3/"`` as Paimon names it (``""`` when unpartitioned), honouring
    ``partition.default-name`` and ``partition.legacy-name``."""
    return partition_folder(schema, partition)


def bucket_folder(bucket: int) -> str:
    """``bucket-<n>/`` (``bucket-postpone/`` for postponed files)."""
    return f"bucket-{'postpone' if bucket == POSTPONE_BUCKET else bucket}/"


def bucket_path(table: str, schema: TableSchema, partition: tuple[Any, ...], bucket: int) -> str:
    """The folder of one bucket of one partition, without a trailing ``/``."""
    relative = partition_path(schema, partition) + bucket_folder(bucket)
    directory = schema.data_file_path_directory
    if directory:
        relative = directory.strip("/") + "/" + relative
    return table_path(table, relative.rstrip("/"))


def data_file_path(
    table: str, schema: TableSchema, partition: tuple[Any, ...], bucket: int, file: DataFileMeta
) -> str:
    """The location of a data file: its ``_EXTERNAL_PATH`` when it has one, else
    ``<table>/[<data-file.path-directory>/]<partition folder>bucket-<n>/<file name>``."""
    if file.external_path:
        return file.external_path
    return bucket_path(table, schema, partition, bucket) + "/" + file.file_name


def index_file_path(
    table: str, entry: IndexManifestEntry, schema: TableSchema | None = None, partition: tuple[Any, ...] = ()
) -> str:
    """The location of an index file (deletion vectors, hash index): its ``_EXTERNAL_PATH``
    when it has one; beside the data files of its bucket under option
    ``index-file-in-data-file-dir`` (then ``schema`` and the decoded ``partition`` are
    needed); else ``<table>/index/<file name>``."""
    if entry.external_path:
        return entry.external_path
    if schema is not None and schema.index_file_in_data_file_dir:
        return bucket_path(table, schema, partition, entry.bucket) + "/" + entry.file_name
    return table_path(table, "index", entry.file_name)
