"""The JDBC catalog on a real PostgreSQL server: the layout Java creates, the URI forms and
credentials, bad configuration, locking against foreign writers, lost connections, commits
from several processes, and iceduck SQL end to end. (The behaviour shared with SQLite runs
on both in test_catalog_writes.py and test_sqlite.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from iceduck.catalog import postgres as pg
from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.jdbc_catalog import JdbcCatalog
from iceduck.catalog.postgres import (
    PostgresCatalog,
    connect_postgres,
    connection_parameters,
    postgres_dialect,
)
from iceduck.errors import CommitConflictError, NotFoundError, StorageError, UserError
from iceduck.session.session import Session
from tests.catalog.helpers import open_at_once
from tests.catalog.test_catalog_writes import SCHEMA
from tests.support.clock import wait_until
from tests.support.postgres import LosesConnection, PostgresServer

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'psycopg[binary]'")

REPO = Path(__file__).resolve().parents[2]
T = TableIdentifier(("ns",), "t")


def _name() -> str:
    return f"c_{uuid.uuid4().hex[:12]}"


def _rows(uri: str, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(uri) as conn:
        return conn.execute(sql, params).fetchall()


@pytest.fixture
def fresh_db(postgres_server: PostgresServer) -> str:
    """A database of its own, for tests about creating the layout."""
    return postgres_server.create_database(f"fresh_{uuid.uuid4().hex[:12]}")


# -- the layout ----------------------------------------------------------------------------------


def test_new_database_gets_javas_layout(fresh_db: str, tmp_path: Path) -> None:
    """JdbcUtil's V0 CREATE TABLE, then V1's ALTER TABLE ADD COLUMN iceberg_type, in public."""
    PostgresCatalog(fresh_db, str(tmp_path)).close()
    columns = _rows(
        fresh_db,
        "SELECT table_schema, table_name, column_name, data_type, character_maximum_length, is_nullable "
        "FROM information_schema.columns WHERE table_name LIKE 'iceberg%%' "
        "ORDER BY table_name, ordinal_position",
    )
    assert columns == [
        ("public", "iceberg_namespace_properties", "catalog_name", "character varying", 255, "NO"),
        ("public", "iceberg_namespace_properties", "namespace", "character varying", 255, "NO"),
        ("public", "iceberg_namespace_properties", "property_key", "character varying", 255, "NO"),
        ("public", "iceberg_namespace_properties", "property_value", "character varying", 1000, "YES"),
        ("public", "iceberg_tables", "catalog_name", "character varying", 255, "NO"),
        ("public", "iceberg_tables", "table_namespace", "character varying", 255, "NO"),
        ("public", "iceberg_tables", "table_name", "character varying", 255, "NO"),
        ("public", "iceberg_tables", "metadata_location", "character varying", 1000, "YES"),
        ("public", "iceberg_tables", "previous_metadata_location", "character varying", 1000, "YES"),
        ("public", "iceberg_tables", "iceberg_type", "character varying", 5, "YES"),
    ]
    keys = _rows(
        fresh_db,
        "SELECT tc.table_name, kcu.column_name FROM information_schema.table_constraints tc "
        "JOIN information_schema.key_column_usage kcu USING (constraint_name, table_schema) "
        "WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = 'public' "
        "ORDER BY tc.table_name, kcu.ordinal_position",
    )
    assert keys == [
        ("iceberg_namespace_properties", "catalog_name"),
        ("iceberg_namespace_properties", "namespace"),
        ("iceberg_namespace_properties", "property_key"),
        ("iceberg_tables", "catalog_name"),
        ("iceberg_tables", "table_namespace"),
        ("iceberg_tables", "table_name"),
    ]


def test_concurrent_first_opens_create_the_layout_once(fresh_db: str, tmp_path: Path) -> None:
    assert open_at_once(lambda: PostgresCatalog(fresh_db, str(tmp_path))) == []
    tables = _rows(fresh_db, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")
    assert sorted(tables) == [("iceberg_namespace_properties",), ("iceberg_tables",)]


def test_read_only_creates_nothing_and_the_server_refuses_changes(fresh_db: str, tmp_path: Path) -> None:
    catalog = PostgresCatalog(fresh_db, str(tmp_path), read_only=True)
    assert catalog.list_namespaces() == [] and not catalog.table_exists(T)
    with pytest.raises(UserError, match="read-only"):
        catalog.create_namespace(("ns",))
    catalog.close()
    assert _rows(
        fresh_db, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
    ) == [(0,)]


# -- naming the database and the credentials -----------------------------------------------------


def test_uri_forms_and_credentials(
    postgres_server: PostgresServer, postgres_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """libpq's URI (postgresql:// and postgres://), Spark's jdbc: URI with the credentials in its
    query or in jdbc.user/jdbc.password, and libpq's PGPASSWORD: all reach the same rows."""
    db = postgres_database.rsplit("/", 1)[1]
    port, password = postgres_server.port, postgres_server.password
    name = _name()
    first = PostgresCatalog(postgres_database, str(tmp_path), name)
    first.create_namespace(("shared",))
    jdbc = f"jdbc:postgresql://127.0.0.1:{port}/{db}"
    same = [
        PostgresCatalog(postgres_database.replace("postgresql://", "postgres://"), str(tmp_path), name),
        PostgresCatalog(f"{jdbc}?user=postgres&password={password}", str(tmp_path), name),
        PostgresCatalog(
            jdbc, str(tmp_path), name, properties={"jdbc.user": "postgres", "jdbc.password": password}
        ),
        PostgresCatalog(
            f"{jdbc}?ApplicationName=x&sslmode=disable&currentSchema=public",
            str(tmp_path),
            name,
            properties={"jdbc.user": "postgres", "jdbc.password": password, "jdbc.schema-version": "V1"},
        ),
    ]
    monkeypatch.setenv("PGPASSWORD", password)
    same.append(PostgresCatalog(f"postgresql://postgres@127.0.0.1:{port}/{db}", str(tmp_path), name))
    for catalog in same:
        assert catalog.list_namespaces() == [("shared",)], catalog
        assert catalog.database == f"postgresql://postgres@127.0.0.1:{port}/{db}"
        assert password not in repr(catalog)
        catalog.close()


def test_credentials_in_the_uri_win_over_properties() -> None:
    params = connection_parameters(
        "jdbc:postgresql://h:5/db?user=u&password=p",
        {"jdbc.user": "other", "jdbc.password": "q", "s3.x": "y"},
    )
    assert params == {"host": "h", "port": "5", "dbname": "db", "user": "u", "password": "p"}
    assert connection_parameters("jdbc:postgresql:db") == {"host": "localhost", "dbname": "db"}
    assert connection_parameters("jdbc:postgresql://h/db?ssl=true")["sslmode"] == "require"


@pytest.mark.parametrize(
    ("uri", "properties", "message"),
    [
        ("mysql://h/db", {}, r"not a PostgreSQL catalog URI: 'mysql://h/db'"),
        ("jdbc:postgresql://h/db?sslfactory=x", {}, r"driver property 'sslfactory' \(in the jdbc: URI\)"),
        ("jdbc:postgresql://h/db", {"jdbc.useSSL": "true"}, r"'useSSL' \(catalog property 'jdbc.useSSL'\)"),
        ("postgresql://h/db", {"jdbc.schema-version": "V0"}, r"jdbc.schema-version=V0"),
        ("jdbc:postgresql://h/db?ssl=yes", {}, r"ssl='yes' \(in the jdbc: URI\) must be true or false"),
        (
            "postgresql://u:s3cret@h/db?bogus=1",
            {},
            r"invalid PostgreSQL catalog URI 'postgresql://u:\*\*\*@h/db",
        ),
    ],
)
def test_bad_uris_and_properties(uri: str, properties: dict[str, str], message: str) -> None:
    with pytest.raises(UserError, match=message) as caught:
        connection_parameters(uri, properties)
    assert "s3cret" not in str(caught.value)


def test_bad_configuration_is_one_clear_error_without_the_password(
    postgres_server: PostgresServer, postgres_database: str, tmp_path: Path
) -> None:
    port, secret = postgres_server.port, postgres_server.password
    db = postgres_database.rsplit("/", 1)[1]
    with socket_port() as closed:
        with pytest.raises(
            StorageError, match=rf"postgresql://postgres@127.0.0.1:{closed}/{db}: cannot connect"
        ) as e1:
            PostgresCatalog(postgres_server.uri(db).replace(f":{port}/", f":{closed}/"), str(tmp_path))
    assert "Connection refused" in str(e1.value)
    with pytest.raises(UserError, match=r"cannot log in to catalog database postgresql://postgres@") as e2:
        PostgresCatalog(postgres_server.uri(db, password="wrong-" + secret), str(tmp_path))
    assert "password authentication failed" in str(e2.value)
    with pytest.raises(
        NotFoundError, match=r"catalog database postgresql://postgres@127.0.0.1:\d+/nope does not"
    ):
        PostgresCatalog(postgres_server.uri("nope"), str(tmp_path))
    for error in (e1.value, e2.value):
        assert secret not in str(error)


class socket_port:
    """A loopback port nothing listens on, for the duration of the block."""

    def __enter__(self) -> int:
        import socket

        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))  # bound, not listening: connections are refused
        return int(self._socket.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        self._socket.close()


# -- locking and lost connections ----------------------------------------------------------------


def _waiting_for_a_lock(uri: str) -> int:
    """How many sessions of the database wait for a lock (``pg_stat_activity``)."""
    with psycopg.connect(uri, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        ).fetchone()
    return int(row[0]) if row else 0


def test_check_then_write_excludes_foreign_writers(postgres_database: str, tmp_path: Path) -> None:
    """While iceduck's write transaction runs, another engine's INSERT (Spark's, say) waits:
    LOCK TABLE ... SHARE ROW EXCLUSIVE excludes every writer, not only iceduck's."""
    catalog = PostgresCatalog(postgres_database, str(tmp_path), _name())
    catalog.create_namespace(("ns",))
    inserted: list[float] = []

    def foreign_insert() -> None:
        with psycopg.connect(postgres_database, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO iceberg_namespace_properties VALUES (%s, 'foreign', 'exists', 'true')",
                (catalog.name,),
            )
        inserted.append(time.monotonic())

    with catalog._store.transaction():
        assert catalog._store.namespace_properties(("ns",)) == {"exists": "true"}
        writer = threading.Thread(target=foreign_insert)
        writer.start()
        wait_until(lambda: _waiting_for_a_lock(postgres_database) > 0, 60, "the foreign INSERT never queued")
        assert inserted == []  # still waiting for our lock
        released = time.monotonic()
    writer.join(10)
    assert inserted and inserted[0] >= released
    assert catalog.namespace_exists(("foreign",))


def test_a_lock_held_too_long_is_a_commit_conflict(
    postgres_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pg, "LOCK_TIMEOUT_S", 1)
    catalog = PostgresCatalog(postgres_database, str(tmp_path), _name())
    with psycopg.connect(postgres_database) as holder:
        holder.execute("LOCK TABLE iceberg_tables IN EXCLUSIVE MODE")
        with pytest.raises(CommitConflictError, match=r"stayed locked by another writer for 1 s"):
            catalog.create_namespace(("ns",))
    catalog.create_namespace(("ns",))  # the lock is gone, and so is the failed transaction
    assert catalog.list_namespaces() == [("ns",)]


def _terminate(uri: str, pid: int) -> None:
    assert _rows(uri, "SELECT pg_terminate_backend(%s)", (pid,)) == [(True,)]


def _backend(catalog: JdbcCatalog) -> int:
    return int(catalog._store._connection().info.backend_pid)  # type: ignore[attr-defined]


def test_a_lost_connection_is_reopened(postgres_database: str, tmp_path: Path) -> None:
    """A server that dropped the connection (a restart, an idle timeout): reads and the
    BEGIN of a write run again on a new connection; the caller sees nothing."""
    catalog = PostgresCatalog(postgres_database, str(tmp_path), _name())
    catalog.create_namespace(("ns",))
    first = _backend(catalog)
    _terminate(postgres_database, first)
    assert catalog.list_namespaces() == [("ns",)]  # a read, on a new connection
    second = _backend(catalog)
    assert second != first
    _terminate(postgres_database, second)
    catalog.create_namespace(("other",))  # a write transaction's BEGIN, on a new connection
    assert _backend(catalog) != second
    assert catalog.list_namespaces() == [("ns",), ("other",)]


def test_a_server_that_is_gone_is_one_clear_error(postgres_server: PostgresServer, tmp_path: Path) -> None:
    """The connection is lost and no new one can be made: the reconnect's own error."""
    uri = postgres_server.create_database(f"gone_{uuid.uuid4().hex[:8]}")
    catalog = PostgresCatalog(uri, str(tmp_path), _name())
    with psycopg.connect(postgres_server.uri(), autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE {uri.rsplit('/', 1)[1]} ALLOW_CONNECTIONS false")
        _terminate(postgres_server.uri(), _backend(catalog))
    with pytest.raises(StorageError, match=r"cannot connect to the catalog database"):
        catalog.list_namespaces()


@pytest.fixture
def flaky(postgres_database: str, tmp_path: Path) -> Iterator[tuple[JdbcCatalog, list[LosesConnection]]]:
    params = connection_parameters(postgres_database)
    opened: list[LosesConnection] = []

    def connect() -> LosesConnection:
        opened.append(LosesConnection(connect_postgres(params, "test db", False), postgres_database))
        return opened[-1]

    catalog = JdbcCatalog(_name(), tmp_path, connect, postgres_dialect(), "test db")
    yield catalog, opened
    catalog.close()


def _new_table(catalog: JdbcCatalog) -> Any:
    from iceduck.spec.partition import UNPARTITIONED
    from iceduck.spec.sort import UNSORTED
    from iceduck.txn.builder import MetadataBuilder, new_table_metadata

    catalog.create_namespace(("ns",))
    table = catalog.create_table(
        T, new_table_metadata(SCHEMA, UNPARTITIONED, UNSORTED, catalog.default_table_location(T), {})
    )
    builder = MetadataBuilder(table.metadata)
    builder.set_properties({"k": "v"})
    return table, builder.build()


def test_a_swap_whose_answer_was_lost_is_read_back(flaky: tuple[JdbcCatalog, list[LosesConnection]]) -> None:
    """The UPDATE committed, then the connection died before its answer arrived: the row is
    read back on a new connection, the commit stands, and its file is kept."""
    catalog, opened = flaky
    table, changed = _new_table(catalog)
    opened[-1].armed = ("UPDATE iceberg_tables SET metadata_location", True)
    committed = catalog.commit_table(table, changed)
    assert len(opened) == 2  # reconnected to look
    assert catalog.load_table(T).metadata_location == committed.metadata_location
    assert Path(committed.metadata_location).is_file()


def test_a_swap_that_never_ran_deletes_its_file(flaky: tuple[JdbcCatalog, list[LosesConnection]]) -> None:
    catalog, opened = flaky
    table, changed = _new_table(catalog)
    metadata_dir = Path(table.metadata_location).parent
    before = sorted(metadata_dir.iterdir())
    opened[-1].armed = ("UPDATE iceberg_tables SET metadata_location", False)
    with pytest.raises(StorageError, match="lost the connection"):
        catalog.commit_table(table, changed)
    assert sorted(metadata_dir.iterdir()) == before
    assert catalog.load_table(T).metadata_location == table.metadata_location


# -- iceduck SQL, and commits from several processes -------------------------------------------


def test_sql_end_to_end(postgres_database: str, tmp_path: Path) -> None:
    catalog = PostgresCatalog(postgres_database, str(tmp_path / "wh"), _name())
    session = Session(tmp_path / "wh", catalog_impl=catalog)
    try:
        run = lambda sql: session.execute(sql).fetchall()  # noqa: E731
        run("CREATE NAMESPACE shop")
        run(
            "CREATE TABLE shop.orders (id bigint, who string) USING iceberg "
            "TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read')"
        )
        run("INSERT INTO shop.orders SELECT i, 'c' || (i % 3) FROM range(10) r(i)")
        first = run("SELECT snapshot_id FROM shop.orders.snapshots")[0][0]
        run("DELETE FROM shop.orders WHERE id < 3")
        run("UPDATE shop.orders SET who = 'z' WHERE id = 9")
        assert run("SELECT count(*), max(id) FROM shop.orders") == [(7, 9)]
        assert run("SELECT who FROM shop.orders WHERE id = 9") == [("z",)]
        assert run(f"SELECT count(*) FROM shop.orders VERSION AS OF {first}") == [(10,)]
        location = _rows(
            postgres_database,
            "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = %s AND table_name = 'orders'",
            (catalog.name,),
        )[0][0]
        assert location.startswith(f"{tmp_path}/wh/shop/orders/metadata/00003-")
    finally:
        session.close()


WRITER = """
import sys
from iceduck.catalog.postgres import PostgresCatalog
from iceduck.session.session import Session
uri, warehouse, name, writer, batches = sys.argv[1:6]
session = Session(warehouse, catalog_impl=PostgresCatalog(uri, warehouse, name))
for batch in range(int(batches)):
    session.execute(f"INSERT INTO ns.t VALUES ({writer}, {batch})").fetchall()
session.close()
"""


def test_concurrent_commits_from_several_processes_are_never_lost(
    postgres_database: str, tmp_path: Path
) -> None:
    """Four processes append batches to one table at once: the compare-and-swap lets exactly one
    commit land per base, the losers retry on fresh metadata, and every batch is in the table."""
    name, warehouse, writers, batches = _name(), str(tmp_path / "wh"), 4, 6
    session = Session(warehouse, catalog_impl=PostgresCatalog(postgres_database, warehouse, name))
    session.execute("CREATE NAMESPACE ns")
    session.execute(
        "CREATE TABLE ns.t (writer int, batch int) TBLPROPERTIES ('commit.retry.num-retries' = '50', "
        "'commit.retry.min-wait-ms' = '5', 'commit.retry.max-wait-ms' = '200')"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, postgres_database, warehouse, name, str(w), str(batches)],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(writers)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    rows = session.execute("SELECT writer, batch FROM ns.t ORDER BY 1, 2").fetchall()
    assert rows == [(w, b) for w in range(writers) for b in range(batches)]
    snapshots = session.execute("SELECT count(*) FROM ns.t.snapshots").fetchall()
    assert snapshots == [(writers * batches,)]
    session.close()
