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

One process has one configuration per scheme: :func:`configure` sets it (a connection
calls it when it opens; later calls merge, a key given again replaces its value), and
every connection in the process shares it. Two connections needing different
credentials for the same scheme must run in different processes.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import pyarrow.fs as pafs

from iceduck.errors import NotFoundError, UserError
from iceduck.io.object_errors import object_error

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

#: how long Google's client retries a failing GCS request (seconds; iceduck's own property)
GCS_RETRY_LIMIT = "iceduck.gcs.retry-time-limit-seconds"

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+)://")

_lock = threading.Lock()
_properties: dict[str, str] = {}
_filesystems: dict[tuple[str, str], pafs.FileSystem] = {}
#: bumped by each :func:`configure`, so holders of a filesystem (DuckDB's) see a change
_generation = 0


def configure(properties: Mapping[str, str], *, replace: bool = False) -> None:
    """Merge ``properties`` into the process's object-store configuration (``replace``:
    drop the earlier properties first).

    Keys given replace their earlier values; filesystems built from the old values are
    dropped, so the next file operation uses the new ones. One process has one
    configuration per scheme, shared by all its connections.
    """
    global _generation
    with _lock:
        if replace:
            _properties.clear()
        _properties.update({str(k): str(v) for k, v in properties.items()})
        _filesystems.clear()
        _generation += 1


def properties() -> dict[str, str]:
    """A copy of the process's object-store properties."""
    with _lock:
        return dict(_properties)


def generation() -> int:
    """How many times the configuration changed (DuckDB re-registers its filesystem then)."""
    return _generation


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
    key = (parsed.store, parsed.account)
    with _lock:
        fs = _filesystems.get(key)
        if fs is None:
            fs = _build(parsed, dict(_properties))
            _filesystems[key] = fs
    return fs, parsed


def check_reachable(location: str) -> None:
    """Raise one clear iceduck error when the bucket or prefix of ``location`` cannot be
    used: a missing bucket, wrong credentials, an unreachable endpoint, a path-style
    mismatch. A connection calls it when it opens a warehouse in object storage, so a bad
    configuration fails there rather than at the first query.
    """
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
    try:
        if parsed.store == "s3":
            return pafs.S3FileSystem(**s3_options(props))
        if parsed.store == "gs":
            return pafs.GcsFileSystem(**gcs_options(props))
        return pafs.AzureFileSystem(**adls_options(parsed.account, props))
    except (ValueError, TypeError, OSError) as e:  # pyarrow refusing the options
        raise UserError(f"the {parsed.store} object-store properties are not valid: {e}") from e


# -- properties -> pyarrow options ------------------------------------------------------------------


def _flag(props: Mapping[str, str], name: str) -> bool | None:
    value = props.get(name)
    if value is None:
        return None
    lowered = value.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise UserError(f"property {name} must be true or false, not {value!r}")


def _number(props: Mapping[str, str], name: str) -> float | None:
    value = props.get(name)
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        raise UserError(f"property {name} must be a number, not {value!r}") from None


def _endpoint(value: str, name: str) -> tuple[str | None, str]:
    """``http://host:port`` -> (``http``, ``host:port``); a bare ``host:port`` has no scheme."""
    if "://" not in value:
        return None, value.rstrip("/")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UserError(f"property {name} must be http(s)://host[:port], not {value!r}")
    return parts.scheme, parts.netloc


def s3_options(props: Mapping[str, str]) -> dict[str, Any]:
    """pyarrow ``S3FileSystem`` options from S3FileIOProperties names."""
    options: dict[str, Any] = {}
    access, secret = props.get("s3.access-key-id"), props.get("s3.secret-access-key")
    if (access is None) != (secret is None):
        raise UserError("properties s3.access-key-id and s3.secret-access-key must be given together")
    if access is not None:
        options.update(access_key=access, secret_key=secret, session_token=props.get("s3.session-token"))
    region = props.get("client.region") or props.get("s3.region")
    if region:
        options["region"] = region
    if props.get("s3.endpoint"):
        scheme, host = _endpoint(props["s3.endpoint"], "s3.endpoint")
        options["endpoint_override"] = host
        if scheme:
            options["scheme"] = scheme
    path_style = _flag(props, "s3.path-style-access")
    virtual = _flag(props, "s3.force-virtual-addressing")
    if path_style is not None:
        options["force_virtual_addressing"] = not path_style
    elif virtual is not None:
        options["force_virtual_addressing"] = virtual
    for name, option in (
        ("s3.connect-timeout", "connect_timeout"),
        ("s3.request-timeout", "request_timeout"),
    ):
        seconds = _number(props, name)
        if seconds is not None:
            options[option] = seconds
    retries = _number(props, "s3.retry.num-retries")
    if retries is not None:
        options["retry_strategy"] = pafs.AwsStandardS3RetryStrategy(max_attempts=int(retries) + 1)
    if _flag(props, "s3.anonymous"):
        options["anonymous"] = True
    role = props.get("s3.role-arn") or props.get("client.assume-role.arn")
    if role:
        options["role_arn"] = role
        session = props.get("s3.role-session-name") or props.get("client.assume-role.session-name")
        if session:
            options["session_name"] = session
    if props.get("s3.proxy-uri"):
        options["proxy_options"] = props["s3.proxy-uri"]
    return options


def gcs_options(props: Mapping[str, str]) -> dict[str, Any]:
    """pyarrow ``GcsFileSystem`` options from GCPProperties names."""
    options: dict[str, Any] = {}
    if props.get("gcs.project-id"):
        options["project_id"] = props["gcs.project-id"]
    if props.get("gcs.oauth2.token"):
        expires = props.get("gcs.oauth2.token-expires-at")
        if expires is None:
            raise UserError(
                "property gcs.oauth2.token needs gcs.oauth2.token-expires-at (epoch milliseconds)"
            )
        millis = _number(props, "gcs.oauth2.token-expires-at")
        assert millis is not None
        options["access_token"] = props["gcs.oauth2.token"]
        options["credential_token_expiration"] = datetime.fromtimestamp(millis / 1000, UTC)
    if props.get("gcs.service.host"):
        scheme, host = _endpoint(props["gcs.service.host"], "gcs.service.host")
        options["endpoint_override"] = host
        if scheme:
            options["scheme"] = scheme
    if _flag(props, "gcs.no-auth"):
        options["anonymous"] = True
    if props.get("gcs.default-location"):
        options["default_bucket_location"] = props["gcs.default-location"]
    # Google's client retries a failing request for 15 minutes by default: a store that
    # cannot be reached would hang the statement. Iceberg has no property for it.
    seconds = _number(props, GCS_RETRY_LIMIT)
    options["retry_time_limit"] = timedelta(seconds=seconds if seconds is not None else 30)
    return options


def adls_options(account: str, props: Mapping[str, str]) -> dict[str, Any]:
    """pyarrow ``AzureFileSystem`` options for ``account`` from AzureProperties names.

    Java keys SAS tokens and connection strings by account (``adls.sas-token.<account>``,
    where ``<account>`` is the account's host or its name); PyIceberg's unsuffixed keys
    apply to every account.
    """

    def per_account(prefix: str) -> str | None:
        for suffix in (f"{account}.dfs.core.windows.net", f"{account}.blob.core.windows.net", account):
            if f"{prefix}.{suffix}" in props:
                return props[f"{prefix}.{suffix}"]
        return props.get(prefix)

    named = props.get("adls.account-name") or props.get("adls.auth.shared-key.account.name")
    options: dict[str, Any] = {"account_name": named or account}
    connection = per_account("adls.connection-string")
    if connection:
        options.update(_connection_string(connection))
    key = props.get("adls.account-key") or props.get("adls.auth.shared-key.account.key")
    if key:
        options["account_key"] = key
    sas = per_account("adls.sas-token")
    if sas:
        options["sas_token"] = sas
    for name in ("tenant-id", "client-id", "client-secret"):
        if props.get(f"adls.{name}"):
            options[name.replace("-", "_")] = props[f"adls.{name}"]
    for name in (
        "blob-storage-authority",
        "dfs-storage-authority",
        "blob-storage-scheme",
        "dfs-storage-scheme",
    ):
        if props.get(f"adls.{name}"):
            options[name.replace("-", "_")] = props[f"adls.{name}"]
    if "account_key" in options and "sas_token" in options:
        raise UserError(f"ADLS account {account}: give an account key or a SAS token, not both")
    return options


def _connection_string(text: str) -> dict[str, Any]:
    """Azure's ``Key=Value;...`` connection string as AzureFileSystem options."""
    fields = dict(part.split("=", 1) for part in text.split(";") if "=" in part)
    options: dict[str, Any] = {}
    if fields.get("AccountName"):
        options["account_name"] = fields["AccountName"]
    if fields.get("AccountKey"):
        options["account_key"] = fields["AccountKey"]
    if fields.get("SharedAccessSignature"):
        options["sas_token"] = fields["SharedAccessSignature"]
    for field, prefix in (("BlobEndpoint", "blob"), ("DfsEndpoint", "dfs")):
        if fields.get(field):
            endpoint = urlsplit(fields[field])
            options[f"{prefix}_storage_authority"] = endpoint.netloc
            options[f"{prefix}_storage_scheme"] = endpoint.scheme or "https"
    if not options:
        raise UserError(
            "adls.connection-string: no AccountName, AccountKey, SharedAccessSignature or endpoint"
        )
    return options
