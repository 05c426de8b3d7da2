"""Object stores: from Iceberg's catalog properties to a pyarrow FileSystem per scheme.

Table files may live at ``s3://`` (``s3a://`` and ``s3n://`` are Hadoop's names for the
same S3, as Iceberg Java's ``S3FileIO`` accepts them), ``gs://`` and ``abfs://`` /
``abfss://`` (ADLS Gen2, ``container@account.dfs.core.windows.net``) locations.

Properties carry the names Iceberg Java and PyIceberg give them, so one catalog
configuration serves Spark, PyIceberg and iceduck alike:

* S3 (Java's ``S3FileIOProperties`` / ``AwsClientProperties``): ``s3.endpoint``,
  ``s3.path-style-access``, ``s3.access-key-id``, ``s3.secret-access-key``,
  ``s3.session-token``, ``client.region`` (PyIceberg's ``s3.region`` too),
  ``s3.retry.num-retries``; PyIceberg's ``s3.connect-timeout`` / ``s3.request-timeout``
  (seconds), ``s3.anonymous``, ``s3.force-virtual-addressing``, ``s3.proxy-uri``,
  ``s3.role-arn`` / ``s3.role-session-name`` (Java's ``client.assume-role.arn``);
* GCS (Java's ``GCPProperties``): ``gcs.project-id``, ``gcs.oauth2.token`` with
  ``gcs.oauth2.token-expires-at`` (epoch milliseconds), ``gcs.service.host``,
  ``gcs.no-auth``, ``gcs.default-location`` (and iceduck's
  ``iceduck.gcs.retry-time-limit-seconds``, 30 by default);
* ADLS (Java's ``AzureProperties``, PyIceberg's ``adls.*``): ``adls.account-name`` /
  ``adls.auth.shared-key.account.name``, ``adls.account-key`` /
  ``adls.auth.shared-key.account.key``, ``adls.sas-token.<account>`` / ``adls.sas-token``,
  ``adls.connection-string.<account>`` / ``adls.connection-string``, ``adls.tenant-id``,
  ``adls.client-id``, ``adls.client-secret``, ``adls.blob-storage-authority`` /
  ``adls.dfs-storage-authority`` and their ``-scheme``.

Where a property is absent pyarrow's standard chains apply: for S3 the ``AWS_*``
environment variables, ``~/.aws`` profiles and the instance metadata service; for GCS
``GOOGLE_APPLICATION_CREDENTIALS``; for ADLS ``DefaultAzureCredential``.

The process has one base configuration: :func:`configure` sets it (a connection calls it
when it opens; later calls merge, a key given again replaces its value). Over it lie
scopes (:mod:`iceduck.io.store_scopes`): the properties of one location prefix, as a REST
catalog vends them for a table (:func:`configure_scope`), or as a connection gives them for
its warehouse. Each file operation takes the filesystem of the longest scope its location
starts with (:func:`filesystem`), so two tables in two buckets with two sets of keys are
read side by side in one process, and credentials about to expire are renewed first. A
scope registered for an owner (a connection's REST catalog) is removed when that owner is
released (:func:`release`), leaving the scope another owner holds on the same prefix.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from iceduck.errors import NotFoundError, UserError
from iceduck.io.object_errors import object_error
from iceduck.io.store_options import adls_options, gcs_options, s3_options
from iceduck.io.store_scopes import Refresher, Scope, ScopeOwner, longest

# pyarrow.fs is imported when a filesystem is built: a local warehouse never needs it
if TYPE_CHECKING:
    import pyarrow.fs as pafs

#: the location schemes of each store (``s3a``/``s3n``: Hadoop's names of the same S3)
STORES: dict[str, str] = {
    "s3": "s3",
    "s3a": "s3",
    "s3n": "s3",
    "gs": "gs",
    "gcs": "gs",
    "abfs": "abfs",
    "abfss": "abfs",
}

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+)://")

_lock = threading.RLock()
_properties: dict[str, str] = {}
#: the scoped properties, by canonical prefix: one per owner, the last registered in effect
_scopes: dict[str, list[Scope]] = {}
#: built filesystems, by (store, ADLS account, the prefix of the scope they serve or "")
_filesystems: dict[tuple[str, str, str], pafs.FileSystem] = {}
#: bumped by each change of the configuration, so holders of a filesystem (DuckDB's) see it
_generation = 0
#: one refresh at a time: two threads finding a scope due renew it once
_refreshing = threading.Lock()


def now_ms() -> int:
    """The clock expiries are compared with (epoch milliseconds); tests replace it."""
    return int(time.time() * 1000)


def configure(properties: Mapping[str, str], *, replace: bool = False) -> None:
    """Merge ``properties`` into the process's base object-store configuration
    (``replace``: drop the earlier properties, and every scope, first).

    Keys given replace their earlier values; filesystems built from the old values are
    dropped, so the next file operation uses the new ones.
    """
    global _generation
    with _lock:
        if replace:
            _properties.clear()
            _scopes.clear()
        _properties.update({str(k): str(v) for k, v in properties.items()})
        _filesystems.clear()
        _generation += 1


def configure_scope(
    prefix: str,
    properties: Mapping[str, str],
    refresh: Refresher | None = None,
    owner: ScopeOwner | None = None,
) -> None:
    """Make ``properties`` apply, over the base configuration, to every location under
    ``prefix`` (``s3a://b/p`` and ``s3://b/p`` are one prefix); ``refresh`` renews them
    when they are about to expire. The scope is ``owner``'s (None: the process's), in
    place of what the owner had there, and in effect until :func:`release` of the owner
    (then the scope another owner registered on the prefix is again). An unchanged scope
    costs nothing (a table loaded again with the same credentials keeps its filesystem)."""
    global _generation
    canonical = same_location(prefix) if is_object_store(prefix) else prefix
    scope = Scope(canonical, {str(k): str(v) for k, v in properties.items()}, refresh, owner)
    with _lock:
        entries = _scopes.setdefault(canonical, [])
        current = entries[-1] if entries else None
        if current is not None and current.owner is owner and current.properties == scope.properties:
            if refresh is not None and current.refresh is None:
                entries[-1] = scope
            return
        entries[:] = [s for s in entries if s.owner is not owner]
        entries.append(scope)
        if current is None or current.properties != scope.properties:
            _drop_filesystems(canonical)
            _generation += 1


def release(owner: ScopeOwner) -> None:
    """Remove every scope ``owner`` registered (its connection closed); on a prefix another
    owner also scoped, that owner's scope is in effect again."""
    global _generation
    with _lock:
        changed = False
        for prefix in list(_scopes):
            entries = _scopes[prefix]
            kept = [s for s in entries if s.owner is not owner]
            if len(kept) == len(entries):
                continue
            if kept:
                _scopes[prefix] = kept
            else:
                del _scopes[prefix]
            if not kept or kept[-1].properties != entries[-1].properties:
                _drop_filesystems(prefix)
                changed = True
        if changed:
            _generation += 1


def _drop_filesystems(prefix: str) -> None:
    """Forget the filesystems built for the scope of ``prefix`` (under :data:`_lock`)."""
    for key in [k for k in _filesystems if k[2] == prefix]:
        del _filesystems[key]


def _in_effect() -> list[Scope]:
    """The scope in effect on each prefix (under :data:`_lock`)."""
    return [entries[-1] for entries in _scopes.values()]


def properties() -> dict[str, str]:
    """A copy of the process's base object-store properties."""
    with _lock:
        return dict(_properties)


def properties_for(location: str) -> dict[str, str]:
    """The properties that apply to ``location``: the base, under the longest scope it
    starts with (renewed first when it is about to expire)."""
    scope = _scope_of(location)
    with _lock:
        return {**_properties, **(scope.properties if scope else {})}


def scopes() -> list[Scope]:
    """The scopes in effect, after renewing the ones about to expire (DuckDB's secrets
    are made of them)."""
    refresh_due()
    with _lock:
        return _in_effect()


def refresh_due() -> None:
    """Renew every scope whose credentials expire within the margin."""
    with _lock:
        due = [s for s in _in_effect() if s.due(now_ms())]
    for scope in due:
        _renew(scope)


def generation() -> int:
    """How many times the configuration changed (DuckDB re-registers its filesystem then)."""
    return _generation


def _scope_of(location: str) -> Scope | None:
    canonical = same_location(location) if is_object_store(location) else location
    with _lock:
        scope = longest(_in_effect(), canonical)
    if scope is not None and scope.due(now_ms()):
        _renew(scope)
        with _lock:
            scope = longest(_in_effect(), canonical)
    return scope


def _renew(scope: Scope) -> None:
    """Ask ``scope``'s catalog for new credentials and put them in place."""
    assert scope.refresh is not None
    with _refreshing:
        with _lock:
            entries = _scopes.get(scope.prefix)
            if not entries or entries[-1] is not scope:  # renewed (or released) meanwhile
                return
        fresh = scope.refresh()
        for prefix, values in fresh.items():
            configure_scope(prefix, values, scope.refresh, scope.owner)


def store_of(location: str) -> str | None:
    """``s3``, ``gs`` or ``abfs`` for an object-store location, None for a local one."""
    match = _SCHEME.match(location)
    return STORES.get(match.group(1).lower()) if match else None


def is_object_store(location: str) -> bool:
    """Whether ``location`` names an object in S3, GCS or ADLS (not a local file)."""
    return store_of(location) is not None


@dataclass(frozen=True)
class ObjectLocation:
    #: ``s3``, ``gs`` or ``abfs``
    store: str
    #: the bucket (S3, GCS) or ``container`` (ADLS)
    bucket: str
    #: the object key, without a leading ``/`` ("" for the bucket itself)
    key: str
    #: the ADLS storage account ("" elsewhere)
    account: str = ""

    @property
    def path(self) -> str:
        """The path pyarrow's filesystem of the store takes: ``bucket/key``."""
        return f"{self.bucket}/{self.key}" if self.key else self.bucket

    @property
    def uri(self) -> str:
        """The canonical location: ``s3a://b/k`` and ``s3n://b/k`` are ``s3://b/k``."""
        if self.store == "abfs":
            return f"abfss://{self.bucket}@{self.account}.dfs.core.windows.net/{self.key}"
        return f"{self.store}://{self.path}"


def parse(location: str) -> ObjectLocation:
    """The parts of an object-store location; a malformed one raises :class:`UserError`."""
    store = store_of(location)
    if store is None:
        raise UserError(f"not an object-store location: {location}")
    rest = location.split("://", 1)[1]
    authority, _, key = rest.partition("/")
    while key.startswith("/"):
        key = key[1:]
    if store == "abfs":
        container, at, host = authority.partition("@")
        if not at or not container or not host:
            raise UserError(
                f"{location}: an ADLS location is abfss://<container>@<account>.dfs.core.windows.net/<path>"
            )
        return ObjectLocation(store, container, key, host.split(".", 1)[0])
    if not authority:
        raise UserError(f"{location}: the location names no bucket ({store}://<bucket>/<key>)")
    return ObjectLocation(store, authority, key)


def same_location(location: str) -> str:
    """The form in which two names of one object compare equal (``s3a://`` = ``s3://``)."""
    return parse(location).uri if is_object_store(location) else location


def filesystem(location: str) -> tuple[pafs.FileSystem, ObjectLocation]:
    """The pyarrow filesystem serving ``location`` and the location's parts."""
    parsed = parse(location)
    scope = _scope_of(location)
    key = (parsed.store, parsed.account, scope.prefix if scope else "")
    with _lock:
        fs = _filesystems.get(key)
        if fs is None:
            fs = _build(parsed, {**_properties, **(scope.properties if scope else {})})
            _filesystems[key] = fs
    return fs, parsed


def check_reachable(location: str) -> None:
    """Raise one clear iceduck error when the bucket or prefix of ``location`` cannot be
    used: a missing bucket, wrong credentials, an unreachable endpoint, a path-style
    mismatch. A connection calls it when it opens a warehouse in object storage, so a bad
    configuration fails there rather than at the first query.
    """
    import pyarrow.fs as pafs

    fs, parsed = filesystem(location)
    try:
        bucket = fs.get_file_info(parsed.bucket)  # S3 HeadBucket
        if bucket.type == pafs.FileType.NotFound:
            raise NotFoundError(
                f"{location}: bucket {parsed.bucket!r} does not exist: create it or fix the location"
            )
        fs.get_file_info(parsed.path)  # a HEAD and a one-key listing of the prefix
    except OSError as e:
        if parsed.store == "s3" and "ACCESS_DENIED" in str(e):
            # S3 answers a HEAD without a body ("403, no response body"): a listing's
            # answer names the cause (an unknown key, a wrong secret)
            try:
                fs.get_file_info(pafs.FileSelector(parsed.path, allow_not_found=True))
            except OSError as listing:
                raise object_error(listing, location, parsed.bucket) from e
        raise object_error(e, location, parsed.bucket) from e


def _build(parsed: ObjectLocation, props: dict[str, str]) -> pafs.FileSystem:
    import pyarrow.fs as pafs

    try:
        if parsed.store == "s3":
            return pafs.S3FileSystem(**s3_options(props))
        if parsed.store == "gs":
            return pafs.GcsFileSystem(**gcs_options(props))
        return pafs.AzureFileSystem(**adls_options(parsed.account, props))
    except (ValueError, TypeError, OSError) as e:  # pyarrow refusing the options
        raise UserError(f"the {parsed.store} object-store properties are not valid: {e}") from e
