"""The view spec's types and Java's ``ViewMetadata.Builder`` rules (iceduck.spec.view_metadata)."""

from __future__ import annotations

import pytest

from iceduck.errors import NotFoundError, UnsupportedError, ValidationError
from iceduck.spec.schema import Schema
from iceduck.spec.types import IntegerType, LongType, NestedField, StringType
from iceduck.spec.view_metadata import (
    ViewHistoryEntry,
    ViewMetadata,
    ViewRepresentation,
    add_view_version,
    check_view_metadata,
    new_view,
    set_view_properties,
)

SCHEMA = Schema((NestedField(1, "id", LongType()), NestedField(2, "name", StringType())), schema_id=7)
OTHER_SCHEMA = Schema((NestedField(1, "n", IntegerType()),))
SPARK = ViewRepresentation("SELECT id, name FROM t", "spark")
DUCK = ViewRepresentation("SELECT id, name FROM t", "duckdb")


def _view(**properties: str) -> ViewMetadata:
    return new_view(
        "s3://b/wh/ns/v",
        SCHEMA,
        [SPARK],
        ("ns",),
        default_catalog="cat",
        summary={"engine-name": "spark"},
        properties=properties,
        view_uuid="fa6506c3-7681-40c8-86dc-e36561f83385",
        timestamp_ms=1000,
    )


def _replace(md: ViewMetadata, sql: str, at: int, *reps: ViewRepresentation) -> ViewMetadata:
    return add_view_version(
        md,
        SCHEMA,
        reps or [ViewRepresentation(sql, "spark")],
        ("ns",),
        default_catalog="cat",
        summary={"engine-name": "spark"},
        timestamp_ms=at,
    )


def test_a_new_view_has_version_1_schema_0_and_one_log_entry() -> None:
    md = _view()
    assert md.current_version_id == 1
    assert md.current_version.schema_id == 0
    assert md.schema.schema_id == 0 and md.schema.fields == SCHEMA.fields
    assert md.version_log == (ViewHistoryEntry(1, 1000),)
    assert md.current_version.representation("SPARK") == SPARK
    assert md.current_version.representation("trino") is None


def test_a_replace_adds_a_version_and_reuses_an_equal_schema() -> None:
    md = _replace(_view(), "SELECT 1", 2000)
    assert [v.version_id for v in md.versions] == [1, 2]
    assert md.current_version_id == 2
    assert len(md.schemas) == 1 and md.current_version.schema_id == 0
    assert md.version_log == (ViewHistoryEntry(1, 1000), ViewHistoryEntry(2, 2000))


def test_a_new_schema_takes_the_next_id() -> None:
    md = add_view_version(_view(), OTHER_SCHEMA, [SPARK], ("ns",), "cat", {"engine-name": "spark"}, 2000)
    assert [s.schema_id for s in md.schemas] == [0, 1]
    assert md.current_version.schema_id == 1
    assert md.schema.fields == OTHER_SCHEMA.fields


def test_an_equal_version_is_reused_and_logged_again() -> None:
    """Java's ``reuseOrCreateNewViewVersionId``: going back to an earlier definition makes
    that version current again rather than adding a copy."""
    md = _replace(_replace(_view(), "SELECT 1", 2000), "SELECT id, name FROM t", 3000)
    assert [v.version_id for v in md.versions] == [1, 2]
    assert md.current_version_id == 1
    assert md.version_log[-1] == ViewHistoryEntry(1, 3000)


def test_replacing_with_the_current_definition_changes_nothing() -> None:
    md = _view()
    assert _replace(md, "SELECT id, name FROM t", 5000) == md


def test_two_queries_of_one_dialect_are_refused() -> None:
    with pytest.raises(ValidationError, match="Cannot add multiple queries for dialect spark"):
        _replace(_view(), "", 2000, SPARK, ViewRepresentation("SELECT 2", "Spark"))


def test_dropping_a_dialect_needs_the_property() -> None:
    md = _replace(_view(), "", 2000, SPARK, DUCK)
    with pytest.raises(ValidationError, match="loss of view dialects"):
        _replace(md, "", 3000, DUCK)
    allowed = set_view_properties(md, {"replace.drop-dialect.allowed": "true"})
    assert _replace(allowed, "", 3000, DUCK).current_version.dialects == {"duckdb"}


def test_old_versions_expire_keeping_the_current_one_first() -> None:
    """``version.history.num-entries``: the current version, then the newest ids; the log is
    cleared past a version no longer kept (Java's ``expireVersions``/``updateHistory``)."""
    md = _view(**{"version.history.num-entries": "2"})
    for i, at in enumerate((2000, 3000, 4000), start=2):
        md = _replace(md, f"SELECT {i}", at)
    assert [v.version_id for v in md.versions] == [4, 3]
    assert md.version_log == (ViewHistoryEntry(3, 3000), ViewHistoryEntry(4, 4000))
    back = _replace(md, "SELECT 3", 5000)  # back to version 3: nothing added, nothing expires
    assert [v.version_id for v in back.versions] == [4, 3] and back.current_version_id == 3


def test_ten_versions_are_kept_by_default() -> None:
    md = _view()
    for i in range(2, 15):
        md = _replace(md, f"SELECT {i}", i * 1000)
    assert len(md.versions) == 10
    assert md.versions[0].version_id == 14


def test_the_history_size_must_be_positive() -> None:
    with pytest.raises(ValidationError, match="must be positive but was 0"):
        _view(**{"version.history.num-entries": "0"})


def test_version_as_of_uses_the_version_log() -> None:
    md = _replace(_view(), "SELECT 1", 2000)
    assert md.version_as_of(1999).version_id == 1
    assert md.version_as_of(2000).version_id == 2
    with pytest.raises(NotFoundError, match="no version was current at timestamp 999"):
        md.version_as_of(999)
    with pytest.raises(NotFoundError, match="no version 9"):
        md.version(9)


def test_properties_set_and_removed() -> None:
    md = set_view_properties(_view(comment="a", owner="x"), {"comment": "b"}, ["owner"])
    assert md.properties == {"comment": "b"}
    with pytest.raises(ValidationError, match="comment"):
        set_view_properties(md, {"comment": "c"}, ["comment"])


def test_check_names_the_broken_rule() -> None:
    md = _view()
    from dataclasses import replace

    with pytest.raises(ValidationError, match="Cannot find current version 3"):
        check_view_metadata(replace(md, current_version_id=3))
    with pytest.raises(UnsupportedError, match="view format version 2"):
        check_view_metadata(replace(md, format_version=2))
    with pytest.raises(ValidationError, match="unknown schema 5"):
        check_view_metadata(replace(md, versions=(replace(md.versions[0], schema_id=5),)))
