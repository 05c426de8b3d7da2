"""Partition specs from CREATE TABLE terms, and partition evolution by
:mod:`iceduck.txn.change_requests` requests (fields added and removed).

Spec, "Partition Evolution": "Changing a partition spec produces a new spec identified by
a unique spec ID"; "changes should not cause partition field IDs to change"; "In v2 ...
New IDs are assigned based on the last assigned partition ID in table metadata"; and for
v1 "Do not drop partition fields; instead replace the field's transform with the void
transform". "Partition field IDs must be reused if an existing partition spec contains
an equivalent field."

The rules are Iceberg Java 1.10's (``PartitionSpec.Builder`` for CREATE,
``BaseUpdatePartitionSpec`` for ALTER), checked against Spark in
tests/txn/test_spec_update_spark.py:

* names: CREATE ``id_bucket``, ``s_trunc``, ``ts_year/month/day/hour``, identity = the
  column's dotted name (``st.a``); ALTER adds the parameter: ``id_bucket_16``,
  ``s_trunc_4`` (time transforms and identity are named as in CREATE);
* v2+: re-adding a field that an older spec had (same source and transform, and name
  when ``AS`` gives one) reuses that field, id and name; v1 never reuses;
* v1: a dropped field stays as ``void``; when a new field takes its name, the void one
  is renamed ``<name>_<field id>``;
* removing then re-adding the same term in one change is a no-op (or a rename when the
  new term has a name), which is how ``REPLACE PARTITION FIELD n WITH n AS nn`` renames;
* a term already in the spec, two time transforms of one column added at once, and a
  partition name that is another column's name are refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from iceduck.errors import NotFoundError, UnsupportedError, ValidationError
from iceduck.spec.partition import PARTITION_DATA_ID_START, PartitionField, PartitionSpec, partition_name
from iceduck.spec.schema import Schema
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.transforms import (
    IdentityTransform,
    TimeTransform,
    Transform,
    VoidTransform,
)
from iceduck.spec.types import PrimitiveType
from iceduck.txn import schema_tree as tree
from iceduck.txn.change_requests import AddPartitionField, PartitionTerm, RemovePartitionField, SpecChange


def bind_term(schema: Schema, transform: Transform, path: tuple[str, ...], what: str) -> tuple[int, str]:
    """The source field id and dotted name of ``transform(path)``, checked as a partition
    or sort source: "The source columns ... must be a primitive type and cannot be
    contained in a map or list, but may be nested in a struct", and the transform must
    accept the type."""
    source = tree.resolve(schema, path)
    name = schema.column_name(source.field_id) or tree.display(path)
    if transform.is_unknown:
        raise UnsupportedError(f"cannot {what} by unknown transform {transform}")
    if not isinstance(source.field_type, PrimitiveType):
        raise ValidationError(f"cannot {what} by {name}: it is {source.field_type}, not a primitive type")
    if schema.is_in_list_or_map(source.field_id):
        raise ValidationError(f"cannot {what} by {name}: it is inside a list or map")
    if not transform.can_transform(source.field_type):
        raise ValidationError(
            f"cannot {what} by {transform}({name}): {transform} does not apply to {source.field_type} values"
        )
    return source.field_id, name


def _check_name_against_schema(schema: Schema, name: str, source_id: int | None) -> None:
    """Java ``checkAndAddPartitionName``: a partition name may equal a column's name only
    when it partitions by that very column (``source_id`` None: never)."""
    column = schema.find_field_or_none(name)
    if column is None or column.field_id == source_id:
        return
    raise ValidationError(
        f"cannot name a partition field {name!r}: that is the name of "
        + ("a column" if source_id is None else "another column")
        + " in the schema (choose a name with AS)"
    )


def _check_names(fields: Sequence[PartitionField]) -> None:
    seen: set[str] = set()
    for f in fields:
        if not f.name:
            raise ValidationError("partition field names cannot be empty")
        if f.name in seen:
            raise ValidationError(f"cannot use partition field name {f.name!r} more than once")
        seen.add(f.name)


def spec_from_terms(
    schema: Schema,
    terms: Sequence[PartitionTerm],
    spec_id: int = 0,
    first_field_id: int = PARTITION_DATA_ID_START,
) -> PartitionSpec:
    """The spec of CREATE TABLE ... PARTITIONED BY ``terms`` (Java ``PartitionSpec.Builder``):
    field ids from ``first_field_id`` in order; two terms on one column whose transforms
    are redundant (the same transform, or two time transforms) are refused."""
    fields: list[PartitionField] = []
    dedup: dict[tuple[int, str], PartitionField] = {}
    for offset, term in enumerate(terms):
        source_id, source_name = bind_term(schema, term.transform, term.source, "partition")
        name = term.name or partition_name(source_name, term.transform, with_parameter=False)
        _check_name_against_schema(schema, name, source_id if term.transform.is_identity else None)
        new = PartitionField(source_id, first_field_id + offset, name, term.transform)
        key = (source_id, term.transform.dedup_name)
        if key in dedup:
            other = dedup[key]
            raise ValidationError(
                f"cannot partition by both {other.transform}({source_name}) and "
                f"{term.transform}({source_name}): they are redundant"
            )
        dedup[key] = new
        fields.append(new)
    _check_names(fields)
    return PartitionSpec(spec_id, tuple(fields))


def apply_spec_changes(
    metadata: TableMetadata, schema: Schema, changes: Sequence[SpecChange]
) -> PartitionSpec:
    """The default spec of ``metadata`` evolved by ``changes``, applied in order; terms
    bind to ``schema`` (the table's current schema).

    An existing compatible spec (same sources, transforms and names: "Writers must not
    create a new partition spec if there already exists a compatible partition spec")
    is returned as it is; otherwise the new spec's id is one more than the highest.
    """
    update = _SpecUpdate(metadata, schema)
    for change in changes:
        if isinstance(change, AddPartitionField):
            update.add(change.term)
        elif isinstance(change, RemovePartitionField):
            update.remove(change)
        else:
            assert_never(change)
    new = PartitionSpec(
        max((s.spec_id for s in metadata.partition_specs), default=-1) + 1, update.result_fields()
    )
    for spec in metadata.partition_specs:
        if spec.compatible_with(new):
            return spec  # Java reuses a compatible spec, ids and all ("must not create a new spec")
    return new


class _SpecUpdate:
    """One partition spec change in progress (the state of Java's BaseUpdatePartitionSpec)."""

    def __init__(self, metadata: TableMetadata, schema: Schema) -> None:
        self.spec = metadata.spec()
        unknown = [f for f in self.spec.fields if f.transform.is_unknown]
        if unknown:
            raise UnsupportedError(
                f"cannot change a partition spec with unknown transform {unknown[0].transform} "
                f"(field {unknown[0].name})"
            )
        self.schema = schema
        self.format_version = metadata.format_version
        self.history = [f for s in metadata.partition_specs for f in s.fields]
        self.last_id = max([metadata.last_partition_id, *(f.field_id for f in self.history)])
        self.by_name = {f.name: f for f in self.spec.fields}
        self.by_key = {(f.source_id, str(f.transform)): f for f in self.spec.fields}
        self.adds: list[PartitionField] = []
        self.added_by_key: dict[tuple[int, str], PartitionField] = {}
        self.added_by_name: dict[str, PartitionField] = {}
        self.added_time: dict[int, PartitionField] = {}
        self.deletes: set[int] = set()
        self.renames: dict[str, str] = {}

    def add(self, term: PartitionTerm) -> None:
        name = term.name
        if name is not None and name in self.added_by_name:
            raise ValidationError(f"cannot add partition field {name!r} twice")
        source_id, source_name = bind_term(self.schema, term.transform, term.source, "partition")
        key = (source_id, str(term.transform))
        text = f"{term.transform}({source_name})"
        existing = self.by_key.get(key)
        if existing is not None and existing.field_id in self.deletes:
            self.deletes.discard(existing.field_id)  # dropped and re-added: keep it
            if name is not None and name != existing.name:
                self.rename(existing.name, name)
            return
        if existing is not None:
            raise ValidationError(
                f"cannot add partition field {text}: the spec already has it as {existing.name!r}"
            )
        if key in self.added_by_key:
            raise ValidationError(f"cannot add partition field {text} twice")
        new = self._recycle_or_create(source_id, term.transform, name)
        if new.name == "":
            new = PartitionField(
                source_id,
                new.field_id,
                partition_name(source_name, term.transform, with_parameter=True),
                new.transform,
            )
        if isinstance(term.transform, TimeTransform):
            other = self.added_time.get(source_id)
            if other is not None:
                raise ValidationError(
                    f"cannot add both {other.transform}({source_name}) and {text}: they are redundant"
                )
            self.added_time[source_id] = new
        self.added_by_key[key] = new
        same_name = self.by_name.get(new.name)
        if same_name is not None and same_name.field_id not in self.deletes:
            if not same_name.transform.is_void:
                raise ValidationError(
                    f"cannot add partition field {new.name!r}: the spec already has that name"
                )
            self.rename(same_name.name, f"{same_name.name}_{same_name.field_id}")
        elif same_name is not None:
            self.renames[same_name.name] = f"{same_name.name}_{same_name.field_id}"
        self.added_by_name[new.name] = new
        self.adds.append(new)

    def _recycle_or_create(self, source_id: int, transform: Transform, name: str | None) -> PartitionField:
        """v2+: a field of any earlier spec with this source and transform (and name, when
        given) comes back with its id and name; otherwise a new id. Name "" = to generate."""
        if self.format_version >= 2:
            for f in self.history:
                if f.source_id == source_id and f.transform == transform and name in (None, f.name):
                    return f
        self.last_id += 1
        return PartitionField(source_id, self.last_id, name or "", transform)

    def remove(self, change: RemovePartitionField) -> None:
        term, name = change.term, change.name
        # Spark: a bare name that is not a column names a partition field, else it is an
        # identity term on that column (see RemovePartitionField).
        if term is not None and term.transform.is_identity and len(term.source) == 1:
            if tree.find(self.schema, term.source) is None:
                name, term = term.source[0], None
        elif term is None and name is not None and name not in self.by_name:
            if self.schema.find_field_or_none(name) is not None:
                term = PartitionTerm(IdentityTransform(), (name,))
        if term is not None:
            self._remove_term(term)
        else:
            self._remove_name(name or "")

    def _remove_name(self, name: str) -> None:
        if name in self.added_by_name:
            raise ValidationError(f"cannot drop partition field {name!r}: it is being added")
        if name in self.renames:
            raise ValidationError(f"cannot rename and drop partition field {name!r}")
        field = self.by_name.get(name)
        if field is None:
            raise NotFoundError(f"cannot find partition field {name!r} to drop")
        self.deletes.add(field.field_id)

    def _remove_term(self, term: PartitionTerm) -> None:
        source_id, source_name = bind_term(self.schema, term.transform, term.source, "partition")
        key = (source_id, str(term.transform))
        text = f"{term.transform}({source_name})"
        if key in self.added_by_key:
            raise ValidationError(f"cannot drop partition field {text}: it is being added")
        field = self.by_key.get(key)
        if field is None:
            raise NotFoundError(f"cannot find partition field {text} to drop")
        if field.name in self.renames:
            raise ValidationError(f"cannot rename and drop partition field {field.name!r}")
        self.deletes.add(field.field_id)

    def rename(self, name: str, new_name: str) -> None:
        taken = self.by_name.get(new_name)
        if taken is not None and taken.transform.is_void and taken.name != name:
            self.rename(taken.name, f"{taken.name}_{taken.field_id}")
        if name in self.added_by_name:
            raise ValidationError(f"cannot rename partition field {name!r}: it is being added")
        field = self.by_name.get(name)
        if field is None:
            raise NotFoundError(f"cannot find partition field {name!r} to rename")
        if field.field_id in self.deletes:
            raise ValidationError(f"cannot drop and rename partition field {name!r}")
        self.renames[name] = new_name

    def result_fields(self) -> tuple[PartitionField, ...]:
        fields: list[PartitionField] = []
        for f in self.spec.fields:
            name = self.renames.get(f.name, f.name)
            if f.field_id not in self.deletes:
                fields.append(PartitionField(f.source_id, f.field_id, name, f.transform, f.source_ids))
            elif self.format_version < 2:
                fields.append(PartitionField(f.source_id, f.field_id, name, VoidTransform(), f.source_ids))
        fields.extend(self.adds)
        _check_names(fields)
        for f in fields:
            _check_name_against_schema(self.schema, f.name, f.source_id)
        return tuple(fields)
