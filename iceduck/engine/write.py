"""Write the rows of a DuckDB query as Iceberg data files (spec: "Writing data files",
Appendix A "Parquet", "Partitioning", "Sorting").

One ``COPY (...) TO <temporary folder> (FORMAT parquet, PARTITION_BY ..., RETURN_STATS
true, FIELD_IDS {...})`` does the work in a single pass over the query:

* columns are cast to the table's types (:mod:`iceduck.engine.write_columns`: Appendix
  A's physical types: timestamptz as INT64 micros with ``isAdjustedToUTC=true``, timestamp with ``false``,
  decimals with the column's precision, uuid as ``fixed_len_byte_array(16)``/UUID, time
  as micros), with a null in a required field failing the statement via DuckDB's
  ``error()`` (nothing is kept: the temporary folder is removed);
* each partition field is a hidden key column (:func:`partition_sql.partition_key_sql`:
  short text, at most 129 characters whatever the value, so DuckDB's temporary folder names
  stay short) that DuckDB's ``PARTITION_BY`` splits on; a long string or binary value is
  keyed by its SHA-256 and read back from one row of a file written under that key
  (:func:`_resolve_digest_keys`); each file is then moved to
  ``<data location>/<field>=<human value>/...`` as Java's ``PartitionSpec.partitionToPath``
  names folders (:func:`partition_path`; a name over the file system's 255 bytes is
  shortened, see :func:`bounded_folder_name`), under a name no other writer can take (a
  fresh uuid per statement);
* with a sort order, each written file is rewritten sorted by it (``ORDER BY`` with the
  order's directions and null orders; DuckDB's ``PARTITION_BY`` does not keep a query's
  order, measured); without one rows are only grouped by partition, Spark's default;
* files roll at ``write.target-file-size-bytes`` (DuckDB rolls at row-group boundaries,
  so row groups are capped at the target size too), row groups end at
  ``write.parquet.row-group-size-bytes`` (DuckDB counts uncompressed bytes) or at DuckDB's
  122,880 rows, whichever comes first (bounded memory per thread), compression per
  ``write.parquet.compression-codec``/``-level``;
* metrics come from each file's footer (:mod:`iceduck.formats.parquet_metrics`), with
  float/double NaN counts and NaN-free bounds from DuckDB's own statistics of the pass.

``fixed(L)`` columns: DuckDB writes them as Parquet ``binary`` (it has no fixed-length byte
arrays), which Spark's vectorised reader refuses; files of tables with fixed columns are
rewritten by :mod:`iceduck.formats.parquet_fixed` with ``fixed_len_byte_array(L)``, after
DuckDB checked that every value has exactly L bytes.

A table in an object store: DuckDB's output and all the post-processing above stay on the
local disk, in a spool folder, and each finished file is uploaded to its location
(:mod:`iceduck.engine.spool`: DuckDB cannot write there without httpfs, and the rewrites
are local file operations); a failure removes the spool and every uploaded file.

``int`` columns: DuckDB annotates INT32 with ``Int(32, signed)``/``INT_32``, which Iceberg
1.10's vectorised Spark reader cannot read once the column is promoted to ``long``
(apache/iceberg#16341); every file's footer is rewritten without those annotations
(:mod:`iceduck.formats.parquet_footer`), as Spark itself writes ``int`` columns.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow.parquet as pq

from iceduck.engine.file_errors import io_error, statement_file_error
from iceduck.engine.partition_sql import (
    is_digest_key,
    may_have_digest_keys,
    parse_partition_key,
    partition_key_sql,
    partition_value_sql,
    register_hash_functions,
    transform_sql,
    uses_hash_functions,
)
from iceduck.engine.queries import describe
from iceduck.engine.spool import Placement
from iceduck.engine.types import duckdb_type, quote_identifier, quote_string
from iceduck.engine.write_columns import CHECK, field_ids_option, select_sql
from iceduck.errors import CorruptDataError, UnsupportedError, ValidationError
from iceduck.formats.parquet_fixed import has_fixed, rewrite_fixed_columns
from iceduck.formats.parquet_footer import int_field_ids, strip_int32_annotations
from iceduck.formats.parquet_metrics import FloatStats, file_metrics, parquet_data_file
from iceduck.io.fileio import storage_error
from iceduck.spec import properties as props
from iceduck.spec.manifest import DataFile
from iceduck.spec.partition import PartitionSpec, partition_path_segments
from iceduck.spec.partition import escape_path_segment as escape_path_segment
from iceduck.spec.schema import Schema
from iceduck.spec.sort import NullOrder, SortDirection, SortOrder
from iceduck.spec.types import (
    DoubleType,
    FloatType,
    NestedField,
    StructType,
    UnknownType,
)

if TYPE_CHECKING:
    from iceduck.engine.connection import Duck

#: Java's codec names -> DuckDB's (Java's ``lz4`` is Hadoop LZ4; DuckDB writes LZ4_RAW, which
#: parquet-mr reads)
_CODECS = {
    "zstd": "zstd",
    "gzip": "gzip",
    "snappy": "snappy",
    "lz4": "lz4_raw",
    "lz4_raw": "lz4_raw",
    "brotli": "brotli",
    "uncompressed": "uncompressed",
    "none": "uncompressed",
}

#: DuckDB's codec names -> pyarrow's, for files rewritten by pyarrow
_PYARROW_CODECS = {"lz4_raw": "lz4", "uncompressed": "none"}


@dataclass(frozen=True)
class FileTarget:
    """Where and how new data files of a table are written: the table's current schema,
    spec, sort order and write properties (not which table or branch a statement changes:
    that is :class:`iceduck.ops.context.WriteTarget`)."""

    schema: Schema
    spec: PartitionSpec
    sort_order: SortOrder
    properties: Mapping[str, str]
    data_location: str
    format_version: int


def write_data_files(
    con: Duck,
    query_sql: str,
    target: FileTarget,
    *,
    params: Any = None,
    row_lineage: bool = False,
    width: int | None = None,
) -> list[DataFile]:
    """Write the rows of ``query_sql`` (the schema's top-level columns in order, plus
    ``_row_id`` and ``_last_updated_sequence_number`` with ``row_lineage``) as data files of
    ``target``; returns their :class:`DataFile` entries (``spec_id`` and partition set).

    ``width`` is the number of columns ``query_sql`` yields, for a caller that built the
    query with one item per column (an INSERT's select over a query it described already):
    binding the query once more only to count them costs about 0.7 ms a write. Without it
    the query is described here.

    Raises :class:`ValidationError` naming the column when a value cannot be cast to its
    column's type or a required column gets a null; no file is left behind then.
    """
    hashes = uses_hash_functions(query_sql)  # a caller's query may bucket too
    if hashes:
        register_hash_functions(con)
    if width is None:
        width = len(describe(con, query_sql, params))
    expected = len(target.schema.fields) + (2 if row_lineage else 0)
    if width != expected:
        raise ValidationError(f"the query yields {width} columns, but {expected} are written to the table")
    select, fields = select_sql(query_sql, target.schema, width, row_lineage)
    keys = _partition_keys(target)
    key_items = "".join(f", {sql} AS {quote_identifier(name)}" for name, sql in keys)
    names = ", ".join(quote_identifier(f.name) for f in fields)
    order = _order_by(target)
    body = f"SELECT {names}{key_items} FROM ({select}) AS __w"
    if not hashes and uses_hash_functions(body + order):  # a bucket partition or sort field
        register_hash_functions(con)
    write_id = str(uuid.uuid4())
    place = Placement(target.data_location)  # the data folder, or a local spool (object stores)
    tmp_dir = os.path.join(place.root, f".iceduck-tmp-{write_id}")
    options = _copy_options(target, fields, [name for name, _ in keys])
    try:
        cursor = con.execute(f"COPY ({body}) TO {quote_string(tmp_dir)} ({options})", params)
        columns = [d[0] for d in cursor.description]
        written = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
        written = [w for w in written if w["count"]]
        resolved = _resolve_digest_keys(con, target, written)
        files = []
        for n, got in enumerate(written):
            spelled = resolved.get(_key_tuple(got))
            found = spelled if spelled is not None else (got["partition_keys"] or {})
            partition = _partition_tuple(target, found)
            name = f"{n:05d}-0-{write_id}-00001.parquet"
            files.append(_place_file(con, target, got, partition, name, order, fields, place))
        place.finish()
        return files
    except (duckdb.Error, OSError) as e:  # OSError: moving or rewriting a file DuckDB wrote
        place.discard()
        error = _write_error(con, e, query_sql, params, target, width)
        if error is e:
            raise
        raise error from e
    except BaseException:
        place.discard()
        raise
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
        place.close()


def _key_tuple(written: Mapping[str, Any]) -> tuple[tuple[str, str | None], ...]:
    """The partition keys DuckDB wrote a file under, hashable (files rolled in one partition
    share them)."""
    return tuple(sorted((written["partition_keys"] or {}).items()))


def _resolve_digest_keys(
    con: Duck, target: FileTarget, written: Sequence[Mapping[str, Any]]
) -> dict[tuple, dict[str, str | None]]:
    """For each partition whose keys include a digest key (a long string or binary value,
    :func:`partition_sql.partition_key_sql`), the keys with every value spelled out, read
    from the first row of one file written under them: every row of a file has the same
    partition values, and the first row group of one column costs far less than a second
    pass over the query. The row's keys are computed again and must equal the folder's.
    """
    pending: dict[tuple, Mapping[str, Any]] = {}
    for w in written:
        if any(is_digest_key(v) for v in (w["partition_keys"] or {}).values()):
            pending.setdefault(_key_tuple(w), w)
    if not pending:
        return {}
    fields = _bytes_partition_fields(target)
    items = ", ".join(f"{value} AS v{i}, {key} AS k{i}" for i, value, key in fields)
    batch = list(pending.items())
    cursor = con.execute(_first_rows_sql([w["filename"] for _, w in batch], items, target.schema))
    names = [d[0] for d in cursor.description]
    out: dict[tuple, dict[str, str | None]] = {}
    for row in cursor.fetchall():
        got = dict(zip(names, row, strict=True))
        keys_tuple, w = batch[got["n"]]
        keys = dict(w["partition_keys"])
        for i, _, _ in fields:
            column = f"__iceduck_p{i}"
            if got[f"k{i}"] != keys.get(column):
                raise CorruptDataError(
                    f"{w['filename']} was written under partition key {keys.get(column)!r} "
                    f"but holds a row of key {got[f'k{i}']!r}"
                )
            keys[column] = got[f"v{i}"]
        out[keys_tuple] = keys
    return out


def _first_rows_sql(files: Sequence[str], items: str, schema: Schema) -> str:
    """``n`` (the position in ``files``) and ``items`` over the first row of each file.

    One scan of all files, keeping ``file_row_number = 0``: DuckDB then reads only each
    file's first row group (measured: 2 of 198 row groups for two files; 480 one-row-group
    files in 60-90 ms, against 200-300 ms for a ``LIMIT 1`` query per file). Those are
    DuckDB's virtual columns, hidden by a column of the same name: a table with one gets a
    ``LIMIT 1`` query per file instead.
    """
    taken = {f.name.lower() for f in schema.fields}
    if not taken & {"file_row_number", "file_index"}:
        listed = ", ".join(quote_string(f) for f in files)
        return (
            f"SELECT file_index AS n, {items} FROM read_parquet([{listed}], hive_partitioning = false) "
            "WHERE file_row_number = 0"
        )
    return " UNION ALL ".join(
        f"(SELECT {n} AS n, {items} FROM read_parquet({quote_string(f)}, hive_partitioning = false) LIMIT 1)"
        for n, f in enumerate(files)
    )


def _bytes_partition_fields(target: FileTarget) -> list[tuple[int, str, str]]:
    """(position, value SQL, key SQL) of each partition field whose key may be a digest key
    (string, binary and fixed results), over the columns of a written file."""
    out = []
    for i, pf in enumerate(target.spec.fields):
        if pf.transform.is_void:
            continue
        source = target.schema.find_field(pf.source_id).field_type
        if may_have_digest_keys(pf.transform.result_type(source)):
            column = column_ref(target.schema, pf.source_id)
            value = partition_value_sql(pf.transform, source, column)
            out.append((i, value, partition_key_sql(pf.transform, source, column)))
    return out


def _place_file(
    con: Duck,
    target: FileTarget,
    written: Mapping[str, Any],
    partition: tuple,
    name: str,
    order: str,
    fields: list[NestedField],
    place: Placement,
) -> DataFile:
    """Move (or, for a sorted table, rewrite sorted) one file DuckDB wrote to its partition
    folder (in the spool, for an object store); its DataFile. ``place`` records it for
    the upload, and for cleanup on failure."""
    relative = f"{partition_path(target, partition)}{name}"
    final = place.local(relative)
    stats = written["column_statistics"]
    if order:  # PARTITION_BY does not keep the query's order: sort each file
        stats = _sorted_copy(con, written["filename"], final, order, target, fields)
        os.unlink(written["filename"])
    else:
        os.rename(written["filename"], final)
    place.made(relative)
    if has_fixed(target.schema):
        codec = parquet_codec(target.properties)
        rewrite_fixed_columns(final, target.schema, _PYARROW_CODECS.get(codec, codec))
    # before the size and the footer metrics are taken: both must describe the final file
    strip_int32_annotations(final, int_field_ids(target.schema))
    location = place.location_of(relative)
    return _data_file(
        target, location, final, written["count"], os.path.getsize(final), stats or {}, partition
    )


def _sorted_copy(
    con: Duck, source: str, final: str, order: str, target: FileTarget, fields: list[NestedField]
) -> dict[str, Any]:
    """Rewrite one written file in the sort order; DuckDB's statistics of the new file."""
    options = _copy_options(target, fields, [], roll=False)
    # hive_partitioning off: the folder names (__iceduck_p0=...) must not become columns
    select = f"SELECT * FROM read_parquet({quote_string(source)}, hive_partitioning = false){order}"
    cursor = con.execute(f"COPY ({select}) TO {quote_string(final)} ({options})")
    columns = [d[0] for d in cursor.description]
    stats = cursor.fetchone()
    assert stats is not None  # COPY reports one row per file it wrote
    row = dict(zip(columns, stats, strict=True))
    return row["column_statistics"] or {}


def _target_size(target: FileTarget) -> int:
    return props.int_property(
        target.properties, props.TARGET_FILE_SIZE_BYTES, props.TARGET_FILE_SIZE_BYTES_DEFAULT
    )


def column_ref(schema: Schema, field_id: int) -> str:
    """``"st"."a"``: a (possibly nested, through structs) column by id."""
    chain = []
    current: int | None = field_id
    while current is not None:
        chain.append(quote_identifier(schema.find_field(current).name))
        current = schema.parent_id(current)
    return ".".join(reversed(chain))


def _partition_keys(target: FileTarget) -> list[tuple[str, str]]:
    """(hidden column name, key SQL) per non-void partition field."""
    out = []
    for i, pf in enumerate(target.spec.fields):
        if pf.transform.is_void:
            continue
        source = target.schema.find_field(pf.source_id)
        ref = column_ref(target.schema, pf.source_id)
        out.append((f"__iceduck_p{i}", partition_key_sql(pf.transform, source.field_type, ref)))
    return out


def order_by_sql(target: FileTarget) -> str:
    """`` ORDER BY ...`` of the target's sort order over its columns by name (empty when
    unsorted): a compaction sorts a whole file group by it before cutting it into files."""
    return _order_by(target)


def _order_by(target: FileTarget) -> str:
    """``ORDER BY`` of the sort order ("Sorting": direction and null order per field)."""
    terms = []
    for sf in target.sort_order.fields:
        source = target.schema.find_field(sf.source_id)
        expr = transform_sql(sf.transform, source.field_type, column_ref(target.schema, sf.source_id))
        direction = "DESC" if sf.direction is SortDirection.DESC else "ASC"
        nulls = "NULLS FIRST" if sf.null_order is NullOrder.NULLS_FIRST else "NULLS LAST"
        terms.append(f"{expr} {direction} {nulls}")
    return f" ORDER BY {', '.join(terms)}" if terms else ""


def _copy_options(
    target: FileTarget, fields: list[NestedField], keys: list[str], *, roll: bool = True
) -> str:
    """COPY options; ``roll``: write a folder of files rolled at the target size, named by
    uuid (else exactly the one file named in the statement)."""
    p = target.properties
    codec = parquet_codec(p)
    size = _target_size(target)
    group = props.int_property(
        p, props.PARQUET_ROW_GROUP_SIZE_BYTES, props.PARQUET_ROW_GROUP_SIZE_BYTES_DEFAULT
    )
    options = [
        "FORMAT parquet",
        f"FIELD_IDS {field_ids_option(tuple(fields))}",
        f"COMPRESSION {codec}",
        f"ROW_GROUP_SIZE_BYTES {min(group, size)}",
        "RETURN_STATS true",
    ]
    if roll:
        options += [f"FILE_SIZE_BYTES {size}", "FILENAME_PATTERN 'data_{uuid}'"]
    level = p.get(props.PARQUET_COMPRESSION_LEVEL)
    if level is not None and codec == "zstd":
        options.append(f"COMPRESSION_LEVEL {props.int_property(p, props.PARQUET_COMPRESSION_LEVEL, 3)}")
    if keys:
        options.append(f"PARTITION_BY ({', '.join(quote_identifier(k) for k in keys)})")
    return ", ".join(options)


def parquet_codec(properties: Mapping[str, str]) -> str:
    """DuckDB's name of the table's ``write.parquet.compression-codec``."""
    name = props.str_property(properties, props.PARQUET_COMPRESSION, props.PARQUET_COMPRESSION_DEFAULT)
    codec = _CODECS.get(name.lower())
    if codec is None:
        raise UnsupportedError(f"unsupported {props.PARQUET_COMPRESSION} {name!r}")
    return codec


def _partition_tuple(target: FileTarget, found: Mapping[str, Any]) -> tuple:
    texts = dict(found)
    values: list[Any] = []
    for i, pf in enumerate(target.spec.fields):
        if pf.transform.is_void:
            values.append(None)
            continue
        result_type = pf.transform.result_type(target.schema.find_field(pf.source_id).field_type)
        values.append(parse_partition_key(result_type, texts.get(f"__iceduck_p{i}")))
    return tuple(values)


#: NAME_MAX: the longest file or folder name, in bytes, of Linux file systems (ext4, xfs,
#: btrfs, tmpfs); APFS and NTFS allow 255 characters (escaped names are ASCII: the same)
MAX_NAME_BYTES = 255
#: hex digits of SHA-256 that end a shortened folder name
_NAME_DIGEST_CHARS = 32


def bounded_folder_name(segment: str) -> str:
    """``segment`` (an escaped ``name=value``) as a folder name the file system accepts.

    Java's ``PartitionSpec.partitionToPath`` bounds nothing, and on a local file system a
    segment over :data:`MAX_NAME_BYTES` fails to be created (``File name too long``): Spark
    cannot write such a value to a local table at all. iceduck keeps Java's name whenever it
    fits, and otherwise writes its first bytes (never cutting a ``%XX`` escape in two), then
    ``~`` and 32 hex digits of the SHA-256 of the whole segment: 255 bytes. ``URLEncoder``
    escapes ``~`` (``%7E``), so a shortened name never equals Java's name of another value,
    and the digest keeps different values in different folders.

    Nothing reads values back from paths: "The ``partition`` struct stores the tuple of
    partition values for each file" (spec, "Manifests"), and Iceberg readers take them from
    there, so the name is a label for people browsing the folder.
    """
    if len(segment.encode()) <= MAX_NAME_BYTES:
        return segment
    digest = hashlib.sha256(segment.encode()).hexdigest()[:_NAME_DIGEST_CHARS]
    head = segment[: MAX_NAME_BYTES - 1 - _NAME_DIGEST_CHARS]
    escape = head.find("%", len(head) - 2)
    if escape != -1:  # a '%' in the last two characters starts an escape that was cut
        head = head[:escape]
    return f"{head}~{digest}"


def partition_path(target: FileTarget, partition: tuple) -> str:
    """``name=value/`` per partition field (Java's ``PartitionSpec.partitionToPath``, each
    folder name bounded by :func:`bounded_folder_name`), '' if unpartitioned."""
    segments = partition_path_segments(target.spec, target.schema, partition)
    return "".join(f"{bounded_folder_name(s)}/" for s in segments)


def _float_stats(schema: Schema, stats: Mapping[str, Mapping[str, str]]) -> dict[int, FloatStats]:
    """NaN counts and NaN-free bounds of float/double columns from DuckDB's statistics
    (keyed by quoted paths, ``"st"."x"``), for columns reached through structs."""
    out: dict[int, FloatStats] = {}

    def walk(fields: tuple[NestedField, ...], prefix: str) -> None:
        for f in fields:
            key = prefix + quote_identifier(f.name)
            if isinstance(f.field_type, StructType):
                walk(f.field_type.fields, key + ".")
            elif isinstance(f.field_type, FloatType | DoubleType) and key in stats:
                s = stats[key]
                low, high = s.get("min"), s.get("max")
                value_count = null_count = None
                parent = stats.get(prefix[:-1]) if prefix else None
                if parent is not None and "null_count" in parent and "num_values" in s:
                    hidden = int(parent["null_count"])  # rows whose enclosing struct is null
                    value_count = int(s["num_values"]) - hidden
                    null_count = int(s.get("null_count", 0)) - hidden
                out[f.field_id] = FloatStats(
                    int(s.get("nan_count", 0)),
                    None if low is None else float(low),
                    None if high is None else float(high),
                    value_count,
                    null_count,
                )

    walk(schema.fields, "")
    return out


def _data_file(
    target: FileTarget,
    location: str,
    local: str,
    count: int,
    size: int,
    stats: Mapping[str, Mapping[str, str]],
    partition: tuple,
) -> DataFile:
    metrics = file_metrics(
        pq.read_metadata(local),
        target.schema,
        target.properties,
        sort_order=target.sort_order,
        float_stats=_float_stats(target.schema, stats),
    )
    return parquet_data_file(
        location,
        partition,
        count,
        size,
        metrics,
        sort_order_id=target.sort_order.order_id,
        spec_id=target.spec.spec_id,
    )


def _duckdb_message(text: str) -> str:
    """DuckDB's message without what only makes sense in the SQL iceduck generated: the
    ``LINE`` excerpt of that SQL and the internal names of the query's columns."""
    text = text.partition("\n\nLINE ")[0].strip()
    return re.sub(r" when casting from source column c\d+", "", text)


def _write_error(
    con: Duck, error: Exception, query_sql: str, params: Any, target: FileTarget, width: int
) -> Exception:
    """The error to raise for a failed COPY: our own checks and cast failures name the column;
    the storage refusing (disk full, read-only, permissions, size limit, name too long) is a
    StorageError naming the file, whether DuckDB or Python met it."""
    if isinstance(error, OSError):
        return storage_error(error)
    about_file = statement_file_error(con, error)  # a file the query reads, or the disk refusing
    if about_file is not None:
        return about_file
    if isinstance(error, duckdb.IOException):
        return io_error(error, table_file=False)
    text = _duckdb_message(str(error))
    if CHECK in text:
        return ValidationError(text[text.index(CHECK) + len(CHECK) :].strip())
    if isinstance(error, duckdb.ConversionException | duckdb.InvalidInputException):
        aliases = ", ".join(f"c{i}" for i in range(width))
        checked = [
            (f, f"TRY_CAST(c{i} AS {duckdb_type(f.field_type)})", f"c{i}")
            for i, f in enumerate(target.schema.fields)
            if not isinstance(f.field_type, UnknownType)
        ]
        tests = [f"count(*) FILTER (WHERE {raw} IS NOT NULL AND {cast} IS NULL)" for _, cast, raw in checked]
        try:
            counts = con.execute(
                f"SELECT {', '.join(tests)} FROM ({query_sql}) AS __q({aliases})", params
            ).fetchone()
        except duckdb.Error:
            counts = None
        for (f, _, _), bad in zip(checked, counts or (), strict=False):
            if bad:
                return ValidationError(
                    f"cannot write {bad} value(s) to column {f.name} of type {f.field_type}: {text}"
                )
        return ValidationError(f"cannot write the rows: {text}")
    return error
