"""Vended credentials end to end: ``iceduck serve`` in a subprocess over a warehouse in S3
(moto checking signatures, in another) with ``--vend-credentials``; an iceduck client in this
process, its object stores emptied and no AWS key in its environment, creates, writes,
deletes and reads through the keys the server vends -- and without the flag it cannot."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.io import object_store
from tests.support.cli import property_flags
from tests.support.s3 import (
    AUTH_BUCKET,
    S3Server,
    admin,
    auth_server,
    bucket_user,
    client,
    moto_missing,
    moto_server,
    new_key,
    user_of,
)

pytestmark = pytest.mark.skipif(moto_missing() is not None, reason=str(moto_missing()))

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def checked_s3() -> Iterator[S3Server]:
    with auth_server() as server:
        yield server


@pytest.fixture
def keyless(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, object_store_restored: None) -> None:
    """This process knows no S3 key: none configured, none in the environment or a profile."""
    object_store.configure({}, replace=True)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    nowhere = str(tmp_path / "no-aws-config")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", nowhere)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", nowhere)


def _serve(
    tmp_path: Path, s3: S3Server, *options: str, bucket: str = AUTH_BUCKET
) -> tuple[subprocess.Popen[str], str, str]:
    """``iceduck serve`` over a fresh S3 warehouse in ``bucket``; the process, its URL and
    the warehouse."""
    warehouse = f"s3://{bucket}/wh-{uuid.uuid4().hex[:8]}"
    catalog = f"sqlite:///{tmp_path}/c.db"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "iceduck",
            "serve",
            warehouse,
            "--catalog",
            catalog,
            "--port",
            "0",
            *property_flags(s3.properties),
            *options,
        ],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert process.stderr is not None
    line = process.stderr.readline()
    found = re.search(r"at (http://127\.0\.0\.1:\d+)", line)
    if found is None:
        process.kill()
        raise AssertionError(line + process.stderr.read())
    return process, found.group(1), warehouse


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    process.wait(timeout=10)


def test_a_client_without_keys_works_through_vended_ones(
    tmp_path: Path, checked_s3: S3Server, keyless: None
) -> None:
    process, url, warehouse = _serve(tmp_path, checked_s3, "--vend-credentials")
    try:
        cur = iceduck.connect(catalog_uri=url).cursor()
        cur.execute("CREATE NAMESPACE v")
        cur.execute(
            "CREATE TABLE v.t (id bigint, s string) USING iceberg "
            "TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read')"
        )
        cur.execute("INSERT INTO v.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        cur.execute("DELETE FROM v.t WHERE id = 2")
        assert cur.execute("SELECT * FROM v.t ORDER BY id").fetchall() == [(1, "a"), (3, "c")]
        cur.execute("CREATE TABLE v.c AS SELECT id * 10 AS id FROM v.t")
        assert cur.execute("SELECT * FROM v.c ORDER BY id").fetchall() == [(10,), (30,)]
        assert (
            object_store.properties_for(f"{warehouse}/v/t")["s3.access-key-id"]
            == checked_s3.properties["s3.access-key-id"]
        )
        assert "s3.access-key-id" not in object_store.properties()  # the table's own, not the process's
        keys = _keys(checked_s3, warehouse.removeprefix(f"s3://{AUTH_BUCKET}/"))
        assert any(k.endswith(".parquet") for k in keys) and any(k.endswith(".puffin") for k in keys), keys
    finally:
        _stop(process)


def test_without_vending_the_client_has_no_keys(tmp_path: Path, checked_s3: S3Server, keyless: None) -> None:
    process, url, _ = _serve(tmp_path, checked_s3)
    try:
        cur = iceduck.connect(catalog_uri=url).cursor()
        cur.execute("CREATE NAMESPACE v")
        cur.execute("CREATE TABLE v.t (id bigint)")  # metadata only: the server writes it
        with pytest.raises(iceduck.OperationalError, match=r"\.parquet"):
            cur.execute("INSERT INTO v.t VALUES (1)")  # the client's own data file: no endpoint, no key
        assert "s3.access-key-id" not in object_store.properties()
    finally:
        _stop(process)


def test_a_scope_another_connection_left_does_not_take_the_clients_tables(
    tmp_path: Path, checked_s3: S3Server, keyless: None
) -> None:
    """A connection of the process on the same warehouse path, against an endpoint gone
    since (a test's or a benchmark's earlier store), left its warehouse's scope; a REST
    client given its own properties (nothing vended) must write and read with them, not
    with that scope (found by bench/commits.py: rest-s3 after sqlite-s3 failed)."""
    process, url, warehouse = _serve(tmp_path, checked_s3)
    try:
        gone = {**checked_s3.properties, "s3.endpoint": "http://127.0.0.1:9"}  # nothing listens
        object_store.configure_scope(warehouse + "/", gone)
        cur = iceduck.connect(catalog_uri=url, properties=checked_s3.properties).cursor()
        cur.execute("CREATE NAMESPACE v")
        cur.execute("CREATE TABLE v.t (id bigint)")
        cur.execute("INSERT INTO v.t VALUES (1), (2)")
        assert cur.execute("SELECT sum(id) FROM v.t").fetchall() == [(3,)]
        assert object_store.properties_for(f"{warehouse}/v/t/data/f.parquet")["s3.endpoint"] == (
            checked_s3.properties["s3.endpoint"]
        )
    finally:
        _stop(process)


def test_create_table_as_select_on_a_fresh_connection_writes_with_the_vended_keys(
    tmp_path: Path, checked_s3: S3Server, keyless: None
) -> None:
    """CTAS writes its data files before the commit that creates the table, so before any
    load vended the table's keys: the ``stage-create`` before the writing vends them, for
    the server's location of the table and for an explicit ``LOCATION``."""
    process, url, warehouse = _serve(tmp_path, checked_s3, "--vend-credentials")
    try:
        con = iceduck.connect(catalog_uri=url)  # nothing loaded before the CTAS
        con.execute("CREATE NAMESPACE v")
        con.execute("CREATE TABLE v.c AS SELECT 7 AS id")
        con.execute(f"CREATE TABLE v.d LOCATION '{warehouse}/placed/d' AS SELECT id + 1 AS id FROM v.c")
        assert con.execute("SELECT (SELECT id FROM v.c), (SELECT id FROM v.d)").fetchall() == [(7, 8)]
        con.close()
        keys = _keys(checked_s3, warehouse.removeprefix(f"s3://{AUTH_BUCKET}/"))
        assert [k for k in keys if "/placed/d/data/" in k and k.endswith(".parquet")], keys
    finally:
        _stop(process)


def _bucket(s3: S3Server, name: str) -> None:
    """``name`` on ``s3`` (moto's servers in this process share their buckets)."""
    s3_client = client(s3.endpoint_url)
    if name not in [b["Name"] for b in s3_client.list_buckets()["Buckets"]]:
        s3_client.create_bucket(Bucket=name)


def test_vended_keys_go_with_their_connection(tmp_path: Path, keyless: None) -> None:
    """A keyless connection closes, and the S3 its server vended is gone; a connection on
    the same location with settings of its own (another endpoint) must not be served by the
    vended scopes (found writing docs/serving.md: "the store cannot be reached")."""
    bucket = f"lake-{uuid.uuid4().hex[:8]}"
    with moto_server() as first:
        _bucket(first, bucket)
        process, url, warehouse = _serve(tmp_path, first, "--vend-credentials", bucket=bucket)
        try:
            vended = iceduck.connect(catalog_uri=url)
            vended.execute("CREATE NAMESPACE v")
            vended.execute("CREATE TABLE v.t (id bigint)")
            vended.execute("INSERT INTO v.t VALUES (1)")
            vended.close()
        finally:
            _stop(process)
    assert object_store.scopes() == []
    with moto_server() as second:
        _bucket(second, bucket)
        (tmp_path / "own").mkdir()
        own = iceduck.connect(  # the served warehouse's location
            warehouse, catalog_uri=f"sqlite:///{tmp_path}/own/c.db", properties=second.properties
        )
        own.execute("CREATE NAMESPACE w")
        own.execute("CREATE TABLE w.t AS SELECT 2 AS id")
        assert own.execute("SELECT id FROM w.t").fetchall() == [(2,)]
        own.close()


def test_closing_one_connection_leaves_anothers_vended_keys(
    tmp_path: Path, checked_s3: S3Server, keyless: None
) -> None:
    """Two connections to one server are vended the same prefixes: the scopes are each
    connection's, so the one still open reads and writes on when the other closes, and
    none is left when both have."""
    process, url, warehouse = _serve(tmp_path, checked_s3, "--vend-credentials")
    try:
        one = iceduck.connect(catalog_uri=url)
        one.execute("CREATE NAMESPACE v")
        one.execute("CREATE TABLE v.t (id bigint)")
        one.execute("INSERT INTO v.t VALUES (1), (2)")
        other = iceduck.connect(catalog_uri=url)
        assert other.execute("SELECT sum(id) FROM v.t").fetchall() == [(3,)]  # the same prefixes
        other.close()
        one.execute("INSERT INTO v.t VALUES (3)")
        assert one.execute("SELECT sum(id) FROM v.t").fetchall() == [(6,)]
        one.close()
        assert "s3.access-key-id" not in object_store.properties_for(f"{warehouse}/v/t/data/f.parquet")
    finally:
        _stop(process)


def _keys(s3: S3Server, prefix: str) -> list[str]:
    props = s3.properties
    listed = client(
        s3.endpoint_url, props["s3.access-key-id"], props["s3.secret-access-key"]
    ).list_objects_v2(Bucket=AUTH_BUCKET, Prefix=prefix)
    return [o["Key"] for o in listed.get("Contents", [])]


# -- credentials per table: --storage-credentials, two buckets, renewal ----------------------------


def _credentials_file(path: Path, s3: S3Server, entries: dict[str, tuple[str, str]], expires_ms: int) -> None:
    """The server's ``--storage-credentials`` file: for each prefix a key and its secret,
    with the store's endpoint and an expiry."""
    store = {k: v for k, v in s3.properties.items() if k not in ("s3.access-key-id", "s3.secret-access-key")}
    lines: list[str] = []
    for prefix, (access, secret) in entries.items():
        config = {**store, "s3.access-key-id": access, "s3.secret-access-key": secret}
        config["s3.session-token-expires-at-ms"] = str(expires_ms)
        body = ", ".join(f'"{k}" = "{v}"' for k, v in config.items())
        lines += ["[[storage-credentials]]", f'prefix = "{prefix}"', f"config = {{ {body} }}", ""]
    path.write_text("\n".join(lines))


@pytest.fixture
def own_s3() -> Iterator[S3Server]:
    """A credential-checking moto of the test's own (users and keys come and go in these)."""
    with auth_server() as server:
        yield server


@pytest.fixture
def two_buckets(
    tmp_path: Path, own_s3: S3Server, keyless: None
) -> Iterator[tuple[str, Path, dict[str, str]]]:
    """Table ``v.a`` in the warehouse's bucket and ``v.b`` in a second bucket, written with
    the server's own key; two IAM users each allowed one bucket; ``iceduck serve`` vending
    each table its bucket's user through a credentials file. Yields the server's URL, the
    file, and each bucket's prefix."""
    second = f"other-{uuid.uuid4().hex[:8]}"
    admin(own_s3, "s3").create_bucket(Bucket=second)
    warehouse = f"s3://{AUTH_BUCKET}/wh-{uuid.uuid4().hex[:8]}"
    catalog = f"sqlite:///{tmp_path}/c.db"
    setup = iceduck.connect(warehouse, catalog_uri=catalog, properties=own_s3.properties).cursor()
    setup.execute("CREATE NAMESPACE v")
    setup.execute("CREATE TABLE v.a (id bigint, s string)")
    setup.execute("INSERT INTO v.a VALUES (1, 'one'), (2, 'two'), (3, 'three')")
    setup.execute(f"CREATE TABLE v.b (id bigint, n double) LOCATION 's3://{second}/b'")
    setup.execute("INSERT INTO v.b VALUES (1, 1.5), (3, 3.5), (4, 4.5)")
    setup.connection.close()
    object_store.configure({}, replace=True)  # this process forgets the server's key again
    prefixes = {"a": f"s3://{AUTH_BUCKET}/", "b": f"s3://{second}/"}
    keys = {
        prefixes["a"]: bucket_user(own_s3, AUTH_BUCKET),
        prefixes["b"]: bucket_user(own_s3, second),
    }
    # each user can read its bucket only (moto checks the policies)
    with pytest.raises(Exception, match="AccessDenied"):
        client(own_s3.endpoint_url, *keys[prefixes["a"]]).list_objects_v2(Bucket=second)
    path = tmp_path / "credentials.toml"
    _credentials_file(path, own_s3, keys, object_store.now_ms() + 3_600_000)
    process = subprocess.Popen(
        [
            sys.executable, "-m", "iceduck", "serve", warehouse, "--catalog", catalog, "--port", "0",
            *property_flags(own_s3.properties), "--storage-credentials", str(path),
        ],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert process.stderr is not None
    line = process.stderr.readline()
    found = re.search(r"at (http://127\.0\.0\.1:\d+)", line)
    if found is None:
        process.kill()
        raise AssertionError(line + process.stderr.read())
    try:
        yield found.group(1), path, prefixes
    finally:
        _stop(process)


JOINED = [(1, "one", 1.5), (3, "three", 3.5)]


def test_two_tables_in_two_buckets_with_two_keys_join_in_one_query(
    two_buckets: tuple[str, Path, dict[str, str]], own_s3: S3Server
) -> None:
    url, _, prefixes = two_buckets
    cur = iceduck.connect(catalog_uri=url).cursor()
    query = "SELECT a.id, a.s, b.n FROM v.a a JOIN v.b b ON a.id = b.id ORDER BY a.id"
    assert cur.execute(query).fetchall() == JOINED
    key_a = object_store.properties_for(f"{prefixes['a']}wh/x")["s3.access-key-id"]
    key_b = object_store.properties_for(f"{prefixes['b']}b/x")["s3.access-key-id"]
    assert key_a != key_b and "s3.access-key-id" not in object_store.properties()
    # and writes: each table's new files go with its own key
    cur.execute("INSERT INTO v.b VALUES (2, 2.5)")
    cur.execute("DELETE FROM v.a WHERE id = 3")
    assert cur.execute(query).fetchall() == [(1, "one", 1.5), (2, "two", 2.5)]


def test_expiring_credentials_are_renewed_through_the_catalog(
    two_buckets: tuple[str, Path, dict[str, str]],
    own_s3: S3Server,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The operator rotates bucket a's key (a new key in the file, the old one deleted);
    when the client's clock nears the old key's expiry it asks ``loadCredentials`` for the
    new one before reading, and the statement succeeds."""
    url, path, prefixes = two_buckets
    cur = iceduck.connect(catalog_uri=url).cursor()
    query = "SELECT a.id, a.s, b.n FROM v.a a JOIN v.b b ON a.id = b.id ORDER BY a.id"
    assert cur.execute(query).fetchall() == JOINED
    old = object_store.properties_for(f"{prefixes['a']}x")
    expiry = int(old["s3.session-token-expires-at-ms"])
    user = user_of(own_s3, old["s3.access-key-id"])
    rotated = new_key(own_s3, user)
    kept = object_store.properties_for(f"{prefixes['b']}x")
    keys = {prefixes["a"]: rotated, prefixes["b"]: (kept["s3.access-key-id"], kept["s3.secret-access-key"])}
    _credentials_file(path, own_s3, keys, expiry + 3_600_000)
    admin(own_s3, "iam").delete_access_key(UserName=user, AccessKeyId=old["s3.access-key-id"])
    monkeypatch.setattr(object_store, "now_ms", lambda: expiry - 60_000)  # a minute before it lapses
    assert cur.execute(query).fetchall() == JOINED
    assert object_store.properties_for(f"{prefixes['a']}x")["s3.access-key-id"] == rotated[0]
    # renewed once: the next statements use the new key without asking again
    assert cur.execute("SELECT count(*) FROM v.a").fetchone() == (3,)
