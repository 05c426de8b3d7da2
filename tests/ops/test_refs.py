"""CREATE/REPLACE/DROP BRANCH and TAG on a real SQLite catalog in a temporary warehouse."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.errors import AlreadyExistsError, NotFoundError, ValidationError
from iceduck.session.session import Session
from iceduck.spec.snapshot import RefType, SnapshotRef
from iceduck.spec.types import LongType
from iceduck.sql import statements as st
from tests.ops.ddl_support import col, name, rows, run

T = TableIdentifier(("db",), "t")
DAY_MS = 86_400_000
BRANCH, TAG = st.RefKind.BRANCH, st.RefKind.TAG


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    s = Session(tmp_path / "wh")
    run(s, st.CreateNamespace(("db",)))
    run(s, st.CreateTable(name("db.t"), as_query="SELECT range AS id FROM range(3)"))
    yield s
    s.close()


def refs(session: Session, table: TableIdentifier = T) -> dict[str, SnapshotRef]:
    return session.catalog.load_table(table).metadata.refs


def current(session: Session) -> int:
    snapshot_id = session.catalog.load_table(T).metadata.current_snapshot_id
    assert snapshot_id is not None
    return snapshot_id


def create(session: Session, kind: st.RefKind, ref: str, **kw) -> None:
    run(session, st.CreateRef(name("db.t"), kind, ref, **kw))


def test_create_branch_and_tag(session: Session) -> None:
    head = current(session)
    create(session, BRANCH, "b", max_ref_age_ms=2 * DAY_MS, min_snapshots_to_keep=3)
    create(session, TAG, "v1", max_ref_age_ms=DAY_MS)
    assert refs(session)["b"] == SnapshotRef(head, RefType.BRANCH, 3, None, 2 * DAY_MS)
    assert refs(session)["v1"] == SnapshotRef(head, RefType.TAG, max_ref_age_ms=DAY_MS)
    assert rows(session, "SELECT count(*) FROM db.t.branch_b") == [(3,)]
    assert rows(session, "SELECT count(*) FROM db.t.tag_v1") == [(3,)]


def test_exists_replace_and_if_not_exists(session: Session) -> None:
    create(session, BRANCH, "b", max_ref_age_ms=2 * DAY_MS, min_snapshots_to_keep=3)
    with pytest.raises(AlreadyExistsError, match="Ref b already exists"):
        create(session, BRANCH, "b")
    with pytest.raises(AlreadyExistsError):
        create(session, TAG, "b")
    create(session, BRANCH, "b", if_not_exists=True, max_ref_age_ms=5 * DAY_MS)  # nothing changes
    assert refs(session)["b"].max_ref_age_ms == 2 * DAY_MS
    first = current(session)
    run(session, st.CreateTable(name("db.t"), as_query="SELECT 9 AS id", or_replace=True))
    create(session, BRANCH, "b", or_replace=True, from_ref="main")  # keeps its retention
    b = refs(session)["b"]
    assert b.snapshot_id == current(session) != first
    assert (b.min_snapshots_to_keep, b.max_ref_age_ms) == (3, 2 * DAY_MS)
    create(session, BRANCH, "b", replace=True, snapshot_id=first, min_snapshots_to_keep=1)
    assert refs(session)["b"] == SnapshotRef(first, RefType.BRANCH, 1, None, 2 * DAY_MS)
    with pytest.raises(NotFoundError, match="Branch does not exist: nope"):
        create(session, BRANCH, "nope", replace=True)
    with pytest.raises(ValidationError, match="Ref b is a branch not a tag"):
        create(session, TAG, "b", or_replace=True)


def test_bad_sources(session: Session) -> None:
    with pytest.raises(NotFoundError, match="unknown snapshot: 123"):
        create(session, TAG, "t1", snapshot_id=123)
    with pytest.raises(NotFoundError, match="nope"):
        create(session, TAG, "t1", from_ref="nope")
    with pytest.raises(ValidationError, match="retention"):
        create(session, TAG, "t1", min_snapshots_to_keep=2)
    assert set(refs(session)) == {"main"}


def test_drop(session: Session) -> None:
    create(session, BRANCH, "b")
    create(session, TAG, "v")
    with pytest.raises(ValidationError, match="Ref b is a branch not a tag"):
        run(session, st.DropRef(name("db.t"), TAG, "b"))
    with pytest.raises(ValidationError, match="main"):
        run(session, st.DropRef(name("db.t"), BRANCH, "main"))
    with pytest.raises(NotFoundError, match="Branch does not exist: nope"):
        run(session, st.DropRef(name("db.t"), BRANCH, "nope"))
    run(session, st.DropRef(name("db.t"), BRANCH, "nope", if_exists=True))
    run(session, st.DropRef(name("db.t"), BRANCH, "b"))
    run(session, st.DropRef(name("db.t"), TAG, "v"))
    assert set(refs(session)) == {"main"}


def test_empty_table(session: Session) -> None:
    run(session, st.CreateTable(name("db.e"), columns=(col("id", LongType()),)))
    e = TableIdentifier(("db",), "e")
    with pytest.raises(ValidationError, match="main has no snapshot"):
        run(session, st.CreateRef(name("db.e"), TAG, "v"))
    run(session, st.CreateRef(name("db.e"), BRANCH, "b"))
    m = session.catalog.load_table(e).metadata
    assert m.current_snapshot_id is None and set(m.refs) == {"b"}
    snapshot = m.snapshot_by_id(m.refs["b"].snapshot_id)
    assert snapshot.operation == "append" and snapshot.parent_snapshot_id is None
    assert snapshot.summary["total-records"] == "0"
    assert rows(session, "SELECT count(*) FROM db.e.branch_b") == [(0,)]
