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
from tests.support.s3 import AUTH_BUCKET, S3Server, auth_server, client, moto_missing

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


def _serve(tmp_path: Path, s3: S3Server, *options: str) -> tuple[subprocess.Popen[str], str, str]:
    """``iceduck serve`` over a fresh S3 warehouse; the process, its URL and the warehouse."""
    warehouse = f"s3://{AUTH_BUCKET}/wh-{uuid.uuid4().hex[:8]}"
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
        assert object_store.properties()["s3.access-key-id"] == checked_s3.properties["s3.access-key-id"]
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


def _keys(s3: S3Server, prefix: str) -> list[str]:
    props = s3.properties
    listed = client(
        s3.endpoint_url, props["s3.access-key-id"], props["s3.secret-access-key"]
    ).list_objects_v2(Bucket=AUTH_BUCKET, Prefix=prefix)
    return [o["Key"] for o in listed.get("Contents", [])]
