"""DuckDB's Iceberg REST client authenticating to ``iceduck serve --token``.

DuckDB takes a bearer token as a secret (``CREATE SECRET (TYPE iceberg, TOKEN '...')``,
then ``ATTACH ... (SECRET name)``) or as the ATTACH option ``TOKEN``, and sends it as
``Authorization: Bearer <token>``. Without it, or with another token, the server answers
``GET /v1/config`` with 401 and DuckDB refuses to attach, naming the status.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from iceduck.rest.server import CatalogServer
from tests.interop.test_rest_duckdb import iceduck_read, iceduck_values
from tests.support.rest_duckdb import DuckRest, duckdb_rest_unavailable, fresh_warehouse, served
from tests.support.scenario_peers import PeerError
from tests.support.scenario_rows import assert_same

UNAVAILABLE = duckdb_rest_unavailable()
pytestmark = pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")

TOKEN = "s3cret-t0ken"
WRITES = ("CREATE SCHEMA r.a", "CREATE TABLE r.a.t (i INTEGER)", "INSERT INTO r.a.t VALUES (1), (2)")


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    return fresh_warehouse(tmp_path)


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
