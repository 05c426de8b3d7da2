"""Revoking, expiring and reloading principals on a running server.

Revoked (removed from the file, or given a new secret) and expired credentials are 401 on
every route; a reload takes effect at once for tokens already issued; a file that does
not parse leaves the grants in force; and no request ever sees a policy half swapped.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from iceduck.catalog.open import open_catalog, warehouse_location
from iceduck.serve.server import CatalogServer
from tests.serve.conftest import RestClient, serve_principals, token_request
from tests.serve.test_grants import CASES

ADMIN = '[principals.root]\ntoken = "root-token"\nroles = ["all"]\n'
ALL = '[roles.all]\ngrants = [{ catalog = true, privileges = ["admin"] }]\n'
ETL = '[principals.etl]\nclient-id = "etl"\nclient-secret = "%s"\nroles = ["%s"]\n'
READ = '[roles.reader]\ngrants = [{ namespace = "sales", privileges = ["read"] }]\n'
WRITE = '[roles.writer]\ngrants = [{ namespace = "sales", privileges = ["write"] }]\n'


class Clock:
    def __init__(self) -> None:
        self.now = datetime.datetime(2026, 12, 31, 23, 0, tzinfo=datetime.UTC)

    def __call__(self) -> datetime.datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def served(warehouse: Path, clock: Clock) -> Iterator[CatalogServer]:
    open_catalog(warehouse_location(warehouse), "iceduck").create_namespace(("sales",), {})
    text = ADMIN + ALL + ETL % ("s3cret", "reader") + READ + WRITE
    server = serve_principals(warehouse, text, auth={"now": clock})
    yield server
    server.stop()


def _login(server: CatalogServer, secret: str = "s3cret") -> str | None:
    """etl's token, or None when its credentials are refused (401)."""
    form = {"grant_type": "client_credentials", "client_id": "etl", "client_secret": secret}
    reply = token_request(server, form)
    if reply.status == 401:
        return None
    assert reply.status == 200, reply.body
    return str(reply.body["access_token"])


def _rewrite(server: CatalogServer, text: str) -> None:
    principals = server.context.auth.principals
    assert principals is not None
    principals.path.write_text(text)
    principals.reload()


def _every_route_is_401(server: CatalogServer, token: str) -> None:
    client = RestClient(server.url, token)
    assert client.get("/v1/config").status == 401
    for route, (method, path, body, _) in CASES.items():
        assert client.call(method, path, body).status == 401, route


def test_a_removed_principal_is_401_everywhere_with_tokens_issued_before(served: CatalogServer) -> None:
    token = _login(served)
    assert token is not None and RestClient(served.url, token).get("/v1/namespaces/sales").status == 200
    _rewrite(served, ADMIN + ALL + READ + WRITE)
    _every_route_is_401(served, token)
    assert _login(served) is None


def test_a_new_secret_revokes_the_tokens_of_the_old(served: CatalogServer) -> None:
    token = _login(served)
    assert token is not None
    _rewrite(served, ADMIN + ALL + ETL % ("rotated", "reader") + READ + WRITE)
    _every_route_is_401(served, token)
    assert _login(served, "s3cret") is None
    fresh = _login(served, "rotated")
    assert fresh is not None and RestClient(served.url, fresh).get("/v1/namespaces/sales").status == 200


def test_new_grants_apply_at_once_to_issued_tokens(served: CatalogServer) -> None:
    token = _login(served)
    assert token is not None
    client = RestClient(served.url, token)
    body = {"updates": {"owner": "etl"}, "removals": []}
    assert client.post("/v1/namespaces/sales/properties", body).status == 403
    _rewrite(served, ADMIN + ALL + ETL % ("s3cret", "writer") + READ + WRITE)
    assert client.post("/v1/namespaces/sales/properties", body).status == 200
    _rewrite(served, ADMIN + ALL + ETL % ("s3cret", "reader") + READ + WRITE)
    assert client.post("/v1/namespaces/sales/properties", body).status == 403


def test_expired_credentials_are_401_everywhere(served: CatalogServer, clock: Clock) -> None:
    text = ADMIN + ALL + ETL % ("s3cret", "reader") + "expires = 2027-01-01T00:00:00Z\n" + READ + WRITE
    _rewrite(served, text)
    token = _login(served)
    assert token is not None and RestClient(served.url, token).get("/v1/namespaces/sales").status == 200
    clock.now = datetime.datetime(2027, 1, 1, tzinfo=datetime.UTC)
    _every_route_is_401(served, token)
    assert _login(served) is None
    reply = RestClient(served.url, token).get("/v1/namespaces/sales")
    assert "expired on 2027-01-01T00:00:00+00:00" in reply.body["error"]["message"]
    assert "s3cret" not in str(reply.body)


def test_a_bad_file_keeps_the_grants_in_force(served: CatalogServer) -> None:
    root = RestClient(served.url, "root-token")
    principals = served.context.auth.principals
    assert principals is not None
    principals.path.write_text(
        ADMIN + ALL + '[roles.reader]\ngrants = [{ namespace = "sales", privileges = ["all"] }]\n'
    )
    reply = root.post("/v1/iceduck/principals/reload", None)
    assert reply.status == 400
    assert "line 7: role 'reader': unknown privilege 'all'" in reply.body["error"]["message"]
    token = _login(served)  # etl, who the bad file would remove, still logs in and reads
    assert token is not None and RestClient(served.url, token).get("/v1/namespaces/sales").status == 200
    principals.path.write_text(ADMIN + ALL)
    reply = root.post("/v1/iceduck/principals/reload", None)
    assert reply.status == 200 and reply.body == {"principals": ["root"], "roles": ["all"]}
    assert RestClient(served.url, token).get("/v1/namespaces/sales").status == 401


def test_no_request_sees_a_policy_half_swapped(served: CatalogServer) -> None:
    """Reloads between two files that both refuse etl's write, while etl writes: never let
    through (each request decides on one whole policy)."""
    token = _login(served)
    assert token is not None
    a = ADMIN + ALL + ETL % ("s3cret", "reader") + READ + WRITE
    b = ADMIN + ALL + READ + WRITE + ETL % ("s3cret", "reader") + "[roles.other]\ngrants = []\n"
    stop = threading.Event()
    statuses: list[int] = []

    def write() -> None:
        client = RestClient(served.url, token)
        while not stop.is_set():
            statuses.append(client.post("/v1/namespaces/sales/properties", {"updates": {"k": "v"}}).status)

    writers = [threading.Thread(target=write) for _ in range(3)]
    for w in writers:
        w.start()
    for i in range(60):
        _rewrite(served, a if i % 2 else b)
    stop.set()
    for w in writers:
        w.join()
    assert statuses and set(statuses) == {403}


def test_idempotency_keys_are_kept_per_principal(served: CatalogServer) -> None:
    """Another principal sending the same key runs its own request, and never receives the
    first one's answer (an answer may hold what only its caller may see)."""
    _rewrite(served, ADMIN + ALL + ETL % ("s3cret", "writer") + READ + WRITE)
    key = {"Idempotency-Key": "0190b7e2-8c6a-7cc2-9a4e-7f6b2a3c4d5e"}
    root = RestClient(served.url, "root-token")
    path, body = "/v1/namespaces/sales/properties", {"updates": {}, "removals": ["owner"]}
    assert root.post(path, {"updates": {"owner": "root"}}).status == 200
    first = root.call("POST", path, body, headers=key)
    assert first.status == 200 and first.body["removed"] == ["owner"]
    token = _login(served)
    assert token is not None
    other = RestClient(served.url, token).call("POST", path, body, headers=key)
    assert other.status == 200 and other.body["missing"] == ["owner"]  # run, not replayed
    again = root.call("POST", path, body, headers=key)
    assert again.body == first.body  # root's own retry is still the replay
