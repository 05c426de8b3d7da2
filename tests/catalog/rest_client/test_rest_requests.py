"""How many requests a statement costs through a REST catalog: the load a query needs is
also its existence check, so a query of one table is one table request."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from tests.catalog.rest_client.conftest import Served
from tests.support.rest import RequestLog


@pytest.fixture
def requests() -> Iterator[RequestLog]:
    handler, logger = RequestLog(), logging.getLogger("iceduck.rest")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_a_query_loads_its_table_once(served: Served, requests: RequestLog) -> None:
    con = served.connect()
    con.execute("CREATE NAMESPACE db")
    con.execute("CREATE TABLE db.t (id BIGINT)")
    con.execute("INSERT INTO db.t VALUES (1), (2)")
    requests.requests.clear()
    assert con.execute("SELECT count(*) FROM db.t").fetchall() == [(2,)]
    assert [method for method, path, _ in requests.requests if "/tables/" in path] == ["GET"]
    requests.requests.clear()  # unchanged since: the same one request, answered from the last load
    assert con.execute("SELECT count(*) FROM db.t").fetchall() == [(2,)]
    assert [(m, status) for m, path, status in requests.requests if "/tables/" in path] == [("GET", 304)]


def test_a_missing_table_is_still_reported_missing(served: Served) -> None:
    con = served.connect()
    con.execute("CREATE NAMESPACE db")
    with pytest.raises(Exception, match=r"(?i)db\.nope.*(does not exist|not found)|not found.*db\.nope"):
        con.execute("SELECT * FROM db.nope").fetchall()
