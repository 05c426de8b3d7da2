"""DDL as users type it: SQL text through ``Session.execute`` (parser -> dispatch -> ops)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.errors import NotFoundError, ValidationError
from iceduck.session.session import Session

T = TableIdentifier(("db",), "t")


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    s = Session(tmp_path / "wh")
    s.execute("CREATE SCHEMA db")
    yield s
    s.close()


def test_spark_flavoured_create_and_evolve(session: Session) -> None:
    session.execute(
        "CREATE TABLE db.t (id bigint NOT NULL COMMENT 'key', ts timestamp, s string) USING iceberg "
        "PARTITIONED BY (bucket(8, id), days(ts)) COMMENT 'events' TBLPROPERTIES ('format-version'='3')"
    )
    m = session.catalog.load_table(T).metadata
    assert m.format_version == 3 and m.properties["comment"] == "events"
    assert [f.name for f in m.spec().fields] == ["id_bucket", "ts_day"]
    assert str(m.schema().find_field("ts").field_type) == "timestamptz"  # Spark's timestamp
    result = session.execute("INSERT INTO db.t VALUES (1, TIMESTAMPTZ '2024-01-01 10:00:00+00', 'a')")
    assert result.rowcount == 1
    session.execute("ALTER TABLE db.t ADD COLUMN n int DEFAULT 7")
    session.execute("ALTER TABLE db.t RENAME COLUMN s TO label")
    session.execute("ALTER TABLE db.t WRITE ORDERED BY id")
    session.execute("ALTER TABLE db.t ADD PARTITION FIELD label")
    assert session.execute("SELECT id, label, n FROM db.t").fetchall() == [(1, "a", 7)]
    session.execute("ALTER TABLE db.t CREATE TAG first RETAIN 3 DAYS")
    session.execute("ALTER TABLE db.t SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')")
    m = session.catalog.load_table(T).metadata
    assert m.refs["first"].max_ref_age_ms == 3 * 86_400_000
    assert m.properties["write.distribution-mode"] == "range"
    with pytest.raises(ValidationError):
        session.execute("ALTER TABLE db.t ALTER COLUMN label TYPE int")


def test_duckdb_flavoured_ctas_replace_drop(session: Session) -> None:
    result = session.execute("CREATE TABLE db.t AS SELECT range AS id, range::VARCHAR AS s FROM range(5)")
    assert result.rowcount == 5
    session.execute("CREATE OR REPLACE TABLE db.t AS SELECT id * 10 AS id FROM db.t WHERE id < 2")
    assert session.execute("SELECT id FROM db.t ORDER BY id").fetchall() == [(0,), (10,)]
    session.execute("ALTER TABLE db.t RENAME TO u")
    session.execute("DROP TABLE db.u PURGE")
    with pytest.raises(NotFoundError):
        session.execute("DROP TABLE db.u")
    session.execute("DROP TABLE IF EXISTS db.u")
    session.execute("DROP SCHEMA db")
    assert not session.catalog.namespace_exists(("db",))


def test_refs_and_namespaces_in_sql(session: Session) -> None:
    session.execute("CREATE TABLE IF NOT EXISTS db.t (id BIGINT NOT NULL, v VARCHAR)")
    session.execute("CREATE TABLE IF NOT EXISTS db.t (other INTEGER)")  # exists: nothing happens
    session.execute("INSERT INTO db.t VALUES (1, 'a')")
    first = session.catalog.load_table(T).metadata.current_snapshot_id
    session.execute("INSERT INTO db.t VALUES (2, 'b')")
    session.execute(f"ALTER TABLE db.t CREATE BRANCH old AS OF VERSION {first} RETAIN 7 DAYS")
    session.execute("ALTER TABLE db.t CREATE TAG IF NOT EXISTS v1")
    session.execute("ALTER TABLE db.t SET IDENTIFIER FIELDS id")
    assert session.execute("SELECT count(*) FROM db.t.branch_old").fetchall() == [(1,)]
    assert session.execute("SELECT count(*) FROM db.t.tag_v1").fetchall() == [(2,)]
    session.execute("INSERT INTO db.t.branch_old VALUES (3, 'c')")
    assert session.execute("SELECT id FROM db.t.branch_old ORDER BY id").fetchall() == [(1,), (3,)]
    session.execute("ALTER TABLE db.t DROP TAG IF EXISTS nope")
    session.execute("ALTER TABLE db.t DROP BRANCH old")
    m = session.catalog.load_table(T).metadata
    assert set(m.refs) == {"main", "v1"} and m.schema().identifier_field_ids == (1,)
    session.execute("ALTER TABLE db.t UNSET TBLPROPERTIES IF EXISTS ('nope')")
    with pytest.raises(ValidationError, match="not empty"):
        session.execute("DROP SCHEMA db")
    session.execute("DROP SCHEMA db CASCADE")
    assert not session.catalog.table_exists(T)
