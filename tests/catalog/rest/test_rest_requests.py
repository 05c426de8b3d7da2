"""How many requests a statement costs through a REST catalog: the load a query needs is
also its existence check, so a query of one table is one table request."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator

import pytest

from tests.catalog.rest.conftest import Served

LINE = re.compile(r'"([A-Z]+) (\S+) HTTP/[\d.]+" (\d{3})')


class Requests(logging.Handler):
    """The requests the server's access log (logger ``iceduck.rest``) records."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.seen: list[tuple[str, str, int]] = []

    def emit(self, record: logging.LogRecord) -> None:
        found = LINE.search(record.getMessage())
        if found:
            self.seen.append((found.group(1), found.group(2), int(found.group(3))))


@pytest.fixture
def requests() -> Iterator[Requests]:
    handler, logger = Requests(), logging.getLogger("iceduck.rest")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_a_query_loads_its_table_once(served: Served, requests: Requests) -> None:
    con = served.connect()
    con.execute("CREATE NAMESPACE db")
    con.execute("CREATE TABLE db.t (id BIGINT)")
    con.execute("INSERT INTO db.t VALUES (1), (2)")
    requests.seen.clear()
    assert con.execute("SELECT count(*) FROM db.t").fetchall() == [(2,)]
    assert [method for method, path, _ in requests.seen if "/tables/" in path] == ["GET"]
    requests.seen.clear()  # unchanged since: the same one request, answered from the last load
    assert con.execute("SELECT count(*) FROM db.t").fetchall() == [(2,)]
    assert [(m, status) for m, path, status in requests.seen if "/tables/" in path] == [("GET", 304)]


def test_a_missing_table_is_still_reported_missing(served: Served) -> None:
    con = served.connect()
    con.execute("CREATE NAMESPACE db")
    with pytest.raises(Exception, match=r"(?i)db\.nope.*(does not exist|not found)|not found.*db\.nope"):
        con.execute("SELECT * FROM db.nope").fetchall()
