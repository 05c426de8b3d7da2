"""Two connections in one process, on two warehouses in two buckets, each with keys that
reach only its own bucket (moto checking every request against two IAM users): the
warehouse's properties are the scope of its locations, so neither connection takes or
replaces the other's keys, whichever opened last."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from tests.support.s3 import AUTH_BUCKET, S3Server, admin, auth_server, bucket_user, moto_missing

pytestmark = pytest.mark.skipif(moto_missing() is not None, reason=str(moto_missing()))


@pytest.fixture
def s3() -> Iterator[S3Server]:
    with auth_server() as server:
        yield server


def _lake(s3: S3Server, bucket: str, tmp_path: Path, name: str) -> iceduck.Connection:
    access, secret = bucket_user(s3, bucket)
    properties = {**s3.properties, "s3.access-key-id": access, "s3.secret-access-key": secret}
    catalog = f"sqlite:///{tmp_path}/{name}.db"
    return iceduck.connect(f"s3://{bucket}/wh", catalog_uri=catalog, properties=properties)


def test_two_lakes_with_two_keys_in_one_process(
    s3: S3Server, tmp_path: Path, object_store_restored: None
) -> None:
    second = f"second-{uuid.uuid4().hex[:8]}"
    admin(s3, "s3").create_bucket(Bucket=second)
    first = _lake(s3, AUTH_BUCKET, tmp_path, "first")
    first.execute("CREATE NAMESPACE n")
    first.execute("CREATE TABLE n.t AS SELECT 1 AS id")
    other = _lake(s3, second, tmp_path, "second")  # opened last: its keys cannot read the first bucket
    other.execute("CREATE NAMESPACE n")
    other.execute("CREATE TABLE n.t AS SELECT 2 AS id")
    for _ in range(2):
        first.execute("INSERT INTO n.t VALUES (10)")
        other.execute("INSERT INTO n.t VALUES (20)")
    assert first.execute("SELECT id FROM n.t ORDER BY id").fetchall() == [(1,), (10,), (10,)]
    assert other.execute("SELECT id FROM n.t ORDER BY id").fetchall() == [(2,), (20,), (20,)]
    first.close()
    other.close()
