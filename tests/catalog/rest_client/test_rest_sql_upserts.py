"""Upserts and deletes by key through a REST catalog (``iceduck serve``): the snapshot with
equality deletes is committed through the REST client, and a second client reads it."""

from __future__ import annotations

from tests.catalog.rest_client.conftest import Served


def test_upserts_through_a_rest_catalog(served: Served) -> None:
    with served.connect() as con, served.connect() as other:
        con.execute("CREATE NAMESPACE ns")
        con.execute(
            "CREATE TABLE ns.t (id BIGINT NOT NULL, name VARCHAR) PARTITIONED BY (bucket(2, id)) "
            "TBLPROPERTIES ('write.upsert.enabled'='true')"
        )
        con.execute("ALTER TABLE ns.t SET IDENTIFIER FIELDS id")
        con.execute("INSERT INTO ns.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        con.execute("INSERT INTO ns.t VALUES (2, 'B'), (4, 'd')")
        con.execute("DELETE FROM ns.t WHERE id IN (1, 3)")
        assert other.execute("SELECT * FROM ns.t ORDER BY id").fetchall() == [(2, "B"), (4, "d")]
        kinds = other.execute("SELECT DISTINCT content FROM ns.t.delete_files").fetchall()
        assert kinds == [(2,)]
