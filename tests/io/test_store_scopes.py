"""Scoped storage properties: the longest prefix wins, expiries are read from Iceberg's
property names, and a scope about to expire is renewed once before it is used."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest

from iceduck.errors import UserError
from iceduck.io import object_store
from iceduck.io.store_scopes import REFRESH_MARGIN_MS, Scope, ScopeOwner, expires_at_ms, longest


@pytest.fixture
def restored() -> Iterator[None]:
    before = object_store.properties()
    try:
        object_store.configure({}, replace=True)
        yield
    finally:
        object_store.configure(before, replace=True)


def test_the_longest_prefix_a_location_starts_with_wins() -> None:
    scopes = [Scope("s3://b/", {"k": "bucket"}), Scope("s3://b/wh/t1", {"k": "table"}), Scope("s3://c/", {})]
    assert longest(scopes, "s3://b/wh/t1/data/f.parquet") == scopes[1]
    assert longest(scopes, "s3://b/wh/t2/f") == scopes[0]
    assert longest(scopes, "s3://d/x") is None


def test_expiry_comes_from_each_stores_property() -> None:
    assert (
        expires_at_ms({"s3.session-token-expires-at-ms": "2000", "gcs.oauth2.token-expires-at": "1000"})
        == 1000
    )
    assert expires_at_ms({"adls.sas-token-expires-at-ms.acct": "5"}) == 5
    assert expires_at_ms({"s3.access-key-id": "k"}) is None
    with pytest.raises(UserError, match=r"s3\.session-token-expires-at-ms must be epoch milliseconds"):
        expires_at_ms({"s3.session-token-expires-at-ms": "tomorrow"})


def test_only_a_renewable_scope_near_its_expiry_is_due() -> None:
    props = {"s3.session-token-expires-at-ms": str(10 * REFRESH_MARGIN_MS)}
    renewable = Scope("s3://b/", props, refresh=dict)
    assert not renewable.due(8 * REFRESH_MARGIN_MS)
    assert renewable.due(9 * REFRESH_MARGIN_MS)
    assert not Scope("s3://b/", props).due(9 * REFRESH_MARGIN_MS)  # nothing to renew it with


def test_a_due_scope_is_renewed_once_and_its_filesystem_rebuilt(
    restored: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    def refresh() -> Mapping[str, Mapping[str, str]]:
        calls.append(1)
        return {
            "s3a://b/t": {
                "s3.access-key-id": "new",
                "s3.secret-access-key": "s",
                "s3.session-token-expires-at-ms": "99999999",
            }
        }

    object_store.configure(
        {"s3.endpoint": "http://127.0.0.1:1", "s3.access-key-id": "base", "s3.secret-access-key": "b"}
    )
    object_store.configure_scope(
        "s3://b/t",
        {"s3.access-key-id": "old", "s3.secret-access-key": "s", "s3.session-token-expires-at-ms": "1000"},
        refresh,
    )
    monkeypatch.setattr(object_store, "now_ms", lambda: 0)
    first, _ = object_store.filesystem("s3://b/t/data/f.parquet")
    assert calls == [1]  # within the margin of 1000 ms: renewed before use
    assert object_store.properties_for("s3://b/t/x")["s3.access-key-id"] == "new"
    assert object_store.properties_for("s3://b/u/x")["s3.access-key-id"] == "base"
    again, _ = object_store.filesystem("s3://b/t/data/g.parquet")
    assert again is first and calls == [1]  # renewed credentials are good for a long while
    generation = object_store.generation()
    [scope] = [s for s in object_store.scopes() if s.prefix == "s3://b/t"]
    object_store.configure_scope("s3a://b/t", scope.properties, refresh)
    assert object_store.generation() == generation  # the same credentials again change nothing


def test_an_owners_scopes_go_when_it_is_released_and_anothers_on_the_prefix_stay(restored: None) -> None:
    first, second = ScopeOwner(), ScopeOwner()
    object_store.configure({"s3.access-key-id": "base"})
    object_store.configure_scope("s3://b/wh", {"s3.access-key-id": "first"}, owner=first)
    object_store.configure_scope("s3://b/wh/t", {"s3.access-key-id": "first-t"}, owner=first)
    object_store.configure_scope("s3://b/wh", {"s3.access-key-id": "second"}, owner=second)
    assert object_store.properties_for("s3://b/wh/u/f")["s3.access-key-id"] == "second"  # the last registered
    generation = object_store.generation()
    object_store.release(second)
    assert object_store.generation() > generation  # DuckDB's secrets are made again
    assert object_store.properties_for("s3://b/wh/u/f")["s3.access-key-id"] == "first"
    assert object_store.properties_for("s3://b/wh/t/f")["s3.access-key-id"] == "first-t"
    object_store.configure_scope("s3://b/wh", {"s3.access-key-id": "first-again"}, owner=first)
    object_store.release(first)
    assert object_store.properties_for("s3://b/wh/t/f")["s3.access-key-id"] == "base"
    assert object_store.scopes() == []
    object_store.configure_scope("s3://b/wh", {"s3.access-key-id": "process"})  # no owner: the process's
    object_store.release(ScopeOwner())
    assert object_store.properties_for("s3://b/wh/f")["s3.access-key-id"] == "process"
