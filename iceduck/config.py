"""Which lake to open: the call's own arguments, else the environment, else the config file.

A laptop user who queries the team's lake every day types nothing each time: the catalog
URI, the warehouse location and the storage properties sit in ``~/.iceduck/config.toml``
(another file with ``$ICEDUCK_CONFIG``; an empty ``ICEDUCK_CONFIG`` reads none)::

    [catalog]
    uri = "postgresql://analyst@pg.internal:5432/lake"
    warehouse = "s3://lake/warehouse"
    name = "iceduck"                # the catalog name Spark's jobs use (its rows are per name)
    # type = "sql"                  # or "hadoop" (a local folder only)

    [properties]                    # Iceberg catalog properties, named as Spark's jobs set them
    "s3.endpoint" = "http://minio.internal:9000"
    "s3.path-style-access" = "true"

or in the environment, which wins over the file field by field: ``ICEDUCK_CATALOG_URI``,
``ICEDUCK_WAREHOUSE``, ``ICEDUCK_CATALOG_NAME``, and one variable per property in PyIceberg's
spelling (``PYICEBERG_CATALOG__<name>__S3__ENDPOINT``) without the catalog name:
``ICEDUCK_PROPERTY__S3__ENDPOINT`` is ``s3.endpoint`` -- ``__`` is a dot, ``_`` a dash, the
key in lower case (``ICEDUCK_PROPERTY__S3__PATH_STYLE_ACCESS`` is ``s3.path-style-access``).

The rule. A call that names a lake -- a warehouse or a catalog URI, in ``iceduck.connect``
or on the command line -- opens exactly that lake with exactly its own name and properties:
nothing is read from the environment or the file, so a script or a test means the same on
every machine (and a local folder is never paired with the team's catalog by accident). A
call that names neither opens the lake of the environment and the file, the call's catalog
name, type and properties still winning over theirs field by field; with no lake there
either, ``./warehouse``, as always.

Secrets (a catalog password, an S3 secret key, ...) are never shown: :func:`redacted_properties`
hides them wherever a lake is printed.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from iceduck.errors import UserError

CONFIG_ENV = "ICEDUCK_CONFIG"
URI_ENV = "ICEDUCK_CATALOG_URI"
WAREHOUSE_ENV = "ICEDUCK_WAREHOUSE"
NAME_ENV = "ICEDUCK_CATALOG_NAME"
PROPERTY_ENV_PREFIX = "ICEDUCK_PROPERTY__"
DEFAULT_CONFIG = Path("~/.iceduck/config.toml")
DEFAULT_WAREHOUSE = "warehouse"
DEFAULT_CATALOG = "iceduck"
CATALOG_TYPES = ("sql", "hadoop", "glue")

#: the keys of the file's ``[catalog]`` table
CATALOG_KEYS = ("uri", "warehouse", "name", "type")
#: what a property name containing one of these is: a secret, never shown (Iceberg's
#: ``s3.secret-access-key``, ``s3.session-token``, ``jdbc.password``, ``adls.account-key``,
#: ``adls.sas-token.<account>``, ``adls.connection-string.<account>``, ``gcs.oauth2.token``...)
SECRET_WORDS = ("secret", "password", "token", "key", "credential", "connection-string")
#: the one key name containing a secret word that is not a secret
_NOT_SECRET = frozenset({"s3.access-key-id"})
HIDDEN = "***"


@dataclass(frozen=True)
class Lake:
    """Where a connection goes: the warehouse (a folder or a location URI; ``None`` only for
    a REST catalog, whose server owns the locations), the catalog URI (``None``:
    ``<warehouse>/catalog.db``, or the folder itself for ``hadoop``), the catalog's name and
    type, and the Iceberg catalog properties. ``repr`` hides secrets."""

    warehouse: str | Path | None
    catalog_uri: str | None = None
    name: str = DEFAULT_CATALOG
    catalog_type: str = "sql"
    properties: Mapping[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        from iceduck.catalog.uri import redact

        uri = None if self.catalog_uri is None else redact(self.catalog_uri)
        return (
            f"Lake(warehouse={str(self.warehouse)!r}, catalog_uri={uri!r}, name={self.name!r}, "
            f"catalog_type={self.catalog_type!r}, properties={redacted_properties(self.properties)!r})"
        )


def is_secret(key: str) -> bool:
    """Whether property ``key`` holds a secret (see :data:`SECRET_WORDS`)."""
    lower = key.lower()
    return lower not in _NOT_SECRET and any(word in lower for word in SECRET_WORDS)


def redacted_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """``properties`` with the value of every secret replaced by ``***``."""
    return {k: HIDDEN if is_secret(k) else v for k, v in properties.items()}


def resolve_lake(
    warehouse: str | Path | None = None,
    catalog_uri: str | None = None,
    name: str | None = None,
    catalog_type: str | None = None,
    properties: Mapping[str, str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    config_file: str | Path | None = None,
) -> Lake:
    """The lake a call opens, by the rule of the module docstring. ``environ`` is
    ``os.environ`` unless given; ``config_file`` a file to read instead of
    ``$ICEDUCK_CONFIG`` / ``~/.iceduck/config.toml`` (it must exist)."""
    explicit = _properties(properties, "the properties argument")
    if warehouse is not None or catalog_uri is not None:
        return _lake(warehouse, catalog_uri, name, catalog_type, explicit, "the call")
    env = os.environ if environ is None else environ
    path = _config_path(env, config_file)
    base: dict[str, str] = {}
    props: dict[str, str] = {}
    if path is not None:
        base, props = read_config(path)
    for key, variable in (("uri", URI_ENV), ("warehouse", WAREHOUSE_ENV), ("name", NAME_ENV)):
        if env.get(variable):
            base[key] = env[variable]
    props.update(environment_properties(env))
    props.update(explicit)
    return _lake(
        base.get("warehouse"),
        base.get("uri"),
        name if name is not None else base.get("name"),
        catalog_type if catalog_type is not None else base.get("type"),
        props,
        f"the configuration ({path})" if path is not None else "the environment",
    )


def _lake(
    warehouse: str | Path | None,
    catalog_uri: str | None,
    name: str | None,
    catalog_type: str | None,
    properties: dict[str, str],
    source: str,
) -> Lake:
    kind = catalog_type or "sql"
    if kind not in CATALOG_TYPES:
        raise UserError(f"unknown catalog type {kind!r} in {source}: use 'sql', 'hadoop' or 'glue'")
    if catalog_uri is not None and not isinstance(catalog_uri, str):
        raise UserError(f"a catalog URI is a string, not {type(catalog_uri).__name__} ({source})")
    if catalog_uri is not None and kind == "hadoop":
        raise UserError(
            f"a Hadoop catalog is the warehouse folder itself: it takes no catalog URI ({source})"
        )
    # a REST catalog's server owns the locations: it needs no warehouse
    if warehouse is None and not (catalog_uri is not None and _is_rest(catalog_uri)):
        if catalog_uri is not None or kind == "glue":
            # Java's JdbcCatalog.initialize refuses a missing warehouse too
            raise UserError(
                f"a catalog URI needs a warehouse location beside it, where new tables go ({source}): "
                "give warehouse='s3://bucket/path' or a folder"
            )
        warehouse = DEFAULT_WAREHOUSE
    if warehouse is not None and (not isinstance(warehouse, str | Path) or not str(warehouse).strip()):
        raise UserError(f"the warehouse must be a folder or a location URI, not {warehouse!r} ({source})")
    if name is not None and (not isinstance(name, str) or not name):
        raise UserError(f"a catalog name must be a non-empty string, not {name!r} ({source})")
    return Lake(warehouse, catalog_uri, name or DEFAULT_CATALOG, kind, properties)


def _is_rest(catalog_uri: str) -> bool:
    """Whether ``catalog_uri`` names a REST catalog (``http(s)://``)."""
    return catalog_uri.strip().lower().startswith(("http://", "https://"))


def _config_path(env: Mapping[str, str], given: str | Path | None) -> Path | None:
    """The config file to read: ``given``, else ``$ICEDUCK_CONFIG`` (empty: none), both of
    which must exist; else ``~/.iceduck/config.toml`` when it exists."""
    if given is not None:
        named, why = Path(given).expanduser(), "the config file"
    elif CONFIG_ENV in env:
        if not env[CONFIG_ENV]:
            return None
        named, why = Path(env[CONFIG_ENV]).expanduser(), f"the config file ${CONFIG_ENV} names"
    else:
        default = DEFAULT_CONFIG.expanduser()
        return default if default.is_file() else None
    if not named.is_file():
        raise UserError(f"{why} does not exist: {named}")
    return named


def read_config(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The ``[catalog]`` keys and the ``[properties]`` of config file ``path``; a
    :class:`UserError` naming the file and the key for anything else."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise UserError(f"cannot read config file {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise UserError(f"config file {path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"config file {path} is not valid TOML: {e}") from None
    for key in data:
        if key not in ("catalog", "properties"):
            raise UserError(f"config file {path}: unknown key {key!r} (known: [catalog], [properties])")
    catalog = _table(data.get("catalog", {}), path, "catalog")
    for key, value in catalog.items():
        if key not in CATALOG_KEYS:
            raise UserError(
                f"config file {path}: unknown key 'catalog.{key}' (known: {', '.join(CATALOG_KEYS)})"
            )
        if not isinstance(value, str):
            raise UserError(f"config file {path}: 'catalog.{key}' must be a string, not {value!r}")
    properties = _table(data.get("properties", {}), path, "properties")
    return {k: str(v) for k, v in catalog.items()}, _properties(properties, f"config file {path}")


def _table(value: object, path: Path, key: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise UserError(f"config file {path}: {key!r} must be a table ([{key}]), not {value!r}")
    return value


def _properties(properties: Mapping[str, object] | None, source: str) -> dict[str, str]:
    """Properties as strings, as Spark's settings carry them: a TOML ``true`` or ``9000`` is
    accepted as ``"true"`` / ``"9000"``; a table or a list is an error naming the key."""
    if properties is None:
        return {}
    if not isinstance(properties, Mapping):
        raise UserError(f"properties are a mapping of names to values, not {type(properties).__name__}")
    out: dict[str, str] = {}
    for key, value in properties.items():
        if not isinstance(key, str) or not key:
            raise UserError(f"{source}: a property name must be a non-empty string, not {key!r}")
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, str | int | float):
            out[key] = str(value)
        else:
            shown = HIDDEN if is_secret(key) else repr(value)
            raise UserError(f"{source}: property {key!r} must be a string, not {shown}")
    return out


def environment_properties(env: Mapping[str, str]) -> dict[str, str]:
    """The ``ICEDUCK_PROPERTY__...`` variables as Iceberg property names (``__`` -> ``.``,
    ``_`` -> ``-``, lower case), PyIceberg's convention for its ``PYICEBERG_CATALOG__`` ones."""
    out = {}
    for variable, value in env.items():
        if variable.upper().startswith(PROPERTY_ENV_PREFIX) and len(variable) > len(PROPERTY_ENV_PREFIX):
            key = variable[len(PROPERTY_ENV_PREFIX) :].lower().replace("__", ".").replace("_", "-")
            out[key] = value
    return out
