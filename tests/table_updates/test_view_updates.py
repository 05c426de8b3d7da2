"""View updates of a REST commit: JSON round trips, Java's builder numbering when a server
re-applies them, and the updates a client derives from the metadata it built."""

from __future__ import annotations

from dataclasses import replace

import pytest

from iceduck.errors import CommitConflictError, ValidationError
from iceduck.spec.schema import Schema
from iceduck.spec.types import LongType, NestedField, StringType
from iceduck.spec.view_metadata import (
    ViewMetadata,
    ViewRepresentation,
    add_view_version,
    new_view,
    set_view_properties,
)
from iceduck.table_updates.updates import LAST_ADDED, AddSchema, RemoveProperties, SetProperties
from iceduck.table_updates.view_apply import apply_view_updates
from iceduck.table_updates.view_updates import (
    AddViewVersion,
    AssertViewUUID,
    SetCurrentViewVersion,
    check_view_requirements,
    parse_view_requirements,
    parse_view_updates,
    view_changes,
    view_requirement_json,
    view_update_json,
)

ID = Schema((NestedField(0, "id", LongType()),))
NAME = Schema((NestedField(0, "name", StringType()),))


def _spark(sql: str) -> tuple[ViewRepresentation, ...]:
    return (ViewRepresentation(sql, "spark"),)


def _view() -> ViewMetadata:
    return new_view("/wh/ns/v", ID, _spark("select 1 as id"), ("ns",), timestamp_ms=1000)


def test_the_updates_a_client_derives_rebuild_its_metadata_on_the_server() -> None:
    base = _view()
    built = add_view_version(base, NAME, _spark("select 'a' as name"), ("ns",), timestamp_ms=2000)
    built = set_view_properties(built, {"comment": "c"})
    updates = view_changes(base, built)
    assert [type(u) for u in updates] == [AddSchema, AddViewVersion, SetCurrentViewVersion, SetProperties]
    assert isinstance(updates[1], AddViewVersion) and updates[1].version.schema_id == LAST_ADDED
    wire = parse_view_updates([view_update_json(u) for u in updates])
    assert wire == updates
    assert apply_view_updates(base, wire, timestamp_ms=9999) == built


def test_a_replace_re_applied_on_a_newer_view_takes_the_next_ids() -> None:
    """Java's ``concurrentReplaceViewVersion`` with server-side retry: version 3 on schema 0."""
    base = replace(_view(), properties={"replace.drop-dialect.allowed": "true"})
    first = add_view_version(
        base, NAME, (ViewRepresentation("select 2", "trino"),), ("ns",), timestamp_ms=2000
    )
    second = add_view_version(base, ID, _spark("select count(id) as id"), ("ns",), timestamp_ms=3000)
    landed = apply_view_updates(first, view_changes(base, second), timestamp_ms=4000)
    assert landed is not None
    assert [(v.version_id, v.schema_id) for v in landed.versions] == [(1, 0), (2, 1), (3, 0)]
    assert landed.current_version_id == 3
    assert landed.version_log[-1].version_id == 3 and landed.version_log[-1].timestamp_ms == 3000


def test_updates_that_change_nothing_give_none() -> None:
    base = _view()
    assert apply_view_updates(base, [SetProperties({}), RemoveProperties(())]) is None
    # an equal version is the existing one, already current: no change either (and, as in
    # Java, not "the last added" one)
    same = AddViewVersion(replace(base.current_version, version_id=2, timestamp_ms=5))
    assert apply_view_updates(base, [same, SetCurrentViewVersion(1)]) is None
    with pytest.raises(ValidationError, match="Cannot set last version id"):
        apply_view_updates(base, [same, SetCurrentViewVersion(LAST_ADDED)])


def test_an_old_version_made_current_again_is_logged_at_the_clock() -> None:
    base = _view()
    two = add_view_version(base, NAME, _spark("select 'a' as name"), ("ns",), timestamp_ms=2000)
    back = apply_view_updates(two, [SetCurrentViewVersion(1)], timestamp_ms=5000)
    assert back is not None and back.current_version_id == 1
    assert back.version_log[-1].timestamp_ms == 5000


@pytest.mark.parametrize(
    ("updates", "message"),
    [
        (
            [SetCurrentViewVersion(LAST_ADDED)],
            "Cannot set last version id: no current version id has been set",
        ),
        ([SetCurrentViewVersion(7)], "Cannot set current version to unknown version: 7"),
        (
            [
                AddViewVersion(
                    replace(_view().current_version, version_id=2, schema_id=LAST_ADDED, summary={"a": "b"})
                )
            ],
            "Cannot set last added schema: no schema has been added",
        ),
        (
            [AddViewVersion(replace(_view().current_version, schema_id=5, summary={"a": "b"}))],
            "Cannot add version with unknown schema: 5",
        ),
        (
            [
                AddViewVersion(
                    replace(
                        _view().current_version,
                        representations=(ViewRepresentation("a", "trino"), ViewRepresentation("b", "Trino")),
                    )
                )
            ],
            "Invalid view version: Cannot add multiple queries for dialect trino",
        ),
    ],
)
def test_javas_builder_refusals(updates: list, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValidationError) as raised:
        apply_view_updates(_view(), updates)
    assert str(raised.value) == message


def test_assert_view_uuid() -> None:
    base = _view()
    requirements = parse_view_requirements([view_requirement_json(AssertViewUUID(base.view_uuid))])
    check_view_requirements(base, requirements)
    with pytest.raises(CommitConflictError, match="view UUID does not match"):
        check_view_requirements(base, [AssertViewUUID("other")])
    with pytest.raises(ValidationError, match="unknown view requirement type 'assert-create'"):
        parse_view_requirements([{"type": "assert-create"}])
    with pytest.raises(ValidationError, match=r"updates\[0\]: unknown view update action 'add-snapshot'"):
        parse_view_updates([{"action": "add-snapshot"}])
