"""ALTER TABLE: schema, partitioning, write order, identifier fields and properties.

One statement is one metadata commit. The pure rules live in :mod:`iceduck.txn`
(``schema_update``, ``spec_update``, ``sort_update``, the ``MetadataBuilder``), which take
change requests, not statements (:mod:`iceduck.ops.alter_requests` translates); this module
groups a statement's actions, applies them in Java's order and commits through
:func:`iceduck.txn.commit.commit`.

Spark 3.5 + Iceberg 1.10 behaviour it reproduces (metadata compared with a Spark-altered
twin table in tests/interop/test_ops_ddl_spark.py; the messages are Java's where it has one):

* dropping a column the current partition spec or sort order uses is refused ("Cannot find
  source column for partition field" / "... for sort field");
* ``WRITE ORDERED BY`` also sets ``write.distribution-mode=range``, ``WRITE UNORDERED`` sets
  ``none`` (and the unsorted order), ``WRITE DISTRIBUTED BY PARTITION`` sets ``hash``
  (replacing the sort order with its LOCALLY ORDERED BY terms, or unsorted), and ``WRITE
  LOCALLY ORDERED BY`` leaves the distribution mode alone;
* ``SET TBLPROPERTIES ('format-version'=N)`` upgrades the table (a downgrade is refused);
  the other reserved properties (``uuid``, ``current-snapshot-id``...) cannot be set;
  the values set are checked as at CREATE TABLE
  (:func:`iceduck.spec.properties.validate_properties`; metrics columns against the new
  schema, as Java's ``UpdateProperties``);
* ``UNSET TBLPROPERTIES`` of a missing key is silently accepted, with or without IF EXISTS.

Concurrency (spec, "Commit Conflict Resolution": "schema changes verify the base schema"):
on a retry the changes are applied again to the refreshed table, but only if the parts the
statement changes (schema, default spec, default sort order) are still the ones it started
from; otherwise the statement fails with :class:`CommitConflictError`. Property changes
always re-apply.

Not done: Java also rewrites the ``schema.name-mapping.default`` property on schema
changes; iceduck leaves a stored name mapping as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from iceduck.catalog.base import LoadedTable
from iceduck.catalog.locations import check_path_properties
from iceduck.errors import CommitConflictError, UserError
from iceduck.ops.alter_requests import (
    SCHEMA_ACTIONS,
    SPEC_ACTIONS,
    distribution_mode,
    evolve_schema,
    sort_terms,
    spec_changes,
)
from iceduck.ops.context import OpContext, OpResult
from iceduck.spec import properties as tp
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import MAIN_BRANCH
from iceduck.spec.sort import UNSORTED, SortOrder
from iceduck.spec.table_metadata import TableMetadata
from iceduck.sql import statements as st
from iceduck.txn.builder import MetadataBuilder, parse_format_version
from iceduck.txn.commit import PendingCommit, commit
from iceduck.txn.sort_update import sort_order_from_terms
from iceduck.txn.spec_update import apply_spec_changes


@dataclass(frozen=True)
class _Plan:
    """A statement's actions by the part of the metadata they change."""

    schema: tuple[st.AlterAction, ...]
    spec: tuple[st.AlterAction, ...]
    order: st.WriteOrder | None
    set_properties: dict[str, str]
    unset_properties: tuple[str, ...]


def plan(actions: Sequence[st.AlterAction]) -> _Plan:
    """Group ``actions``; properties set later in the statement win."""
    schema, spec = [], []
    order: st.WriteOrder | None = None
    sets: dict[str, str] = {}
    unsets: list[str] = []
    for action in actions:
        if isinstance(action, SCHEMA_ACTIONS):
            schema.append(action)
        elif isinstance(action, SPEC_ACTIONS):
            spec.append(action)
        elif isinstance(action, st.WriteOrder):
            if order is not None:
                raise UserError("an ALTER TABLE statement may set the write order only once")
            order = action
        elif isinstance(action, st.SetProperties):
            for key, value in action.properties.items():
                sets[key] = value
                if key in unsets:
                    unsets.remove(key)
        elif isinstance(action, st.UnsetProperties):
            for key in action.keys:
                sets.pop(key, None)
                unsets.append(key)
        else:  # pragma: no cover - the parser only produces the actions above
            raise UserError(f"unknown ALTER TABLE action {type(action).__name__}")
    return _Plan(tuple(schema), tuple(spec), order, sets, tuple(unsets))


def alter_table(ctx: OpContext, stmt: st.AlterTable) -> OpResult:
    target = ctx.resolve_target(stmt.name)
    if target.branch != MAIN_BRANCH:
        raise UserError(
            f"ALTER TABLE {'.'.join(stmt.name)}: table changes apply to the whole table, "
            f"not to branch {target.branch!r}; name the table alone"
        )
    changes = plan(stmt.actions)
    start = target.table.metadata

    def attempt(base: LoadedTable) -> PendingCommit:
        _check_unchanged(start, base.metadata, changes, str(target.identifier))
        return PendingCommit(apply(base.metadata, changes), [])

    commit(ctx.catalog, target.identifier, attempt, base=target.table)
    return OpResult(message=f"altered table {target.identifier}")


def apply(metadata: TableMetadata, changes: _Plan) -> TableMetadata:
    """The metadata after ``changes`` (pure: Java's order -- format version, schema,
    partition spec, sort order, properties)."""
    builder = MetadataBuilder(metadata)
    requested = changes.set_properties.get(tp.FORMAT_VERSION)
    if requested is not None:  # a downgrade is refused here
        builder.upgrade_format_version(parse_format_version(requested))
    format_version = builder.format_version
    schema = metadata.schema()
    if changes.schema:
        schema, last_column_id = evolve_schema(
            schema,
            metadata.last_column_id,
            changes.schema,
            format_version,
            spec=metadata.spec(),
            sort_order=metadata.sort_order(),
        )
        schema_id = builder.add_schema(schema, last_column_id)
        builder.set_current_schema(schema_id)
    if changes.spec:
        spec = apply_spec_changes(metadata, schema, spec_changes(changes.spec))
        builder.set_default_spec(builder.add_partition_spec(spec))
    properties = dict(changes.set_properties)
    properties.pop(tp.FORMAT_VERSION, None)
    if changes.order is not None:
        order = _sort_order(metadata, schema, changes.order)
        builder.set_default_sort_order(builder.add_sort_order(order))
        mode = distribution_mode(changes.order)
        if mode is not None and tp.WRITE_DISTRIBUTION_MODE not in properties:
            properties[tp.WRITE_DISTRIBUTION_MODE] = mode
    if properties:
        tp.validate_properties(properties, schema, metadata.properties)
        check_path_properties(properties)
        builder.set_properties(properties)
    removed = [k for k in changes.unset_properties if k in metadata.properties and k not in properties]
    if removed:
        builder.remove_properties(removed)
    return builder.build()


def _sort_order(metadata: TableMetadata, schema: Schema, order: st.WriteOrder) -> SortOrder:
    if not order.terms:
        return UNSORTED
    next_id = max((o.order_id for o in metadata.sort_orders), default=0) + 1
    return sort_order_from_terms(schema, sort_terms(order.terms), next_id)


def _check_unchanged(start: TableMetadata, base: TableMetadata, changes: _Plan, table: str) -> None:
    """On a retry: refuse when a part this statement changes was changed by another writer."""
    if base is start:
        return
    moved = []
    if changes.schema and base.current_schema_id != start.current_schema_id:
        moved.append("schema")
    if (changes.spec or changes.schema) and base.default_spec_id != start.default_spec_id:
        moved.append("partition spec")
    if (
        changes.order is not None or changes.schema
    ) and base.default_sort_order_id != start.default_sort_order_id:
        moved.append("sort order")
    if moved:
        raise CommitConflictError(
            f"table {table} changed while ALTER TABLE ran (its {' and '.join(moved)} changed); "
            "run the statement again"
        )
