"""Iceberg's object-store properties as pyarrow filesystem options.

Pure translations, one per store, from the names Iceberg Java and PyIceberg give the
properties (see :mod:`iceduck.io.object_store` for the list) to the keyword arguments of
pyarrow's ``S3FileSystem``, ``GcsFileSystem`` and ``AzureFileSystem``; a value pyarrow
would misread is refused here, naming the property.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from iceduck.errors import UserError

#: how long Google's client retries a failing GCS request (seconds; iceduck's own property)
GCS_RETRY_LIMIT = "iceduck.gcs.retry-time-limit-seconds"


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
    import pyarrow.fs as pafs

    # A new object's upload starts at its first write, not at open: a file smaller than one
    # part (metadata, manifests, most one-row data files) is then a single PutObject instead
    # of a multipart upload (create, upload part, complete: three requests, each 10-30 ms in
    # a real store). What is delayed is only the error of opening in a missing bucket, which
    # then surfaces at the write or the close -- both inside the same file operation.
    options: dict[str, Any] = {"allow_delayed_open": True}
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
