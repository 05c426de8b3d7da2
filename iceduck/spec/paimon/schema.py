"""A Paimon table schema (``schema/schema-<id>``): fields with ids, keys and options.

The schema file is JSON (Java ``TableSchema``/``SchemaSerializer``)::

    {"version": 3, "id": 0, "fields": [{"id": 0, "name": "id", "type": "BIGINT NOT NULL"}, ...],
     "highestFieldId": 3, "partitionKeys": [], "primaryKeys": ["id"],
     "options": {"bucket": "2"}, "comment": null, "timeMillis": 1795594975383}

The table's behaviour lives in ``options`` (Java ``CoreOptions``); the properties below
read the ones planning needs, with Paimon's defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from iceduck.errors import CorruptDataError
from iceduck.spec.paimon.fields import opt_strs, req_int
from iceduck.spec.paimon.types import DataField, data_field_from_json

#: DataField lives in types (a ROW type has fields too); it is exported here as well
__all__ = ["DataField", "TableSchema", "data_field_from_json", "schema_from_json"]

#: ``bucket``: "Bucket number for file store"; -1 (the default) is dynamic bucket mode for
#: primary-key tables and bucket-unaware mode for append-only tables
DEFAULT_BUCKET = -1
#: ``partition.default-name``: "The default partition name in case the dynamic partition
#: column value is null/empty string"
DEFAULT_PARTITION_NAME = "__DEFAULT_PARTITION__"


@dataclass(frozen=True)
class TableSchema:
    """One version of a table's schema, as its schema file holds it."""

    id: int
    fields: tuple[DataField, ...]
    highest_field_id: int
    partition_keys: tuple[str, ...] = ()
    primary_keys: tuple[str, ...] = ()
    options: dict[str, str] = field(default_factory=dict)
    comment: str | None = None
    time_millis: int | None = None
    version: int = 1

    def __hash__(self) -> int:
        # the options dict is not hashable; a schema file never changes, so its id, fields
        # and options identify it
        return hash((self.id, self.fields, tuple(sorted(self.options.items()))))

    @cached_property
    def _by_name(self) -> dict[str, DataField]:
        return {f.name: f for f in self.fields}

    @cached_property
    def _by_id(self) -> dict[int, DataField]:
        return {f.id: f for f in self.fields}

    def field_by_name(self, name: str) -> DataField | None:
        """The top-level field named ``name`` (case-sensitive, as Paimon matches), or None."""
        return self._by_name.get(name)

    def field_by_id(self, field_id: int) -> DataField | None:
        """The top-level field with id ``field_id``, or None (a column added later)."""
        return self._by_id.get(field_id)

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    @property
    def partition_fields(self) -> tuple[DataField, ...]:
        """The partition columns, in ``partitionKeys`` order (the order of ``_PARTITION``)."""
        return tuple(self._by_name[name] for name in self.partition_keys)

    @property
    def primary_key_fields(self) -> tuple[DataField, ...]:
        return tuple(self._by_name[name] for name in self.primary_keys)

    @property
    def trimmed_primary_keys(self) -> tuple[str, ...]:
        """The primary keys minus the partition keys (Java ``TableSchema.trimmedPrimaryKeys``):
        the key columns a primary-key data file holds as ``_KEY_<name>``, and the fields of
        ``_MIN_KEY``/``_MAX_KEY``/``_KEY_STATS``. When every key is a partition key Paimon
        keeps them all."""
        trimmed = tuple(k for k in self.primary_keys if k not in self.partition_keys)
        return trimmed or self.primary_keys

    @property
    def trimmed_primary_key_fields(self) -> tuple[DataField, ...]:
        return tuple(self._by_name[name] for name in self.trimmed_primary_keys)

    @property
    def is_primary_key_table(self) -> bool:
        return bool(self.primary_keys)

    @property
    def bucket(self) -> int:
        """Option ``bucket`` (default -1: dynamic or bucket-unaware)."""
        return _int_option(self, "bucket", DEFAULT_BUCKET)

    @property
    def merge_engine(self) -> str:
        """Option ``merge-engine``: deduplicate (default), partial-update, aggregation, first-row."""
        return self.options.get("merge-engine", "deduplicate").strip().lower()

    @property
    def deletion_vectors_enabled(self) -> bool:
        """Option ``deletion-vectors.enabled`` (default false)."""
        return _bool_option(self, "deletion-vectors.enabled", False)

    @property
    def file_format(self) -> str:
        """Option ``file.format`` (default parquet)."""
        return self.options.get("file.format", "parquet").strip().lower()

    @property
    def sequence_fields(self) -> tuple[str, ...]:
        """Option ``sequence.field``: comma-separated columns that order the rows of one key
        before the sequence number does."""
        raw = self.options.get("sequence.field", "")
        return tuple(name.strip() for name in raw.split(",") if name.strip())

    @property
    def partition_default_name(self) -> str:
        """Option ``partition.default-name`` (default ``__DEFAULT_PARTITION__``)."""
        return self.options.get("partition.default-name", DEFAULT_PARTITION_NAME)

    @property
    def partition_legacy_name(self) -> bool:
        """Option ``partition.legacy-name`` (default true): partition folders are named by
        the values' Java ``toString`` (a DATE as its day number) rather than a cast to string."""
        return _bool_option(self, "partition.legacy-name", True)

    @property
    def data_file_path_directory(self) -> str | None:
        """Option ``data-file.path-directory``: the data files' folder under the table."""
        return self.options.get("data-file.path-directory") or None

    @property
    def index_file_in_data_file_dir(self) -> bool:
        """Option ``index-file-in-data-file-dir`` (default false): bucket index files (deletion
        vectors, hash indexes) beside the data files instead of in ``index/``."""
        return _bool_option(self, "index-file-in-data-file-dir", False)


def _int_option(schema: TableSchema, key: str, default: int) -> int:
    raw = schema.options.get(key)
    if raw is None:
        return default
    try:
        return int(raw.strip())
    except ValueError:
        raise CorruptDataError(f"Paimon option {key!r} is not an integer: {raw!r}") from None


def _bool_option(schema: TableSchema, key: str, default: bool) -> bool:
    raw = schema.options.get(key)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value not in ("true", "false"):
        raise CorruptDataError(f"Paimon option {key!r} is not true or false: {raw!r}")
    return value == "true"


def schema_from_json(obj: dict[str, Any], path: str) -> TableSchema:
    """A schema file's JSON object as a :class:`TableSchema`; anything malformed raises
    :class:`CorruptDataError` naming ``path``."""
    if not isinstance(obj, dict):
        raise CorruptDataError("a Paimon schema file must hold a JSON object", path)
    raw_fields = obj.get("fields")
    if not isinstance(raw_fields, list):
        raise CorruptDataError("a Paimon schema has no 'fields' list", path)
    fields = tuple(data_field_from_json(f, path) for f in raw_fields)
    names = [f.name for f in fields]
    if len(set(names)) != len(names):
        raise CorruptDataError(f"a Paimon schema has duplicate field names: {names}", path)
    schema_id = req_int(obj, "id", path)
    highest = obj.get("highestFieldId")
    if highest is None:
        highest = max((f.id for f in fields), default=-1)
    elif not isinstance(highest, int):
        raise CorruptDataError(f"'highestFieldId' is not an integer: {highest!r}", path)
    partition_keys = opt_strs(obj, "partitionKeys", path) or ()
    primary_keys = opt_strs(obj, "primaryKeys", path) or ()
    for key in partition_keys + primary_keys:
        if key not in names:
            raise CorruptDataError(f"key column {key!r} is not a field of the schema", path)
    options = obj.get("options") or {}
    if not isinstance(options, dict):
        raise CorruptDataError("'options' is not an object", path)
    comment = obj.get("comment")
    time_millis = obj.get("timeMillis")
    version = obj.get("version", 1)
    schema = TableSchema(
        id=schema_id,
        fields=fields,
        highest_field_id=highest,
        partition_keys=partition_keys,
        primary_keys=primary_keys,
        options={str(k): str(v) for k, v in options.items()},
        comment=comment if isinstance(comment, str) else None,
        time_millis=time_millis if isinstance(time_millis, int) else None,
        version=version if isinstance(version, int) else 1,
    )
    try:  # options the readers rely on are checked now, so their errors name the file
        _checked = (schema.bucket, schema.deletion_vectors_enabled, schema.partition_legacy_name)
        _checked = (schema.bucket, schema.index_file_in_data_file_dir, True)
    except CorruptDataError as error:
        raise CorruptDataError(error.problem, path) from None
    return schema
