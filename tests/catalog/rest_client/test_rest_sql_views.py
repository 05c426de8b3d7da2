"""Views through SQL on a REST catalog (``iceduck.connect(catalog_uri=<iceduck serve>)``):
every view statement goes through the REST client's view methods and the server's view
routes; a server offering no views lists none and refuses CREATE VIEW saying so."""

from __future__ import annotations

from pathlib import Path

import pytest

import iceduck
from iceduck.errors import UnsupportedError
from tests.catalog.rest_client.conftest import Served
from tests.support.rest import start_server


def test_view_statements_through_a_rest_catalog(served: Served) -> None:
    with served.connect() as con:
        con.execute("CREATE NAMESPACE ns")
        con.execute("CREATE TABLE ns.t (id BIGINT, name VARCHAR)")
        con.execute("INSERT INTO ns.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        con.execute("CREATE VIEW ns.v COMMENT 'big' AS SELECT id, upper(name) AS u FROM ns.t WHERE id > 1")
        assert con.execute("SELECT * FROM ns.v ORDER BY id").fetchall() == [(2, "B"), (3, "C")]
        assert con.execute("SHOW VIEWS IN ns").fetchall() == [("ns", "v", "false")]
        con.execute("ALTER VIEW ns.v SET TBLPROPERTIES ('team' = 'x')")
        con.execute("CREATE OR REPLACE VIEW ns.v AS SELECT id FROM ns.t")
        assert con.execute("SELECT count(*) FROM ns.v").fetchall() == [(3,)]
        assert con.execute("SELECT * FROM ns.v FOR VERSION AS OF 1 ORDER BY id").fetchall() == [
            (2, "B"),
            (3, "C"),
        ]
        con.execute("ALTER VIEW ns.v RENAME TO ns.w")
        assert con.execute("SHOW VIEWS IN ns").fetchall() == [("ns", "w", "false")]
        con.execute("DROP VIEW ns.w")
        assert con.execute("SHOW VIEWS IN ns").fetchall() == []


def test_a_rest_catalog_offering_no_views(tmp_path: Path) -> None:
    warehouse = tmp_path / "hadoop"
    warehouse.mkdir()
    server = start_server(warehouse, kind="hadoop")
    try:
        with iceduck.connect(catalog_uri=server.url) as con:
            con.execute("CREATE NAMESPACE ns")
            assert con.execute("SHOW VIEWS IN ns").fetchall() == []
            with pytest.raises(UnsupportedError, match="offers no views"):
                con.execute("CREATE VIEW ns.v AS SELECT 1 AS x")
    finally:
        server.stop()
