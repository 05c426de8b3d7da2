"""Catalog URIs: every spelling the catalog's other clients use, bad ones refused by name,
and passwords hidden wherever a URI is shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from iceduck.catalog.uri import (
    GLUE,
    HIVE,
    POSTGRESQL,
    REST,
    SQLITE,
    CatalogUri,
    glue_catalog_id,
    jdbc_postgres,
    looks_like_uri,
    parse_catalog_uri,
    redact,
)
from iceduck.errors import UserError


@pytest.mark.parametrize(
    ("text", "uri"),
    [
        ("postgresql://me:pw@db.internal:5432/lake", "postgresql://me:pw@db.internal:5432/lake"),
        ("postgres://me@db.internal/lake", "postgresql://me@db.internal/lake"),
        ("POSTGRESQL://me@h/lake", "postgresql://me@h/lake"),
        # SQLAlchemy's driver suffix, as PyIceberg's SQL catalog takes it: psycopg here
        ("postgresql+psycopg2://me:pw@h:5433/lake", "postgresql://me:pw@h:5433/lake"),
        ("postgresql+psycopg://me@h/lake?sslmode=require", "postgresql://me@h/lake?sslmode=require"),
        # Spark's: kept as written (the catalog's driver reads both)
        (
            "jdbc:postgresql://h:5432/lake?user=me&password=pw",
            "jdbc:postgresql://h:5432/lake?user=me&password=pw",
        ),
        ("  postgresql://h/lake  ", "postgresql://h/lake"),
    ],
)
def test_postgresql_uris(text: str, uri: str) -> None:
    parsed = parse_catalog_uri(text)
    assert (parsed.kind, parsed.uri, parsed.db_path) == (POSTGRESQL, uri, None)


@pytest.mark.parametrize(
    ("text", "path"),
    [
        # SQLAlchemy's (PyIceberg's): the path follows "sqlite:///", so four slashes is absolute
        ("sqlite:////tmp/lake/catalog.db", "/tmp/lake/catalog.db"),
        ("sqlite:///catalog.db", "catalog.db"),
        ("sqlite:///rel/dir/catalog.db", "rel/dir/catalog.db"),
        ("sqlite:////tmp/with%20space/catalog.db", "/tmp/with space/catalog.db"),
        # the xerial driver's (Spark's)
        ("jdbc:sqlite:/tmp/lake/catalog.db", "/tmp/lake/catalog.db"),
        ("jdbc:sqlite:catalog.db", "catalog.db"),
        ("jdbc:sqlite:file:/tmp/lake/catalog.db", "/tmp/lake/catalog.db"),
        ("jdbc:sqlite:file:///tmp/lake/catalog.db", "/tmp/lake/catalog.db"),
    ],
)
def test_sqlite_uris(text: str, path: str) -> None:
    parsed = parse_catalog_uri(text)
    assert (parsed.kind, parsed.db_path) == (SQLITE, Path(path))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "non-empty"),
        ("postgresql://me@h:5432", "names no database"),
        ("postgresql://me@h:5432/", "names no database"),
        ("jdbc:postgresql://h:5432", "names no database"),
        ("postgresql://me@h:port/lake", "malformed PostgreSQL catalog URI"),
        ("sqlite://catalog.db", "malformed SQLite catalog URI"),
        ("sqlite:catalog.db", "malformed SQLite catalog URI"),
        ("sqlite:///", "names no file"),
        ("sqlite:///:memory:", "in-memory SQLite catalog"),
        ("jdbc:sqlite::memory:", "in-memory SQLite catalog"),
        ("jdbc:sqlite:file:/x.db?mode=memory", "takes none"),
        ("sqlite:////x.db?mode=ro", "takes none"),
        ("jdbc:sqlite:file://otherhost/x.db", "not a local file"),
        ("mysql://me@h/lake", "unknown catalog URI"),
        ("jdbc:mysql://h/lake", "unknown catalog URI"),
        ("thrift2://metastore:9083", "unknown catalog URI"),
        ("postgresql://a\x00b@h/lake", "NUL"),
    ],
)
def test_bad_uris_are_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        parse_catalog_uri(text)


def test_rest_catalog_uris() -> None:
    """http(s):// names an Iceberg REST catalog, as its other clients' ``uri`` property does;
    credentials belong in the token/credential properties, never in the URI."""
    parsed = parse_catalog_uri("http://rest:8181/catalog/")
    assert (parsed.kind, parsed.uri) == (REST, "http://rest:8181/catalog")
    assert parse_catalog_uri("HTTPS://rest.example").kind == REST
    for text, message in [
        ("https://me:pw@rest.example/v1", "holds credentials"),
        ("http://", "names no host"),
        ("http://rest:port", "malformed REST catalog URI"),
        ("http://rest?warehouse=x", "query or fragment"),
    ]:
        with pytest.raises(UserError, match=message) as caught:
            parse_catalog_uri(text)
        assert "pw" not in str(caught.value)


def test_glue_catalog_uris() -> None:
    """glue:// is the AWS Glue Data Catalog of the credentials' account; glue://<catalog-id>
    another account's (Iceberg's glue.id). Region and credentials are properties."""
    for text, catalog_id in [("glue://", None), ("GLUE://", None), ("glue://123456789012/", "123456789012")]:
        parsed = parse_catalog_uri(text)
        assert parsed.kind == GLUE and glue_catalog_id(parsed) == catalog_id
    assert looks_like_uri("glue://")
    for text in ("glue:", "glue:123", "glue://123/db", "glue://key:secret@123"):
        with pytest.raises(UserError, match="malformed Glue catalog URI"):
            parse_catalog_uri(text)
    with pytest.raises(UserError, match="not a Glue catalog URI"):
        glue_catalog_id(parse_catalog_uri("http://rest:8181"))


def test_hive_metastore_uris() -> None:
    """thrift://host:port names a Hive Metastore, as Spark's ``type=hive`` catalog's ``uri``."""
    parsed = parse_catalog_uri("thrift://metastore:9083/")
    assert (parsed.kind, parsed.uri) == (HIVE, "thrift://metastore:9083")
    assert parse_catalog_uri("THRIFT://m").kind == HIVE


def test_a_bad_uri_never_shows_its_password() -> None:
    with pytest.raises(UserError) as caught:
        parse_catalog_uri("mysql://me:hunter2@h/lake")
    assert "hunter2" not in str(caught.value)
    with pytest.raises(UserError) as caught:
        parse_catalog_uri("postgresql://me:hunter2@h:port/lake")
    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("postgresql://me:hunter2@h:5432/lake", "postgresql://me:***@h:5432/lake"),
        ("postgresql://me@h/lake", "postgresql://me@h/lake"),
        ("postgresql://h/lake", "postgresql://h/lake"),
        (
            "jdbc:postgresql://h/lake?user=me&password=hunter2",
            "jdbc:postgresql://h/lake?user=me&password=***",
        ),
        (
            "postgresql://h/lake?sslpassword=hunter2&sslmode=require",
            "postgresql://h/lake?sslpassword=***&sslmode=require",
        ),
        ("postgresql://me:p%40ss@h/lake", "postgresql://me:***@h/lake"),
        ("sqlite:////tmp/catalog.db", "sqlite:////tmp/catalog.db"),
        # unsplittable (a bad port): everything between ':' and '@' goes
        ("postgresql://me:hunter2@[h/lake", "postgresql://me:***@[h/lake"),
    ],
)
def test_redact_hides_the_password(text: str, shown: str) -> None:
    assert redact(text) == shown
    assert "hunter2" not in repr(CatalogUri(POSTGRESQL, text))
    assert "hunter2" not in str(CatalogUri(POSTGRESQL, text))


@pytest.mark.parametrize(
    ("text", "catalog"),
    [
        ("postgresql://h/lake", True),
        ("jdbc:postgresql://h/lake", True),
        ("jdbc:sqlite:/x.db", True),
        ("sqlite:///x.db", True),
        ("https://rest", True),
        ("iceduck", False),
        ("prod_catalog", False),
        ("my-catalog", False),
    ],
)
def test_a_uri_is_told_from_a_catalog_name(text: str, catalog: bool) -> None:
    assert looks_like_uri(text) is catalog


@pytest.mark.parametrize(
    ("text", "url", "credentials"),
    [
        (
            "postgresql://me:p%40ss@db.internal:5432/lake",
            "jdbc:postgresql://db.internal:5432/lake",
            {"jdbc.user": "me", "jdbc.password": "p@ss"},
        ),
        ("postgres://db/lake?sslmode=require", "jdbc:postgresql://db/lake?sslmode=require", {}),
        ("postgresql:///lake", "jdbc:postgresql://localhost/lake", {}),
        (
            "jdbc:postgresql://h:5432/lake?user=me&password=pw&ssl=true",
            "jdbc:postgresql://h:5432/lake?ssl=true",
            {"jdbc.user": "me", "jdbc.password": "pw"},
        ),
    ],
)
def test_jdbc_url_for_spark(text: str, url: str, credentials: dict[str, str]) -> None:
    assert jdbc_postgres(parse_catalog_uri(text)) == (url, credentials)


def test_jdbc_url_only_for_postgresql() -> None:
    with pytest.raises(UserError, match="not a PostgreSQL catalog URI"):
        jdbc_postgres(parse_catalog_uri("sqlite:////x.db"))
