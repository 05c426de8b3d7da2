"""Iceberg's object-store property names -> pyarrow filesystem options, and locations.

GCS and ADLS have no emulator here: their mapping and its errors are what is tested
(the filesystems are built, which checks pyarrow takes the options, but never used).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pyarrow.fs as pafs
import pytest

from iceduck.errors import StorageError, UserError
from iceduck.io import object_store, store_options
from iceduck.io.object_store import parse, same_location
from iceduck.io.store_options import adls_options, gcs_options, s3_options
from tests.support.s3 import free_port

#: every S3 filesystem defers its uploads to the first write (a small file is one PutObject)
DELAYED = {"allow_delayed_open": True}


def test_s3_properties_map_to_pyarrow_options() -> None:
    options = s3_options(
        {
            "s3.endpoint": "http://127.0.0.1:9000",
            "s3.access-key-id": "AK",
            "s3.secret-access-key": "SK",
            "s3.session-token": "ST",
            "client.region": "eu-west-1",
            "s3.path-style-access": "true",
            "s3.connect-timeout": "2.5",
            "s3.retry.num-retries": "0",
        }
    )
    retry = options.pop("retry_strategy")
    assert isinstance(retry, pafs.AwsStandardS3RetryStrategy)
    assert options == {
        **DELAYED,
        "access_key": "AK",
        "secret_key": "SK",
        "session_token": "ST",
        "region": "eu-west-1",
        "endpoint_override": "127.0.0.1:9000",
        "scheme": "http",
        "force_virtual_addressing": False,
        "connect_timeout": 2.5,
    }
    pafs.S3FileSystem(**s3_options({"s3.endpoint": "https://minio:9000", "s3.region": "us-east-2"}))


def test_s3_defaults_leave_pyarrow_chains_in_charge() -> None:
    # no credentials: AWS_* variables, ~/.aws profiles, instance metadata (pyarrow's chain)
    assert s3_options({}) == DELAYED
    assert s3_options({"s3.path-style-access": "false"}) == {**DELAYED, "force_virtual_addressing": True}
    assert s3_options({"s3.force-virtual-addressing": "true"}) == {
        **DELAYED,
        "force_virtual_addressing": True,
    }
    assert s3_options({"s3.role-arn": "arn:aws:iam::1:role/r"}) == {
        **DELAYED,
        "role_arn": "arn:aws:iam::1:role/r",
    }


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({"s3.access-key-id": "AK"}, "s3.access-key-id and s3.secret-access-key must be given together"),
        ({"s3.path-style-access": "yes"}, "s3.path-style-access must be true or false, not 'yes'"),
        ({"s3.endpoint": "ftp://host"}, "s3.endpoint must be http(s)://host[:port], not 'ftp://host'"),
        ({"s3.connect-timeout": "soon"}, "s3.connect-timeout must be a number, not 'soon'"),
    ],
)
def test_bad_s3_properties_are_one_clear_error(properties: dict[str, str], message: str) -> None:
    with pytest.raises(UserError, match=re.escape(message)):
        s3_options(properties)


def test_gcs_properties_map_to_pyarrow_options() -> None:
    options = gcs_options(
        {
            "gcs.project-id": "proj",
            "gcs.oauth2.token": "tok",
            "gcs.oauth2.token-expires-at": "1700000000000",
            "gcs.service.host": "http://localhost:4443",
        }
    )
    assert options == {
        "project_id": "proj",
        "access_token": "tok",
        "credential_token_expiration": datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC),
        "endpoint_override": "localhost:4443",
        "scheme": "http",
        "retry_time_limit": timedelta(seconds=30),
    }
    pafs.GcsFileSystem(**options)
    assert gcs_options({"gcs.no-auth": "true"})["anonymous"] is True
    with pytest.raises(UserError, match=re.escape("gcs.oauth2.token needs gcs.oauth2.token-expires-at")):
        gcs_options({"gcs.oauth2.token": "tok"})


def test_adls_properties_map_to_pyarrow_options() -> None:
    assert adls_options("acct", {"adls.account-key": "a2V5"}) == {
        "account_name": "acct",
        "account_key": "a2V5",
    }
    # Java keys a SAS token by the account's host; PyIceberg's unsuffixed key applies to all
    assert adls_options("acct", {"adls.sas-token.acct.dfs.core.windows.net": "sv=1"})["sas_token"] == "sv=1"
    assert adls_options("acct", {"adls.sas-token": "sv=2"})["sas_token"] == "sv=2"
    connection = (
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;"
        "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1"
    )
    options = adls_options("acct", {"adls.connection-string.acct": connection})
    assert options == {
        "account_name": "devstoreaccount1",
        "account_key": "a2V5",
        "blob_storage_authority": "127.0.0.1:10000",
        "blob_storage_scheme": "http",
    }
    pafs.AzureFileSystem(**options)
    with pytest.raises(UserError, match="an account key or a SAS token, not both"):
        adls_options("acct", {"adls.account-key": "a2V5", "adls.sas-token": "sv=1"})


def test_locations_parse_and_compare_across_hadoop_scheme_names() -> None:
    assert object_store.is_object_store("s3a://b/k") and object_store.is_object_store("gs://b/k")
    assert not object_store.is_object_store("/tmp/x") and not object_store.is_object_store("file:/tmp/x")
    assert same_location("s3a://b/t/data/f.parquet") == "s3://b/t/data/f.parquet"
    assert same_location("s3n://b/t") == same_location("s3://b/t")
    assert parse("s3://b//k").path == "b/k"
    adls = parse("abfss://box@acct.dfs.core.windows.net/t/f")
    assert (adls.bucket, adls.account, adls.key, adls.path) == ("box", "acct", "t/f", "box/t/f")
    with pytest.raises(UserError, match="names no bucket"):
        parse("s3:///k")
    with pytest.raises(UserError, match="abfss://<container>@<account>"):
        parse("abfss://acct.dfs.core.windows.net/t")


def test_configure_merges_and_replaces(object_store_restored: None) -> None:
    object_store.configure({"s3.endpoint": "http://a:1", "client.region": "r1"}, replace=True)
    before = object_store.generation()
    object_store.configure({"client.region": "r2"})
    assert object_store.properties() == {"s3.endpoint": "http://a:1", "client.region": "r2"}
    assert object_store.generation() > before
    object_store.configure({"s3.path-style-access": "maybe"}, replace=True)
    with pytest.raises(UserError, match=re.escape("s3.path-style-access must be true or false")):
        object_store.filesystem("s3://b/k")


@pytest.mark.parametrize(
    ("location", "endpoint"),
    [
        ("gs://bkt/wh", {"gcs.service.host": "http://127.0.0.1:{port}", "gcs.no-auth": "true"}),
        (
            "abfss://box@acct.dfs.core.windows.net/wh",
            {
                "adls.account-key": "a2V5",
                "adls.blob-storage-authority": "127.0.0.1:{port}",
                "adls.blob-storage-scheme": "http",
                "adls.dfs-storage-authority": "127.0.0.1:{port}",
                "adls.dfs-storage-scheme": "http",
            },
        ),
    ],
)
def test_an_unreachable_gcs_or_adls_endpoint_is_one_clear_error(
    location: str, endpoint: dict[str, str], object_store_restored: None
) -> None:
    port = free_port()  # nothing listens there
    props = {k: v.format(port=port) for k, v in endpoint.items()}
    object_store.configure({**props, store_options.GCS_RETRY_LIMIT: "1"}, replace=True)
    with pytest.raises(StorageError) as caught:
        object_store.check_reachable(location)
    assert str(caught.value).startswith(f"{location}: the store cannot be reached: check the endpoint")


def test_the_hadoop_catalog_refuses_a_warehouse_in_an_object_store() -> None:
    from iceduck.catalog.filesystem import HadoopCatalog
    from iceduck.errors import UnsupportedError

    with pytest.raises(UnsupportedError, match=r"its commits need an atomic rename, which object stores"):
        HadoopCatalog("s3://bucket/warehouse")
