"""fileio and listing on ``s3://`` locations, and the errors of a bad configuration.

Every bad configuration is ONE iceduck error naming the location and the cause:
a missing bucket, wrong credentials (a second moto server that checks signatures),
an unreachable endpoint (a closed loopback port), a path-style mismatch (virtual-hosted
addressing against an endpoint whose bucket host names do not resolve).
"""

from __future__ import annotations

import os
import re
import time

import pytest

from iceduck.engine.spool import Placement
from iceduck.errors import AlreadyExistsError, IceduckError, NotFoundError, StorageError
from iceduck.io import fileio, object_store
from iceduck.io.fileio import MissingFileError
from iceduck.io.listing import list_files
from tests.support.s3 import (
    AUTH_BUCKET,
    S3Server,
    auth_server,
    free_port,
    list_keys,
    loopback_name,
    moto_missing,
)

#: fail fast: a closed port is refused at once, retries would only wait
FAST = {"s3.retry.num-retries": "0", "s3.connect-timeout": "1", "s3.request-timeout": "2"}


def test_read_write_exists_delete(s3_configured: S3Server, s3_bucket: str) -> None:
    location = f"s3://{s3_bucket}/io/a/b.json"
    assert not fileio.exists(location)
    fileio.write_new(location, b'{"x": 1}')
    assert fileio.exists(location) and fileio.exists(f"s3a://{s3_bucket}/io/a/b.json")
    assert fileio.read_bytes(location) == b'{"x": 1}'
    assert fileio.file_size(location) == 8
    with fileio.open_input(location) as f:
        f.seek(6)
        assert f.read(2) == b"1}"
    with pytest.raises(AlreadyExistsError, match="refusing to overwrite"):
        fileio.write_new(location, b"other")
    assert fileio.read_bytes(location) == b'{"x": 1}'
    fileio.delete(location)
    fileio.delete(location)  # already gone: fine
    assert not fileio.exists(location)


def test_a_missing_object_is_a_missing_file_naming_it(s3_configured: S3Server, s3_bucket: str) -> None:
    location = f"s3://{s3_bucket}/io/none.parquet"
    for read in (fileio.read_bytes, fileio.open_input, fileio.file_size):
        with pytest.raises(MissingFileError, match=re.escape(f"{location}: file does not exist")):
            read(location)


def test_listing_skips_hidden_names_and_gives_times(s3_configured: S3Server, s3_bucket: str) -> None:
    root = f"s3://{s3_bucket}/list"
    names = ["data/a.parquet", "data/p=1/b.parquet", "data/_temporary/c", "data/.d.crc", "data/_x=1/e"]
    for name in names:
        fileio.write_new(f"{root}/{name}", b"x")
    listed = list(list_files(root))
    assert {f.path for f in listed} == {
        f"{root}/data/a.parquet",
        f"{root}/data/p=1/b.parquet",
        f"{root}/data/_x=1/e",
    }
    now_ms = time.time() * 1000
    assert all(abs(f.modified_ms - now_ms) < 600_000 for f in listed)
    assert list(list_files(f"s3://{s3_bucket}/nothing-here")) == []


def test_a_spooled_write_that_fails_removes_what_it_uploaded(s3_configured: S3Server, s3_bucket: str) -> None:
    place = Placement(f"s3://{s3_bucket}/spool/data")
    spool = place.root
    for name in ("a.parquet", "p=1/b.parquet"):
        with open(place.local(name), "wb") as f:
            f.write(b"PAR1")
        place.made(name)
    os.unlink(os.path.join(spool, "p=1/b.parquet"))  # the second upload fails
    with pytest.raises(OSError):
        place.finish()
    assert list_keys(s3_configured.endpoint_url, s3_bucket, "spool/") == ["spool/data/a.parquet"]
    place.discard()
    place.close()
    assert [
        k for k in list_keys(s3_configured.endpoint_url, s3_bucket, "spool/") if not k.endswith("/")
    ] == []
    assert not os.path.exists(spool)


def test_check_reachable_accepts_a_usable_bucket(s3_configured: S3Server, s3_bucket: str) -> None:
    object_store.check_reachable(f"s3://{s3_bucket}/warehouse")
    object_store.check_reachable(f"s3a://{s3_bucket}")


def test_a_missing_bucket_is_named(s3_configured: S3Server) -> None:
    location = "s3://no-such-bucket/warehouse"
    with pytest.raises(NotFoundError) as caught:
        object_store.check_reachable(location)
    assert (
        str(caught.value)
        == f"{location}: bucket 'no-such-bucket' does not exist: create it or fix the location"
    )
    with pytest.raises(NotFoundError, match="bucket 'no-such-bucket' does not exist"):
        fileio.write_new(f"{location}/x", b"x")


def test_an_unreachable_endpoint_is_named(object_store_restored: None) -> None:
    port = free_port()  # nothing listens there
    object_store.configure({**_props(f"http://127.0.0.1:{port}"), **FAST}, replace=True)
    location = "s3://bkt/warehouse"
    started = time.monotonic()
    with pytest.raises(StorageError) as caught:
        object_store.check_reachable(location)
    assert time.monotonic() - started < 10
    message = str(caught.value)
    assert message.startswith(f"{location}: the store cannot be reached: check the endpoint (s3.endpoint"), (
        message
    )
    assert "AWS Error" not in message
    with pytest.raises(StorageError, match="the store cannot be reached"):
        fileio.read_bytes(f"{location}/metadata/v1.metadata.json")


def test_a_path_style_mismatch_is_named(
    s3_server: S3Server, s3_bucket: str, object_store_restored: None
) -> None:
    # the endpoint's host resolves, "<bucket>.<host>" does not: virtual-hosted requests go nowhere
    name = loopback_name()
    if name is None:
        pytest.skip("no host name of this machine resolves to loopback without resolving its subdomains")
    endpoint = s3_server.endpoint_url.replace("127.0.0.1", name)
    props = {**_props(endpoint), **FAST, "s3.path-style-access": "false"}
    object_store.configure(props, replace=True)
    location = f"s3://{s3_bucket}/warehouse"
    with pytest.raises(StorageError) as caught:
        object_store.check_reachable(location)
    message = str(caught.value)
    assert message.startswith(f"{location}: the endpoint's host name does not resolve"), message
    assert "s3.path-style-access=true" in message
    object_store.configure({"s3.path-style-access": "true"})
    object_store.check_reachable(location)


@pytest.mark.skipif(moto_missing() is not None, reason=str(moto_missing()))
def test_wrong_credentials_are_named(object_store_restored: None) -> None:
    with auth_server() as server:
        location = f"s3://{AUTH_BUCKET}/warehouse"
        object_store.configure({**server.properties, **FAST}, replace=True)
        object_store.check_reachable(location)  # the right key
        fileio.write_new(f"{location}/ok", b"x")

        object_store.configure({"s3.access-key-id": "AKIAWRONG"})
        with pytest.raises(StorageError) as caught:
            object_store.check_reachable(location)
        assert str(caught.value) == (
            f"{location}: the access key is not known to the store: "
            "check s3.access-key-id (or AWS_ACCESS_KEY_ID)"
        )
        object_store.configure({**server.properties, "s3.secret-access-key": "wrong"})
        with pytest.raises(
            StorageError, match=re.escape("signature does not match: check s3.secret-access-key")
        ):
            object_store.check_reachable(location)
        with pytest.raises(
            StorageError, match=re.escape(f"{location}/ok: access denied: check the credentials")
        ):
            fileio.read_bytes(f"{location}/ok")


def test_every_object_store_error_is_an_iceduck_error() -> None:
    from iceduck.io.object_errors import object_error

    texts = [
        "When reading information for key 'k' in bucket 'b': AWS Error ACCESS_DENIED during HeadObject "
        "operation: No response body.",
        "When listing objects under key 'x/' in bucket 'b': AWS Error UNKNOWN (HTTP status 500) during "
        "ListObjectsV2 operation: Internal (Request ID: abc)",
    ]
    errors = [object_error(OSError(t), "s3://b/k", "b") for t in texts]
    assert all(isinstance(e, IceduckError) for e in errors)
    assert str(errors[1]) == (
        "s3://b/k: the store answered with a server error on every attempt "
        "(UNKNOWN (HTTP status 500) during ListObjectsV2 operation: Internal): it is failing or "
        "throttling requests; run the statement again later (s3.retry.num-retries sets how often "
        "a request is retried)"
    )


def _props(endpoint: str) -> dict[str, str]:
    return {
        "s3.endpoint": endpoint,
        "s3.access-key-id": "testing",
        "s3.secret-access-key": "testing",
        "client.region": "us-east-1",
        "s3.path-style-access": "true",
    }
