"""An ``iceduck://`` URL as :func:`iceduck.connect`'s arguments.

The URL follows SQLAlchemy's SQLite URLs, whose path is a file: here the path is the
warehouse, and the query string carries the rest::

    iceduck://                                  the lake of the environment / config file
    iceduck:///warehouse                        ./warehouse (relative: three slashes)
    iceduck:////data/warehouse                  /data/warehouse (absolute: four slashes)
    iceduck:///wh?catalog_uri=sqlite:///wh/cat.db&namespace=sales
    iceduck://?warehouse=s3://bucket/wh&catalog_uri=http://rest:8181&s3.endpoint=http://minio:9000

Query keys that are :func:`iceduck.connect` arguments (:data:`ARGUMENTS`) are passed as such
(``warehouse`` too, for a location URI such as ``s3://...`` that a URL path cannot hold);
every other key is an Iceberg catalog property, named as a Spark job names it
(``s3.endpoint``, ``jdbc.password``...). Values are percent-decoded by SQLAlchemy, so a
catalog URI holding ``?`` or ``&`` is written percent-encoded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from iceduck.errors import UserError

#: query keys that are connect() arguments rather than catalog properties
ARGUMENTS = frozenset(
    {
        "warehouse",
        "catalog",
        "catalog_uri",
        "catalog_type",
        "read_only",
        "namespace",
        "manifest_cache_entries",
    }
)
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def connect_arguments(database: str | None, query: Mapping[str, str | Sequence[str]]) -> dict[str, Any]:
    """Keyword arguments of :func:`iceduck.connect` for a URL's path (``database``) and query."""
    values = {key: _single(key, value) for key, value in query.items()}
    arguments: dict[str, Any] = {k: v for k, v in values.items() if k in ARGUMENTS}
    properties = {k: v for k, v in values.items() if k not in ARGUMENTS}
    if database:
        if "warehouse" in arguments:
            raise UserError(f"the URL names the warehouse twice: as its path {database!r} and as ?warehouse=")
        arguments["warehouse"] = database
    if "read_only" in arguments:
        arguments["read_only"] = _boolean("read_only", arguments["read_only"])
    if "manifest_cache_entries" in arguments:
        arguments["manifest_cache_entries"] = _integer(
            "manifest_cache_entries", arguments["manifest_cache_entries"]
        )
    if properties:
        arguments["properties"] = properties
    return arguments


def _single(key: str, value: str | Sequence[str]) -> str:
    """A key given once; SQLAlchemy hands a repeated key over as a tuple."""
    if isinstance(value, str):
        return value
    raise UserError(f"the URL gives {key!r} more than once: {list(value)!r}")


def _boolean(key: str, value: str) -> bool:
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise UserError(f"?{key}= takes true or false, not {value!r}")


def _integer(key: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise UserError(f"?{key}= takes a whole number, not {value!r}") from None
