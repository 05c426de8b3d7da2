"""Table property names and defaults, as Iceberg Java's ``TableProperties`` spells them.

Spark, PyIceberg and iceduck share tables, so a property set by one engine must mean the
same to the others: every name and default here is Java's (Iceberg 1.10). Modules that
read a property import its name and default from here and read it with the typed getters
below, which refuse a malformed value with a :class:`~iceduck.errors.ValidationError`
naming the property (Java throws ``NumberFormatException`` there).

Properties iceduck reads but does not act on, on purpose:

* ``write.distribution-mode``, ``write.spark.*``: Spark job tuning, nothing for a single
  process.

``write.metadata.metrics.*`` names and the syntax of their modes (``none``, ``counts``,
``truncate(N)``, ``full``: :func:`metrics_mode`) live here; which columns get which
mode is the data writer's business.

:func:`validate_properties` checks the values a statement sets (CREATE TABLE, CTAS,
REPLACE TABLE, ALTER TABLE ... SET TBLPROPERTIES) before anything is written: every
property iceduck honours must hold a value Java reads the same way and iceduck can write
with. Java checks little when a property is set -- ``TableMetadata.newTableMetadata``
runs ``PropertyUtil.validateCommitProperties`` (``commit.retry.*``: "Table property %s
must have non negative integer value") and ``MetricsConfig.validateReferencedColumns``
("Invalid metrics config, could not find column %s from table prop %s in schema %s"),
the latter also on ``UpdateProperties`` -- and the rest fails at the first write that
reads it (``Parquet``: "Row group size must be > 0", "Unsupported compression codec";
``RowLevelOperationMode.fromName``, ``IsolationLevel.fromName``,
``DistributionMode.fromName``...). iceduck refuses all of them up front, so a table
never holds a value that makes every later write fail. Values already in a table (set
by Spark, say) are not checked: reading them keeps the readers' behaviour. Properties
iceduck does not know stay free, as in Spark. ``format-version`` is checked where it
is consumed (``iceduck.txn.builder.parse_format_version``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from iceduck.errors import ValidationError

if TYPE_CHECKING:
    from iceduck.spec.schema import Schema

# -- reserved: consumed by table creation, never stored (Java's RESERVED_PROPERTIES) ----------

FORMAT_VERSION = "format-version"
#: Java's ``TableProperties.RESERVED_PROPERTIES``: derived from metadata, shown by Spark's
#: ``SHOW TBLPROPERTIES`` but never stored in ``properties``
RESERVED_PROPERTIES = frozenset(
    {
        FORMAT_VERSION,
        "uuid",
        "snapshot-count",
        "current-snapshot-id",
        "current-snapshot-summary",
        "current-snapshot-timestamp-ms",
        "current-schema",
        "default-partition-spec",
        "default-sort-order",
    }
)
DEFAULT_FORMAT_VERSION = 2

# -- data files --------------------------------------------------------------------------------

PARQUET_COMPRESSION = "write.parquet.compression-codec"
#: Java's default is gzip for old tables, but since 1.4 ``newTableMetadata`` stores zstd on
#: every new table (``PARQUET_COMPRESSION_DEFAULT_SINCE_1_4_0``)
PARQUET_COMPRESSION_DEFAULT = "zstd"
#: Java's ``CompressionCodecName`` (upper-cased by ``Parquet.toCodec``) less ``lzo``, which
#: iceduck cannot write; iceduck's writer also reads ``none`` on tables that have it, but
#: Java refuses that name ("Unsupported compression codec: none")
PARQUET_COMPRESSION_CODECS = ("zstd", "gzip", "snappy", "lz4", "lz4_raw", "brotli", "uncompressed")
PARQUET_COMPRESSION_LEVEL = "write.parquet.compression-level"
#: the levels zstd (and DuckDB's writer: "Compression level must be between -131072 and
#: 22") accepts; iceduck passes the level to the zstd codec only
ZSTD_LEVELS = (-131072, 22)
TARGET_FILE_SIZE_BYTES = "write.target-file-size-bytes"
TARGET_FILE_SIZE_BYTES_DEFAULT = 536870912  # 512 MB
PARQUET_ROW_GROUP_SIZE_BYTES = "write.parquet.row-group-size-bytes"
PARQUET_ROW_GROUP_SIZE_BYTES_DEFAULT = 134217728  # 128 MB
WRITE_DATA_LOCATION = "write.data.path"
WRITE_METADATA_LOCATION = "write.metadata.path"

# -- column metrics (parsed by the data writer) ------------------------------------------------

METRICS_MODE_DEFAULT = "write.metadata.metrics.default"
METRICS_MODE_DEFAULT_VALUE = "truncate(16)"
#: prefix of per-column modes: ``write.metadata.metrics.column.<dotted column name>``
METRICS_MODE_COLUMN_PREFIX = "write.metadata.metrics.column."
METRICS_MAX_INFERRED_COLUMN_DEFAULTS = "write.metadata.metrics.max-inferred-column-defaults"
METRICS_MAX_INFERRED_COLUMN_DEFAULTS_DEFAULT = 100

WRITE_DISTRIBUTION_MODE = "write.distribution-mode"
#: Java's ``DistributionMode`` (``fromName`` upper-cases)
DISTRIBUTION_MODES = ("none", "hash", "range")
SCHEMA_NAME_MAPPING = "schema.name-mapping.default"

# -- row-level operations ----------------------------------------------------------------------

DELETE_MODE = "write.delete.mode"
UPDATE_MODE = "write.update.mode"
MERGE_MODE = "write.merge.mode"
COPY_ON_WRITE = "copy-on-write"
MERGE_ON_READ = "merge-on-read"
ROW_LEVEL_MODE_DEFAULT = COPY_ON_WRITE
#: conflict checks of DELETE / UPDATE / MERGE on retry: ``serializable`` (also fail when a
#: concurrent commit added data the statement's condition may match) or ``snapshot``;
#: Java's ``TableProperties.DELETE_ISOLATION_LEVEL`` and siblings, default serializable
DELETE_ISOLATION_LEVEL = "write.delete.isolation-level"
UPDATE_ISOLATION_LEVEL = "write.update.isolation-level"
MERGE_ISOLATION_LEVEL = "write.merge.isolation-level"
#: Flink's ``write.upsert.enabled`` (``FlinkWriteOptions.WRITE_UPSERT_ENABLED``): an INSERT
#: replaces the rows with the same identifier fields, written as equality deletes
UPSERT_ENABLED = "write.upsert.enabled"
ISOLATION_LEVEL_DEFAULT = "serializable"
#: Java's ``IsolationLevel`` (``fromName`` upper-cases)
ISOLATION_LEVELS = ("serializable", "snapshot")

# -- commits -----------------------------------------------------------------------------------

COMMIT_NUM_RETRIES = "commit.retry.num-retries"
COMMIT_NUM_RETRIES_DEFAULT = 4
COMMIT_MIN_RETRY_WAIT_MS = "commit.retry.min-wait-ms"
COMMIT_MIN_RETRY_WAIT_MS_DEFAULT = 100
COMMIT_MAX_RETRY_WAIT_MS = "commit.retry.max-wait-ms"
COMMIT_MAX_RETRY_WAIT_MS_DEFAULT = 60000  # 1 minute
COMMIT_TOTAL_RETRY_TIME_MS = "commit.retry.total-timeout-ms"
COMMIT_TOTAL_RETRY_TIME_MS_DEFAULT = 1800000  # 30 minutes

# -- metadata files ----------------------------------------------------------------------------

METADATA_PREVIOUS_VERSIONS_MAX = "write.metadata.previous-versions-max"
METADATA_PREVIOUS_VERSIONS_MAX_DEFAULT = 100
METADATA_DELETE_AFTER_COMMIT_ENABLED = "write.metadata.delete-after-commit.enabled"
METADATA_DELETE_AFTER_COMMIT_ENABLED_DEFAULT = False
#: ``none`` (default) or ``gzip``: gzip writes ``.gz.metadata.json`` files
METADATA_COMPRESSION = "write.metadata.compression-codec"
METADATA_COMPRESSION_DEFAULT = "none"
#: Java's ``TableMetadataParser.Codec`` (``fromName`` upper-cases: "Invalid codec name")
METADATA_COMPRESSION_CODECS = ("none", "gzip")

# -- manifest merging on commit (iceduck.txn.manifest_merge) -----------------------------------

MANIFEST_MERGE_ENABLED = "commit.manifest-merge.enabled"
MANIFEST_MERGE_ENABLED_DEFAULT = True
#: a bin holding the commit's new manifest is merged only when it has this many manifests
MANIFEST_MIN_MERGE_COUNT = "commit.manifest.min-count-to-merge"
MANIFEST_MIN_MERGE_COUNT_DEFAULT = 100
MANIFEST_TARGET_SIZE_BYTES = "commit.manifest.target-size-bytes"
MANIFEST_TARGET_SIZE_BYTES_DEFAULT = 8388608  # 8 MB


# -- snapshot expiry and file cleanup (iceduck.txn.expire, iceduck.ops.procedures) --------------
#: "when false, snapshot expiry and orphan removal refuse to delete files" (files may be shared)
GC_ENABLED = "gc.enabled"
GC_ENABLED_DEFAULT = True
MAX_SNAPSHOT_AGE_MS = "history.expire.max-snapshot-age-ms"
MAX_SNAPSHOT_AGE_MS_DEFAULT = 5 * 24 * 60 * 60 * 1000  # 5 days
MIN_SNAPSHOTS_TO_KEEP = "history.expire.min-snapshots-to-keep"
MIN_SNAPSHOTS_TO_KEEP_DEFAULT = 1
MAX_REF_AGE_MS = "history.expire.max-ref-age-ms"
MAX_REF_AGE_MS_DEFAULT = 2**63 - 1  # Java's Long.MAX_VALUE: refs never expire by default


# -- typed getters -----------------------------------------------------------------------------


def int_property(props: Mapping[str, str], name: str, default: int) -> int:
    """``props[name]`` as an int, ``default`` when absent (Java's ``PropertyUtil.propertyAsInt``)."""
    value = props.get(name)
    if value is None:
        return default
    try:
        return int(value.strip())
    except ValueError:
        raise ValidationError(f"table property {name!r} must be an integer, not {value!r}") from None


def try_int_property(props: Mapping[str, str], name: str, default: int) -> int:
    """``props[name]`` as an int, ``default`` when absent *or unreadable* (Java's
    ``PropertyUtil.propertyTryAsInt``, which ``SnapshotProducer`` uses for the commit retry
    settings "to allow rectification": a bad value must not block the very commit that
    fixes it)."""
    try:
        return int_property(props, name, default)
    except ValidationError:
        return default


def bool_property(props: Mapping[str, str], name: str, default: bool) -> bool:
    """``props[name]`` as a bool; Java's ``Boolean.parseBoolean`` reads anything but a
    case-insensitive ``true`` as false, so do we."""
    value = props.get(name)
    if value is None:
        return default
    return value.strip().lower() == "true"


def str_property(props: Mapping[str, str], name: str, default: str) -> str:
    """``props[name]``, ``default`` when absent."""
    value = props.get(name)
    return default if value is None else value


def row_level_mode(props: Mapping[str, str], name: str) -> str:
    """``copy-on-write`` or ``merge-on-read`` for ``write.delete.mode`` / ``write.update.mode``
    / ``write.merge.mode``; any other value is refused, as Java's ``RowLevelOperationMode``
    does."""
    value = str_property(props, name, ROW_LEVEL_MODE_DEFAULT).strip().lower()
    if value not in (COPY_ON_WRITE, MERGE_ON_READ):
        raise ValidationError(
            f"table property {name!r} must be {COPY_ON_WRITE!r} or {MERGE_ON_READ!r}, not {props.get(name)!r}"
        )
    return value


def data_location(props: Mapping[str, str], table_location: str) -> str:
    """Where new data files go: ``write.data.path``, else ``<location>/data`` (Java's
    ``LocationProviders``; trailing slashes dropped)."""
    configured = props.get(WRITE_DATA_LOCATION)
    if configured:
        return configured.rstrip("/")
    return f"{table_location.rstrip('/')}/data"


def metadata_location(props: Mapping[str, str], table_location: str) -> str:
    """Where new metadata files (metadata JSON, manifests, lists) go: ``write.metadata.path``,
    else ``<location>/metadata`` (Java's ``BaseMetastoreTableOperations.metadataFileLocation``)."""
    configured = props.get(WRITE_METADATA_LOCATION)
    if configured:
        return configured.rstrip("/")
    return f"{table_location.rstrip('/')}/metadata"


_TRUNCATE_MODE = re.compile(r"truncate\((\d+)\)")


def metrics_mode(text: str) -> tuple[str, int] | None:
    """A metrics mode as (kind, truncate length; 0 but for ``truncate``), None for text
    Java's ``MetricsModes.fromString`` refuses: ``none``, ``counts``, ``full`` (without
    case) or ``truncate(N)`` with N > 0 ("Truncate length should be positive").
    Surrounding spaces are forgiven here (readers); :func:`validate_properties` refuses
    them, as Java would."""
    lowered = text.strip().lower()
    if lowered in ("none", "counts", "full"):
        return lowered, 0
    match = _TRUNCATE_MODE.fullmatch(lowered)
    if match and int(match.group(1)) > 0:
        return "truncate", int(match.group(1))
    return None


# -- validation of the values a statement sets -------------------------------------------------

INT_MAX = 2**31 - 1  # Java's Integer.parseInt
LONG_MAX = 2**63 - 1  # Java's Long.parseLong
#: what Java's ``Integer.parseInt`` / ``Long.parseLong`` read (Python's ``int`` also takes
#: spaces, ``_`` and non-ASCII digits, which Java refuses)
_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")

#: a check of one property's value: (properties being set, merged with the current
#: ones, the property's name); raises ValidationError
Check = Callable[[Mapping[str, str], str], None]


def _refuse(name: str, value: str, allowed: str) -> ValidationError:
    return ValidationError(f"table property {name!r} must be {allowed}, not {value!r}")


def _one_of(choices: tuple[str, ...]) -> str:
    shown = [repr(c) for c in choices]
    return " or ".join(shown) if len(shown) == 2 else f"one of {', '.join(shown)}"


def _integer(low: int, high: int, allowed: str) -> Check:
    """An integer Java parses, between ``low`` and ``high``, read by :func:`int_property`."""

    def check(props: Mapping[str, str], name: str) -> None:
        value = props[name]
        if not _JAVA_INTEGER.fullmatch(value) or not low <= int_property(props, name, 0) <= high:
            raise _refuse(name, value, allowed)

    return check


def _choice(choices: tuple[str, ...]) -> Check:
    """One of ``choices``, without case (Java's ``valueOf(name.toUpperCase())``)."""

    def check(props: Mapping[str, str], name: str) -> None:
        value = props[name]
        if value.lower() not in choices:
            raise _refuse(name, value, _one_of(choices))

    return check


def _boolean(props: Mapping[str, str], name: str) -> None:
    """``true`` or ``false``: Java's ``Boolean.parseBoolean`` reads any other text as
    false, so a typo (``yes``, ``1``) would silently turn the feature off."""
    value = props[name]
    if value.lower() not in ("true", "false"):
        raise _refuse(name, value, "'true' or 'false'")


def _row_level_mode(props: Mapping[str, str], name: str) -> None:
    row_level_mode(props, name)


def _metrics_mode(props: Mapping[str, str], name: str) -> None:
    value = props[name]
    if metrics_mode(value) is None:
        raise _refuse(name, value, "'none', 'counts', 'full' or 'truncate(N)' with N > 0")


def _compression_level(props: Mapping[str, str], name: str) -> None:
    """An integer; for zstd (the only codec iceduck passes a level to) within zstd's range."""
    codec = props.get(PARQUET_COMPRESSION, PARQUET_COMPRESSION_DEFAULT).lower()
    low, high = ZSTD_LEVELS if codec == "zstd" else (-INT_MAX - 1, INT_MAX)
    shown = f"an integer from {low} to {high} for zstd" if codec == "zstd" else "an integer"
    _integer(low, high, shown)(props, name)


def _name_mapping(props: Mapping[str, str], name: str) -> None:
    """A JSON list (the field mappings; Java's ``NameMappingParser.fromJson`` reads it
    when a file without field ids is read)."""
    value = props[name]
    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = None
    if not isinstance(parsed, list):
        raise _refuse(name, value, 'a JSON list of field mappings ({"names": [...], "field-id": n})')


_NON_NEGATIVE_INT = _integer(0, INT_MAX, "a non-negative integer")
_POSITIVE_INT = _integer(1, INT_MAX, f"a positive integer (at most {INT_MAX})")
_POSITIVE_LONG = _integer(1, LONG_MAX, f"a positive integer (at most {LONG_MAX})")

#: the properties iceduck honours and what each may hold
CHECKS: dict[str, Check] = {
    PARQUET_COMPRESSION: _choice(PARQUET_COMPRESSION_CODECS),
    PARQUET_COMPRESSION_LEVEL: _compression_level,
    TARGET_FILE_SIZE_BYTES: _POSITIVE_LONG,
    PARQUET_ROW_GROUP_SIZE_BYTES: _POSITIVE_INT,  # Java: propertyAsInt, "must be > 0"
    METRICS_MODE_DEFAULT: _metrics_mode,
    METRICS_MAX_INFERRED_COLUMN_DEFAULTS: _NON_NEGATIVE_INT,
    WRITE_DISTRIBUTION_MODE: _choice(DISTRIBUTION_MODES),
    SCHEMA_NAME_MAPPING: _name_mapping,
    DELETE_MODE: _row_level_mode,
    UPDATE_MODE: _row_level_mode,
    MERGE_MODE: _row_level_mode,
    DELETE_ISOLATION_LEVEL: _choice(ISOLATION_LEVELS),
    UPDATE_ISOLATION_LEVEL: _choice(ISOLATION_LEVELS),
    MERGE_ISOLATION_LEVEL: _choice(ISOLATION_LEVELS),
    UPSERT_ENABLED: _boolean,
    COMMIT_NUM_RETRIES: _NON_NEGATIVE_INT,  # Java's validateCommitProperties
    COMMIT_MIN_RETRY_WAIT_MS: _NON_NEGATIVE_INT,
    COMMIT_MAX_RETRY_WAIT_MS: _NON_NEGATIVE_INT,
    COMMIT_TOTAL_RETRY_TIME_MS: _NON_NEGATIVE_INT,
    METADATA_PREVIOUS_VERSIONS_MAX: _POSITIVE_INT,
    METADATA_DELETE_AFTER_COMMIT_ENABLED: _boolean,
    METADATA_COMPRESSION: _choice(METADATA_COMPRESSION_CODECS),
    MANIFEST_MERGE_ENABLED: _boolean,
    MANIFEST_MIN_MERGE_COUNT: _NON_NEGATIVE_INT,
    MANIFEST_TARGET_SIZE_BYTES: _POSITIVE_LONG,
}
#: free text, where spaces may be meant
_FREE_TEXT = frozenset({WRITE_DATA_LOCATION, WRITE_METADATA_LOCATION, SCHEMA_NAME_MAPPING})


def validate_properties(
    updates: Mapping[str, str], schema: Schema | None = None, current: Mapping[str, str] | None = None
) -> None:
    """Refuse a value in ``updates`` that a property iceduck honours cannot hold, with a
    ValidationError naming the property, the value and what is allowed.

    ``current`` are the table's properties before the change (a compression level is
    checked against the codec the table will have); ``schema`` the table's schema after
    it, which ``write.metadata.metrics.column.<c>`` must name (Java's
    ``validateReferencedColumns``, case-sensitive ``Schema.findField``). Only the
    properties being set are checked: a table's existing values stay as they are.
    """
    merged = {**(current or {}), **updates}
    if PARQUET_COMPRESSION in updates and PARQUET_COMPRESSION_LEVEL in merged:
        updates = {**updates, PARQUET_COMPRESSION_LEVEL: merged[PARQUET_COMPRESSION_LEVEL]}
    for name in updates:
        check = CHECKS.get(name)
        if name.startswith(METRICS_MODE_COLUMN_PREFIX):
            check = _metrics_mode
            _check_metrics_column(name, schema)
        if check is None:
            continue
        value = merged[name]
        if name not in _FREE_TEXT and value != value.strip():
            raise ValidationError(
                f"table property {name!r} must not have spaces around its value {value!r}: "
                "Java does not ignore them"
            )
        check(merged, name)


def _check_metrics_column(name: str, schema: Schema | None) -> None:
    column = name[len(METRICS_MODE_COLUMN_PREFIX) :]
    if schema is not None and schema.find_field_or_none(column) is None:
        raise ValidationError(
            f"table property {name!r} names column {column!r}, which the table does not have "
            "(a nested column is named with dots: 'a.b')"
        )
