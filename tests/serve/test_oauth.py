"""OAuth2 on ``iceduck serve``: ``POST /v1/oauth/tokens`` issues expiring tokens to the
``--credential`` clients (client credentials in the form or a Basic header; token
exchange to refresh), every other route then wants one, and refusals come in OAuth's
error shape; PyIceberg's ``RestCatalog`` with ``credential=id:secret`` logs in, and
fetches a new token when its token expired."""

from __future__ import annotations

import base64
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.serve.auth import Authenticator
from iceduck.serve.server import CatalogServer
from tests.serve.conftest import FORM, RestClient, new_token, start_server, token_request
from tests.support.clock import SteppedClock

EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS = "urn:ietf:params:oauth:token-type:access_token"


@pytest.fixture
def oauth_server(warehouse: Path) -> Iterator[CatalogServer]:
    served = start_server(warehouse, auth=Authenticator(credentials={"app": "s3cret"}, ttl=3600))
    yield served
    served.stop()


def test_client_credentials_in_the_form(oauth_server: CatalogServer) -> None:
    reply = token_request(
        oauth_server,
        {
            "grant_type": "client_credentials",
            "client_id": "app",
            "client_secret": "s3cret",
            "scope": "catalog",
        },
    )
    assert reply.status == 200
    body = reply.body
    assert body["token_type"] == "bearer" and body["expires_in"] == 3600
    assert body["issued_token_type"] == ACCESS
    assert len(body["access_token"]) >= 40
    assert reply.headers["Cache-Control"] == "no-store"
    client = RestClient(oauth_server.url, token=body["access_token"])
    assert client.post("/v1/namespaces", {"namespace": ["ok"]}).status == 200
    assert client.get("/v1/namespaces").body == {"namespaces": [["ok"]]}
    # every token is new
    assert new_token(oauth_server) != new_token(oauth_server)


def test_client_credentials_in_a_basic_header(oauth_server: CatalogServer) -> None:
    basic = base64.b64encode(b"app:s3cret").decode()
    reply = token_request(
        oauth_server, {"grant_type": "client_credentials"}, {"Authorization": f"Basic {basic}"}
    )
    assert reply.status == 200
    assert RestClient(oauth_server.url, token=reply.body["access_token"]).get("/v1/namespaces").status == 200
    both = token_request(
        oauth_server,
        {"grant_type": "client_credentials", "client_id": "app", "client_secret": "s3cret"},
        {"Authorization": f"Basic {basic}"},
    )
    assert both.status == 400 and both.body["error"] == "invalid_request"


@pytest.mark.parametrize(
    "form",
    [
        {"grant_type": "client_credentials", "client_id": "app", "client_secret": "wrong"},
        {"grant_type": "client_credentials", "client_id": "other", "client_secret": "s3cret"},
        {"grant_type": "client_credentials", "client_id": "app"},
        {"grant_type": "client_credentials"},
    ],
)
def test_wrong_client_credentials(oauth_server: CatalogServer, form: dict[str, str]) -> None:
    reply = token_request(oauth_server, form)
    assert reply.status == 401
    assert reply.body["error"] == "invalid_client"
    assert isinstance(reply.body["error_description"], str)


def test_unknown_grant_and_malformed_forms(oauth_server: CatalogServer) -> None:
    unknown = token_request(oauth_server, {"grant_type": "password", "username": "a", "password": "b"})
    assert unknown.status == 400 and unknown.body["error"] == "unsupported_grant_type"
    client = RestClient(oauth_server.url)
    cases: list[tuple[bytes, dict[str, str]]] = [
        (b"", FORM),  # no grant_type
        (b"grant_type", FORM),  # not key=value
        (b"\xff\xfe=1", FORM),  # not UTF-8
        (b"grant_type=client_credentials&grant_type=client_credentials", FORM),  # a parameter twice
        (b'{"grant_type": "client_credentials"}', {"Content-Type": "application/json"}),
        (b"Authorization=x", {**FORM, "Authorization": "Basic %%%"}),  # not base64
    ]
    for raw, headers in cases:
        reply = client.call("POST", "/v1/oauth/tokens", raw=raw, headers=headers)
        assert reply.status == 400, raw
        assert reply.body["error"] == "invalid_request", raw
        assert reply.body["error_description"]


def test_other_routes_need_a_token(oauth_server: CatalogServer) -> None:
    for token in (None, "made-up"):
        reply = RestClient(oauth_server.url, token=token).get("/v1/namespaces")
        assert reply.status == 401
        assert reply.body["error"]["type"] == "NotAuthorizedException"
        assert reply.headers["WWW-Authenticate"].startswith("Bearer")


def test_token_exchange_refreshes_a_valid_token(oauth_server: CatalogServer) -> None:
    token = new_token(oauth_server)
    reply = token_request(
        oauth_server,
        {"grant_type": EXCHANGE, "subject_token": token, "subject_token_type": ACCESS},
        {"Authorization": f"Bearer {token}"},  # as the spec's refresh request carries it
    )
    assert reply.status == 200
    fresh = reply.body["access_token"]
    assert fresh != token
    assert RestClient(oauth_server.url, token=fresh).get("/v1/namespaces").status == 200
    refused = token_request(
        oauth_server, {"grant_type": EXCHANGE, "subject_token": "made-up", "subject_token_type": ACCESS}
    )
    assert refused.status == 401 and refused.body["error"] == "invalid_grant"
    incomplete = token_request(oauth_server, {"grant_type": EXCHANGE, "subject_token": token})
    assert incomplete.status == 400 and incomplete.body["error"] == "invalid_request"


def test_an_expired_token_is_refused_then_replaced(warehouse: Path) -> None:
    clock = SteppedClock()
    served = start_server(warehouse, auth=Authenticator(credentials={"app": "s3cret"}, ttl=1, clock=clock))
    try:
        token = new_token(served)
        client = RestClient(served.url, token=token)
        assert client.get("/v1/namespaces").status == 200
        clock.advance(1.2)
        expired = client.get("/v1/namespaces")
        assert expired.status == 401
        assert "expired" in expired.body["error"]["message"]
        exchange = token_request(
            served, {"grant_type": EXCHANGE, "subject_token": token, "subject_token_type": ACCESS}
        )
        assert exchange.status == 401 and exchange.body["error"] == "invalid_grant"
        assert RestClient(served.url, token=new_token(served)).get("/v1/namespaces").status == 200
    finally:
        served.stop()


def test_fixed_token_and_credentials_together(warehouse: Path) -> None:
    served = start_server(warehouse, token="fixed", auth=Authenticator(credentials={"app": "s3cret"}))
    try:
        assert RestClient(served.url, token="fixed").get("/v1/namespaces").status == 200
        assert RestClient(served.url, token=new_token(served)).get("/v1/namespaces").status == 200
    finally:
        served.stop()


def test_a_server_without_clients_refuses_tokens(client: RestClient, server: CatalogServer) -> None:
    reply = token_request(
        server, {"grant_type": "client_credentials", "client_id": "a", "client_secret": "b"}
    )
    assert reply.status == 401 and reply.body["error"] == "invalid_client"
    assert "--credential" in reply.body["error_description"]


rest = pytest.importorskip("pyiceberg.catalog.rest")


def test_pyiceberg_logs_in_with_client_credentials(oauth_server: CatalogServer) -> None:
    catalog = rest.RestCatalog("oauth", uri=oauth_server.url, credential="app:s3cret")
    catalog.create_namespace("py")
    assert catalog.list_namespaces() == [("py",)]
    OAuthError = pytest.importorskip("pyiceberg.exceptions").OAuthError
    with pytest.raises(OAuthError, match="invalid_client"):
        rest.RestCatalog("oauth", uri=oauth_server.url, credential="app:wrong")


def test_pyiceberg_gets_a_new_token_when_its_token_expired(warehouse: Path) -> None:
    clock = SteppedClock()
    served = start_server(warehouse, auth=Authenticator(credentials={"app": "s3cret"}, ttl=1, clock=clock))
    try:
        catalog = rest.RestCatalog("oauth", uri=served.url, credential="app:s3cret")
        catalog.create_namespace("before")
        clock.advance(1.2)  # its token expired: the server answers 401, PyIceberg refreshes and retries
        catalog.create_namespace("after")
        assert catalog.list_namespaces() == [("after",), ("before",)]
    finally:
        served.stop()


_DUCKDB_OAUTH = """
import sys
sys.path.insert(0, {bench!r})
from duckdb_iceberg_peer import connect, extension_path
con = connect(True)
con.load_extension(extension_path("duckdb_extension_httpfs", "httpfs"))
url = sys.argv[1]
token_uri = url + "/v1/oauth/tokens"
con.execute(
    f"CREATE SECRET s (TYPE iceberg, CLIENT_ID 'duck', CLIENT_SECRET 'pw', OAUTH2_SERVER_URI '{{token_uri}}')"
)
con.execute(f"ATTACH '' AS r (TYPE iceberg, SECRET s, ENDPOINT '{{url}}')")
con.execute("CREATE SCHEMA r.d")
con.execute("CREATE TABLE r.d.t (id BIGINT)")
con.execute("INSERT INTO r.d.t VALUES (1), (2)")
print(con.execute("SELECT sum(id) FROM r.d.t").fetchone()[0])
"""


def test_duckdb_logs_in_with_client_credentials(warehouse: Path) -> None:
    from tests.support.scenario_peers import PEER_PYTHON, PEER_TIMEOUT_S, REPO, duckdb_iceberg_unavailable

    why = duckdb_iceberg_unavailable()
    if why is not None:
        pytest.skip(why)
    served = start_server(warehouse, auth=Authenticator(credentials={"duck": "pw"}))
    try:
        script = _DUCKDB_OAUTH.format(bench=str(REPO / "bench"))
        result = subprocess.run(
            [str(PEER_PYTHON), "-c", script, served.url],
            capture_output=True,
            text=True,
            timeout=PEER_TIMEOUT_S,
        )
        assert result.returncode == 0, result.stderr[-2000:]
        assert result.stdout.split() == ["3"]
        assert RestClient(served.url).get("/v1/namespaces").status == 401  # DuckDB did use a token
    finally:
        served.stop()
    with iceduck.connect(warehouse) as con:
        assert con.execute("SELECT id FROM d.t ORDER BY id").fetchall() == [(1,), (2,)]
