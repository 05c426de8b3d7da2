"""REST table updates: every action's JSON in the spec's shape both ways, bad input, and
what apply_updates makes of them (creates from nothing equal iceduck's own new tables)."""

from __future__ import annotations

from typing import Any

import pytest

from iceduck.errors import CommitConflictError, NotFoundError, ValidationError
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import EncryptedKey, RefType, SnapshotRef
from iceduck.spec.sort import UNSORTED
from iceduck.spec.types import LongType, NestedField, StringType
from iceduck.table_updates.commit_request import updates_since
from iceduck.table_updates.updates import (
    ACTIONS,
    LAST_ADDED,
    AddSnapshot,
    RemoveEncryptionKey,
    RemoveSnapshotRef,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetLocation,
    SetSnapshotRef,
    Update,
    parse_update,
    parse_updates,
    update_json,
)
from iceduck.txn.apply_updates import apply_updates
from iceduck.txn.builder import MetadataBuilder, new_table_metadata

UUID = "9c12d441-03fe-4693-9a96-a0705ddf69c1"
SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "data", "required": False, "type": "string"},
    ],
}
SPEC = {
    "spec-id": 0,
    "fields": [{"name": "id_bucket", "transform": "bucket[16]", "source-id": 1, "field-id": 1000}],
}
ORDER = {
    "order-id": 1,
    "fields": [{"transform": "identity", "source-id": 1, "direction": "asc", "null-order": "nulls-first"}],
}
SNAPSHOT = {
    "sequence-number": 1,
    "snapshot-id": 3055729675574597004,
    "timestamp-ms": 1555100955770,
    "summary": {"operation": "append", "added-records": "1"},
    "manifest-list": "s3://b/wh/db/t/metadata/snap-3055729675574597004-1-c87bfec7.avro",
    "schema-id": 0,
}
STATS = {
    "snapshot-id": 3055729675574597004,
    "statistics-path": "s3://b/wh/db/t/metadata/stats.puffin",
    "file-size-in-bytes": 413,
    "file-footer-size-in-bytes": 42,
    "blob-metadata": [
        {
            "type": "apache-datasketches-theta-v1",
            "snapshot-id": 3055729675574597004,
            "sequence-number": 1,
            "fields": [1],
        }
    ],
}
PARTITION_STATS = {
    "snapshot-id": 3055729675574597004,
    "statistics-path": "s3://b/wh/db/t/metadata/partition-stats.parquet",
    "file-size-in-bytes": 512,
}
KEY = {
    "key-id": "k1",
    "encrypted-key-metadata": "AAECAw==",
    "encrypted-by-id": "master",
    "properties": {"a": "b"},
}

#: one JSON object per action, hand-written in the shape of rest-catalog-open-api.yaml
SPEC_EXAMPLES: list[dict[str, Any]] = [
    {"action": "assign-uuid", "uuid": UUID},
    {"action": "upgrade-format-version", "format-version": 3},
    {"action": "add-schema", "schema": SCHEMA, "last-column-id": 2},
    {"action": "add-schema", "schema": SCHEMA},
    {"action": "set-current-schema", "schema-id": -1},
    {"action": "add-spec", "spec": SPEC},
    {"action": "set-default-spec", "spec-id": -1},
    {"action": "add-sort-order", "sort-order": ORDER},
    {"action": "set-default-sort-order", "sort-order-id": 1},
    {"action": "add-snapshot", "snapshot": SNAPSHOT},
    {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 3055729675574597004},
    {
        "action": "set-snapshot-ref",
        "ref-name": "dev",
        "type": "branch",
        "snapshot-id": 1,
        "max-ref-age-ms": 604800000,
        "max-snapshot-age-ms": 86400000,
        "min-snapshots-to-keep": 2,
    },
    {"action": "set-snapshot-ref", "ref-name": "v1", "type": "tag", "snapshot-id": 1, "max-ref-age-ms": 5},
    {"action": "remove-snapshots", "snapshot-ids": [1, 3055729675574597004]},
    {"action": "remove-snapshot-ref", "ref-name": "dev"},
    {"action": "set-location", "location": "s3://b/wh/db/t2"},
    {"action": "set-properties", "updates": {"owner": "me", "write.format.default": "parquet"}},
    {"action": "remove-properties", "removals": ["owner"]},
    {"action": "set-statistics", "snapshot-id": 3055729675574597004, "statistics": STATS},
    {"action": "remove-statistics", "snapshot-id": 3055729675574597004},
    {"action": "set-partition-statistics", "partition-statistics": PARTITION_STATS},
    {"action": "remove-partition-statistics", "snapshot-id": 3055729675574597004},
    {"action": "remove-partition-specs", "spec-ids": [1, 2]},
    {"action": "remove-schemas", "schema-ids": [0]},
    {"action": "add-encryption-key", "encryption-key": KEY},
    {"action": "remove-encryption-key", "key-id": "k1"},
]


@pytest.mark.parametrize("obj", SPEC_EXAMPLES, ids=lambda o: o["action"])
def test_json_both_ways(obj: dict[str, Any]) -> None:
    update = parse_update(obj)
    assert ACTIONS[type(update)] == obj["action"]
    assert update_json(update) == obj
    assert parse_update(update_json(update)) == update


def test_every_action_has_an_example() -> None:
    assert {o["action"] for o in SPEC_EXAMPLES} == set(ACTIONS.values())


def test_set_statistics_without_the_deprecated_snapshot_id() -> None:
    update = parse_update({"action": "set-statistics", "statistics": STATS})
    assert update_json(update)["snapshot-id"] == STATS["snapshot-id"]


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"action": "drop-table"}, "unknown update action 'drop-table'"),
        ({"uuid": UUID}, "missing required field 'action'"),
        ([], "update must be a JSON object"),
        ({"action": "assign-uuid"}, "update 'assign-uuid': missing required field 'uuid'"),
        ({"action": "set-current-schema", "schema-id": "0"}, "'schema-id' must be an int"),
        ({"action": "add-schema", "schema": {"type": "struct"}}, "missing required field 'fields'"),
        (
            {"action": "set-snapshot-ref", "ref-name": "x", "type": "leaf", "snapshot-id": 1},
            "'branch' or 'tag'",
        ),
        (
            {"action": "set-snapshot-ref", "ref-name": "x", "type": "tag"},
            "missing required field 'snapshot-id'",
        ),
        ({"action": "remove-snapshots", "snapshot-ids": [1, "2"]}, r"snapshot-ids\[1\].*must be a long"),
        ({"action": "set-properties", "updates": {"a": 1}}, "must be a string"),
        ({"action": "remove-properties", "removals": "owner"}, "'removals'"),
        (
            {"action": "add-spec", "spec": {"spec-id": 0, "fields": [{"name": "x"}]}},
            "missing required field 'source-id'",
        ),
    ],
)
def test_bad_updates_are_validation_errors(obj: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        parse_update(obj)


# -- applying ---------------------------------------------------------------------------------


def create_updates(version: int = 2, properties: dict[str, str] | None = None) -> list[Update]:
    """What Java's RESTSessionCatalog sends to create a table (staged create)."""
    return [
        parse_update(o)
        for o in [
            {"action": "assign-uuid", "uuid": UUID},
            {"action": "upgrade-format-version", "format-version": version},
            {"action": "add-schema", "schema": SCHEMA, "last-column-id": 2},
            {"action": "set-current-schema", "schema-id": -1},
            {"action": "add-spec", "spec": SPEC},
            {"action": "set-default-spec", "spec-id": -1},
            {"action": "add-sort-order", "sort-order": ORDER},
            {"action": "set-default-sort-order", "sort-order-id": -1},
            {"action": "set-location", "location": "s3://b/wh/db/t/"},
            {"action": "set-properties", "updates": properties or {"owner": "me"}},
        ]
    ]


@pytest.mark.parametrize("version", [1, 2, 3])
def test_create_from_nothing_equals_a_new_iceduck_table(version: int) -> None:
    schema = Schema(
        (NestedField(1, "id", LongType(), required=True), NestedField(2, "data", StringType())), 0
    )
    spec = parse_update({"action": "add-spec", "spec": SPEC}).spec  # type: ignore[union-attr]
    order = parse_update({"action": "add-sort-order", "sort-order": ORDER}).sort_order  # type: ignore[union-attr]
    expected = new_table_metadata(
        schema, spec, order, "s3://b/wh/db/t", {"owner": "me"}, version, table_uuid=UUID, now_ms=7
    )
    # Java's client sends the properties its newTableMetadata made (defaults included)
    assert expected.properties["owner"] == "me"
    created = apply_updates(None, create_updates(version, expected.properties), now_ms=7)
    assert created == expected


def test_a_create_needs_schema_location_and_uuid() -> None:
    updates = create_updates()
    with pytest.raises(ValidationError, match="needs a location"):
        apply_updates(None, [u for u in updates if not isinstance(u, SetLocation)])
    with pytest.raises(ValidationError, match="needs a UUID"):
        apply_updates(None, updates[1:])


def test_minus_one_needs_something_added() -> None:
    base = apply_updates(None, create_updates())
    with pytest.raises(ValidationError, match="last added schema: no schema was added"):
        apply_updates(base, [SetCurrentSchema(-1)])
    with pytest.raises(ValidationError, match="last added sort order"):
        apply_updates(base, [SetDefaultSortOrder(-1)])


def snapshot_updates() -> list[Update]:
    return [
        parse_update({"action": "add-snapshot", "snapshot": SNAPSHOT}),
        parse_update(
            {
                "action": "set-snapshot-ref",
                "ref-name": "main",
                "type": "branch",
                "snapshot-id": SNAPSHOT["snapshot-id"],
            }
        ),
    ]


def test_snapshots_refs_statistics_and_keys() -> None:
    base = apply_updates(None, create_updates(3))
    snap = dict(SNAPSHOT, **{"first-row-id": 0, "added-rows": 1})
    updates = [parse_update({"action": "add-snapshot", "snapshot": snap}), snapshot_updates()[1]]
    updates += [
        parse_update(o)
        for o in SPEC_EXAMPLES
        if o["action"] in ("set-statistics", "set-partition-statistics")
    ]
    updates += [
        parse_update(
            {
                "action": "set-snapshot-ref",
                "ref-name": "t",
                "type": "tag",
                "snapshot-id": SNAPSHOT["snapshot-id"],
            }
        ),
        parse_update({"action": "add-encryption-key", "encryption-key": KEY}),
    ]
    md = apply_updates(base, updates)
    sid = SNAPSHOT["snapshot-id"]
    assert md.current_snapshot_id == sid and md.last_sequence_number == 1 and md.next_row_id == 1
    assert md.refs == {"main": SnapshotRef(sid, RefType.BRANCH), "t": SnapshotRef(sid, RefType.TAG)}
    assert [s.snapshot_id for s in md.snapshot_log] == [sid]
    assert [s.snapshot_id for s in md.statistics] == [sid] == [s.snapshot_id for s in md.partition_statistics]
    assert md.encryption_keys == (EncryptedKey("k1", "AAECAw==", "master", {"a": "b"}),)
    removed = apply_updates(
        md,
        [
            parse_update(o)
            for o in SPEC_EXAMPLES
            if o["action"].startswith("remove-") and "stat" in o["action"]
        ]
        + [RemoveEncryptionKey("k1"), RemoveSnapshotRef("t")],
    )
    assert (removed.statistics, removed.partition_statistics, removed.encryption_keys) == ((), (), ())
    assert removed.refs == {"main": SnapshotRef(sid, RefType.BRANCH)}
    # removing main (a REPLACE TABLE) leaves no current snapshot
    assert apply_updates(md, [RemoveSnapshotRef("main")]).current_snapshot_id is None
    # removing a snapshot removes the refs that point at it (Java's removeSnapshots)
    expired = apply_updates(md, [parse_update({"action": "remove-snapshots", "snapshot-ids": [sid]})])
    assert (expired.snapshots, expired.refs, expired.current_snapshot_id) == ((), {}, None)
    assert (expired.statistics, expired.partition_statistics, expired.snapshot_log) == ((), (), ())


def test_a_snapshot_behind_the_table_is_a_conflict() -> None:
    md = apply_updates(apply_updates(None, create_updates()), snapshot_updates())
    late = dict(SNAPSHOT, **{"snapshot-id": 5, "parent-snapshot-id": SNAPSHOT["snapshot-id"]})
    with pytest.raises(CommitConflictError, match="sequence number 1"):
        apply_updates(md, [parse_update({"action": "add-snapshot", "snapshot": late})])


def test_refs_to_unknown_snapshots_and_unknown_ids_are_refused() -> None:
    base = apply_updates(None, create_updates())
    with pytest.raises(ValidationError, match="unknown snapshot 1"):
        apply_updates(base, [SetSnapshotRef("main", SnapshotRef(1, RefType.BRANCH))])
    with pytest.raises(NotFoundError, match="no schema with id 4"):
        apply_updates(base, [SetCurrentSchema(4)])
    with pytest.raises(ValidationError, match="cannot downgrade"):
        apply_updates(base, [parse_update({"action": "upgrade-format-version", "format-version": 1})])


def test_uuid_location_and_properties() -> None:
    base = apply_updates(None, create_updates())
    md = apply_updates(
        base,
        [
            parse_update(o)
            for o in SPEC_EXAMPLES
            if o["action"] in ("set-location", "set-properties", "remove-properties")
        ]
        + [parse_update({"action": "assign-uuid", "uuid": "0f7c1f1e-0000-4000-8000-000000000000"})],
    )
    assert md.location == "s3://b/wh/db/t2"
    assert md.properties == {"write.format.default": "parquet"}
    assert md.table_uuid == "0f7c1f1e-0000-4000-8000-000000000000"
    assert apply_updates(md, []) is md


def test_recorded_keys_location_spec_and_order_replay() -> None:
    base = apply_updates(None, create_updates(3))
    builder = MetadataBuilder(base)
    builder.add_partition_spec(PartitionSpec(1, ()))
    builder.set_default_sort_order(builder.add_sort_order(UNSORTED))
    builder.set_location("s3://elsewhere/t")
    builder.add_encryption_key(EncryptedKey("k2", "Cg=="))
    new = builder.build()
    updates = updates_since(base, new)
    assert [type(u).__name__ for u in updates] == [
        "AddPartitionSpec",
        "AddSortOrder",
        "SetDefaultSortOrder",
        "SetLocation",
        "AddEncryptionKey",
    ]
    assert updates[2] == SetDefaultSortOrder(LAST_ADDED)  # "-1 to set last added sort order"
    replayed = apply_updates(base, updates)
    assert (replayed.location, replayed.encryption_keys, replayed.default_sort_order_id) == (
        new.location,
        new.encryption_keys,
        0,
    )
    assert replayed.partition_specs == new.partition_specs
    assert not any(isinstance(u, AddSnapshot) for u in updates)


def test_update_arrays_name_the_bad_element() -> None:
    assert parse_updates(SPEC_EXAMPLES) == [parse_update(o) for o in SPEC_EXAMPLES]
    with pytest.raises(
        ValidationError, match=r"updates\[1\]: update 'set-location': missing required field 'location'"
    ):
        parse_updates([SPEC_EXAMPLES[0], {"action": "set-location"}])
    with pytest.raises(ValidationError, match="updates must be a JSON array, got str"):
        parse_updates("set-location")
