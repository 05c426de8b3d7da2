"""Finding the Parquet files ``add_files`` imports, and their partitions.

The source is written as Spark writes it, ``` `parquet`.`<path>` ```: a file, a folder, or
a glob. As Java's ``TableMigrationUtil.listPartition`` lists a folder, only the files
directly in it count (one level), and names starting with ``.`` or ``_`` are skipped
(Hadoop's hidden-path filter: ``_SUCCESS`` markers, ``.crc`` checksums).

A partitioned target takes Hive-style folders, one level per partition field in the
spec's order, ``<field name>=<value>`` (compared without case, as Java's
``findCompatibleSpec`` does); the value is the folder name's text with ``%XX`` escapes
decoded (Spark's ``escapePathName``), read as Java's ``Conversions.fromPartitionString``
reads it: ``__HIVE_DEFAULT_PARTITION__`` is null. Only identity partitions can be
imported this way: nothing says which value of a bucket or a day a folder would hold.
``partition_filter`` keeps the partitions whose values equal its entries, as text.
"""

from __future__ import annotations

import glob
import os
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from pyarrow.fs import FileType

from iceduck.errors import NotFoundError, UnsupportedError, UserError, ValidationError
from iceduck.io import object_files
from iceduck.io.fileio import storage_errors, to_local_path
from iceduck.io.listing import is_hidden
from iceduck.io.object_store import is_object_store
from iceduck.spec.datetimes import iso_to_days
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
    UUIDType,
)
from iceduck.spec.values import INT_RANGE, LONG_RANGE

#: Hive's (and Java's ``Conversions.fromPartitionString``) name for a null partition value
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
FILE_FORMATS = ("parquet", "orc", "avro")
_SOURCE = re.compile(r"\s*`?(\w+)`?\s*\.\s*`((?:[^`]|``)*)`\s*")
_GLOB = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class SourcePartition:
    """The files of one partition folder (the whole source for an unpartitioned table)."""

    #: the partition field name -> its value as the folder names it (decoded)
    values: dict[str, str]
    #: local paths, sorted
    files: tuple[str, ...]


def source_path(text: str, procedure: str = "add_files") -> str:
    """The local path in ``` `parquet`.`<path>` ```; a clear refusal for another format or
    for a table name (iceduck has no Hive or Spark session catalog to read one from)."""
    match = _SOURCE.fullmatch(text)
    if match is None:
        raise UnsupportedError(
            f"{procedure}: source_table {text!r} is not a path: iceduck imports Parquet files named as "
            "'`parquet`.`/path/to/folder`' (a file, a folder or a glob); it has no Hive or Spark "
            "catalog to import a table from"
        )
    kind, path = match.group(1).lower(), match.group(2).replace("``", "`")
    if kind not in FILE_FORMATS:
        raise UnsupportedError(f"{procedure}: source_table {text!r}: use `parquet`.`<path>` to name files")
    if kind != "parquet":
        raise UnsupportedError(f"{procedure}: iceduck imports Parquet files only, not {kind}")
    if not path.strip():
        raise UserError(f"{procedure}: source_table {text!r} names no path")
    if is_object_store(path):
        return path.rstrip("/")
    return os.path.abspath(to_local_path(path))


def _is_file(path: str) -> bool:
    return object_files.info(path).type == FileType.File if is_object_store(path) else os.path.isfile(path)


def _is_dir(path: str) -> bool:
    return object_files.is_folder(path) if is_object_store(path) else os.path.isdir(path)


def _name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _files_in(folder: str) -> tuple[list[str], list[str]]:
    """(visible files, visible sub-folders) directly in ``folder``."""
    if is_object_store(folder):
        found, subfolders = object_files.children(folder)
        return (
            [f for f in found if not is_hidden(_name(f), False)],
            [f for f in subfolders if not is_hidden(_name(f), True)],
        )
    files: list[str] = []
    folders: list[str] = []
    with storage_errors(folder), os.scandir(folder) as entries:
        for e in entries:
            is_dir = e.is_dir()
            if is_hidden(e.name, is_dir):
                continue
            (folders if is_dir else files).append(e.path)
    return sorted(files), sorted(folders)


def unpartitioned_files(path: str, procedure: str = "add_files") -> tuple[str, ...]:
    """The files of a source imported into an unpartitioned table."""
    if _GLOB.search(path) and is_object_store(path):
        raise UnsupportedError(f"{procedure}: globs are not supported in object-store paths ({path})")
    if _GLOB.search(path):
        found = sorted(
            p for p in glob.glob(path) if os.path.isfile(p) and not is_hidden(os.path.basename(p), False)
        )
        if not found:
            raise NotFoundError(f"{procedure}: no files match {path}")
        return tuple(found)
    if _is_file(path):
        return (path,)
    if not _is_dir(path):
        raise NotFoundError(f"{procedure}: {path} does not exist")
    files, folders = _files_in(path)
    if any("=" in _name(f) for f in folders):
        raise UserError(f"{procedure}: Cannot add partitioned files to an unpartitioned table ({path})")
    if not files:
        raise NotFoundError(f"{procedure}: {path} holds no files")
    return tuple(files)


def _unescape(text: str) -> str:
    """Spark's ``unescapePathName``: every ``%XX`` is the character of that code."""
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def partitioned_files(
    path: str, spec: PartitionSpec, table: str, procedure: str = "add_files"
) -> list[SourcePartition]:
    """Every leaf partition folder under ``path`` with its files (folders without files
    are not partitions)."""
    if not _is_dir(path):
        raise NotFoundError(
            f"{procedure}: {path} is not a folder (a partitioned table imports partition folders)"
        )
    names = [f.name for f in spec.fields]
    found: list[SourcePartition] = []

    def walk(folder: str, depth: int, values: dict[str, str]) -> None:
        files, folders = _files_in(folder)
        if depth == len(names):
            if folders:
                raise UserError(f"{procedure}: {folder} holds folders below the partition folders")
            if files:
                found.append(SourcePartition(dict(values), tuple(files)))
            return
        if files:
            raise UserError(
                f"{procedure}: {files[0]} is outside the partition folders "
                f"({'/'.join(n + '=...' for n in names)}) of table {table}"
            )
        for sub in folders:
            key, eq, value = _name(sub).partition("=")
            if not eq or _unescape(key).lower() != names[depth].lower():
                raise UserError(
                    f"{procedure}: Cannot find a partition spec in Iceberg table {table} that matches the "
                    f"partition columns ({', '.join(names)}) in input table: folder {sub}"
                )
            walk(sub, depth + 1, {**values, names[depth]: _unescape(value)})

    walk(path, 0, {})
    return found


def check_partition_filter(spec: PartitionSpec, partition_filter: Mapping[str, str], table: str) -> None:
    """Java's refusals of a filter the table's partitioning cannot satisfy."""
    names = [] if spec.is_unpartitioned else [f.name for f in spec.fields]
    if not partition_filter:
        return
    if not names:
        raise UserError(f"Cannot use partition filter with an unpartitioned table {table}")
    if len(partition_filter) > len(names):
        raise UserError(
            f"Cannot add data files to target table {table} because that table is partitioned, but the "
            f"number of columns in the provided partition filter ({len(partition_filter)}) is greater "
            f"than the number of partitioned columns in table ({len(names)})"
        )
    unknown = sorted(k for k in partition_filter if k not in names)
    if unknown:
        raise UserError(
            f"Cannot add files to target table {table}. {table} is partitioned but the specified partition "
            f"filter refers to columns that are not partitioned: {unknown} . Valid partition columns: "
            f"[{', '.join(names)}]"
        )


def check_identity_spec(spec: PartitionSpec, table: str) -> None:
    """Only identity partitions take their values from folder names (a spec of void
    fields alone partitions nothing)."""
    if spec.is_unpartitioned:
        return
    other = [f"{f.name}: {f.transform}" for f in spec.fields if not f.transform.is_identity]
    if other:
        raise UnsupportedError(
            f"Cannot add data files to target table {table} because that table is partitioned and "
            f"contains non-identity partition transforms which will not be compatible. Found "
            f"non-identity fields [{', '.join(other)}]"
        )


def matches(partition: SourcePartition, partition_filter: Mapping[str, str]) -> bool:
    return all(partition.values.get(k) == v for k, v in partition_filter.items())


def partition_tuple(spec: PartitionSpec, schema: Schema, values: Mapping[str, str]) -> tuple[Any, ...]:
    """The partition struct of a folder's values, in the spec's order."""
    out = []
    for f in spec.fields:
        source = schema.find_field(f.source_id)
        out.append(partition_value(source.field_type, values[f.name], f.name))
    return tuple(out)


def partition_value(t: IcebergType, text: str, name: str) -> Any:
    """A folder's value as a value of ``t`` (Java's ``Conversions.fromPartitionString``)."""
    if text == HIVE_NULL:
        return None
    try:
        return _parse(t, text)
    except (ValueError, InvalidOperation, ValidationError):
        raise UserError(f"partition folder {name}={text}: {text!r} is not a {t} value") from None


def _parse(t: IcebergType, text: str) -> Any:
    if isinstance(t, StringType):
        return text
    if isinstance(t, BooleanType):
        if text.lower() not in ("true", "false"):
            raise ValueError(text)
        return text.lower() == "true"
    if isinstance(t, IntegerType | LongType):
        value = int(text)
        low, high = INT_RANGE if isinstance(t, IntegerType) else LONG_RANGE
        if not low <= value <= high:
            raise ValueError(text)
        return value
    if isinstance(t, FloatType | DoubleType):
        return float(text)
    if isinstance(t, DecimalType):
        number = Decimal(text)
        exponent = number.as_tuple().exponent
        if not isinstance(exponent, int) or -exponent > t.scale:
            raise ValueError(text)
        return number.quantize(Decimal(1).scaleb(-t.scale))
    if isinstance(t, DateType):
        return iso_to_days(text)
    if isinstance(t, UUIDType):
        return uuid.UUID(text)
    if isinstance(t, BinaryType):
        return text.encode()
    if isinstance(t, FixedType):
        data = text.encode()
        if len(data) != t.length:
            raise ValueError(text)
        return data
    raise UnsupportedError(f"partition values of type {t} cannot be read from folder names")
