"""Catalog URIs: which catalog a URI names, and the URI without its password.

A team's catalog is named by the URI its other clients already use, in any of their spellings:

* PostgreSQL (Iceberg's JDBC catalog in a PostgreSQL database): libpq's
  ``postgresql://user:password@host:port/dbname`` (also ``postgres://``), SQLAlchemy's
  ``postgresql+psycopg://...`` as PyIceberg's SQL catalog takes it, and the JDBC URL a Spark
  job sets as ``spark.sql.catalog.<name>.uri``: ``jdbc:postgresql://host:port/dbname``,
  its user and password in ``?user=...&password=...`` or in Iceberg's ``jdbc.user`` /
  ``jdbc.password`` catalog properties.
* SQLite (the same layout in a file): PyIceberg's ``sqlite:///<path>`` -- read as SQLAlchemy
  reads it, so ``sqlite:////abs/catalog.db`` (four slashes) is absolute and
  ``sqlite:///catalog.db`` relative to the current folder -- and Spark's (the xerial
  driver's) ``jdbc:sqlite:<path>``, ``jdbc:sqlite:file:<path>``.
* AWS Glue: ``glue://`` for the Glue Data Catalog of the credentials' own account, or
  ``glue://<catalog-id>`` for another account's (Iceberg's ``glue.id``); region, endpoint
  and credentials are catalog properties (:mod:`iceduck.catalog.glue_client`).
* REST (``http://``, ``https://``): an Iceberg REST catalog (:mod:`iceduck.catalog.rest_client`),
  the URI its other clients set as ``uri`` (``http://host:8181``, or with a path prefix).
* Hive Metastore (``thrift://host:port``): Iceberg's ``HiveCatalog`` (:mod:`iceduck.catalog.hive`),
  the URI Spark sets as ``uri`` with ``type=hive``.

Parsing only: no driver is imported here, so a wrong URI is one clear error before anything
connects, and :func:`redact` can be used anywhere a URI is shown (errors, reprs, the shell's
banner) to keep its password out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from iceduck.errors import UnsupportedError, UserError
from iceduck.io.fileio import to_local_path

POSTGRESQL = "postgresql"
SQLITE = "sqlite"
REST = "rest"
GLUE = "glue"
HIVE = "hive"

#: what replaces a password wherever a URI is shown
HIDDEN = "***"

#: ``scheme://``, ``jdbc:`` or ``sqlite:``: what tells a catalog URI from a catalog name
_URI_START = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|jdbc:|sqlite:)", re.IGNORECASE)
_POSTGRES_SCHEMES = ("postgresql", "postgres")
#: query parameters of a PostgreSQL URI that carry a secret (libpq's and PgJDBC's names)
_SECRET_PARAMETERS = frozenset({"password", "sslpassword"})


@dataclass(frozen=True)
class CatalogUri:
    """A parsed catalog URI.

    ``kind`` is :data:`POSTGRESQL`, :data:`SQLITE`, :data:`REST` or :data:`HIVE`; ``uri`` the URI as the
    catalog's driver takes it (libpq's form for PostgreSQL, a SQLAlchemy driver suffix
    dropped; a JDBC URL kept as written); ``db_path`` the SQLite file. ``repr`` hides the
    password.
    """

    kind: str
    uri: str
    db_path: Path | None = None

    def __repr__(self) -> str:
        return f"CatalogUri({self.kind!r}, {redact(self.uri)!r})"

    def __str__(self) -> str:
        return redact(self.uri)


def looks_like_uri(text: str) -> bool:
    """Whether ``text`` is a catalog URI rather than a catalog name (the CLI's ``--catalog``
    takes either): it starts with ``scheme://``, ``jdbc:`` or ``sqlite:``."""
    return bool(_URI_START.match(text))


def parse_catalog_uri(text: str) -> CatalogUri:
    """The catalog ``text`` names; a :class:`UserError` saying which forms exist otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise UserError(f"a catalog URI must be a non-empty string, not {text!r}")
    if "\x00" in text:
        raise UserError("a catalog URI cannot contain a NUL character")
    uri = text.strip()
    lower = uri.lower()
    if lower.startswith("jdbc:sqlite:"):
        return CatalogUri(SQLITE, uri, _jdbc_sqlite_path(uri))
    if lower.startswith("sqlite:"):
        return CatalogUri(SQLITE, uri, _sqlalchemy_sqlite_path(uri))
    if lower.startswith("jdbc:postgresql:"):
        _check_postgres_netloc(uri, uri[len("jdbc:") :])
        return CatalogUri(POSTGRESQL, uri)
    scheme = lower.partition(":")[0]
    if scheme.partition("+")[0] in _POSTGRES_SCHEMES and lower.startswith(f"{scheme}://"):
        # SQLAlchemy's driver suffix (postgresql+psycopg://) names a Python driver: psycopg here
        normalised = "postgresql" + uri[len(scheme) :]
        _check_postgres_netloc(uri, normalised)
        return CatalogUri(POSTGRESQL, normalised)
    if scheme == GLUE:
        return CatalogUri(GLUE, _glue_uri(uri))
    if scheme in ("http", "https") and lower.startswith(f"{scheme}://"):
        _check_rest(uri)
        return CatalogUri(REST, uri.rstrip("/"))
    if scheme == "thrift" and lower.startswith("thrift://"):
        return CatalogUri(HIVE, uri.rstrip("/"))
    raise UserError(
        f"unknown catalog URI {redact(uri)!r}: use postgresql://user@host:port/db, "
        "jdbc:postgresql://host:port/db, sqlite:///path/catalog.db, jdbc:sqlite:/path/catalog.db "
        "a REST catalog's http(s)://host:port, a Hive Metastore's thrift://host:port, "
        "or glue:// (glue://<catalog-id>)"
    )


def _glue_uri(uri: str) -> str:
    """``glue://`` or ``glue://<catalog-id>``, normalised to that form."""
    rest = uri[len("glue:") :]
    catalog_id = rest[2:].rstrip("/") if rest.startswith("//") else None
    if catalog_id is None or any(c in catalog_id for c in "/@?#:"):
        raise UserError(
            f"malformed Glue catalog URI {uri!r}: write glue:// (the account's own catalog) or "
            "glue://<catalog-id> (the AWS account id); region and credentials go in the properties"
        )
    return f"glue://{catalog_id}"


def glue_catalog_id(catalog: CatalogUri) -> str | None:
    """The catalog id a ``glue://<catalog-id>`` URI names (None for ``glue://``)."""
    if catalog.kind != GLUE:
        raise UserError(f"not a Glue catalog URI: {catalog}")
    return catalog.uri[len("glue://") :] or None


def _check_rest(uri: str) -> None:
    """A REST catalog URI urllib can split, naming a host, without credentials (those go
    in the ``token`` or ``credential`` property, which no banner or error shows)."""
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 -- raises ValueError on a port that is not a number
    except ValueError as e:
        raise UserError(f"malformed REST catalog URI {redact(uri)!r}: {e}") from None
    if not parts.hostname:
        raise UserError(f"the REST catalog URI {redact(uri)!r} names no host: write http://host:port")
    if parts.username is not None or parts.password is not None:
        raise UserError(
            f"the REST catalog URI {redact(uri)!r} holds credentials: give them as the token or "
            "credential property instead"
        )
    if parts.query or parts.fragment:
        raise UserError(f"the REST catalog URI {redact(uri)!r} has a query or fragment: give the base URI")


def _check_postgres_netloc(written: str, uri: str) -> None:
    """A PostgreSQL URI urllib can split, with a database named (libpq would connect to the
    user's own database, a guess the catalog should not make)."""
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 -- raises ValueError on a port that is not a number
    except ValueError as e:
        raise UserError(f"malformed PostgreSQL catalog URI {redact(written)!r}: {e}") from None
    if not parts.path.strip("/"):
        raise UserError(
            f"the PostgreSQL catalog URI {redact(written)!r} names no database: "
            "add /<database> after the host (postgresql://user@host:5432/<database>)"
        )


def _sqlite_file(path: str, written: str) -> Path:
    if not path:
        raise UserError(f"the SQLite catalog URI {written!r} names no file")
    if path == ":memory:" or "mode=memory" in path:
        raise UserError(
            f"an in-memory SQLite catalog ({written!r}) would vanish with the connection: "
            "name a catalog file"
        )
    return Path(path)


def _sqlalchemy_sqlite_path(uri: str) -> Path:
    """SQLAlchemy's ``sqlite://<nothing>/<path>``: the text after ``sqlite:///`` is the path,
    so a fourth slash makes it absolute (as PyIceberg's SQL catalog reads it)."""
    scheme, _, rest = uri.partition(":")
    if scheme.lower() != "sqlite" or not rest.startswith("///"):
        raise UserError(
            f"malformed SQLite catalog URI {uri!r}: write sqlite:///relative/catalog.db or "
            "sqlite:////absolute/catalog.db (SQLAlchemy's form, as PyIceberg takes it)"
        )
    path, query, _ = rest[3:].partition("?")
    if query:
        raise UserError(f"the SQLite catalog URI {uri!r} has options (?{query}): iceduck takes none")
    return _sqlite_file(unquote(path), uri)


def _jdbc_sqlite_path(uri: str) -> Path:
    """The xerial driver's ``jdbc:sqlite:<path>`` or ``jdbc:sqlite:file:<path>``."""
    path, query, _ = uri[len("jdbc:sqlite:") :].partition("?")
    if query:
        raise UserError(f"the SQLite catalog URI {uri!r} has options (?{query}): iceduck takes none")
    if path.lower().startswith("file:"):
        try:
            path = to_local_path("file:" + path[len("file:") :])
        except UnsupportedError as e:  # file://otherhost/...
            raise UserError(f"the SQLite catalog URI {uri!r} is not a local file: {e}") from None
    return _sqlite_file(path, uri)


# -- the URI without its password ---------------------------------------------------------------


def redact(uri: str) -> str:
    """``uri`` with its password replaced by ``***``: in ``user:password@`` and in a
    ``password=`` query parameter. A string urllib cannot split loses everything between
    ``:`` and ``@`` instead, so a password is never shown."""
    prefix = ""
    body = uri
    if body.lower().startswith("jdbc:"):
        prefix, body = body[:5], body[5:]
    try:
        parts = urlsplit(body)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, host = netloc.rpartition("@")
            if ":" in userinfo:
                netloc = f"{userinfo.partition(':')[0]}:{HIDDEN}@{host}"
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            if any(key.lower() in _SECRET_PARAMETERS for key, _ in pairs):
                query = urlencode(
                    [(k, HIDDEN if k.lower() in _SECRET_PARAMETERS else v) for k, v in pairs], safe="*"
                )
        if (netloc, query) == (parts.netloc, parts.query):
            return uri  # nothing to hide: as written (urlunsplit would rewrite sqlite:////x)
        return prefix + urlunsplit(parts._replace(netloc=netloc, query=query))
    except ValueError:
        return prefix + re.sub(r":[^/@]*@", f":{HIDDEN}@", body)


def jdbc_postgres(catalog: CatalogUri) -> tuple[str, dict[str, str]]:
    """The JDBC URL Spark's ``JdbcCatalog`` takes for a PostgreSQL catalog URI, and the
    ``jdbc.user`` / ``jdbc.password`` properties its credentials become (Iceberg's
    ``JdbcCatalog`` hands every ``jdbc.``-prefixed property to the driver, without the
    prefix). The credentials leave the URL, so a Spark UI listing the settings shows the URL
    without the password; the host a libpq URI leaves empty (a Unix socket) becomes
    ``localhost``, PgJDBC's default, as JDBC has no sockets."""
    if catalog.kind != POSTGRESQL:
        raise UserError(f"not a PostgreSQL catalog URI: {catalog}")
    body = catalog.uri[len("jdbc:") :] if catalog.uri.lower().startswith("jdbc:") else catalog.uri
    parts = urlsplit(body)
    credentials: dict[str, str] = {}
    if parts.username is not None:
        credentials["jdbc.user"] = unquote(parts.username)
    if parts.password is not None:
        credentials["jdbc.password"] = unquote(parts.password)
    query = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key.lower() in ("user", "password"):
            credentials.setdefault(f"jdbc.{key.lower()}", value)
        else:
            query.append((key, value))
    host = parts.netloc.rpartition("@")[2] or "localhost"
    url = urlunsplit(("postgresql", host, parts.path, urlencode(query), ""))
    return f"jdbc:{url}", credentials
