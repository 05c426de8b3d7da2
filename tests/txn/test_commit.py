"""The commit loop against real catalogs and real concurrent writers."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from iceduck.catalog.base import Catalog, LoadedTable, TableIdentifier
from iceduck.catalog.filesystem import HadoopCatalog
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.errors import CommitConflictError, UserError, ValidationError
from iceduck.spec.partition import UNPARTITIONED
from iceduck.spec.schema import Schema
from iceduck.spec.sort import UNSORTED
from iceduck.spec.types import LongType, NestedField
from iceduck.txn.builder import MetadataBuilder, new_table_metadata
from iceduck.txn.commit import PendingCommit, RetryPolicy, commit

T = TableIdentifier(("db",), "t")
FAST = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5", "commit.retry.num-retries": "50"}

Factory = Callable[[], Catalog]


@pytest.fixture(params=["sqlite", "hadoop"])
def make_catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Factory:
    warehouse = tmp_path / "wh"
    factory: Factory = (
        (lambda: SqliteCatalog(warehouse))
        if request.param == "sqlite"
        else (lambda: HadoopCatalog(warehouse))
    )
    catalog = factory()
    catalog.create_namespace(("db",))
    schema = Schema((NestedField(1, "id", LongType()),))
    location = catalog.default_table_location(T)
    catalog.create_table(T, new_table_metadata(schema, UNPARTITIONED, UNSORTED, location, FAST))
    return factory


def _set_property(
    key: str, value: str, out_dir: Path | None = None
) -> Callable[[LoadedTable], PendingCommit]:
    """An attempt that sets one property and (like a snapshot producer) writes a file."""
    calls = {"n": 0}

    def attempt(base: LoadedTable) -> PendingCommit:
        calls["n"] += 1
        builder = MetadataBuilder(base.metadata)
        builder.set_properties({key: value})
        written = []
        if out_dir is not None:
            path = out_dir / f"{key}-attempt{calls['n']}.avro"
            path.write_bytes(b"manifest")
            written.append(str(path))
        return PendingCommit(builder.build(), written)

    attempt.calls = calls  # type: ignore[attr-defined]
    return attempt


def _other_writer_commits(catalog: Catalog, key: str) -> None:
    base = catalog.load_table(T)
    builder = MetadataBuilder(base.metadata)
    builder.set_properties({key: "other"})
    catalog.commit_table(base, builder.build())


def test_retry_after_a_conflict_succeeds(make_catalog: Factory, tmp_path: Path) -> None:
    ours, theirs = make_catalog(), make_catalog()
    base = ours.load_table(T)
    inner = _set_property("mine", "1", tmp_path)

    def attempt(current: LoadedTable) -> PendingCommit:
        pending = inner(current)
        if inner.calls["n"] == 1:  # type: ignore[attr-defined]
            _other_writer_commits(theirs, "theirs")  # lands between our build and our swap
        return pending

    committed = commit(ours, T, attempt, base=base)
    assert inner.calls["n"] == 2  # type: ignore[attr-defined]
    props = theirs.load_table(T).metadata.properties
    assert props["mine"] == "1" and props["theirs"] == "other"
    assert committed.metadata_location == theirs.load_table(T).metadata_location
    assert not (tmp_path / "mine-attempt1.avro").exists()  # the lost attempt's file is gone
    assert (tmp_path / "mine-attempt2.avro").exists()  # the landed attempt's file stays


def test_retries_exhausted_cleans_everything(make_catalog: Factory, tmp_path: Path) -> None:
    ours, theirs = make_catalog(), make_catalog()
    base = ours.load_table(T)
    builder = MetadataBuilder(base.metadata)
    builder.set_properties({"commit.retry.num-retries": "2"})
    base = ours.commit_table(base, builder.build())
    data_file = tmp_path / "data-1.parquet"
    data_file.write_bytes(b"rows")
    inner = _set_property("mine", "1", tmp_path)

    def attempt(current: LoadedTable) -> PendingCommit:
        pending = inner(current)
        _other_writer_commits(theirs, f"theirs{inner.calls['n']}")  # type: ignore[attr-defined]
        return pending

    with pytest.raises(CommitConflictError, match=r"table 'db.t'.*3 attempts"):
        commit(ours, T, attempt, base=base, cleanup_on_failure=[str(data_file)])
    assert inner.calls["n"] == 3  # type: ignore[attr-defined]
    assert not data_file.exists()
    assert not list(tmp_path.glob("mine-attempt*.avro"))
    props = theirs.load_table(T).metadata.properties
    assert "mine" not in props and {"theirs1", "theirs2", "theirs3"} <= set(props)


def test_attempt_giving_up_on_retry_cleans_up(make_catalog: Factory, tmp_path: Path) -> None:
    ours, theirs = make_catalog(), make_catalog()
    inner = _set_property("mine", "1", tmp_path)

    def attempt(current: LoadedTable) -> PendingCommit:
        if inner.calls["n"] == 1:  # type: ignore[attr-defined]
            raise ValidationError("the rows this delete read were rewritten meanwhile")
        pending = inner(current)
        _other_writer_commits(theirs, "theirs")
        return pending

    with pytest.raises(ValidationError, match="rewritten meanwhile"):
        commit(ours, T, attempt)
    assert not list(tmp_path.glob("mine-attempt*.avro"))


def test_non_conflict_commit_error_cleans_up(tmp_path: Path, make_catalog: Factory) -> None:
    writable = make_catalog()
    if isinstance(writable, SqliteCatalog):
        read_only: Catalog = SqliteCatalog(writable.db_path.parent, read_only=True)
    else:
        read_only = HadoopCatalog(writable.warehouse, read_only=True)  # type: ignore[attr-defined]
    with pytest.raises(UserError, match="read-only"):
        commit(read_only, T, _set_property("mine", "1", tmp_path))
    assert not list(tmp_path.glob("mine-attempt*.avro"))


def test_concurrent_threads_all_land(make_catalog: Factory) -> None:
    """Eight writers, each with its own catalog object, commit at once; every change lands."""
    writers = 8
    barrier = threading.Barrier(writers)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        catalog = make_catalog()
        base = catalog.load_table(T)  # everyone starts from the same base
        try:
            barrier.wait()
            commit(catalog, T, _set_property(f"w{i}", str(i)), base=base)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    final = make_catalog().load_table(T).metadata
    assert {f"w{i}" for i in range(writers)} <= set(final.properties)
    assert len(final.metadata_log) == writers  # one file per landed commit, none lost


def test_backoff_doubles_and_caps() -> None:
    policy = RetryPolicy.from_properties(
        {"commit.retry.min-wait-ms": "100", "commit.retry.max-wait-ms": "350"}
    )
    for retry, base in ((1, 100), (2, 200), (3, 350), (4, 350)):
        assert base <= policy.wait_ms(retry) <= base * 1.1
    assert policy.num_retries == 4 and policy.total_timeout_ms == 1800000


def test_unreadable_retry_settings_fall_back_to_the_defaults(make_catalog: Factory) -> None:
    """Java's ``propertyTryAsInt``: a table another engine left with ``num-retries=many``
    still takes commits -- among them the one that repairs the value."""
    assert RetryPolicy.from_properties({"commit.retry.num-retries": "many"}) == RetryPolicy()
    catalog = make_catalog()
    base = catalog.load_table(T)
    builder = MetadataBuilder(base.metadata)
    builder.set_properties({"commit.retry.num-retries": "many", "commit.retry.min-wait-ms": "x"})
    catalog.commit_table(base, builder.build())  # as another engine would: not validated
    committed = commit(catalog, T, _set_property("commit.retry.num-retries", "4"))
    assert committed.metadata.properties["commit.retry.num-retries"] == "4"


def test_waits_between_attempts(make_catalog: Factory) -> None:
    ours, theirs = make_catalog(), make_catalog()
    waits: list[float] = []
    inner = _set_property("mine", "1")

    def attempt(current: LoadedTable) -> PendingCommit:
        pending = inner(current)
        if inner.calls["n"] < 3:  # type: ignore[attr-defined]
            _other_writer_commits(theirs, f"t{inner.calls['n']}")  # type: ignore[attr-defined]
        return pending

    commit(ours, T, attempt, sleep=waits.append)
    assert inner.calls["n"] == 3  # type: ignore[attr-defined]
    assert len(waits) == 2
    assert 0.001 <= waits[0] <= 0.0011 and 0.002 <= waits[1] <= 0.0022
