"""Write row-level delete files (spec: "Position Delete Files", "Deletion Vectors",
"Delete File Stats").

* v2: a Parquet position-delete file, ``file_position_delete`` rows (``file_path``
  2147483546, ``pos`` 2147483545) "sorted by ``file_path`` then ``pos``", no ``row``
  column. Metrics as Iceberg Java 1.10 writes them (checked on Spark-written files):
  column sizes and *full* (never truncated) bounds of both columns -- so a reader can tell
  from the bounds which data files a delete file may touch ("the metrics must store
  bounds and counts for all deleted rows, or must be omitted") -- no counts, no sort
  order id. ``referenced_data_file`` is set when every delete is for one data file
  ("Position delete metadata can use ``referenced_data_file`` when all deletes tracked by
  the entry are in a single data file").
* equality deletes (v2 and v3): Parquet files of the equality fields' columns with the
  table's field ids, written as data files are (:func:`iceduck.engine.write.write_data_files`:
  one or more files per partition of the spec given, metrics per the table's metrics
  config, as Java's equality delete writer keeps them), with ``equality_ids`` set.
* v3: one Puffin file of ``deletion-vector-v1`` blobs, one per data file, one manifest
  entry per blob with ``content_offset``/``content_size_in_bytes`` = the blob's
  offset/length and ``record_count`` = its cardinality, no column metrics (as Java).

Both land in the given folder under a fresh uuid name (``...-deletes.parquet`` /
``...-deletes.puffin`` like Java), so concurrent writers never collide. In an object
store, DuckDB writes the Parquet file to a local spool that is uploaded
(:mod:`iceduck.engine.spool`); the Puffin file is made in memory and put directly.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from iceduck.engine.spool import Placement
from iceduck.engine.types import quote_string
from iceduck.engine.write import FileTarget, parquet_codec, write_data_files
from iceduck.errors import ValidationError
from iceduck.formats.parquet_metrics import file_metrics
from iceduck.formats.puffin import write_deletion_vectors
from iceduck.io import fileio
from iceduck.spec import properties as props
from iceduck.spec.deletion_vector import DeletionVector
from iceduck.spec.manifest import DataFile, FileContent, FileFormat
from iceduck.spec.schema import Schema
from iceduck.spec.types import LongType, NestedField, StringType

if TYPE_CHECKING:
    from iceduck.engine.connection import Duck

#: "2147483546 file_path" and "2147483545 pos" of ``file_position_delete`` (not the
#: ``_file``/``_pos`` metadata column ids 2147483646/2147483645)
DELETE_FILE_PATH_ID = 2147483546
DELETE_POS_ID = 2147483545
#: ``file_position_delete`` without the optional ``row`` column
POSITION_DELETE_SCHEMA = Schema(
    (
        NestedField(DELETE_FILE_PATH_ID, "file_path", StringType(), True),
        NestedField(DELETE_POS_ID, "pos", LongType(), True),
    )
)
#: Java writes delete-file bounds in full whatever the table's metrics mode
_FULL_METRICS = {props.METRICS_MODE_DEFAULT: "full"}
CREATED_BY = "iceduck"


def _new_name(location: str, suffix: str) -> str:
    return f"{location.rstrip('/')}/{uuid.uuid4()}-deletes.{suffix}"


def position_delete_table(deletes: Mapping[str, Sequence[int] | np.ndarray]) -> pa.Table:
    """The rows of a position-delete file, sorted by path then position, without duplicates."""
    paths: list[str] = []
    positions: list[np.ndarray] = []
    for path in sorted(deletes):  # str order is code point order, the UTF-8 byte order
        pos = np.unique(np.asarray(deletes[path], dtype=np.int64))
        if len(pos) and pos[0] < 0:
            raise ValidationError(f"negative row position {int(pos[0])} for data file {path}")
        if len(pos):
            paths.append(path)
            positions.append(pos)
    if not paths:
        raise ValidationError("a position-delete file needs at least one deleted row")
    counts = [len(p) for p in positions]
    path_column = pa.DictionaryArray.from_arrays(
        pa.array(np.repeat(np.arange(len(paths), dtype=np.int32), counts)), pa.array(paths)
    ).cast(pa.string())
    return pa.table(
        {"file_path": path_column, "pos": pa.array(np.concatenate(positions))},
        schema=pa.schema([pa.field("file_path", pa.string(), False), pa.field("pos", pa.int64(), False)]),
    )


def write_position_deletes(
    con: Duck,
    deletes: Mapping[str, Sequence[int] | np.ndarray],
    *,
    location: str,
    spec_id: int,
    partition: tuple,
    properties: Mapping[str, str],
) -> DataFile:
    """Write one v2 position-delete file into the folder ``location``; its manifest entry.

    ``deletes`` maps data file paths (exactly as their manifests spell them) to deleted
    positions. ``properties`` (the table's) choose the codec, as for data files.
    """
    table = position_delete_table(deletes)
    target = _new_name(location, "parquet")
    place = Placement(location)  # the folder, or a local spool uploaded after (object stores)
    relative = target.rsplit("/", 1)[1]
    local = place.local(relative)
    codec = parquet_codec(properties)
    view = f"__iceduck_posdel_{uuid.uuid4().hex}"
    con.register(view, table)
    try:
        con.execute(
            f"COPY (SELECT file_path, pos FROM {view}) TO {quote_string(local)} (FORMAT parquet, "
            f"FIELD_IDS {{file_path: {DELETE_FILE_PATH_ID}, pos: {DELETE_POS_ID}}}, COMPRESSION {codec}, "
            "KV_METADATA {'delete-type': 'position'})"
        )
        place.made(relative)
        metrics = file_metrics(pq.read_metadata(local), POSITION_DELETE_SCHEMA, _FULL_METRICS)
        size = os.path.getsize(local)
        place.finish()
    except BaseException:
        place.discard()
        fileio.delete(local)
        raise
    finally:
        con.unregister(view)
        place.close()
    referenced = [p for p in deletes if len(deletes[p])]
    return DataFile(
        content=FileContent.POSITION_DELETES,
        file_path=target,
        file_format=FileFormat.PARQUET,
        partition=tuple(partition),
        record_count=table.num_rows,
        file_size_in_bytes=size,
        column_sizes=metrics.column_sizes,
        lower_bounds=metrics.lower_bounds,
        upper_bounds=metrics.upper_bounds,
        split_offsets=metrics.split_offsets,
        referenced_data_file=referenced[0] if len(referenced) == 1 else None,
        spec_id=spec_id,
    )


def write_deletion_vector_file(
    dvs: Mapping[str, DeletionVector], *, location: str, partitions: Mapping[str, tuple[int, tuple]]
) -> list[DataFile]:
    """Write one Puffin file of deletion vectors into the folder ``location``; one entry per
    blob, with the spec id and partition of its data file (``partitions[path]``).

    "There can be at most one deletion vector for a given data file in a snapshot": the
    caller merges earlier DVs / position deletes into ``dvs`` first.
    """
    missing = [path for path in dvs if path not in partitions]
    if missing:
        raise ValidationError(f"no partition given for data file {missing[0]}")
    data, blobs = write_deletion_vectors(dvs.items(), created_by=CREATED_BY)
    target = _new_name(location, "puffin")
    fileio.write_new(target, data)
    out = []
    for blob in blobs:
        path = blob.properties["referenced-data-file"]
        spec_id, partition = partitions[path]
        out.append(
            DataFile(
                content=FileContent.POSITION_DELETES,
                file_path=target,
                file_format=FileFormat.PUFFIN,
                partition=tuple(partition),
                record_count=int(blob.properties["cardinality"]),
                file_size_in_bytes=len(data),
                referenced_data_file=path,
                content_offset=blob.offset,
                content_size_in_bytes=blob.length,
                spec_id=spec_id,
            )
        )
    return out


def write_equality_deletes(
    con: Duck, keys_sql: str, target: FileTarget, equality_ids: Sequence[int], *, params: Any = None
) -> list[DataFile]:
    """Write the rows of ``keys_sql`` (``target.schema``'s top-level columns: the equality
    fields and the structs holding them) as equality delete files partitioned by
    ``target.spec``; their manifest entries.

    Spec, "Equality Delete Files": "The data file's [...] columns" of an equality delete
    "must contain the equality fields" and a row is deleted when "the values are equal"
    for all of them. The spec's partition source columns must be among ``target.schema``'s
    (a key then lies in exactly one partition): the caller checks it.
    """
    ids = list(equality_ids)
    if not ids:
        raise ValidationError("an equality delete file needs at least one equality field")
    files = write_data_files(con, keys_sql, target, params=params)
    return [
        replace(f, content=FileContent.EQUALITY_DELETES, equality_ids=ids, sort_order_id=None) for f in files
    ]
