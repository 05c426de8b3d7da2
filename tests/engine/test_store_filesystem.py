"""The fsspec view of an object store DuckDB reads through: bytes fetched ahead
(:func:`iceduck.engine.store_filesystem.prefetch`) serve only the reads they cover, and
every other read goes to the store, so what DuckDB reads never depends on what was
fetched ahead.
"""

from __future__ import annotations

import os
import uuid

import pytest

from iceduck.engine import store_filesystem
from iceduck.engine.store_filesystem import OPENED, PREFETCHED, S3, prefetch
from iceduck.io import fileio, object_store
from tests.support.s3 import S3Server, client

SIZE = 100_000


@pytest.fixture
def objects(s3_configured: S3Server, s3_bucket: str) -> dict[str, bytes]:
    """Two objects of random bytes in the bucket, by location."""
    found = {}
    for n in range(2):
        location = f"s3://{s3_bucket}/prefetch-{uuid.uuid4().hex[:8]}/{n}.bin"
        data = os.urandom(SIZE)
        fileio.write_new(location, data)
        found[location] = data
    return found


def key(location: str) -> tuple[int, str, str]:
    return (object_store.generation(), "s3", object_store.parse(location).path)


def read(location: str, start: int, length: int) -> bytes:
    with S3(location).open(location, "rb") as f:
        f.seek(start)
        return bytes(f.read(length))


def test_a_tail_fetched_ahead_serves_what_it_covers_and_the_store_the_rest(
    objects: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_filesystem, "PREFETCH_WHOLE", 1_000)
    monkeypatch.setattr(store_filesystem, "PREFETCH_TAIL", 4_096)
    prefetch(list(objects))
    for location, data in objects.items():
        assert key(location) in OPENED
        offset, tail = PREFETCHED.get(key(location))  # type: ignore[misc]
        assert (offset, tail) == (SIZE - 4_096, data[-4_096:])
        assert read(location, SIZE - 100, 100) == data[-100:]  # from the tail
        assert read(location, SIZE - 5_000, 2_000) == data[SIZE - 5_000 : SIZE - 3_000]  # across its start
        assert read(location, 0, SIZE) == data  # the whole object


def test_within_the_byte_bound_whole_objects_are_kept_and_the_rest_only_opened(
    objects: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_filesystem, "PREFETCHED", type(PREFETCHED)(SIZE))  # room for one
    prefetch(list(objects))
    kept = [loc for loc in objects if store_filesystem.PREFETCHED.get(key(loc)) is not None]
    assert len(kept) == 1 and store_filesystem.PREFETCHED.get(key(kept[0])) == (0, objects[kept[0]])
    for location, data in objects.items():
        assert key(location) in OPENED
        assert read(location, 0, SIZE) == data


def test_the_bytes_of_each_scan_of_a_statement_are_kept_and_fetched_again_by_the_next(
    objects: dict[str, bytes], s3_configured: S3Server
) -> None:
    first, second = objects
    prefetch([first])
    prefetch([second])  # a second table of the same statement (a join) keeps the first's
    assert PREFETCHED.get(key(first)) == (0, objects[first])
    assert PREFETCHED.get(key(second)) == (0, objects[second])
    bucket, _, name = object_store.parse(first).path.partition("/")
    client(s3_configured.endpoint_url).delete_object(Bucket=bucket, Key=name)
    prefetch([first])  # the next statement: what was kept is not served, the store is asked
    assert PREFETCHED.get(key(first)) is None
    with pytest.raises(OSError):  # pyarrow's error of a GET of a missing object
        read(first, 0, 10)
