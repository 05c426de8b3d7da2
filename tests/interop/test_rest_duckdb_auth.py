"""DuckDB's Iceberg REST client authenticating to ``iceduck serve --token`` and
``iceduck serve --credential ID:SECRET``.

DuckDB takes a bearer token as a secret (``CREATE SECRET (TYPE iceberg, TOKEN '...')``,
then ``ATTACH ... (SECRET name)``) or as the ATTACH option ``TOKEN``, and sends it as
``Authorization: Bearer <token>``. Without it, or with another token, the server answers
``GET /v1/config`` with 401 and DuckDB refuses to attach, naming the status.

With OAuth2 client credentials (``CREATE SECRET (TYPE iceberg, CLIENT_ID, CLIENT_SECRET,
OAUTH2_SERVER_URI)``, or the same as ATTACH options) DuckDB gets its token from the server's
``POST /v1/oauth/tokens``, and gets a new one when the server's ``--token-ttl`` ran out
during its session.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from iceduck.serve.auth import Authenticator
from iceduck.serve.server import CatalogServer
from tests.interop.test_rest_duckdb import iceduck_read, iceduck_values
from tests.support.rest_duckdb import DuckRest, Step, duckdb_rest_unavailable, served
from tests.support.scenario_peers import PeerError
from tests.support.scenario_rows import arrow_rows, assert_same

UNAVAILABLE = duckdb_rest_unavailable()
pytestmark = pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")

TOKEN = "s3cret-t0ken"
WRITES = ("CREATE SCHEMA r.a", "CREATE TABLE r.a.t (i INTEGER)", "INSERT INTO r.a.t VALUES (1), (2)")


@pytest.fixture
def server(warehouse: Path) -> Iterator[CatalogServer]:
    with served(warehouse, token=TOKEN) as server:
        yield server


def test_duckdb_with_a_token_secret(server: CatalogServer, warehouse: Path) -> None:
    duck = DuckRest(
        server.url, setup=[f"CREATE SECRET served (TYPE iceberg, TOKEN '{TOKEN}')"], options="SECRET served"
    )
    assert duck.execute(*WRITES)[-1] == 2
    expected = iceduck_read(warehouse, "SELECT * FROM a.t")
    assert_same("DuckDB with a token", duck.rows("SELECT * FROM r.a.t"), expected)
    assert iceduck_values(warehouse, "SELECT sum(i) FROM a.t") == [(3,)]


def test_duckdb_with_the_token_option(server: CatalogServer, warehouse: Path) -> None:
    assert DuckRest(server.url, options=f"TOKEN '{TOKEN}'").execute(*WRITES)[-1] == 2
    assert iceduck_values(warehouse, "SELECT count(*) FROM a.t") == [(2,)]


@pytest.mark.parametrize(
    ("setup", "options"),
    [
        ((), "AUTHORIZATION_TYPE 'none'"),
        (("CREATE SECRET served (TYPE iceberg, TOKEN 'wrong')",), "SECRET served"),
    ],
    ids=["no-token", "wrong-token"],
)
def test_duckdb_without_the_token_cannot_attach(
    server: CatalogServer, warehouse: Path, setup: tuple[str, ...], options: str
) -> None:
    with pytest.raises(PeerError, match="Unauthorized_401"):
        DuckRest(server.url, setup=setup, options=options).execute(*WRITES)
    assert iceduck_values(warehouse, "SHOW NAMESPACES") == []


# -- OAuth2 client credentials (--credential) ----------------------------------------------------


@dataclass
class CountingAuthenticator(Authenticator):
    """The server's authenticator, counting the tokens it issues."""

    issued: int = 0

    def issue(self, subject: str) -> str:
        self.issued += 1
        return super().issue(subject)


def oauth_secret(server: CatalogServer, secret: str = "pw") -> str:
    return (
        f"CREATE SECRET served (TYPE iceberg, CLIENT_ID 'duck', CLIENT_SECRET '{secret}', "
        f"OAUTH2_SERVER_URI '{server.url}/v1/oauth/tokens')"
    )


def test_duckdb_logs_in_with_client_credentials_and_again_when_its_token_expired(warehouse: Path) -> None:
    auth = CountingAuthenticator(credentials={"duck": "pw"}, ttl=2)
    with served(warehouse, auth=auth) as server:
        duck = DuckRest(server.url, setup=[oauth_secret(server)], options="SECRET served")
        outcomes = duck.run(
            [
                Step("CREATE SCHEMA r.a"),
                Step("CREATE TABLE r.a.t (i INTEGER)"),
                Step("INSERT INTO r.a.t VALUES (1)"),
                Step("INSERT INTO r.a.t VALUES (2)", pause_ms=3000),  # its token expired meanwhile
                Step("SELECT * FROM r.a.t", query=True),
            ]
        )
        for step in outcomes:
            step.check("a step")
        assert auth.issued == 2  # one at ATTACH, one when it expired
        expected = iceduck_read(warehouse, "SELECT * FROM a.t")
        assert_same("DuckDB after a new token", arrow_rows(outcomes[-1].rows), expected)
        assert len(expected[1]) == 2
        # the ATTACH options instead of a secret
        uri = f"{server.url}/v1/oauth/tokens"
        options = f"CLIENT_ID 'duck', CLIENT_SECRET 'pw', OAUTH2_SERVER_URI '{uri}'"
        assert DuckRest(server.url, options=options).execute("INSERT INTO r.a.t VALUES (3)") == [1]
    assert iceduck_values(warehouse, "SELECT count(*) FROM a.t") == [(3,)]


def test_duckdb_with_a_wrong_client_secret_cannot_attach(warehouse: Path) -> None:
    with served(warehouse, auth=Authenticator(credentials={"duck": "pw"})) as server:
        duck = DuckRest(server.url, setup=[oauth_secret(server, "wrong")], options="SECRET served")
        with pytest.raises(PeerError, match="invalid_client"):
            duck.execute("CREATE SCHEMA r.a")
    assert iceduck_values(warehouse, "SHOW NAMESPACES") == []


def test_duckdb_with_the_fixed_token_on_a_server_with_credentials(warehouse: Path) -> None:
    """``--token`` and ``--credential`` together: either way in."""
    with served(warehouse, token=TOKEN, auth=Authenticator(credentials={"duck": "pw"})) as server:
        DuckRest(server.url, options=f"TOKEN '{TOKEN}'").execute("CREATE SCHEMA r.fixed")
        DuckRest(server.url, setup=[oauth_secret(server)], options="SECRET served").execute(
            "CREATE SCHEMA r.oauth"
        )
    assert iceduck_values(warehouse, "SHOW NAMESPACES") == [("fixed",), ("oauth",)]


# -- principals with grants (--principals) -------------------------------------------------------

TEAM = """\
[principals.writer]
token = "writer-token"
roles = ["writer"]
[principals.reader]
client-id = "duck"
client-secret = "pw"
roles = ["reader"]
[roles.writer]
grants = [{ namespace = "a", privileges = ["create", "write"] }]
[roles.reader]
grants = [{ namespace = "a", privileges = ["read"] }]
"""


def test_duckdb_as_principals_with_grants(warehouse: Path) -> None:
    """The writer (a token) creates and inserts; the reader (client credentials) reads the
    same rows and is refused an insert with the 403 naming the privilege."""
    from iceduck.catalog.open import open_catalog, warehouse_location
    from tests.serve.conftest import serve_principals

    open_catalog(warehouse_location(warehouse), "iceduck").create_namespace(("a",), {})
    server = serve_principals(warehouse, TEAM)
    try:
        writer = DuckRest(server.url, options="TOKEN 'writer-token'")
        assert writer.execute("CREATE TABLE r.a.t (i INTEGER)", "INSERT INTO r.a.t VALUES (1), (2)")[-1] == 2
        reader = DuckRest(server.url, setup=[oauth_secret(server)], options="SECRET served")
        assert_same(
            "DuckDB as a reader",
            reader.rows("SELECT * FROM r.a.t"),
            iceduck_read(warehouse, "SELECT * FROM a.t"),
        )
        with pytest.raises(PeerError, match=r"lacks the privilege write on table a\.t"):
            reader.execute("INSERT INTO r.a.t VALUES (3)")
    finally:
        server.stop()
    assert iceduck_values(warehouse, "SELECT count(*) FROM a.t") == [(2,)]
