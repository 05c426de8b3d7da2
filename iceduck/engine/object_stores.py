"""DuckDB reading table files where they lie: in S3, GCS or ADLS.

The first time a statement hands DuckDB an object-store location (:func:`duck_path`),
the database is given a way to read it, chosen by the property ``iceduck.duckdb-io``
(:func:`iceduck.io.object_store.configure`):

* ``httpfs``: DuckDB's own ``httpfs`` extension (``LOAD``, else ``INSTALL`` + ``LOAD``;
  iceduck turns ``autoinstall_known_extensions`` off, so this is the one place that
  installs it) with a ``SECRET`` made of the same Iceberg properties (:func:`s3_secret_sql`);
* ``fsspec``: fsspec's ``ArrowFSWrapper`` around the pyarrow filesystem
  :mod:`iceduck.io.object_store` builds (:mod:`iceduck.engine.store_filesystem`, imported
  only then), registered with DuckDB's ``register_filesystem`` -- slower than httpfs
  (Python serves every read) but needs no extension, so it works wherever pyarrow does;
* ``auto`` (the default): httpfs for S3 when it loads, fsspec otherwise. A failure to
  load httpfs is remembered for the process, so it is tried once.

httpfs installed already (or from the ``duckdb-extension-httpfs`` wheel) loads offline, without
a word. Otherwise ``INSTALL`` downloads a binary, which is never done silently: a one-line
notice on the ``iceduck`` logger (Python's logging prints a warning to stderr when nothing is
configured) says so. Before it, the extension repository is asked for one answer within
:data:`PROBE_SECONDS` (:func:`repository_unreachable`): DuckDB's own download has no timeout
before httpfs is loaded, so behind a firewall it can hang. Unreachable, ``auto`` falls back to
fsspec and says so, once per process.

Paths go to DuckDB in their canonical scheme (``s3a://`` and ``s3n://`` become ``s3://``):
a registered filesystem answers only to its protocol names, and the file names DuckDB
reports back must compare equal to the locations the manifests hold.

DuckDB writes no object-store files: :mod:`iceduck.engine.write` spools COPY output
locally and uploads the finished files (see there for why).
"""

from __future__ import annotations

import glob
import logging
import os
import threading

import duckdb

from iceduck.engine.connection import Duck
from iceduck.engine.types import quote_string
from iceduck.errors import UnsupportedError, UserError
from iceduck.io import fileio, object_store
from iceduck.io.store_scopes import Scope

#: the property choosing how DuckDB reads object stores
DUCKDB_IO = "iceduck.duckdb-io"
MODES = ("auto", "httpfs", "fsspec")

#: where DuckDB downloads extensions from unless ``custom_extension_repository`` says otherwise
DEFAULT_REPOSITORY = "http://extensions.duckdb.org"
#: how long the extension repository gets to answer before ``auto`` gives up on httpfs
PROBE_SECONDS = 3.0

log = logging.getLogger("iceduck.io")

_lock = threading.Lock()
#: why httpfs did not load in this process (tried once), or None
_httpfs_failure: list[str] = []


def duck_path(con: Duck, location: str) -> str:
    """The path DuckDB reads ``location`` by: the local path of a local file; for an
    object, its canonical location, after making sure the database can read the store."""
    return duck_paths(con, [location])[0]


def duck_location(location: str) -> str:
    """What DuckDB's ``filename`` column shows for ``location`` (no database is prepared)."""
    if object_store.is_object_store(location):
        return object_store.parse(location).uri
    return fileio.to_local_path(location)


def duck_paths(con: Duck, locations: list[str]) -> list[str]:
    """:func:`duck_path` of each location (each store prepared once)."""
    paths: list[str] = []
    prepared: set[str] = set()
    for location in locations:
        if not object_store.is_object_store(location):
            paths.append(fileio.to_local_path(location))
            continue
        parsed = object_store.parse(location)
        if parsed.store not in prepared:
            prepare(con, parsed.store, location)
            prepared.add(parsed.store)
        paths.append(parsed.uri)
    return paths


def prefetch(con: Duck, locations: list[str]) -> None:
    """Fetch what DuckDB will read first of the objects among ``locations``, all at once
    (:func:`iceduck.engine.store_filesystem.prefetch`), when this database reads their store
    through pyarrow: its reads then need no round trip of their own. httpfs keeps its own
    connections and caches, and local files are read where they lie: nothing to do."""
    by_store: dict[str, list[str]] = {}
    for location in locations:  # "://" first: a local table's 20,000 paths cost 1 ms, not 6
        if "://" in location and object_store.is_object_store(location):
            by_store.setdefault(object_store.parse(location).store, []).append(location)
    for store, found in by_store.items():
        duck_paths(con, found[:1])  # the store prepared: httpfs, or a registered filesystem
        from iceduck.engine.store_filesystem import WRAPPERS
        from iceduck.engine.store_filesystem import prefetch as fetch_ahead

        if WRAPPERS[store].protocol[0] in con.list_filesystems():
            fetch_ahead(found)


def mode() -> str:
    value = object_store.properties().get(DUCKDB_IO, "auto").strip().lower()
    if value not in MODES:
        raise UserError(f"property {DUCKDB_IO} must be one of {', '.join(MODES)}, not {value!r}")
    return value


def prepare(con: Duck, store: str, location: str) -> None:
    """Have the database behind cursor ``con`` read ``store`` with the current configuration.

    Filesystems, extensions and secrets belong to the database, shared by its cursors, so
    the check asks DuckDB (a registered filesystem, a secret of the current generation of
    the configuration) rather than remembering cursors.
    """
    chosen = mode()
    with _lock:
        from iceduck.engine.store_filesystem import WRAPPERS  # fsspec: only once a store is read

        wrapper = WRAPPERS[store]
        if wrapper.protocol[0] in con.list_filesystems():
            return
        if store == "s3" and chosen != "fsspec" and (chosen == "httpfs" or not _httpfs_failure):
            if _use_httpfs(con, chosen == "httpfs"):
                return
        con.register_filesystem(wrapper(location))


def _use_httpfs(con: Duck, required: bool) -> bool:
    """Load httpfs and create the S3 secret of the current configuration; False
    (remembered for the process) when httpfs cannot load."""
    object_store.refresh_due()  # renewed credentials make a new generation, so new secrets
    secret = f"iceduck_s3_{object_store.generation()}"
    try:
        current = con.execute("SELECT name FROM duckdb_secrets() WHERE name LIKE 'iceduck_s3_%'").fetchall()
    except duckdb.Error:
        current = []
    if (secret,) in current:
        return True
    try:
        _load_httpfs(con)
    except duckdb.Error as e:
        reason = str(e).splitlines()[0]
        if required:
            raise UnsupportedError(
                f"{DUCKDB_IO}=httpfs, but DuckDB's httpfs extension cannot be loaded: {reason}; "
                f"set {DUCKDB_IO}=fsspec (or auto) to read object stores through pyarrow"
            ) from e
        _httpfs_failure.append(reason)
        log.warning(
            "iceduck: DuckDB's httpfs extension cannot be loaded (%s); reading S3 through "
            "pyarrow (%s=fsspec) in this process",
            reason,
            DUCKDB_IO,
        )
        return False
    for (old,) in current:
        con.execute(f"DROP SECRET IF EXISTS {old}")
    for sql in s3_secrets(object_store.properties(), object_store.scopes(), secret):
        con.execute(sql)
    return True


def s3_secrets(base: dict[str, str], scopes: list[Scope], name: str) -> list[str]:
    """The secrets of the configuration: ``name`` of the base properties, and one per S3
    scope (``name_1``...) with DuckDB's ``SCOPE``, which picks the longest matching scope
    for each path as the scopes' own rule does (:mod:`iceduck.io.store_scopes`)."""
    sqls = [s3_secret_sql(base, name)]
    s3_scopes = [s for s in scopes if object_store.store_of(s.prefix) == "s3"]
    for number, scope in enumerate(sorted(s3_scopes, key=lambda s: s.prefix), start=1):
        sqls.append(s3_secret_sql({**base, **scope.properties}, f"{name}_{number}", scope.prefix))
    return sqls


def _load_httpfs(con: Duck) -> None:
    """``LOAD httpfs``: installed already, else from the ``duckdb-extension-httpfs`` wheel
    when it is installed (it ships the binary for one DuckDB release; no network), else
    ``INSTALL`` from DuckDB's extension repository."""
    try:
        con.execute("LOAD httpfs")
        return
    except duckdb.Error:
        pass
    try:
        import duckdb_extension_httpfs  # type: ignore[import-not-found]

        folder = os.path.join(os.path.dirname(duckdb_extension_httpfs.__file__), "extensions")
        for path in sorted(glob.glob(os.path.join(folder, "*", "httpfs.duckdb_extension"))):
            con.load_extension(path)
            return
    except (ImportError, duckdb.Error):
        pass
    repository = _repository(con)
    why = repository_unreachable(repository, PROBE_SECONDS)
    if why is not None:
        raise duckdb.IOException(f"not installed, and its repository {repository} cannot be reached: {why}")
    log.warning(
        "iceduck: installing DuckDB's httpfs extension from %s (once per machine; %s=fsspec avoids it)",
        repository,
        DUCKDB_IO,
    )
    con.execute("INSTALL httpfs")
    con.execute("LOAD httpfs")


def _repository(con: Duck) -> str:
    """The extension repository ``INSTALL`` downloads from (DuckDB's setting, else its default)."""
    try:
        # fetchall, not fetchone: DuckDB refuses more work on a connection with an unfinished result
        rows = con.execute("SELECT current_setting('custom_extension_repository')").fetchall()
    except duckdb.Error:
        rows = []
    return str(rows[0][0]).rstrip("/") if rows and rows[0][0] else DEFAULT_REPOSITORY


def repository_unreachable(repository: str, seconds: float) -> str | None:
    """Why ``repository`` gives no HTTP answer within ``seconds`` (refused, timed out, no
    route), or None when it answers at all: any status will do, the question being only
    whether ``INSTALL`` would hang or fail for want of a network. A local folder as the
    repository needs no network."""
    if "://" not in repository or repository.startswith("file://"):
        return None
    import urllib.error  # here: http.client loads ssl, which a local query never needs
    import urllib.request

    try:
        with urllib.request.urlopen(urllib.request.Request(repository + "/", method="HEAD"), timeout=seconds):
            return None
    except urllib.error.HTTPError:
        return None  # it answered
    except (OSError, ValueError) as e:
        reason = getattr(e, "reason", None) or e
        return str(reason) or type(reason).__name__


def s3_secret_sql(props: dict[str, str], name: str = "iceduck_s3", scope: str | None = None) -> str:
    """``CREATE OR REPLACE SECRET`` of DuckDB's httpfs from Iceberg's S3 properties (for the
    paths under ``scope`` only, when given).

    Absent credentials leave DuckDB's ``credential_chain`` provider (environment, profiles,
    instance metadata) in charge, as pyarrow's chain is for the fsspec path.
    """
    fields: list[tuple[str, str]] = []
    for prop, key in (
        ("s3.access-key-id", "KEY_ID"),
        ("s3.secret-access-key", "SECRET"),
        ("s3.session-token", "SESSION_TOKEN"),
    ):
        if props.get(prop):
            fields.append((key, quote_string(props[prop])))
    region = props.get("client.region") or props.get("s3.region")
    if region:
        fields.append(("REGION", quote_string(region)))
    endpoint = props.get("s3.endpoint")
    if endpoint:
        scheme, _, host = endpoint.rpartition("://")
        fields.append(("ENDPOINT", quote_string(host.rstrip("/"))))
        fields.append(("USE_SSL", "false" if scheme == "http" else "true"))
    path_style = props.get("s3.path-style-access", "").strip().lower()
    if path_style == "true" or (not path_style and endpoint):
        fields.append(("URL_STYLE", "'path'"))
    elif path_style == "false":
        fields.append(("URL_STYLE", "'vhost'"))
    provider = [] if props.get("s3.access-key-id") else [("PROVIDER", "credential_chain")]
    if scope is not None:
        fields.append(("SCOPE", quote_string(scope)))
    body = ", ".join(f"{k} {v}" for k, v in [("TYPE", "s3"), *provider, *fields])
    return f"CREATE OR REPLACE SECRET {name} ({body})"
