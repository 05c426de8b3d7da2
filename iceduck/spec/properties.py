"""Table property names and defaults, as Iceberg Java's ``TableProperties`` spells them.

Spark, PyIceberg and iceduck share tables, so a property set by one engine must mean the
same to the others: every name and default here is Java's (Iceberg 1.10). Modules that
read a property import its name and default from here and read it with the typed getters
below, which refuse a malformed value with a :class:`~iceduck.errors.ValidationError`
naming the property (Java throws ``NumberFormatException`` there).

Properties iceduck reads but does not act on, on purpose:

* ``write.distribution-mode``, ``write.spark.*``: Spark job tuning, nothing for a single
  process.

``write.metadata.metrics.*`` names live here; parsing their modes (``none``, ``counts``,
``truncate(N)``, ``full``) is the data writer's business.
"""

from __future__ import annotations

from collections.abc import Mapping

from iceduck.errors import ValidationError

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
PARQUET_COMPRESSION_LEVEL = "write.parquet.compression-level"
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
ISOLATION_LEVEL_DEFAULT = "serializable"

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

# -- manifest merging on commit (iceduck.txn.manifest_merge) -----------------------------------

MANIFEST_MERGE_ENABLED = "commit.manifest-merge.enabled"
MANIFEST_MERGE_ENABLED_DEFAULT = True
#: a bin holding the commit's new manifest is merged only when it has this many manifests
MANIFEST_MIN_MERGE_COUNT = "commit.manifest.min-count-to-merge"
MANIFEST_MIN_MERGE_COUNT_DEFAULT = 100
MANIFEST_TARGET_SIZE_BYTES = "commit.manifest.target-size-bytes"
MANIFEST_TARGET_SIZE_BYTES_DEFAULT = 8388608  # 8 MB


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
