"""Spark 3.5 + Iceberg's ``RESTCatalog`` against ``iceduck serve --principals``: two Spark
catalogs on one server, one per principal (a pipeline with OAuth2 client credentials, an
analyst with a static token). The pipeline creates and writes; the analyst reads the same
rows, is refused writes and drops with Java's ``ForbiddenException`` naming the privilege,
sees only the namespaces granted; a reload that grants the analyst ``write`` takes effect
for the Spark catalog already attached (Java keeps its token and endpoints for the session).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.catalog.open import open_catalog, warehouse_location
from tests.serve.conftest import serve_principals
from tests.support.rest_spark import attach, iceduck_rows, require_rest_client, spark_rows

pytestmark = pytest.mark.spark

TEAM = """\
[principals.etl]
client-id = "etl"
client-secret = "etl-secret"
roles = ["engineer"]

[principals.ana]
token = "ana-token"
roles = ["analyst"]

[roles.engineer]
grants = [{ namespace = "shop", privileges = ["read", "write", "create", "drop"] }]

[roles.analyst]
grants = [{ namespace = "shop", privileges = ["READ"] }]
"""


def test_each_spark_principal_does_what_it_was_granted(spark: Any, warehouse: Path) -> None:
    require_rest_client(spark)
    catalog = open_catalog(warehouse_location(warehouse), "iceduck")
    for namespace in ("shop", "hr"):
        catalog.create_namespace((namespace,), {})
    server = serve_principals(warehouse, TEAM.replace('"READ"', '"read"'))
    try:
        attach(spark, "team_etl", server.url, credential="etl:etl-secret")
        attach(spark, "team_ana", server.url, token="ana-token")
        spark.sql("CREATE TABLE team_etl.shop.orders (id bigint, item string) USING iceberg")
        spark.sql("INSERT INTO team_etl.shop.orders VALUES (1, 'pen'), (2, 'ink')")
        spark.sql("DELETE FROM team_etl.shop.orders WHERE id = 2")
        spark.sql("INSERT INTO team_etl.shop.orders VALUES (3, 'nib')")
        expected = [(1, "pen"), (3, "nib")]
        assert spark_rows(spark, "SELECT id, item FROM team_ana.shop.orders") == expected
        with iceduck.connect(catalog_uri=server.url, properties={"token": "ana-token"}) as con:
            assert iceduck_rows(con, "SELECT id, item FROM shop.orders") == expected

        for statement, privilege in (
            ("INSERT INTO team_ana.shop.orders VALUES (4, 'cap')", "write on table shop.orders"),
            ("DROP TABLE team_ana.shop.orders", "drop on table shop.orders"),
            ("CREATE TABLE team_ana.shop.other (id bigint) USING iceberg", "create on namespace shop"),
        ):
            with pytest.raises(Exception) as refused:
                spark.sql(statement).collect()
            assert "ForbiddenException" in str(refused.value), str(refused.value)[:500]
            assert f"principal 'ana' lacks the privilege {privilege}" in str(refused.value)
        names = [tuple(r) for r in spark.sql("SHOW NAMESPACES IN team_ana").collect()]
        assert names == [("shop",)]  # hr exists, and is not shown to ana
        assert sorted(r[0] for r in spark.sql("SHOW NAMESPACES IN team_etl").collect()) == ["shop"]

        principals = server.context.auth.principals
        assert principals is not None
        principals.path.write_text(TEAM.replace('"READ"', '"read", "write"'))
        principals.reload()
        spark.sql("INSERT INTO team_ana.shop.orders VALUES (4, 'cap')")
        assert spark_rows(spark, "SELECT id, item FROM team_etl.shop.orders") == [*expected, (4, "cap")]
    finally:
        server.stop()
