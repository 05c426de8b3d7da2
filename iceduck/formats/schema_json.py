"""JSON of schemas, partition specs and sort orders (spec, Appendix C: "JSON serialization").

Output follows Iceberg Java 1.10 (``SchemaParser``, ``PartitionSpecParser``,
``SortOrderParser``) key for key and in the same key order, so metadata iceduck writes
looks like the metadata Spark writes:

* schema: ``type``, ``schema-id``, ``identifier-field-ids`` (only when non-empty), ``fields``;
* struct field: ``id``, ``name``, ``required``, ``type``, ``doc``, ``initial-default``,
  ``write-default`` (the last three only when set);
* list: ``type``, ``element-id``, ``element``, ``element-required``;
  map: ``type``, ``key-id``, ``key``, ``value-id``, ``value``, ``value-required``;
* partition field: ``name``, ``transform``, ``source-id``, ``field-id``;
* sort field: ``transform``, ``source-id``, ``direction``, ``null-order``.

"For partition fields with a transform with a single argument, only ``source-id`` is
written. In case of a multi-argument transform, only ``source-ids`` is written." (the
same rule holds for sort fields); ``source-ids`` takes the place of ``source-id``.

Reading is as lenient as Java where the spec allows (``decimal(9,2)`` and
``decimal(9, 2)``, type names in any case, v1 partition fields without ``field-id``) and
strict elsewhere: a missing field or a value of the wrong JSON type raises
:class:`CorruptDataError` naming the field (and the file, when the caller passes ``path``).

The small ``get_*`` helpers below are the shared, typed access to parsed JSON objects
that :mod:`iceduck.formats.metadata_json` uses too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal, overload

from iceduck.errors import CorruptDataError, IceduckError, UnsupportedError
from iceduck.spec import values
from iceduck.spec.partition import PARTITION_DATA_ID_START, PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.sort import NullOrder, SortDirection, SortField, SortOrder
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
    primitive_from_string,
)

_INT_BITS = 32
_LONG_BITS = 64
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1

# -- typed access to parsed JSON --------------------------------------------------------


@contextmanager
def corrupt_in(path: str | None) -> Iterator[None]:
    """Attach ``path`` to any :class:`CorruptDataError` raised without one."""
    try:
        yield
    except CorruptDataError as e:
        if path is not None and e.path is None:
            raise CorruptDataError(e.problem, path) from e
        raise


def _describe(value: Any) -> str:
    text = "null" if value is None else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def require_object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise CorruptDataError(f"{where} must be a JSON object, got {_describe(value)}")
    return value


def _present(obj: dict[str, Any], key: str, where: str, required: bool) -> bool:
    """Whether ``key`` holds a non-null value; Java's ``get*OrNull`` treat null as absent."""
    if obj.get(key) is not None:
        return True
    if required:
        raise CorruptDataError(f"{where}: missing required field {key!r}")
    return False


def _check_int(value: Any, label: str, bits: int) -> int:
    # bool is an int in Python but never one in JSON
    if not isinstance(value, int) or isinstance(value, bool):
        kind = "an int" if bits == _INT_BITS else "a long"
        raise CorruptDataError(f"{label} must be {kind}, got {_describe(value)}")
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise CorruptDataError(f"{label} is out of range for a {bits}-bit integer: {value}")
    return value


def _required(obj: dict[str, Any], key: str, where: str) -> Any:
    _present(obj, key, where, True)
    return obj[key]


@overload
def get_int(obj: dict[str, Any], key: str, where: str, required: Literal[True] = ...) -> int: ...
@overload
def get_int(obj: dict[str, Any], key: str, where: str, required: bool) -> int | None: ...

def get_int(obj: dict[str, Any], key: str, where: str, required: bool = True) -> int | None:
    """A JSON int (32-bit) field; None when absent or null and not required."""
    value = obj.get(key)
    if type(value) is int and _INT_MIN <= value <= _INT_MAX:
        return value  # the common case, without building the error label
    if not _present(obj, key, where, required):
        return None
    return _check_int(value, f"{where}: field {key!r}", _INT_BITS)


@overload
def get_long(obj: dict[str, Any], key: str, where: str, required: Literal[True] = ...) -> int: ...
@overload
def get_long(obj: dict[str, Any], key: str, where: str, required: bool) -> int | None: ...

def get_long(obj: dict[str, Any], key: str, where: str, required: bool = True) -> int | None:
    """A JSON long (64-bit) field; None when absent or null and not required.

    Fast path first: a metadata file with thousands of snapshots reads tens of thousands
    of longs, and every cold statement on such a table parses it."""
    value = obj.get(key)
    if type(value) is int and _LONG_MIN <= value <= _LONG_MAX:
        return value
    if not _present(obj, key, where, required):
        return None
    return _check_int(value, f"{where}: field {key!r}", _LONG_BITS)


@overload
def get_str(obj: dict[str, Any], key: str, where: str, required: Literal[True] = ...) -> str: ...
@overload
def get_str(obj: dict[str, Any], key: str, where: str, required: bool) -> str | None: ...

def get_str(obj: dict[str, Any], key: str, where: str, required: bool = True) -> str | None:
    if not _present(obj, key, where, required):
        return None
    value = obj[key]
    if not isinstance(value, str):
        raise CorruptDataError(f"{where}: field {key!r} must be a string, got {_describe(value)}")
    return value


def get_bool(obj: dict[str, Any], key: str, where: str) -> bool:
    _present(obj, key, where, True)
    value = obj[key]
    if not isinstance(value, bool):
        raise CorruptDataError(f"{where}: field {key!r} must be a boolean, got {_describe(value)}")
    return value


@overload
def get_list(obj: dict[str, Any], key: str, where: str, required: Literal[True] = ...) -> list[Any]: ...
@overload
def get_list(obj: dict[str, Any], key: str, where: str, required: bool) -> list[Any] | None: ...

def get_list(obj: dict[str, Any], key: str, where: str, required: bool = True) -> list[Any] | None:
    if not _present(obj, key, where, required):
        return None
    value = obj[key]
    if not isinstance(value, list):
        raise CorruptDataError(f"{where}: field {key!r} must be a JSON list, got {_describe(value)}")
    return value


@overload
def get_object(
    obj: dict[str, Any], key: str, where: str, required: Literal[True] = ...
) -> dict[str, Any]: ...
@overload
def get_object(obj: dict[str, Any], key: str, where: str, required: bool) -> dict[str, Any] | None: ...

def get_object(obj: dict[str, Any], key: str, where: str, required: bool = True) -> dict[str, Any] | None:
    if not _present(obj, key, where, required):
        return None
    return require_object(obj[key], f"{where}: field {key!r}")


@overload
def get_int_list(
    obj: dict[str, Any], key: str, where: str, required: Literal[True] = ..., bits: int = ...
) -> tuple[int, ...]: ...
@overload
def get_int_list(
    obj: dict[str, Any], key: str, where: str, required: bool, bits: int = ...
) -> tuple[int, ...] | None: ...

def get_int_list(
    obj: dict[str, Any], key: str, where: str, required: bool = True, bits: int = _INT_BITS
) -> tuple[int, ...] | None:
    items = get_list(obj, key, where, required)
    if items is None:
        return None
    return tuple(_check_int(v, f"{where}: {key}[{i}]", bits) for i, v in enumerate(items))


@overload
def get_str_list(
    obj: dict[str, Any], key: str, where: str, required: Literal[True] = ...
) -> tuple[str, ...]: ...
@overload
def get_str_list(obj: dict[str, Any], key: str, where: str, required: bool) -> tuple[str, ...] | None: ...

def get_str_list(obj: dict[str, Any], key: str, where: str, required: bool = True) -> tuple[str, ...] | None:
    items = get_list(obj, key, where, required)
    if items is None:
        return None
    for i, v in enumerate(items):
        if not isinstance(v, str):
            raise CorruptDataError(f"{where}: {key}[{i}] must be a string, got {_describe(v)}")
    return tuple(items)


def get_str_map(obj: dict[str, Any], key: str, where: str, required: bool = False) -> dict[str, str] | None:
    """A string-to-string map (``properties``, ``summary``), in file order."""
    value = get_object(obj, key, where, required)
    if value is None:
        return None
    for k, v in value.items():
        if not isinstance(v, str):
            raise CorruptDataError(f"{where}: {key}[{k!r}] must be a string, got {_describe(v)}")
    return dict(value)


# -- types -----------------------------------------------------------------------------


def type_to_json(t: IcebergType) -> str | dict[str, Any]:
    """A type as Appendix C spells it; primitives as Java's ``Type.toString()``
    (``decimal(9, 2)``, ``fixed[16]``, ``timestamptz_ns``)."""
    if isinstance(t, StructType):
        return {"type": "struct", "fields": [field_to_json(f) for f in t.fields]}
    if isinstance(t, ListType):
        return {
            "type": "list",
            "element-id": t.element_id,
            "element": type_to_json(t.element_type),
            "element-required": t.element_required,
        }
    if isinstance(t, MapType):
        return {
            "type": "map",
            "key-id": t.key_id,
            "key": type_to_json(t.key_type),
            "value-id": t.value_id,
            "value": type_to_json(t.value_type),
            "value-required": t.value_required,
        }
    if isinstance(t, PrimitiveType):
        return str(t)
    raise UnsupportedError(f"cannot serialize type {t!r} to JSON")


def field_to_json(f: NestedField) -> dict[str, Any]:
    """A struct field; defaults in Appendix D JSON, written only when not null."""
    out: dict[str, Any] = {
        "id": f.field_id,
        "name": f.name,
        "required": f.required,
        "type": type_to_json(f.field_type),
    }
    if f.doc is not None:
        out["doc"] = f.doc
    if f.initial_default is not None:
        out["initial-default"] = values.to_json(f.field_type, f.initial_default)
    if f.write_default is not None:
        out["write-default"] = values.to_json(f.field_type, f.write_default)
    return out


def type_from_json(obj: Any, where: str = "type") -> IcebergType:
    """Parse a type: a JSON string for primitives, an object for struct/list/map."""
    if isinstance(obj, str):
        try:
            return primitive_from_string(obj)
        except IceduckError as e:
            raise CorruptDataError(f"{where}: unknown type {obj!r}") from e
    if isinstance(obj, dict):
        kind = obj.get("type")
        if kind == "struct":
            return _struct_from_json(obj, where)
        if kind == "list":
            return ListType(
                element_id=get_int(obj, "element-id", where),
                element_type=type_from_json(_required(obj, "element", where), f"{where}.element"),
                element_required=get_bool(obj, "element-required", where),
            )
        if kind == "map":
            return MapType(
                key_id=get_int(obj, "key-id", where),
                key_type=type_from_json(_required(obj, "key", where), f"{where}.key"),
                value_id=get_int(obj, "value-id", where),
                value_type=type_from_json(_required(obj, "value", where), f"{where}.value"),
                value_required=get_bool(obj, "value-required", where),
            )
    raise CorruptDataError(f"{where}: cannot parse type from {_describe(obj)}")


def _struct_from_json(obj: dict[str, Any], where: str) -> StructType:
    fields = get_list(obj, "fields", where)
    return StructType(tuple(field_from_json(f, f"{where}.fields[{i}]") for i, f in enumerate(fields)))


def field_from_json(obj: Any, where: str = "field") -> NestedField:
    obj = require_object(obj, where)
    field_type = type_from_json(_required(obj, "type", where), f"{where}.type")
    return NestedField(
        field_id=get_int(obj, "id", where),
        name=get_str(obj, "name", where),
        field_type=field_type,
        required=get_bool(obj, "required", where),
        doc=get_str(obj, "doc", where, required=False),
        initial_default=_default_from_json(obj, "initial-default", field_type, where),
        write_default=_default_from_json(obj, "write-default", field_type, where),
    )


def _default_from_json(obj: dict[str, Any], key: str, t: IcebergType, where: str) -> Any:
    """A default value; "If either default is not set for an optional field, then the
    default value is null" -- a JSON null is the same as no default."""
    raw = obj.get(key)
    if raw is None:
        return None
    try:
        return values.from_json(t, raw)
    except (IceduckError, ValueError, TypeError) as e:
        raise CorruptDataError(f"{where}: invalid {key} {_describe(raw)} for type {t}: {e}") from e


# -- schemas ---------------------------------------------------------------------------


def schema_to_json(schema: Schema) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "struct", "schema-id": schema.schema_id}
    if schema.identifier_field_ids:
        out["identifier-field-ids"] = list(schema.identifier_field_ids)
    out["fields"] = [field_to_json(f) for f in schema.fields]
    return out


def schema_from_json(obj: Any, where: str = "schema", path: str | None = None) -> Schema:
    """Parse a schema; ``schema-id`` is optional in v1 and defaults to 0 (as in Java)."""
    with corrupt_in(path):
        obj = require_object(obj, where)
        if obj.get("type") != "struct":
            raise CorruptDataError(
                f"{where}: a schema must have type 'struct', got {_describe(obj.get('type'))}"
            )
        struct = _struct_from_json(obj, where)
        schema_id = get_int(obj, "schema-id", where, required=False)
        identifier_ids = get_int_list(obj, "identifier-field-ids", where, required=False) or ()
        return Schema(struct.fields, 0 if schema_id is None else schema_id, identifier_ids)


# -- partition specs --------------------------------------------------------------------


def _source_to_json(source_id: int, source_ids: tuple[int, ...] | None) -> dict[str, Any]:
    """``source-ids`` for multi-argument transforms, ``source-id`` otherwise (Appendix C notes)."""
    if source_ids is not None and len(source_ids) > 1:
        return {"source-ids": list(source_ids)}
    return {"source-id": source_id}


def _source_from_json(obj: dict[str, Any], where: str) -> tuple[int, tuple[int, ...] | None]:
    """(source_id, source_ids): v3 fields may carry ``source-ids`` instead of ``source-id``."""
    source_ids = get_int_list(obj, "source-ids", where, required=False)
    source_id = get_int(obj, "source-id", where, required=source_ids is None)
    if source_ids is not None:
        if not source_ids:
            raise CorruptDataError(f"{where}: field 'source-ids' must not be empty")
        if source_id is None:
            source_id = source_ids[0]
        if len(source_ids) == 1:
            source_ids = None
    if source_id is None:  # unreachable: required when there is no source-ids list
        raise CorruptDataError(f"{where}: field 'source-id' is missing")
    return source_id, source_ids


def partition_fields_to_json(spec: PartitionSpec) -> list[dict[str, Any]]:
    """The fields-only form (v1 ``partition-spec``, manifests' ``partition-spec`` metadata)."""
    out = []
    for f in spec.fields:
        item: dict[str, Any] = {"name": f.name, "transform": str(f.transform)}
        item.update(_source_to_json(f.source_id, f.source_ids))
        item["field-id"] = f.field_id
        out.append(item)
    return out


def partition_spec_to_json(spec: PartitionSpec) -> dict[str, Any]:
    return {"spec-id": spec.spec_id, "fields": partition_fields_to_json(spec)}


def partition_fields_from_json(
    fields: Any, spec_id: int, where: str = "partition-spec", path: str | None = None
) -> PartitionSpec:
    """Parse the fields-only form into a spec with ``spec_id``.

    "In v1, partition field IDs were not tracked, but were assigned sequentially starting
    at 1000 in the reference implementation": fields without ``field-id`` get 1000,
    1001, ... in order. A list mixing both is corrupt (Java refuses it too).
    """
    with corrupt_in(path):
        if not isinstance(fields, list):
            raise CorruptDataError(
                f"{where} must be a JSON list of partition fields, got {_describe(fields)}"
            )
        parsed = []
        with_ids = 0
        for i, item in enumerate(fields):
            item_where = f"{where}[{i}]"
            item = require_object(item, item_where)
            source_id, source_ids = _source_from_json(item, item_where)
            field_id = get_int(item, "field-id", item_where, required=False)
            if field_id is None:
                field_id = PARTITION_DATA_ID_START + i
            else:
                with_ids += 1
            transform = _transform(get_str(item, "transform", item_where), item_where)
            name = get_str(item, "name", item_where)
            parsed.append(PartitionField(source_id, field_id, name, transform, source_ids))
        if with_ids not in (0, len(parsed)):
            raise CorruptDataError(
                f"{where}: {len(parsed) - with_ids} of {len(parsed)} partition fields lack 'field-id'"
            )
        return PartitionSpec(spec_id, tuple(parsed))


def partition_spec_from_json(
    obj: Any, where: str = "partition spec", path: str | None = None
) -> PartitionSpec:
    with corrupt_in(path):
        obj = require_object(obj, where)
        spec_id = get_int(obj, "spec-id", where)
        return partition_fields_from_json(get_list(obj, "fields", where), spec_id, f"{where}.fields")


def _transform(text: str, where: str) -> Any:
    try:
        return parse_transform(text)
    except IceduckError as e:
        raise CorruptDataError(f"{where}: invalid transform {text!r}: {e}") from e


# -- sort orders ------------------------------------------------------------------------


def sort_order_to_json(order: SortOrder) -> dict[str, Any]:
    fields = []
    for f in order.fields:
        item: dict[str, Any] = {"transform": str(f.transform)}
        item.update(_source_to_json(f.source_id, f.source_ids))
        item["direction"] = f.direction.value
        item["null-order"] = f.null_order.value
        fields.append(item)
    return {"order-id": order.order_id, "fields": fields}


def sort_order_from_json(obj: Any, where: str = "sort order", path: str | None = None) -> SortOrder:
    with corrupt_in(path):
        obj = require_object(obj, where)
        order_id = get_int(obj, "order-id", where)
        fields = []
        for i, item in enumerate(get_list(obj, "fields", where)):
            item_where = f"{where}.fields[{i}]"
            item = require_object(item, item_where)
            transform = _transform(get_str(item, "transform", item_where), item_where)
            source_id, source_ids = _source_from_json(item, item_where)
            direction = _enum(SortDirection, get_str(item, "direction", item_where), "direction", item_where)
            null_order = _enum(NullOrder, get_str(item, "null-order", item_where), "null-order", item_where)
            fields.append(SortField(source_id, transform, direction, null_order, source_ids))
        return SortOrder(order_id, tuple(fields))


def _enum(enum_type: Any, text: str, key: str, where: str) -> Any:
    """Enum values are lower case in JSON; Java accepts any case, so do we."""
    try:
        return enum_type(text.lower())
    except ValueError as e:
        allowed = ", ".join(repr(m.value) for m in enum_type)
        raise CorruptDataError(f"{where}: field {key!r} must be one of {allowed}, got {text!r}") from e
