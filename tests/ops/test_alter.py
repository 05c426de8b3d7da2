"""ALTER TABLE through the operation, on a real SQLite catalog in a temporary warehouse."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.errors import CommitConflictError, UserError, ValidationError
from iceduck.ops.alter import alter_table
from iceduck.ops.context import WriteTarget
from iceduck.session.session import Session
from iceduck.spec.sort import NullOrder, SortDirection
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import IntegerType, LongType, StringType
from iceduck.sql import statements as st
from tests.ops.ddl_support import col, name, op_context, rows, run

T = TableIdentifier(("db",), "t")
IDENTITY = parse_transform("identity")


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    s = Session(tmp_path / "wh")
    run(s, st.CreateNamespace(("db",)))
    run(
        s,
        st.CreateTable(
            name("db.t"),
            as_query="SELECT i::BIGINT AS id, 'r' || i AS s, (i % 2)::INT AS c FROM range(4) r(i)",
            partition_by=(st.PartitionTerm(parse_transform("bucket[4]"), ("id",)),),
        ),
    )
    yield s
    s.close()


def alter(session: Session, *actions: st.AlterAction) -> None:
    run(session, st.AlterTable(name("db.t"), tuple(actions)))


def metadata(session: Session):
    return session.catalog.load_table(T).metadata


def test_schema_changes_in_one_commit(session: Session) -> None:
    before = session.catalog.load_table(T)
    alter(
        session,
        st.AddColumn(("x",), col("x", IntegerType(), comment="new")),
        st.RenameColumn(("s",), "label"),
        st.AlterColumn(("c",), type=LongType()),
    )
    m = metadata(session)
    assert len(m.schemas) == 2 and m.current_schema_id == 1
    assert [(f.field_id, f.name) for f in m.schema().fields] == [(1, "id"), (2, "label"), (3, "c"), (4, "x")]
    assert m.last_column_id == 4
    assert m.schema().find_field("c").field_type == LongType()
    assert m.metadata_log[-1].metadata_file == before.metadata_location
    assert rows(session, "SELECT label, x FROM db.t WHERE id = 1") == [("r1", None)]
    alter(session, st.DropColumn(("x",)))
    assert [f.name for f in metadata(session).schema().fields] == ["id", "label", "c"]


def test_refusals_leave_the_table_unchanged(session: Session) -> None:
    before = session.catalog.load_table(T).metadata_location
    with pytest.raises(ValidationError, match="partition"):
        alter(session, st.DropColumn(("id",)))
    with pytest.raises(ValidationError, match=r"int|string"):
        alter(session, st.AlterColumn(("s",), type=IntegerType()))
    with pytest.raises(ValidationError, match="downgrade"):
        alter(session, st.SetProperties({"format-version": "1"}))
    with pytest.raises(ValidationError, match="reserved"):
        alter(session, st.SetProperties({"current-snapshot-id": "1"}))
    with pytest.raises(UserError):
        alter(session, st.AddColumn(("s",), col("s", IntegerType())))
    assert session.catalog.load_table(T).metadata_location == before


def test_partition_evolution(session: Session) -> None:
    alter(session, st.AddPartitionField(st.PartitionTerm(IDENTITY, ("c",))))
    m = metadata(session)
    assert m.default_spec_id == 1 and m.last_partition_id == 1001
    assert [f.name for f in m.spec().fields] == ["id_bucket", "c"]
    alter(session, st.DropPartitionField(field_name="id_bucket"))
    m = metadata(session)
    assert [f.name for f in m.spec().fields] == ["c"] and m.default_spec_id == 2
    alter(session, st.DropColumn(("id",)))  # no longer a source of the current spec
    assert rows(session, "SELECT count(*) FROM db.t") == [(4,)]


def test_write_order_and_distribution_mode(session: Session) -> None:
    desc = st.SortTerm(IDENTITY, ("id",), SortDirection.DESC, NullOrder.NULLS_LAST)
    alter(session, st.WriteOrder((st.SortTerm(IDENTITY, ("c",)),)))
    m = metadata(session)
    assert m.default_sort_order_id == 1 and m.properties["write.distribution-mode"] == "range"
    assert m.sort_order().fields[0].source_id == 3
    alter(session, st.WriteOrder((desc,), locally=True))
    m = metadata(session)
    assert m.default_sort_order_id == 2 and m.properties["write.distribution-mode"] == "range"
    assert m.sort_order().fields[0].direction is SortDirection.DESC
    alter(session, st.WriteOrder())
    m = metadata(session)
    assert m.default_sort_order_id == 0 and m.properties["write.distribution-mode"] == "none"
    alter(
        session, st.WriteOrder((st.SortTerm(IDENTITY, ("s",)),), distributed_by_partition=True, locally=True)
    )
    m = metadata(session)
    assert m.properties["write.distribution-mode"] == "hash" and m.sort_order().fields[0].source_id == 2
    with pytest.raises(ValidationError, match="sort order"):
        alter(session, st.DropColumn(("s",)))


def test_properties_and_format_upgrade(session: Session) -> None:
    alter(session, st.SetProperties({"a": "1", "b": "2"}))
    alter(session, st.UnsetProperties(("a", "missing")))  # a missing key is fine, as in Spark
    m = metadata(session)
    assert m.properties.get("b") == "2" and "a" not in m.properties
    alter(session, st.SetProperties({"format-version": "3"}))
    m = metadata(session)
    assert m.format_version == 3 and m.next_row_id == 0 and "format-version" not in m.properties
    alter(session, st.UnsetProperties(("format-version",)))
    assert metadata(session).format_version == 3


def test_identifier_fields(session: Session) -> None:
    with pytest.raises(ValidationError):
        alter(session, st.SetIdentifierFields((("s",),)))  # optional column
    run(session, st.CreateTable(name("db.k"), columns=(col("k", LongType(), True), col("v", StringType()))))
    run(session, st.AlterTable(name("db.k"), (st.SetIdentifierFields((("k",),)),)))
    m = session.catalog.load_table(TableIdentifier(("db",), "k")).metadata
    assert m.schema().identifier_field_ids == (1,)
    run(session, st.AlterTable(name("db.k"), (st.DropIdentifierFields((("k",),)),)))
    assert (
        session.catalog.load_table(TableIdentifier(("db",), "k")).metadata.schema().identifier_field_ids == ()
    )


def _stale_context(session: Session):
    """A context whose table was loaded before another writer committed (a second session)."""
    stale = session.catalog.load_table(T)
    alter(session, st.AddColumn(("other",), col("other", IntegerType())))
    ctx = op_context(session)
    ctx.resolve_target = lambda parts: WriteTarget(stale)
    return ctx


def test_retry_reapplies_properties_on_the_new_table(session: Session) -> None:
    ctx = _stale_context(session)
    alter_table(ctx, st.AlterTable(name("db.t"), (st.SetProperties({"p": "v"}),)))
    m = metadata(session)
    assert m.properties["p"] == "v"
    assert m.schema().find_field("other")  # the concurrent change survived


def test_retry_refuses_a_schema_change_on_a_changed_schema(session: Session) -> None:
    ctx = _stale_context(session)
    before = session.catalog.load_table(T).metadata_location
    with pytest.raises(CommitConflictError, match="schema"):
        alter_table(ctx, st.AlterTable(name("db.t"), (st.AddColumn(("y",), col("y", IntegerType())),)))
    assert session.catalog.load_table(T).metadata_location == before
