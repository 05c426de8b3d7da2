"""OAuth2 client credentials against ``iceduck serve``'s token endpoint: the client logs in
with ``credential``, fetches a new token before the old one expires (a 2-second TTL, on a
clock the tests advance), fetches one again after a 401 (tokens the server forgot, as after
its restart), and a wrong secret is one clear error that never shows it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.catalog.rest_client.catalog import RestCatalog
from iceduck.serve.auth import Authenticator
from iceduck.serve.server import CatalogServer
from tests.support.cli import one_error_line, run_iceduck
from tests.support.clock import SteppedClock
from tests.support.rest import start_server

CREDENTIAL = "etl:s3cret-value"
TTL_S = 2


@pytest.fixture
def clock() -> SteppedClock:
    """The time of the server's token lifetimes and of the client's refresh."""
    return SteppedClock()


@pytest.fixture
def oauth_server(tmp_path: Path, clock: SteppedClock) -> Iterator[CatalogServer]:
    warehouse = tmp_path / "served"
    warehouse.mkdir()
    auth = Authenticator(credentials={"etl": "s3cret-value"}, ttl=TTL_S, clock=clock)
    server = start_server(warehouse, auth=auth)
    yield server
    server.stop()


def _catalog(con: iceduck.Connection) -> RestCatalog:
    catalog = con.session.catalog
    assert isinstance(catalog, RestCatalog)
    return catalog


def _token(con: iceduck.Connection) -> str | None:
    return _catalog(con).auth.headers().get("Authorization")


def test_client_credentials_log_in_and_refresh_before_expiry(
    oauth_server: CatalogServer, clock: SteppedClock
) -> None:
    con = iceduck.connect(catalog_uri=oauth_server.url, properties={"credential": CREDENTIAL})
    auth = _catalog(con).auth
    auth.clock = clock
    auth.refresh(auth.headers())  # a token whose refresh is due on ``clock`` from here on
    cur = con.cursor()
    cur.execute("CREATE NAMESPACE o")
    cur.execute("CREATE TABLE o.t (id bigint)")
    cur.execute("INSERT INTO o.t VALUES (1)")
    first = _token(con)
    clock.advance(TTL_S + 0.5)  # the first token has expired on the server
    second = _token(con)  # what the next request sends: fetched before any request is refused
    assert second != first
    cur.execute("INSERT INTO o.t VALUES (2)")
    assert _token(con) == second
    assert cur.execute("SELECT * FROM o.t ORDER BY id").fetchall() == [(1,), (2,)]


def test_a_token_the_server_forgot_is_fetched_again_after_the_401(oauth_server: CatalogServer) -> None:
    con = iceduck.connect(catalog_uri=oauth_server.url, properties={"credential": CREDENTIAL})
    cur = con.cursor()
    cur.execute("CREATE NAMESPACE o")
    first = _token(con)
    oauth_server.context.auth._issued.clear()  # what a restart of the server does to its tokens
    assert cur.execute("SHOW NAMESPACES").fetchall() == [("o",)]
    assert _token(con) != first


def test_a_wrong_secret_is_one_error_without_it(oauth_server: CatalogServer, tmp_path: Path) -> None:
    with pytest.raises(iceduck.ProgrammingError, match="refused the credential") as info:
        iceduck.connect(catalog_uri=oauth_server.url, properties={"credential": "etl:not-it"})
    assert "not-it" not in str(info.value) and f"{oauth_server.url}/v1/oauth/tokens" in str(info.value)
    run = run_iceduck(
        "--catalog", oauth_server.url, "-p", "credential=etl:not-it", "-c", "SELECT 1", home=tmp_path
    )
    one_error_line(run, "refused the credential", "invalid_client")
    assert "not-it" not in run.stderr
    run = run_iceduck(
        "--catalog",
        oauth_server.url,
        "-p",
        f"credential={CREDENTIAL}",
        "--csv",
        "-c",
        "SELECT 1 AS x",
        home=tmp_path,
    )
    assert (run.returncode, run.stdout) == (0, "x\n1\n"), run.stderr
