"""Scan plans kept per table version (:mod:`iceduck.scan.plan_cache`): the same answer with
the cache as without it, a repeated query plans nothing again, and a new snapshot (from
this connection, another one, or inside a transaction) is planned afresh."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.scan.planner import plan_scan
from iceduck.scan.snapshots import resolve
from iceduck.spec.expressions.predicates import AlwaysFalse, AlwaysTrue, EqualTo, LessThan, or_
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import DoubleType, LongType, NestedField, StringType
from tests.scan.builder import TableBuilder, data_file, equality_deletes, long_bound, position_deletes

SCHEMA = Schema(
    (
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "cat", StringType()),
        NestedField(3, "x", DoubleType()),
    )
)
BY_CAT = PartitionSpec(1, (PartitionField(2, 1000, "cat", parse_transform("identity")),))
FILTERS = [
    AlwaysTrue(),
    AlwaysFalse(),
    EqualTo("cat", "a"),
    EqualTo("id", 17),
    LessThan("id", 12),
    or_(EqualTo("cat", "b"), EqualTo("id", 35)),
]


def ids(path: str, cat: str, lo: int, hi: int) -> object:
    n = hi - lo + 1
    return data_file(
        path,
        (cat,),
        n,
        lower={1: long_bound(lo), 2: cat.encode()},
        upper={1: long_bound(hi), 2: cat.encode()},
        value_counts={1: n, 2: n},
        null_counts={1: 0, 2: 0},
    )


@pytest.fixture
def table(tmp_path: Path) -> TableBuilder:
    t = TableBuilder(tmp_path, SCHEMA, (BY_CAT,), default_spec_id=1)
    t.commit([ids("a1", "a", 0, 9), ids("a2", "a", 10, 19)])
    t.commit([ids("b1", "b", 20, 29)])
    t.commit([ids("c1", "c", 30, 39)])
    t.commit(
        deletes=[position_deletes("pos-b", ("b",)), equality_deletes("eq-a", ("a",), ids=(1,))],
        spec_id=1,
        operation="delete",
    )
    return t


def test_plans_are_the_same_with_the_cache_on_or_off(table: TableBuilder) -> None:
    cache = ManifestCache()
    md = table.metadata
    snapshots = [s.snapshot_id for s in md.snapshots]
    for snapshot_id in snapshots:
        target = resolve(md, snapshot_id=snapshot_id)
        for row_filter in FILTERS:
            args: dict[str, Any] = {
                "snapshot": target.snapshot,
                "schema": target.schema,
                "row_filter": row_filter,
            }
            fresh = plan_scan(md, **args)
            first = plan_scan(md, cache=cache, **args)
            again = plan_scan(md, cache=cache, **args)
            assert first == fresh == again
            assert again is first
    assert cache.plans_made == len(snapshots) * len(FILTERS)


def test_a_new_snapshot_is_planned_afresh(table: TableBuilder) -> None:
    cache = ManifestCache()
    before = plan_scan(table.metadata, row_filter=EqualTo("cat", "d"), cache=cache)
    assert before.tasks == ()
    table.commit([ids("d1", "d", 40, 49)])
    after = plan_scan(table.metadata, row_filter=EqualTo("cat", "d"), cache=cache)
    assert [t.path for t in after.tasks] == ["d1"]
    assert cache.plans_made == 2


def test_equal_literals_of_different_types_are_different_keys(table: TableBuilder) -> None:
    cache = ManifestCache()
    plan_scan(table.metadata, row_filter=EqualTo("x", 1.0), cache=cache)
    plan_scan(table.metadata, row_filter=EqualTo("x", 1), cache=cache)
    assert cache.plans_made == 2


# -- through a connection ----------------------------------------------------------------------

QUERY = "SELECT count(*), sum(v) FROM db.t WHERE k >= 0"


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute("CREATE TABLE db.t (k bigint, v int)")
    con.execute("INSERT INTO db.t VALUES (1, 10), (2, 20)")
    con.close()
    return tmp_path / "wh"


def plans_made(con: Any) -> int:
    return int(con.session.manifests.plans_made)


def test_a_repeated_query_plans_nothing_again(warehouse: Path) -> None:
    con = iceduck.connect(warehouse)
    assert con.execute(QUERY).fetchall() == [(2, 30)]
    made = plans_made(con)
    assert con.execute(QUERY).fetchall() == [(2, 30)]
    assert con.execute(QUERY + " AND v > 0").fetchall() == [(2, 30)]  # another filter: a new plan
    assert plans_made(con) == made + 1


def test_a_snapshot_committed_by_this_connection_is_seen(warehouse: Path) -> None:
    con = iceduck.connect(warehouse)
    assert con.execute(QUERY).fetchall() == [(2, 30)]
    con.execute("INSERT INTO db.t VALUES (3, 30)")
    assert con.execute(QUERY).fetchall() == [(3, 60)]
    con.execute("DELETE FROM db.t WHERE k = 1")  # deletes: the scan's SELECT is not the cached one
    assert con.execute(QUERY).fetchall() == [(2, 50)]
    con.execute("ALTER TABLE db.t ADD COLUMN w int")
    assert con.execute(QUERY).fetchall() == [(2, 50)]


def test_a_snapshot_committed_by_another_connection_is_seen(warehouse: Path) -> None:
    reader, writer = iceduck.connect(warehouse), iceduck.connect(warehouse)
    assert reader.execute(QUERY).fetchall() == [(2, 30)]
    writer.execute("INSERT INTO db.t VALUES (3, 30)")
    assert reader.execute(QUERY).fetchall() == [(3, 60)]
    writer.execute("UPDATE db.t SET v = 0 WHERE k = 2")
    assert reader.execute(QUERY).fetchall() == [(3, 40)]


def test_a_snapshot_pending_in_a_transaction_is_seen(warehouse: Path) -> None:
    """Pending metadata keeps the location it was loaded from: the key is the snapshot."""
    con = iceduck.connect(warehouse)
    assert con.execute(QUERY).fetchall() == [(2, 30)]
    con.execute("BEGIN")
    con.execute("INSERT INTO db.t VALUES (3, 30)")
    assert con.execute(QUERY).fetchall() == [(3, 60)]
    con.execute("ROLLBACK")
    assert con.execute(QUERY).fetchall() == [(2, 30)]
