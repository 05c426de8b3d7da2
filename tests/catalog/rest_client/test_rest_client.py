"""The REST client catalog against a real ``iceduck serve``: config negotiation and prefix,
endpoints, paging, errors (bad URI, server down, wrong token), read-only, the commit
protocol's outcomes (409 -> retry, lost answer -> unknown), two writers at once."""

from __future__ import annotations

import dataclasses
import socket
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import iceduck
from iceduck.catalog.base import LoadedTable, TableIdentifier
from iceduck.catalog.rest_client.catalog import RestCatalog
from iceduck.catalog.rest_client.config import negotiated
from iceduck.catalog.rest_client.table_result import apply_table_storage, table_storage
from iceduck.errors import (
    CommitConflictError,
    CommitStateUnknownError,
    NotFoundError,
    StorageError,
    UnsupportedError,
    UserError,
)
from iceduck.io import object_store
from iceduck.io.store_scopes import ScopeOwner
from iceduck.spec.partition import UNPARTITIONED
from iceduck.spec.schema import Schema
from iceduck.spec.sort import UNSORTED
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.types import LongType, NestedField
from iceduck.txn.builder import MetadataBuilder, new_table_metadata
from tests.catalog.rest_client.conftest import TOKEN, Served, serve
from tests.support import faults
from tests.support.lost_answers import AnswerLosingProxy
from tests.support.rest import RestClient, start_server

T = TableIdentifier(("db",), "t")
SCHEMA = Schema((NestedField(1, "id", LongType(), True),))


def _create(catalog: RestCatalog, ident: TableIdentifier = T) -> None:
    if not catalog.namespace_exists(ident.namespace):
        catalog.create_namespace(ident.namespace)
    location = catalog.default_table_location(ident)
    catalog.create_table(ident, new_table_metadata(SCHEMA, UNPARTITIONED, UNSORTED, location, {}))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- configuration --------------------------------------------------------------------------------


def test_config_defaults_then_user_then_overrides() -> None:
    body = {
        "defaults": {"a": "default", "b": "default", "prefix": "wrong"},
        "overrides": {"b": "override", "prefix": "/p1/"},
        "endpoints": ["GET /v1/{prefix}/namespaces", "HEAD  /v1/{prefix}/namespaces/{namespace}"],
    }
    config = negotiated(body, {"a": "user", "b": "user", "c": "user"}, "http://x")
    assert config.properties == {"a": "user", "b": "override", "c": "user", "prefix": "/p1/"}
    assert config.prefix == "p1"
    assert config.supports("HEAD", "namespaces/{namespace}")
    assert not config.supports("DELETE", "namespaces/{namespace}")
    with pytest.raises(UnsupportedError, match=r"DELETE /v1/\{prefix\}/namespaces/\{namespace\}"):
        config.require("DELETE", "namespaces/{namespace}", "http://x")
    assert negotiated({}, {}, "http://x").endpoints is None  # not listed: every route assumed
    with pytest.raises(StorageError, match="CatalogConfig"):
        negotiated([], {}, "http://x")


def test_prefix_from_the_server_is_used(tmp_path: Path) -> None:
    running = serve(tmp_path, prefix="lake1")
    try:
        catalog = RestCatalog(running.url, "iceduck")
        assert catalog.config.prefix == "lake1"
        _create(catalog)
        assert catalog.list_tables(("db",)) == [T]
        # the server answers only under its prefix: the client really sent it
        assert RestClient(running.url).get("/v1/lake1/namespaces").status == 200
        assert RestClient(running.url).get("/v1/namespaces").status == 404
    finally:
        running.server.stop()


def test_unlisted_endpoints_are_not_called(served: Served) -> None:
    catalog = RestCatalog(served.url, "iceduck")
    _create(catalog)
    assert catalog.config.endpoints is not None  # iceduck serve lists its routes
    listed = {
        e for e in catalog.config.endpoints if not e.startswith(("HEAD ", "POST /v1/{prefix}/tables/rename"))
    }
    catalog.config = dataclasses.replace(catalog.config, endpoints=frozenset(listed))
    assert catalog.table_exists(T)  # HEAD not offered: the table is loaded instead
    assert not catalog.table_exists(TableIdentifier(("db",), "nope"))
    assert catalog.namespace_exists(("db",)) and not catalog.namespace_exists(("nope",))
    with pytest.raises(UnsupportedError, match=r"does not offer POST /v1/\{prefix\}/tables/rename"):
        catalog.rename_table(T, TableIdentifier(("db",), "u"))
    assert catalog.table_exists(T)


def test_lists_follow_page_tokens(served: Served) -> None:
    catalog = RestCatalog(served.url, "iceduck", {"rest-page-size": "2"})
    assert catalog.page_size == 2
    names = [f"t{i}" for i in range(5)]
    for name in names:
        _create(catalog, TableIdentifier(("db",), name))
    for ns in ("a", "b", "c", "d"):
        catalog.create_namespace((ns,))
    raw = RestClient(served.url).get("/v1/namespaces/db/tables?pageSize=2").body
    assert len(raw["identifiers"]) == 2 and raw["next-page-token"]  # the server pages at 2
    assert sorted(t.name for t in catalog.list_tables(("db",))) == names
    assert sorted(catalog.list_namespaces()) == [("a",), ("b",), ("c",), ("d",), ("db",)]
    with pytest.raises(UserError, match="rest-page-size must be a positive integer"):
        RestCatalog(served.url, "iceduck", {"rest-page-size": "0"})


# -- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("http://", "names no host"),
        ("http://host:port", "malformed REST catalog URI"),
        ("http://me:pw@host:8181", "holds credentials"),
        ("http://host:8181?x=1", "query or fragment"),
    ],
)
def test_bad_uri_is_one_clear_error(uri: str, message: str) -> None:
    with pytest.raises(iceduck.ProgrammingError, match=message) as info:
        iceduck.connect(catalog_uri=uri)
    assert "pw" not in str(info.value)


def test_server_down_names_the_uri() -> None:
    uri = f"http://127.0.0.1:{_free_port()}"
    with pytest.raises(
        iceduck.OperationalError, match=rf"cannot reach the REST catalog at {uri}: connection refused"
    ):
        iceduck.connect(catalog_uri=uri)


def test_wrong_or_missing_token_is_one_clear_error(tmp_path: Path) -> None:
    running = serve(tmp_path, token=TOKEN)
    try:
        for properties in ({"token": "not-the-token"}, {}):
            with pytest.raises(iceduck.ProgrammingError, match="refused the credentials") as info:
                iceduck.connect(catalog_uri=running.url, properties=properties)
            assert running.url in str(info.value) and "not-the-token" not in str(info.value)
        assert (
            iceduck.connect(catalog_uri=running.url, properties={"token": TOKEN})
            .cursor()
            .execute("SHOW NAMESPACES")
            .fetchall()
            == []
        )
    finally:
        running.server.stop()


def test_missing_table_and_namespace_are_not_found(served: Served) -> None:
    catalog = RestCatalog(served.url, "iceduck")
    with pytest.raises(NotFoundError, match=r"table 'db\.t' not found"):
        catalog.load_table(T)
    with pytest.raises(NotFoundError, match="namespace 'db' not found"):
        catalog.load_namespace_properties(("db",))
    cur = served.connect().cursor()
    with pytest.raises(iceduck.ProgrammingError, match=r"db\.t"):
        cur.execute("SELECT * FROM db.t")


def test_read_only_refuses_every_write(served: Served) -> None:
    writable = RestCatalog(served.url, "iceduck")
    _create(writable)
    table = writable.load_table(T)
    catalog = RestCatalog(served.url, "iceduck", read_only=True)
    calls = [
        lambda: catalog.create_namespace(("n",)),
        lambda: catalog.drop_namespace(("db",)),
        lambda: catalog.create_table(T, table.metadata),
        lambda: catalog.commit_table(table, table.metadata),
        lambda: catalog.drop_table(T, purge=True),
        lambda: catalog.rename_table(T, TableIdentifier(("db",), "u")),
    ]
    for call in calls:
        with pytest.raises(UserError, match="read-only"):
            call()
    assert writable.load_table(T).metadata_location == table.metadata_location


# -- commits --------------------------------------------------------------------------------------


def test_a_property_change_on_a_stale_base_lands_on_the_current_table(served: Served) -> None:
    """REST commits are checked by their requirements, not by the base's file: a change of
    properties asserts only the table's UUID (Java's UpdateRequirements), so the server
    applies it to whatever is current -- nothing of the other commit is lost."""
    catalog = RestCatalog(served.url, "iceduck")
    _create(catalog)
    base = catalog.load_table(T)
    first = MetadataBuilder(base.metadata)
    first.set_properties({"a": "1"})
    catalog.commit_table(base, first.build())
    second = MetadataBuilder(base.metadata)
    second.set_properties({"b": "2"})
    landed = catalog.commit_table(base, second.build())
    assert landed.metadata.properties["a"] == "1" and landed.metadata.properties["b"] == "2"


def _commit_through_a_lost_answer(url: str) -> tuple[LoadedTable, AnswerLosingProxy]:
    """Create ``T`` at ``url``, then commit a property change through a proxy that loses
    the server's answer to the commit (the commit has reached the server)."""
    parts = url.removeprefix("http://").split(":")
    with AnswerLosingProxy(parts[0], int(parts[1])) as proxy:
        catalog = RestCatalog(proxy.url, "iceduck")
        _create(catalog)
        base = catalog.load_table(T)
        builder = MetadataBuilder(base.metadata)
        builder.set_properties({"landed": "yes"})
        proxy.lose_next_answer()
        try:
            return catalog.commit_table(base, builder.build()), proxy
        finally:
            assert proxy.lost.is_set()


def test_a_commit_without_an_answer_is_unknown_and_kept(tmp_path: Path) -> None:
    """A server that does not honour Idempotency-Key: the connection is lost after the commit
    reached the server, so CommitStateUnknownError -- and here the server did land it, which
    is why nothing may be deleted on that error."""
    warehouse = tmp_path / "served"
    warehouse.mkdir()
    server = start_server(warehouse, idempotency=None)
    try:
        assert "idempotency-key-lifetime" not in RestClient(server.url).get("/v1/config").body
        with pytest.raises(CommitStateUnknownError, match="may or may not have landed"):
            _commit_through_a_lost_answer(server.url)
        landed = RestCatalog(server.url, "iceduck").load_table(T)
        assert landed.metadata.properties.get("landed") == "yes"
    finally:
        server.stop()


def test_a_lost_commit_answer_is_asked_again_with_its_idempotency_key(served: Served) -> None:
    """A server that advertises idempotency-key-lifetime: the commit carried a key, so the
    client sends it once more with the same key and gets the first attempt's answer -- the
    outcome is known, and the commit landed once."""
    committed, _ = _commit_through_a_lost_answer(served.url)
    assert committed.metadata.properties.get("landed") == "yes"
    current = RestCatalog(served.url, "iceduck").load_table(T)
    assert current.metadata_location == committed.metadata_location
    assert len(current.metadata.metadata_log) == 1  # the create's file, then this commit's


def test_two_clients_commit_at_once_and_nothing_is_lost(served: Served) -> None:
    """Each INSERT is a commit; the loser of a race gets a 409 and iceduck re-applies the
    statement on the fresh table (txn/commit.py), so every batch lands exactly once."""
    setup = served.connect().cursor()
    setup.execute("CREATE NAMESPACE c")
    setup.execute(
        "CREATE TABLE c.t (writer int, n int) USING iceberg TBLPROPERTIES "
        "('commit.retry.num-retries' = '50', 'commit.retry.min-wait-ms' = '5', "
        "'commit.retry.max-wait-ms' = '50')"
    )
    batches = 12

    def writer(w: int) -> None:
        cur = served.connect().cursor()
        for n in range(batches):
            cur.execute("INSERT INTO c.t VALUES (?, ?)", [w, n])

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(writer, range(2)))  # raises what a writer raised
    rows = setup.execute("SELECT writer, n FROM c.t ORDER BY ALL").fetchall()
    assert rows == [(w, n) for w in range(2) for n in range(batches)]
    assert setup.execute("SELECT count(*) FROM c.t.snapshots").fetchone() == (2 * batches,)


# -- vended credentials ---------------------------------------------------------------------------


def test_storage_credentials_are_scoped_by_prefix_and_the_longest_wins() -> None:
    body = {
        "config": {"s3.endpoint": "http://table", "token": "not-for-the-store"},
        "storage-credentials": [
            {"prefix": "s3://bucket", "config": {"s3.access-key-id": "short"}},
            {"prefix": "s3://bucket/wh/db", "config": {"s3.access-key-id": "long"}},
            {"prefix": "s3://other", "config": {"s3.access-key-id": "other"}},
        ],
    }
    scoped = table_storage(body, "s3://bucket/wh/db/t")
    # a credential covers the table's location: it is the table's scope (no scope of the
    # table's config alone would shadow it)
    assert scoped == {
        "s3://bucket": {"s3.endpoint": "http://table", "s3.access-key-id": "short"},
        "s3://bucket/wh/db": {"s3.endpoint": "http://table", "s3.access-key-id": "long"},
        "s3://other": {"s3.endpoint": "http://table", "s3.access-key-id": "other"},
    }
    assert table_storage({}, "s3://bucket/x") == {}
    before = object_store.properties()
    try:
        object_store.configure({"s3.access-key-id": "base"}, replace=True)
        owner = ScopeOwner()
        apply_table_storage(scoped, None, owner)
        assert object_store.properties_for("s3://bucket/wh/db/t/data/f.parquet")["s3.access-key-id"] == "long"
        assert object_store.properties_for("s3a://bucket/x")["s3.access-key-id"] == "short"
        assert object_store.properties_for("s3://other/y")["s3.access-key-id"] == "other"
        assert object_store.properties_for("s3://third/z")["s3.access-key-id"] == "base"
        object_store.release(owner)  # its catalog closed
        assert object_store.properties_for("s3://bucket/wh/db/t/data/f.parquet")["s3.access-key-id"] == "base"
    finally:
        object_store.configure(before, replace=True)


def test_a_server_failure_during_a_commit_keeps_every_file(served: Served) -> None:
    """The server's catalog database refuses the swap (immutable file: a real EPERM), it
    answers 503, and the client -- as Java's tableCommitHandler -- cannot know the outcome:
    CommitStateUnknownError, the statement's data file and manifests kept."""
    cur = served.connect().cursor()
    cur.execute("CREATE NAMESPACE ns")
    cur.execute("CREATE TABLE ns.t (id bigint)")
    table_dir = served.warehouse / "ns" / "t"
    before = {p for p in table_dir.rglob("*") if p.is_file()}
    try:
        with faults.immutable(served.warehouse / "catalog.db"):
            with pytest.raises(iceduck.OperationalError, match="answered HTTP 503 to the commit") as info:
                cur.execute("INSERT INTO ns.t VALUES (1)")
    except faults.FaultUnavailable as e:
        pytest.skip(str(e))
    assert isinstance(info.value.__cause__, CommitStateUnknownError)
    written = {p.name for p in table_dir.rglob("*") if p.is_file()} - {p.name for p in before}
    assert any(n.endswith(".parquet") for n in written) and any(n.endswith(".avro") for n in written)
    assert cur.execute("SELECT count(*) FROM ns.t").fetchall() == [(0,)]


def _with_column(base: LoadedTable, name: str) -> TableMetadata:
    """``base`` with a column ``name`` (id 2): asserts the base's schema and field ids."""
    builder = MetadataBuilder(base.metadata)
    fields = (*base.metadata.schema().fields, NestedField(2, name, LongType()))
    builder.set_current_schema(builder.add_schema(Schema(fields), last_column_id=2))
    return builder.build()


def test_commit_tables_is_one_transaction(served: Served) -> None:
    """``POST /v1/{prefix}/transactions/commit``: both tables change, or (a stale base among
    them) neither does."""
    catalog = RestCatalog(served.url, "iceduck")
    other = TableIdentifier(("db",), "u")
    _create(catalog)
    _create(catalog, other)
    bases = [catalog.load_table(T), catalog.load_table(other)]
    landed = catalog.commit_tables([(b, _with_column(b, "x")) for b in bases])
    assert [t.metadata.schema().find_field_or_none("x") is not None for t in landed] == [True, True]
    fresh = catalog.load_table(T)
    with pytest.raises(CommitConflictError):
        catalog.commit_tables([(fresh, _with_column(fresh, "y")), (bases[1], _with_column(bases[1], "y"))])
    assert catalog.load_table(T).metadata_location == fresh.metadata_location
    assert catalog.load_table(other).metadata_location == landed[1].metadata_location


def test_an_unchanged_table_is_answered_by_its_etag(served: Served) -> None:
    """The second load sends the first's ETag as If-None-Match and the server answers 304:
    the same table object comes back; after a commit the server sends the new version."""
    catalog = RestCatalog(served.url, "iceduck")
    _create(catalog)
    first = catalog.load_table(T)
    assert catalog.load_table(T) is first
    builder = MetadataBuilder(first.metadata)
    builder.set_properties({"v": "2"})
    catalog.commit_table(first, builder.build())
    second = catalog.load_table(T)
    assert second is not first and second.metadata.properties["v"] == "2"
    assert RestCatalog(served.url, "iceduck").load_table(T).metadata_location == second.metadata_location


def test_idempotency_keys_are_uuid7() -> None:
    """RFC 9562: version 7, the variant 10, the Unix milliseconds first (so keys sort by time)."""
    import time
    import uuid

    from iceduck.catalog.rest_client.http import uuid7

    before = time.time_ns() // 1_000_000
    keys = [uuid.UUID(uuid7()) for _ in range(50)]
    after = time.time_ns() // 1_000_000
    assert len(set(keys)) == 50
    for key in keys:
        assert key.version == 7 and key.variant == uuid.RFC_4122
        assert before <= key.int >> 80 <= after
