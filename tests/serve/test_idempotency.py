"""``Idempotency-Key``: a retried mutation gets the first answer, and runs once.

The spec (``components/parameters/idempotency-key``): finalized answers -- 2xx and
deterministic 4xx -- are replayed for the key's lifetime, advertised in ``GET /v1/config``;
5xx are not stored; the key is a 36-character UUID; a key names one operation.
"""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from iceduck.errors import UserError
from iceduck.serve.idempotency import LIFETIME, LIFETIME_S, IdempotencyKeys, check_key
from iceduck.serve.request import Response
from tests.serve.conftest import RestClient, start_server
from tests.support.clock import SteppedClock

SCHEMA: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "required": True, "type": "long"}],
}
TABLE = "/v1/namespaces/shop/tables/t"


def _key() -> str:
    return str(uuid.uuid4())


def test_config_advertises_the_lifetime(client: RestClient) -> None:
    assert client.get("/v1/config").body["idempotency-key-lifetime"] == LIFETIME == "PT30M"


def test_a_retried_create_gets_the_first_answer(client: RestClient) -> None:
    key = _key()
    first = client.call("POST", "/v1/namespaces", {"namespace": ["shop"]}, headers={"Idempotency-Key": key})
    again = client.call("POST", "/v1/namespaces", {"namespace": ["shop"]}, headers={"Idempotency-Key": key})
    assert (first.status, again.status) == (200, 200) and again.body == first.body
    # without the key, the same request is a new operation: the namespace exists
    assert client.post("/v1/namespaces", {"namespace": ["shop"]}).status == 409


def test_a_retried_commit_lands_once(client: RestClient) -> None:
    client.post("/v1/namespaces", {"namespace": ["shop"]})
    assert client.post("/v1/namespaces/shop/tables", {"name": "t", "schema": SCHEMA}).status == 200
    key = _key()
    commit = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "v"}}]}
    first = client.call("POST", TABLE, commit, headers={"Idempotency-Key": key})
    again = client.call("POST", TABLE, commit, headers={"Idempotency-Key": key})
    assert first.status == again.status == 200
    assert again.body["metadata-location"] == first.body["metadata-location"]
    log = client.get(TABLE).body["metadata"]["metadata-log"]
    assert len(log) == 1  # one commit after the create, not two


def test_a_final_refusal_is_replayed_too(client: RestClient) -> None:
    """A 409 is final: its retry answers 409 again, even after the conflict went away."""
    client.post("/v1/namespaces", {"namespace": ["shop"]})
    key = _key()
    create = {"namespace": ["shop"]}
    assert client.call("POST", "/v1/namespaces", create, headers={"Idempotency-Key": key}).status == 409
    assert client.call("DELETE", "/v1/namespaces/shop").status == 204
    replay = client.call("POST", "/v1/namespaces", create, headers={"Idempotency-Key": key})
    assert replay.status == 409 and replay.body["error"]["type"] == "AlreadyExistsException"
    assert client.call("HEAD", "/v1/namespaces/shop").status == 404  # nothing ran again


@pytest.mark.parametrize("bad", ["not-a-uuid", "", "017F22E279B07CC398C4DC0C0C07398F", "x" * 36])
def test_a_key_that_is_no_uuid_is_a_400(client: RestClient, bad: str) -> None:
    reply = client.call("POST", "/v1/namespaces", {"namespace": ["shop"]}, headers={"Idempotency-Key": bad})
    assert reply.status == 400 and "Idempotency-Key must be a UUID" in reply.body["error"]["message"]
    assert client.call("HEAD", "/v1/namespaces/shop").status == 404


def test_a_key_names_one_operation(client: RestClient) -> None:
    key = _key()
    client.call("POST", "/v1/namespaces", {"namespace": ["a"]}, headers={"Idempotency-Key": key})
    other = client.call("POST", "/v1/namespaces", {"namespace": ["b"]}, headers={"Idempotency-Key": key})
    assert other.status == 400 and "a new operation needs a new key" in other.body["error"]["message"]
    assert client.call("HEAD", "/v1/namespaces/b").status == 404


def test_reads_ignore_the_key(client: RestClient) -> None:
    key = _key()
    client.post("/v1/namespaces", {"namespace": ["shop"]})
    assert client.call("GET", "/v1/namespaces/shop", headers={"Idempotency-Key": key}).status == 200
    assert client.call("GET", "/v1/namespaces/nope", headers={"Idempotency-Key": key}).status == 404


def test_an_expired_key_runs_again(warehouse: Path) -> None:
    clock = SteppedClock()
    server = start_server(warehouse, idempotency=IdempotencyKeys(clock=clock))
    try:
        client = RestClient(server.url)
        key = _key()
        create = {"namespace": ["shop"]}
        assert client.call("POST", "/v1/namespaces", create, headers={"Idempotency-Key": key}).status == 200
        clock.advance(LIFETIME_S - 1)
        assert client.call("POST", "/v1/namespaces", create, headers={"Idempotency-Key": key}).status == 200
        clock.advance(2)
        assert client.call("POST", "/v1/namespaces", create, headers={"Idempotency-Key": key}).status == 409
    finally:
        server.stop()


# -- the store itself ---------------------------------------------------------------------------


def test_a_server_error_is_not_final() -> None:
    keys = IdempotencyKeys()
    key = _key()
    answers = iter([Response(503, {"error": {}}), Response(200, {"ok": True})])
    calls: list[int] = []

    def call() -> Response:
        calls.append(1)
        return next(answers)

    assert keys.run(key, "POST", "/v1/x", b"{}", call).status == 503
    assert keys.run(key, "POST", "/v1/x", b"{}", call).status == 200
    assert keys.run(key, "POST", "/v1/x", b"{}", call).status == 200
    assert len(calls) == 2


def test_a_retry_during_the_first_attempt_waits_for_its_answer() -> None:
    keys = IdempotencyKeys()
    key = _key()
    started, release = threading.Event(), threading.Event()
    calls: list[int] = []

    def slow() -> Response:
        calls.append(1)
        started.set()
        release.wait(30)
        return Response(200, {"n": len(calls)})

    first: list[Response] = []
    thread = threading.Thread(target=lambda: first.append(keys.run(key, "POST", "/v1/x", b"", slow)))
    thread.start()
    started.wait(30)
    second: list[Response] = []
    waiter = threading.Thread(target=lambda: second.append(keys.run(key, "POST", "/v1/x", b"", slow)))
    waiter.start()
    release.set()
    thread.join(30)
    waiter.join(30)
    assert first == second == [Response(200, {"n": 1})] and calls == [1]


def test_the_oldest_answers_go_beyond_the_bound() -> None:
    keys = IdempotencyKeys(max_keys=2)
    first = _key()
    for key in (first, _key(), _key()):
        keys.run(key, "POST", "/v1/x", b"", lambda: Response(204))
    runs: list[int] = []
    keys.run(first, "POST", "/v1/x", b"", lambda: runs.append(1) or Response(204))
    assert runs == [1]


def test_keys_are_compared_without_case() -> None:
    key = _key()
    assert check_key(key.upper()) == key
    with pytest.raises(UserError, match="36-character"):
        check_key("{" + key[:34] + "}")
