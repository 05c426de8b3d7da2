"""CREATE/DROP NAMESPACE, CREATE TABLE (plain, CTAS, OR REPLACE, REPLACE), DROP, RENAME on a
real SQLite catalog in a temporary warehouse."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.errors import (
    AlreadyExistsError,
    CommitConflictError,
    NotFoundError,
    UnsupportedError,
    UserError,
    ValidationError,
)
from iceduck.ops.context import OpContext
from iceduck.ops.ddl import create_table
from iceduck.session.session import Session
from iceduck.spec.snapshot import Operation
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import (
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestamptzType,
)
from iceduck.sql import statements as st
from tests.ops.ddl_support import col, metadata_files, name, op_context, rows, run

T = TableIdentifier(("db",), "t")


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    s = Session(tmp_path / "wh")
    run(s, st.CreateNamespace(("db",)))
    yield s
    s.close()


def create(session: Session, dotted: str = "db.t", **kw) -> None:
    columns = kw.pop("columns", (col("id", LongType(), True), col("s", StringType())))
    run(session, st.CreateTable(name(dotted), columns=columns, **kw))


# -- namespaces --------------------------------------------------------------------------------


def test_create_namespace_twice(session: Session) -> None:
    with pytest.raises(AlreadyExistsError, match="db"):
        run(session, st.CreateNamespace(("db",)))
    run(session, st.CreateNamespace(("db",), if_not_exists=True))
    run(session, st.CreateNamespace(("iceduck", "other"), properties={"owner": "me"}))
    assert session.catalog.namespace_exists(("other",))  # the catalog's own name is dropped
    assert session.catalog.load_namespace_properties(("other",))["owner"] == "me"


def test_drop_namespace(session: Session) -> None:
    create(session)
    with pytest.raises(ValidationError, match=r"not empty.*CASCADE"):
        run(session, st.DropNamespace(("db",)))
    assert session.catalog.table_exists(T)
    run(session, st.DropNamespace(("db",), cascade=True))
    assert not session.catalog.namespace_exists(("db",))
    assert not session.catalog.table_exists(T)
    with pytest.raises(NotFoundError):
        run(session, st.DropNamespace(("db",)))
    run(session, st.DropNamespace(("db",), if_exists=True))


# -- CREATE TABLE ------------------------------------------------------------------------------


def test_create_table_metadata(session: Session) -> None:
    columns = (
        col("a", IntegerType(), True, "the key"),
        col("s", StructType((NestedField(1, "x", IntegerType()), NestedField(2, "y", StringType())))),
        col("l", ListType(3, StructType((NestedField(4, "p", IntegerType()),)))),
        col("m", MapType(5, StringType(), 6, IntegerType())),
        col("ts", TimestamptzType()),
    )
    create(
        session,
        columns=columns,
        partition_by=(
            st.PartitionTerm(parse_transform("bucket[16]"), ("a",)),
            st.PartitionTerm(parse_transform("day"), ("ts",)),
        ),
        sort_by=(st.SortTerm(parse_transform("identity"), ("a",)),),
        properties={"format-version": "1", "k": "v"},
        comment="hello",
    )
    m = session.catalog.load_table(T).metadata
    assert m.format_version == 1
    assert m.properties == {"k": "v", "comment": "hello", "write.parquet.compression-codec": "zstd"}
    schema = m.schema()
    # Java's assignFreshIds order, as Spark assigns them (tests/interop/test_ops_ddl_spark.py)
    ids = {n: schema.find_field(n).field_id for n in ("a", "s", "l", "m", "ts", "s.x", "s.y", "l.element")}
    assert ids == {"a": 1, "s": 2, "l": 3, "m": 4, "ts": 5, "s.x": 6, "s.y": 7, "l.element": 8}
    assert schema.find_field("l.element.p").field_id == 9
    assert (schema.find_field("m.key").field_id, schema.find_field("m.value").field_id) == (10, 11)
    assert schema.find_field("a").required and schema.find_field("a").doc == "the key"
    assert m.last_column_id == 11
    assert [(f.name, f.source_id, f.field_id) for f in m.spec().fields] == [
        ("a_bucket", 1, 1000),
        ("ts_day", 5, 1001),
    ]
    assert m.sort_order().order_id == 1 and m.sort_order().fields[0].source_id == 1
    assert m.current_snapshot_id is None
    assert m.location == f"{session.warehouse}/db/t"
    assert [p.name[:6] for p in metadata_files(m.location)] == ["00000-"]


def test_create_table_exists_and_missing_namespace(session: Session) -> None:
    create(session)
    before = session.catalog.load_table(T).metadata_location
    with pytest.raises(AlreadyExistsError, match=r"db\.t"):
        create(session)
    create(session, if_not_exists=True, columns=(col("other", IntegerType()),))
    assert session.catalog.load_table(T).metadata_location == before
    with pytest.raises(NotFoundError, match="CREATE NAMESPACE nope"):
        create(session, "nope.t")
    with pytest.raises(UserError, match="name the namespace"):
        create(session, "t")


def test_types_need_their_format_version(session: Session) -> None:
    with pytest.raises(ValidationError, match="format-version 3"):
        create(session, columns=(col("ts", TimestampNanoType()),))
    with pytest.raises(UnsupportedError, match="format-version 4"):
        create(session, properties={"format-version": "4"})
    with pytest.raises(ValidationError, match="reserved"):
        create(session, properties={"current-snapshot-id": "4"})
    assert not session.catalog.table_exists(T)
    create(session, columns=(col("ts", TimestampNanoType()),), properties={"format-version": "3"})
    assert session.catalog.load_table(T).metadata.format_version == 3


def test_create_table_location(session: Session, tmp_path: Path) -> None:
    create(session, location=str(tmp_path / "elsewhere/"))
    m = session.catalog.load_table(T).metadata
    assert m.location == str(tmp_path / "elsewhere")
    assert metadata_files(m.location)


# -- CTAS --------------------------------------------------------------------------------------


def test_ctas_is_one_commit(session: Session) -> None:
    query = "SELECT i::BIGINT AS id, 'r' || i AS s, (i % 3)::INT AS c FROM range(10) r(i)"
    result = run(
        session,
        st.CreateTable(
            name("db.t"),
            as_query=query,
            partition_by=(st.PartitionTerm(parse_transform("identity"), ("c",)),),
            properties={"format-version": "3"},
        ),
    )
    assert result.rowcount == 10
    loaded = session.catalog.load_table(T)
    m = loaded.metadata
    assert [p.name[:6] for p in metadata_files(m.location)] == ["00000-"]  # created with its rows
    snapshot = m.current_snapshot()
    assert snapshot is not None and snapshot.operation == Operation.APPEND.value
    assert snapshot.parent_snapshot_id is None and snapshot.summary["added-records"] == "10"
    assert m.next_row_id == 10
    assert [f.name for f in m.schema().fields] == ["id", "s", "c"]
    assert all(not f.required for f in m.schema().fields)
    assert rows(session, "SELECT c, count(*), sum(id) FROM db.t GROUP BY c ORDER BY c") == [
        (0, 4, 18),
        (1, 3, 12),
        (2, 3, 15),
    ]
    # from another Iceberg table, with parameters
    run(session, st.CreateTable(name("db.t2"), as_query="SELECT id, s FROM db.t WHERE id > $1"), params=[6])
    assert rows(session, "SELECT id FROM db.t2 ORDER BY id") == [(7,), (8,), (9,)]


def test_ctas_without_rows_still_commits_a_snapshot(session: Session) -> None:
    run(session, st.CreateTable(name("db.t"), as_query="SELECT 1 AS a WHERE false"))
    snapshot = session.catalog.load_table(T).metadata.current_snapshot()
    assert snapshot is not None and snapshot.summary["total-records"] == "0"


def test_ctas_refusals_leave_nothing(session: Session) -> None:
    with pytest.raises(UnsupportedError, match=r"INTERVAL.*cast"):
        run(session, st.CreateTable(name("db.t"), as_query="SELECT INTERVAL 1 DAY AS h"))
    with pytest.raises(UserError, match="column list"):
        run(
            session,
            st.CreateTable(name("db.t"), columns=(col("a", IntegerType()),), as_query="SELECT 1 AS a"),
        )
    assert not session.catalog.table_exists(T)
    assert not Path(session.warehouse, "db", "t").exists()


def test_ctas_duplicate_names_are_renamed_as_duckdb_does(session: Session) -> None:
    run(session, st.CreateTable(name("db.t"), as_query="SELECT 1 AS a, 2 AS a"))
    assert [f.name for f in session.catalog.load_table(T).metadata.schema().fields] == ["a", "a_1"]
    assert rows(session, "SELECT * FROM db.t") == [(1, 2)]


# -- CREATE OR REPLACE / REPLACE ---------------------------------------------------------------


def test_replace_keeps_history(session: Session) -> None:
    run(session, st.CreateTable(name("db.t"), as_query="SELECT 1::INT AS a", properties={"keep": "me"}))
    first = session.catalog.load_table(T).metadata
    run(
        session,
        st.CreateTable(
            name("db.t"),
            columns=(col("b", StringType()), col("a", IntegerType())),
            or_replace=True,
            properties={"new": "p"},
        ),
    )
    m = session.catalog.load_table(T).metadata
    assert m.table_uuid == first.table_uuid
    assert m.current_snapshot_id is None and "main" not in m.refs
    assert [s.snapshot_id for s in m.snapshots] == [s.snapshot_id for s in first.snapshots]
    assert m.schema().find_field("a").field_id == 1  # same name, same id (Java's buildReplacement)
    assert m.schema().find_field("b").field_id == 2
    assert m.properties["new"] == "p" and m.properties["keep"] == "me"
    assert rows(session, "SELECT count(*) FROM db.t") == [(0,)]


def test_replace_as_select(session: Session) -> None:
    run(session, st.CreateTable(name("db.t"), as_query="SELECT 1::INT AS a"))
    result = run(
        session,
        st.CreateTable(name("db.t"), as_query="SELECT a + 1 AS a, 'x' AS b FROM db.t", replace=True),
    )
    assert result.rowcount == 1
    m = session.catalog.load_table(T).metadata
    snapshot = m.current_snapshot()
    assert snapshot is not None and snapshot.operation == Operation.OVERWRITE.value
    assert snapshot.parent_snapshot_id is None and len(m.snapshots) == 2
    assert rows(session, "SELECT a, b FROM db.t") == [(2, "x")]


def test_replace_missing_table(session: Session) -> None:
    with pytest.raises(NotFoundError, match="does not exist"):
        create(session, replace=True)
    create(session, or_replace=True)
    assert session.catalog.table_exists(T)


# -- DROP, RENAME ------------------------------------------------------------------------------


def test_drop_table(session: Session) -> None:
    run(session, st.CreateTable(name("db.t"), as_query="SELECT 1 AS a"))
    location = session.catalog.load_table(T).metadata.location
    run(session, st.DropTable(name("db.t")))
    assert not session.catalog.table_exists(T)
    assert metadata_files(location)  # files stay without PURGE
    with pytest.raises(NotFoundError):
        run(session, st.DropTable(name("db.t")))
    run(session, st.DropTable(name("db.t"), if_exists=True))


def test_drop_table_purge(session: Session) -> None:
    run(session, st.CreateTable(name("db.t"), as_query="SELECT 1 AS a"))
    location = Path(session.catalog.load_table(T).metadata.location)
    files = [p for p in location.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files)
    run(session, st.DropTable(name("db.t"), purge=True))
    assert not [p for p in files if p.exists()]


def test_rename_table(session: Session) -> None:
    run(session, st.CreateTable(name("db.t"), as_query="SELECT 1 AS a"))
    run(session, st.RenameTable(name("db.t"), ("u",)))  # a bare name keeps the namespace
    assert session.catalog.table_exists(TableIdentifier(("db",), "u"))
    run(session, st.CreateNamespace(("db2",)))
    run(session, st.RenameTable(name("db.u"), name("db2.v")))
    assert rows(session, "SELECT a FROM db2.v") == [(1,)]
    create(session)
    with pytest.raises(AlreadyExistsError):
        run(session, st.RenameTable(name("db2.v"), name("db.t")))
    with pytest.raises(NotFoundError):
        run(session, st.RenameTable(name("db.missing"), name("db.x")))
    with pytest.raises(NotFoundError, match="namespace"):
        run(session, st.RenameTable(name("db2.v"), name("nope.x")))


def test_metadata_json_is_what_spark_expects(session: Session) -> None:
    create(session, properties={"format-version": "2"})
    loaded = session.catalog.load_table(T)
    raw = json.loads(Path(loaded.metadata_location).read_text())
    assert raw["format-version"] == 2 and "format-version" not in raw["properties"]
    assert raw["current-snapshot-id"] in (None, -1) or "current-snapshot-id" not in raw


# -- races: another writer commits while the statement runs its query ---------------------------


def _racing_context(session: Session, race: str) -> OpContext:
    """A context whose query preparation first lets a second session run ``race``."""
    ctx = op_context(session)
    prepare = ctx.prepare_query
    other = Session(session.warehouse)

    def racing(text: str) -> str:
        other.execute(race)
        other.close()
        return prepare(text)

    ctx.prepare_query = racing
    return ctx


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def test_ctas_losing_the_create_race_cleans_up(session: Session) -> None:
    ctx = _racing_context(session, "CREATE TABLE db.t (x int)")
    with pytest.raises(AlreadyExistsError):
        create_table(ctx, st.CreateTable(name("db.t"), as_query="SELECT 1 AS a"))
    location = Path(session.catalog.load_table(T).metadata.location)
    assert [p.name[:6] for p in _files(location)] == ["00000-"]  # only the winner's metadata
    assert [f.name for f in session.catalog.load_table(T).metadata.schema().fields] == ["x"]


def test_rtas_refuses_a_table_changed_under_it(session: Session) -> None:
    run(session, st.CreateTable(name("db.t"), as_query="SELECT 1 AS a"))
    location = Path(session.catalog.load_table(T).metadata.location)
    before = _files(location)
    ctx = _racing_context(session, "ALTER TABLE db.t ADD COLUMN zz int")
    with pytest.raises(CommitConflictError, match="changed"):
        create_table(ctx, st.CreateTable(name("db.t"), as_query="SELECT 2 AS a, 3 AS b", or_replace=True))
    after = _files(location)
    assert [p for p in after if p not in before and not p.name.endswith(".metadata.json")] == []
    assert rows(session, "SELECT * FROM db.t") == [(1, None)]
