"""Projection of an Avro writer schema onto the Iceberg struct a reader expects, by field id.

The spec identifies fields by id, never by name: "Columns in Iceberg data files are
selected by field id. The table schema's column names and order may change after a data
file is written, and projection must be done using field ids" (Column Projection), and
Appendix A stores the ids in Avro as "Field ids [...] in a ``field-id`` property on record
fields", ``element-id`` on arrays and ``key-id``/``value-id`` on maps. Metadata files are
no exception ("A manifest list is a valid Iceberg data file: files must use valid Iceberg
formats, schemas, and column projection"), and writers did rename their fields: Iceberg
Java up to 1.4 named manifest-list fields 504-506 ``added_data_files_count``,
``existing_data_files_count`` and ``deleted_data_files_count``.

Renaming a field does not change Avro's binary encoding, so the projection is a copy of the
writer schema whose matched fields carry the expected names: records then decode straight
to dicts keyed by the reader's names, at no cost per record (the projection is made once
per distinct schema). The rules, as Java's ``BuildAvroProjection``:

* a writer field with a ``field-id`` matches the expected field of that id; a writer field
  without one matches by name (a writer that wrote no ids, the only case where names count);
* writer fields that match nothing (deprecated or unknown ones) keep their bytes but get a
  name no reader asks for, so they cannot shadow an expected field;
* an expected optional field the file lacks is simply absent (readers take it as null);
  an expected required field it lacks is a :class:`CorruptDataError` naming the file, the
  field id and the name;
* a matched field must have an Avro type of the expected kind (Appendix A): a record for
  a struct, an array for a list, a map (or map-typed array) for a map, and for primitives
  the same family -- ``int`` and ``long`` for either integer type, ``float`` and ``double``
  for either floating type, since both decode to the same Python values and writers differ
  (PyIceberg writes ``equality_ids`` elements as ``long``, Java as ``int``).
"""

from __future__ import annotations

from typing import Any

from iceduck.errors import CorruptDataError
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
)

FIELD_ID = "field-id"
ICEBERG_FIELD_NAME = "iceberg-field-name"
#: prefix of the names given to writer fields the reader does not know
IGNORED_PREFIX = "_iceduck_ignored_"

_INTEGERS = frozenset({"int", "long"})
_FLOATS = frozenset({"float", "double"})
#: Avro primitive types that may hold each expected Iceberg primitive (module docstring)
_ACCEPTED: dict[type, frozenset[str]] = {
    BooleanType: frozenset({"boolean"}),
    IntegerType: _INTEGERS,
    LongType: _INTEGERS,
    FloatType: _FLOATS,
    DoubleType: _FLOATS,
    StringType: frozenset({"string"}),
    BinaryType: frozenset({"bytes", "fixed"}),
}


def project_record(
    writer: dict[str, Any], expected: StructType, path: str, kept: frozenset[int] = frozenset()
) -> dict[str, Any]:
    """The writer record schema with the expected names on the fields matched by id.

    ``kept`` holds ids of fields whose type is left as written: a manifest's partition
    tuple, whose type is the file's own (the spec of the manifest, read from its schema).
    """
    return _Projection(path, kept).record(writer, expected, "")


def find_field(record: dict[str, Any], field_id: int, name: str) -> dict[str, Any] | None:
    """The field of a writer record schema with ``field_id``, else (no ``field-id`` on it)
    the one named ``name``."""
    for f in record.get("fields", []):
        if f.get(FIELD_ID) == field_id:
            return f
    for f in record.get("fields", []):
        if FIELD_ID not in f and _names(f) & {name}:
            return f
    return None


def _names(f: dict[str, Any]) -> set[str]:
    """A field's Avro name and, when the name was sanitised, the Iceberg name it stands for."""
    return {n for n in (f.get("name"), f.get(ICEBERG_FIELD_NAME)) if isinstance(n, str)}


class _Projection:
    """One projection walk: the file (for errors), the kept ids and the named types seen."""

    def __init__(self, path: str, kept: frozenset[int]) -> None:
        self.path = path
        self.kept = kept
        self.named: dict[str, Any] = {}
        self.ignored = 0

    def fail(self, problem: str) -> CorruptDataError:
        return CorruptDataError(problem, self.path)

    def record(self, writer: dict[str, Any], expected: StructType, where: str) -> dict[str, Any]:
        if "name" in writer:
            self.named[writer["name"]] = writer
        fields = writer.get("fields")
        if not isinstance(fields, list):
            raise self.fail(f"Avro record {writer.get('name')!r}{where} has no fields")
        targets = self._targets(writer, fields, expected, where)
        out = []
        for wf, target in zip(fields, targets, strict=True):
            if target is None:
                self.ignored += 1
                out.append({**wf, "name": f"{IGNORED_PREFIX}{self.ignored}"})
                continue
            field_type = wf["type"] if target.field_id in self.kept else self.type(wf["type"], target, where)
            out.append({**wf, "name": target.name, "type": field_type})
        found = {t.field_id for t in targets if t is not None}
        for f in expected.fields:
            if f.required and f.field_id not in found:
                raise self.fail(
                    f"required field {f.field_id} {f.name!r}{where} is missing from the file's Avro "
                    f"schema (record {writer.get('name')!r} has no field with field-id {f.field_id})"
                )
        return {**writer, "fields": out}

    def _targets(
        self, writer: dict[str, Any], fields: list[dict[str, Any]], expected: StructType, where: str
    ) -> list[NestedField | None]:
        """The expected field each writer field stands for: by ``field-id``; by name only for
        fields without one, and only for expected fields no id claimed."""
        by_id = {f.field_id: f for f in expected.fields}
        targets: list[NestedField | None] = []
        claimed: set[int] = set()
        for wf in fields:
            raw_id = wf.get(FIELD_ID)
            if raw_id is None:
                targets.append(None)
                continue
            try:
                field_id = int(raw_id)
            except (TypeError, ValueError):
                raise self.fail(
                    f"Avro field {wf.get('name')!r}{where} has an invalid field-id {raw_id!r}"
                ) from None
            if field_id in claimed:
                raise self.fail(
                    f"record {writer.get('name')!r}{where} has two fields with field-id {field_id}"
                )
            claimed.add(field_id)
            targets.append(by_id.get(field_id))
        by_name = {f.name: f for f in expected.fields if f.field_id not in claimed}
        for i, wf in enumerate(fields):
            if FIELD_ID in wf:
                continue
            found = next((by_name.pop(n) for n in sorted(_names(wf)) if n in by_name), None)
            targets[i] = found
        return targets

    def type(self, avro: Any, field: NestedField, where: str) -> Any:
        """``avro`` projected onto the type of ``field`` (a union with null stays one)."""
        inner = f"{where} in field {field.field_id} {field.name!r}"
        if isinstance(avro, list):
            branches = [b for b in avro if b != "null"]
            if len(branches) != 1:
                raise self.fail(f"field {field.field_id} {field.name!r}{where}: unsupported union {avro!r}")
            return [self.type(b, field, where) if b != "null" else b for b in avro]
        return self._value(avro, field.field_type, field, inner)

    def _value(self, avro: Any, expected: IcebergType, field: NestedField, where: str) -> Any:
        if isinstance(avro, str) and avro in self.named:
            self._check_named(self.named[avro], expected, field)
            return avro  # a reference to a type defined (and projected) earlier
        kind = avro.get("type") if isinstance(avro, dict) else avro
        if isinstance(expected, StructType):
            if kind != "record":
                raise self._mismatch(avro, expected, field)
            return self.record(avro, expected, where)
        if isinstance(expected, MapType):
            return self._map(avro, expected, field, where)
        if isinstance(expected, ListType):
            if kind != "array":
                raise self._mismatch(avro, expected, field)
            element = NestedField(
                expected.element_id, "element", expected.element_type, expected.element_required
            )
            return {**avro, "items": self.type(avro["items"], element, where)}
        accepted = _ACCEPTED.get(type(expected))
        if accepted is not None and kind not in accepted:
            raise self._mismatch(avro, expected, field)
        return avro

    def _map(self, avro: Any, expected: MapType, field: NestedField, where: str) -> Any:
        """Appendix A: string-keyed maps are Avro maps; others "must use an array
        representation with the ``map`` logical type" of key/value records."""
        kind = avro.get("type") if isinstance(avro, dict) else avro
        value = NestedField(expected.value_id, "value", expected.value_type, expected.value_required)
        if kind == "map" and isinstance(expected.key_type, StringType):
            return {**avro, "values": self.type(avro["values"], value, where)}
        if kind != "array":
            raise self._mismatch(avro, expected, field)
        items = avro["items"]
        if isinstance(items, str) and items in self.named:
            return avro
        if not isinstance(items, dict) or items.get("type") != "record":
            raise self._mismatch(avro, expected, field)
        key = NestedField(expected.key_id, "key", expected.key_type, True)
        return {**avro, "items": self.record(items, StructType((key, value)), where)}

    def _check_named(self, defined: Any, expected: IcebergType, field: NestedField) -> None:
        kind = defined.get("type") if isinstance(defined, dict) else defined
        if isinstance(expected, StructType | ListType | MapType) != (kind in ("record", "array", "map")):
            raise self._mismatch(defined, expected, field)
        accepted = _ACCEPTED.get(type(expected))
        if accepted is not None and kind not in accepted:
            raise self._mismatch(defined, expected, field)

    def _mismatch(self, avro: Any, expected: IcebergType, field: NestedField) -> CorruptDataError:
        kind = avro.get("type") if isinstance(avro, dict) else avro
        return self.fail(
            f"field {field.field_id} {field.name!r} has Avro type {kind!r}, which cannot hold {expected}"
        )
