"""Other readers of tables in an S3 bucket, and Spark tables moved into one.

The tests of "your team's lake" ask every reader that can reach a bucket for the same rows:

* PyIceberg, with its own S3 FileIO (``PyArrowFileIO``) configured from the same Iceberg
  catalog properties iceduck takes (``s3.endpoint``, ``s3.access-key-id``, ...): the
  names are Iceberg Java's ``S3FileIOProperties``, which PyIceberg reads too, so a user
  hands both the same dictionary (:func:`pyiceberg_properties`).
* DuckDB 1.5.5's Iceberg extension with its ``httpfs`` extension, in ``bench/.venv``
  (tests/support/scenario_peers.py runs it), given the credentials as a DuckDB secret
  (:func:`duckdb_s3_secret`).

Spark cannot write to S3 here (the AWS jars are not on PyPI), so Spark-written metadata with
``s3://`` locations comes from Iceberg's ``rewrite_table_path`` procedure: it rewrites every
metadata file, manifest list, manifest and position-delete file of a table with the new
prefix into a staging folder and lists what to copy where (its ``file_list_location``, a
CSV of ``source,target`` pairs: staged files for what it rewrote, the original files for
data files, which hold no paths). :func:`upload_file_list` is that copy step.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from iceduck.io.fileio import to_local_path
from tests.support.s3 import bucket_of, client
from tests.support.scenario_peers import PEER_PYTHON, duckdb_iceberg_unavailable
from tests.support.scenario_rows import Rows

#: Iceberg property names PyIceberg reads with the same meaning; ``client.region`` is also
#: given as PyIceberg's ``s3.region`` (older PyIceberg releases read only that one)
_SHARED_PROPERTIES = (
    "s3.endpoint",
    "s3.access-key-id",
    "s3.secret-access-key",
    "s3.session-token",
    "client.region",
)


def pyiceberg_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """PyIceberg catalog/FileIO properties for the same S3 endpoint as iceduck's ``properties``.

    ``py-io-impl`` pins PyIceberg's pyarrow FileIO (its default when pyarrow is installed,
    named so a missing pyarrow fails loudly instead of silently switching to fsspec).
    Path-style addressing is PyIceberg's default (``s3.force-virtual-addressing`` false).
    """
    out = {k: properties[k] for k in _SHARED_PROPERTIES if k in properties}
    if "client.region" in properties:
        out["s3.region"] = properties["client.region"]
    if properties.get("s3.path-style-access", "true").lower() == "false":
        out["s3.force-virtual-addressing"] = "true"
    out["py-io-impl"] = "pyiceberg.io.pyarrow.PyArrowFileIO"
    return out


def pyiceberg_table(metadata_location: str, properties: Mapping[str, str]) -> Any:
    """PyIceberg's ``StaticTable`` of one metadata file in the bucket."""
    from pyiceberg.table import StaticTable

    return StaticTable.from_metadata(metadata_location, properties=pyiceberg_properties(properties))


def pyiceberg_catalog(catalog_db: Path, properties: Mapping[str, str], name: str = "iceduck") -> Any:
    """PyIceberg's SQL catalog on iceduck's ``catalog.db`` (the layout both share), reaching S3."""
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog(name, uri=f"sqlite:///{catalog_db}", **pyiceberg_properties(properties))


def duckdb_s3_secret(properties: Mapping[str, str]) -> str:
    """DuckDB's ``CREATE SECRET`` for the endpoint of Iceberg catalog ``properties``.

    httpfs takes the endpoint as ``host:port`` with the scheme as ``USE_SSL``, and the
    addressing as ``URL_STYLE`` (``path`` for ``s3.path-style-access=true``).
    """
    endpoint = urlsplit(properties["s3.endpoint"])
    style = "path" if properties.get("s3.path-style-access", "false").lower() == "true" else "vhost"
    fields = {
        "KEY_ID": properties["s3.access-key-id"],
        "SECRET": properties["s3.secret-access-key"],
        "ENDPOINT": endpoint.netloc,
        "URL_STYLE": style,
        "REGION": properties.get("client.region", "us-east-1"),
    }
    if "s3.session-token" in properties:
        fields["SESSION_TOKEN"] = properties["s3.session-token"]
    body = ", ".join(f"{k} '{v.replace(chr(39), chr(39) * 2)}'" for k, v in fields.items())
    ssl = "true" if endpoint.scheme == "https" else "false"
    return f"CREATE SECRET (TYPE s3, {body}, USE_SSL {ssl})"


def duckdb_httpfs_unavailable() -> str | None:
    """Why DuckDB's Iceberg extension cannot read S3 here (bench/.venv or httpfs missing), or None."""
    why = duckdb_iceberg_unavailable()
    if why is not None:
        return why
    import subprocess

    probe = subprocess.run(
        [str(PEER_PYTHON), "-c", "import duckdb_extension_httpfs"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        return (
            f"{PEER_PYTHON} lacks duckdb-extension-httpfs: "
            f"{PEER_PYTHON.parent / 'pip'} install duckdb-extension-httpfs==1.5.5"
        )
    return None


def same_columns(got: Rows, expected: Rows) -> tuple[Rows, Rows]:
    """``got`` cut to ``expected``'s columns, in its order, and ``expected``.

    A reader may answer a snapshot with more columns than it had: PyIceberg reads every
    snapshot with the table's current schema (a column added later is null), where Spark
    and iceduck use the snapshot's. Every column of ``expected`` must be in ``got``.
    """
    missing = [c for c in expected[0] if c not in got[0]]
    if missing:
        raise AssertionError(f"columns {missing} missing from {got[0]}")
    index = [got[0].index(c) for c in expected[0]]
    rows = sorted((tuple(r[i] for i in index) for r in got[1]), key=repr)
    return (list(expected[0]), rows), expected


# -- moving a table with rewrite_table_path ----------------------------------------------------


@dataclass(frozen=True)
class Upload:
    """One file of a ``rewrite_table_path`` file list: where it is, where it goes."""

    source: str  # local path
    target: str  # s3://bucket/key


def read_file_list(file_list_location: str) -> list[Upload]:
    """The ``source,target`` pairs of ``rewrite_table_path``'s file list (a CSV file)."""
    with open(to_local_path(file_list_location), newline="") as f:
        return [Upload(to_local_path(source), target) for source, target in csv.reader(f)]


def upload_file_list(file_list_location: str, endpoint_url: str) -> list[Upload]:
    """Copy every listed file to its ``s3://`` target; returns what was copied.

    A target outside S3, or a listed source that does not exist, is an error: the table
    in the bucket would reference a file that is not there.
    """
    uploads = read_file_list(file_list_location)
    s3 = client(endpoint_url)
    for upload in uploads:
        if not upload.target.startswith("s3://"):
            raise ValueError(f"{file_list_location}: target {upload.target!r} is not an s3:// location")
        if not Path(upload.source).is_file():
            raise FileNotFoundError(f"{file_list_location}: listed source {upload.source} does not exist")
        bucket = bucket_of(upload.target)
        key = upload.target.removeprefix(f"s3://{bucket}/")
        s3.upload_file(upload.source, bucket, key)
    return uploads


# -- iceduck on the bucket -------------------------------------------------------------------


def object_store_missing() -> str | None:
    """Why iceduck cannot reach object stores in this checkout, or None."""
    import importlib.util

    if importlib.util.find_spec("iceduck.io.object_store") is None:
        return "iceduck's object-store FileIO (iceduck.io.object_store) is not in this checkout"
    return None


@contextmanager
def iceduck_on_bucket(warehouse: Path, properties: Mapping[str, str]) -> Iterator[Any]:
    """An iceduck connection on a local ``warehouse`` (SQLite catalog) whose tables may live
    in the bucket of ``properties``, for a module's tests.

    The object-store configuration belongs to the process (``iceduck.io.object_store``):
    it is replaced by ``properties`` for the block and restored after it, as the
    per-test ``object_store_restored`` fixture does, so no other test sees this one's.
    """
    import iceduck
    from iceduck.io import object_store

    before = object_store.properties()
    object_store.configure(properties, replace=True)
    try:
        with iceduck.connect(warehouse) as con:
            yield con
    finally:
        object_store.configure(before, replace=True)


def position_delete_rewrite(original: str, staged: str, source_prefix: str, target_prefix: str) -> None:
    """Write the position-delete file ``original`` to ``staged`` with every referenced data
    file moved from ``source_prefix`` to ``target_prefix``: what ``rewrite_table_path``
    does to a delete file (the spec's ``file_path`` column, field id 2147483546, holds
    full locations). Schema and field ids are kept as they are.

    Iceberg 1.10.2 lists every live position-delete file of a rewritten delete manifest in
    the file list but writes only some of them to the staging folder
    (apache/iceberg#12772); this writes the others.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.ParquetFile(original).read()  # not read_table: it adds hive columns from cat=a/
    index = table.schema.get_field_index("file_path")
    paths = table.column(index)
    if len(paths) and not pc.all(pc.starts_with(paths, source_prefix + "/")).as_py():
        raise ValueError(f"{original}: a deleted row's file_path is not under {source_prefix}")
    moved = pc.replace_substring_regex(paths, "^" + re.escape(source_prefix), target_prefix)
    table = table.set_column(index, table.schema.field(index), moved.cast(pa.string()))
    Path(staged).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, staged)
