"""A commit whose answer was lost, retried: it lands once, and the writer is told either
that it landed or that its state is unknown -- never a plain error for a commit that landed,
never a batch twice.

The answer is lost by a proxy that lets the commit reach the server and then closes the
client's connection without a byte of the answer (:mod:`tests.support.lost_answers`).
What ``Idempotency-Key`` itself does (replays, bad keys, expiry) is in test_idempotency.py,
and the REST client's retry of a lost property change in
tests/catalog/rest_client/test_rest_client.py; here the commits add snapshots made by a
real writer, and the retry is by raw HTTP or by iceduck's client."""

from __future__ import annotations

import http.client
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.errors import CommitStateUnknownError
from iceduck.serve.server import CatalogServer
from tests.support.commit_ledger import ROWS, SCHEMA, check_history
from tests.support.lost_answers import AnswerLosingProxy
from tests.support.rest import RestClient, start_server

SOURCE, TARGET = "/v1/namespaces/f/tables/src", "/v1/namespaces/f/tables/t"


@pytest.fixture
def proxy(server: CatalogServer) -> Iterator[AnswerLosingProxy]:
    host, port = server.url.removeprefix("http://").split(":")
    with AnswerLosingProxy(host, int(port)) as losing:
        yield losing


def _tables(url: str) -> None:
    con = iceduck.connect(catalog_uri=url)
    con.execute("CREATE NAMESPACE f")
    con.execute(f"CREATE TABLE f.src {SCHEMA}")
    con.execute(f"CREATE TABLE f.t {SCHEMA}")
    con.close()


def _snapshot_commit(url: str) -> dict[str, Any]:
    """A commit adding to the empty ``f.t`` the snapshot iceduck wrote into ``f.src`` (its
    manifest list, manifests and data file are real), asserting ``main`` has no snapshot
    yet -- what a client sends for its first append (Java's ``UpdateRequirements``)."""
    con = iceduck.connect(catalog_uri=url)
    con.execute(f"INSERT INTO f.src SELECT 'first', range FROM range({ROWS})")
    con.close()
    snapshot = RestClient(url).get(SOURCE).body["metadata"]["snapshots"][0]
    return {
        "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None}],
        "updates": [
            {"action": "add-snapshot", "snapshot": snapshot},
            {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
             "snapshot-id": snapshot["snapshot-id"]},
        ],
    }  # fmt: skip


def _lost(proxy: AnswerLosingProxy, commit: dict[str, Any], headers: dict[str, str]) -> None:
    proxy.lose_next_answer()
    with pytest.raises((OSError, http.client.HTTPException)):
        RestClient(proxy.url).call("POST", TARGET, commit, headers=headers)
    assert proxy.lost.is_set()


def _rows(url: str, table: str) -> list[tuple[str, int]]:
    con = iceduck.connect(catalog_uri=url)
    try:
        return con.execute(f"SELECT batch, count(*) FROM {table} GROUP BY batch").fetchall()
    finally:
        con.close()


def test_a_keyed_retry_gets_the_first_answer_and_lands_once(
    server: CatalogServer, proxy: AnswerLosingProxy
) -> None:
    _tables(server.url)
    commit = _snapshot_commit(server.url)
    key = {"Idempotency-Key": str(uuid.uuid4())}
    _lost(proxy, commit, key)
    retry = RestClient(server.url).call("POST", TARGET, commit, headers=key)
    assert retry.status == 200, retry.body
    metadata = check_history(server.url, "f.t")
    assert retry.body["metadata"] == metadata
    added = commit["updates"][0]["snapshot"]["snapshot-id"]
    assert [s["snapshot-id"] for s in metadata["snapshots"]] == [added]
    assert len(metadata["metadata-log"]) == 1  # the create's file, then one commit
    assert _rows(server.url, "f.t") == [("first", ROWS)]


def test_a_retry_without_a_key_fails_on_its_requirement(
    server: CatalogServer, proxy: AnswerLosingProxy
) -> None:
    """The first attempt landed; the retry runs again and its assert-ref-snapshot-id no
    longer holds: 409 CommitFailedException, and the snapshot is in the history once."""
    _tables(server.url)
    commit = _snapshot_commit(server.url)
    _lost(proxy, commit, {})
    retry = RestClient(server.url).post(TARGET, commit)
    assert retry.status == 409 and retry.body["error"]["type"] == "CommitFailedException"
    metadata = check_history(server.url, "f.t")
    assert len(metadata["snapshots"]) == len(metadata["metadata-log"]) == 1
    assert _rows(server.url, "f.t") == [("first", ROWS)]


def _insert_through(proxy: AnswerLosingProxy, **lose: Any) -> None:
    """An iceduck INSERT into ``f.t`` through ``proxy``, which loses the commit's answer."""
    con = iceduck.connect(catalog_uri=proxy.url)
    try:
        proxy.lose_answer_to(f"POST {TARGET} HTTP".encode(), **lose)
        con.execute(f"INSERT INTO f.t SELECT 'lost', range FROM range({ROWS})")
    finally:
        con.close()


def test_iceduck_retries_a_lost_commit_with_its_key_and_it_lands_once(
    server: CatalogServer, proxy: AnswerLosingProxy
) -> None:
    _tables(server.url)
    _insert_through(proxy)
    assert proxy.lost.is_set()
    assert _rows(server.url, "f.t") == [("lost", ROWS)]
    assert len(check_history(server.url, "f.t")["snapshots"]) == 1


def test_a_lost_commit_whose_retry_finds_no_server_is_unknown_not_refused(
    server: CatalogServer, proxy: AnswerLosingProxy
) -> None:
    """The commit landed, its answer was lost, and the retry cannot even connect (the server
    went away): that proves nothing about the first attempt, so the user is told the state
    is unknown and no file is deleted -- a plain "cannot reach" error would let the writer
    delete the data files the landed snapshot references."""
    _tables(server.url)
    with pytest.raises(CommitStateUnknownError, match="may or may not have landed"):
        _insert_through(proxy, then_refuse=True)
    assert _rows(server.url, "f.t") == [("lost", ROWS)]  # landed, and its data file is there
    assert len(check_history(server.url, "f.t")["snapshots"]) == 1


def test_without_idempotency_a_lost_commit_is_unknown_and_its_files_kept(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    warehouse.mkdir()
    server = start_server(warehouse, idempotency=None)
    try:
        host, port = server.url.removeprefix("http://").split(":")
        with AnswerLosingProxy(host, int(port)) as proxy:
            _tables(server.url)
            with pytest.raises(CommitStateUnknownError, match="may or may not have landed"):
                _insert_through(proxy)
        assert _rows(server.url, "f.t") == [("lost", ROWS)]
        assert len(check_history(server.url, "f.t")["snapshots"]) == 1
    finally:
        server.stop()


def test_a_lost_commit_retried_at_a_restarted_server_is_unknown_not_applied_twice(
    server: CatalogServer, warehouse: Path, proxy: AnswerLosingProxy
) -> None:
    """The commit landed, its answer was lost, and the retry reaches the server restarted
    (a second server on the same warehouse: it never saw the key). The retry's requirement
    fails because of the first attempt's own snapshot: a 409 there is no conflict to
    re-apply the INSERT over -- that would land the batch twice -- but an unknown state."""
    _tables(server.url)
    restarted = start_server(warehouse)
    try:
        with pytest.raises(CommitStateUnknownError, match="may or may not have landed"):
            _insert_through(proxy, then_forward_to=restarted.url)
        assert _rows(restarted.url, "f.t") == [("lost", ROWS)]
        assert len(check_history(restarted.url, "f.t")["snapshots"]) == 1
    finally:
        restarted.stop()
