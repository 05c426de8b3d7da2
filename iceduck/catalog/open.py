"""Opening a lake: the warehouse location, its object store, and the catalog a URI names.

* No catalog URI: the embedded default, ``<warehouse>/catalog.db`` (SQLite), or for
  ``catalog_type="hadoop"`` the warehouse folder itself. Both need a local warehouse: a
  SQLite file cannot live in a bucket, and Java's ``HadoopCatalog`` refuses object stores
  (its commits rename files, which no object store does atomically).
* ``postgresql://``, ``postgres://``, ``jdbc:postgresql://``: Iceberg's JDBC catalog in
  PostgreSQL (:class:`iceduck.catalog.postgres.PostgresCatalog`).
* ``sqlite:///...``, ``jdbc:sqlite:...``: the same layout in a SQLite file anywhere.
* ``glue://`` (``glue://<catalog-id>``), or the catalog type or property ``type`` = ``glue``:
  the AWS Glue Data Catalog (:class:`iceduck.catalog.glue.GlueCatalog`), configured by the
  same properties as Java's and PyIceberg's ``GlueCatalog`` (``glue.region``, ...).
* ``http(s)://``: an Iceberg REST catalog (:class:`iceduck.catalog.rest_client.catalog.RestCatalog`).
  The server owns the locations, so no warehouse is needed; one given is sent as the
  ``warehouse`` property (the config request's ``warehouse`` parameter: "Warehouse location
  or identifier to request from the service"), and it may be a name rather than a location.
* ``thrift://host:port``: a Hive Metastore (:class:`iceduck.catalog.hive.HiveCatalog`); the
  warehouse is where new databases go (``<warehouse>/<db>.db``, as Java's ``HiveCatalog``).

A warehouse in object storage (``s3://``, ``gs://``, ``abfss://``...) has its store
configured from the catalog properties (Iceberg's names: ``s3.endpoint``,
``s3.access-key-id``...) and checked before the catalog opens, so a wrong bucket, credential
or endpoint is one clear error when connecting rather than at the first query.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from iceduck.catalog import jdbc_catalog
from iceduck.catalog.base import Catalog
from iceduck.catalog.uri import GLUE, HIVE, POSTGRESQL, REST, SQLITE, glue_catalog_id, parse_catalog_uri
from iceduck.errors import UnsupportedError, UserError
from iceduck.io.fileio import to_local_path

#: ``scheme://``: a location that is not a local path (``file:`` locations aside)
_REMOTE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


def is_remote(location: str) -> bool:
    """Whether ``location`` is a URI of another store than the local disk."""
    return bool(_REMOTE.match(location)) and not location.lower().startswith("file:")


def warehouse_location(warehouse: str | Path) -> str:
    """The warehouse as the catalog records it: a local folder as an absolute path (``~``
    expanded; ``file:/a/b`` read as ``/a/b``), so table locations do not depend on the
    current folder; any other location URI as written, without a trailing ``/``."""
    text = str(warehouse).strip()
    if is_remote(text):
        return text.rstrip("/") if text.rstrip("/").partition("://")[2] else text
    return jdbc_catalog.warehouse_location(Path(to_local_path(text)).expanduser())


def lake_warehouse(warehouse: str | Path | None, catalog_uri: str | None) -> str:
    """The warehouse as a session shows and records it: :func:`warehouse_location`, except
    for a REST catalog, whose warehouse is an identifier the server interprets (as given;
    empty when none was)."""
    if catalog_uri is not None and parse_catalog_uri(catalog_uri).kind == REST:
        return "" if warehouse is None else str(warehouse).strip()
    return warehouse_location("warehouse" if warehouse is None else warehouse)


def prepare_store(warehouse: str, properties: Mapping[str, str]) -> None:
    """Hand the properties to the object stores (for a warehouse in one, also as the scope of
    the warehouse's locations) and check that such a warehouse is reachable: a warehouse of a
    scheme no store serves is an :class:`UnsupportedError`."""
    # here, not at the top: pyarrow's filesystems load only for a lake that uses them
    from iceduck.io import object_store

    if not is_remote(warehouse):
        if properties:  # a table may still be located in a bucket (CREATE TABLE ... LOCATION)
            object_store.configure(properties)
        return
    if not object_store.is_object_store(warehouse):
        raise UnsupportedError(
            f"warehouse {warehouse}: its scheme is not supported; use a local folder or an "
            "object store location (s3://, s3a://, gs://, abfss://...)"
        )
    object_store.configure(properties)
    # the warehouse's own scope: another connection of the process, on another warehouse
    # with other keys, neither takes nor replaces this one's
    object_store.configure_scope(warehouse.rstrip("/") + "/", properties)
    object_store.check_reachable(warehouse)


def open_catalog(
    warehouse: str | Path | None,
    name: str,
    kind: str = "sql",
    read_only: bool = False,
    *,
    catalog_uri: str | None = None,
    properties: Mapping[str, str] | None = None,
) -> Catalog:
    """The catalog of a lake (see the module docstring), its store prepared first."""
    props = dict(properties or {})
    parsed = parse_catalog_uri(catalog_uri) if catalog_uri is not None else None
    if parsed is None and GLUE in (kind, props.get("type")):
        parsed, kind = parse_catalog_uri("glue://"), "sql"
    if kind not in ("sql", "hadoop"):
        raise UserError(f"unknown catalog type {kind!r}: use 'sql', 'hadoop' or 'glue'")
    if parsed is not None and kind == "hadoop":
        raise UserError("a Hadoop catalog is the warehouse folder itself: it takes no catalog URI")
    if parsed is not None and parsed.kind == REST:
        from iceduck.catalog.rest_client.catalog import RestCatalog

        given = lake_warehouse(warehouse, parsed.uri)
        if given:
            props.setdefault("warehouse", given)
        return RestCatalog(parsed.uri, name, props, read_only=read_only)
    location = warehouse_location("warehouse" if warehouse is None else warehouse)
    if parsed is None and kind == "sql" and is_remote(location):
        raise UserError(
            f"warehouse {location} is not a local folder: the embedded SQLite catalog.db cannot "
            "live in object storage; name the team's catalog with a catalog URI "
            "(postgresql://user@host/db, or sqlite:///path/catalog.db for a local file)"
        )
    prepare_store(location, props)
    if parsed is None:
        if kind == "hadoop":
            from iceduck.catalog.filesystem import HadoopCatalog

            return HadoopCatalog(location, name, read_only=read_only)
        from iceduck.catalog.sqlite import SqliteCatalog

        return SqliteCatalog(location, name, read_only=read_only)
    if parsed.kind == GLUE:
        from iceduck.catalog.glue import GlueCatalog

        catalog_id = glue_catalog_id(parsed)
        if catalog_id is not None:
            props["glue.id"] = catalog_id
        return GlueCatalog(name, location, props, read_only=read_only)
    if parsed.kind == SQLITE:
        from iceduck.catalog.sqlite import SqliteCatalog

        assert parsed.db_path is not None
        db_path = parsed.db_path.expanduser().absolute()
        return SqliteCatalog(location, name, db_path=db_path, read_only=read_only)
    if parsed.kind == HIVE:
        from iceduck.catalog.hive import HiveCatalog

        return HiveCatalog(parsed.uri, location, name, properties=props, read_only=read_only)
    assert parsed.kind == POSTGRESQL
    from iceduck.catalog.postgres import PostgresCatalog

    return PostgresCatalog(parsed.uri, location, name, properties=props, read_only=read_only)
