"""The httpfs path: the ``SECRET`` iceduck makes from Iceberg's S3 properties, run by DuckDB
with its own ``httpfs`` extension against moto, reads the Parquet files iceduck wrote.

The project's DuckDB has no httpfs on this machine (no wheel for its release, no network),
so the statement runs in ``bench/.venv``'s DuckDB with the ``duckdb-extension-httpfs``
wheel of the same release (bench/README.md, "Peers: setup"; .ci/run installs it). Without
that venv the test skips, naming the reason.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest

import iceduck
from iceduck.engine.object_stores import s3_secret_sql, s3_secrets
from iceduck.io import object_store
from iceduck.io.store_scopes import Scope
from tests.support.s3 import S3Server
from tests.support.scenario_peers import PEER_PYTHON

_SCRIPT = """
import glob, json, os, sys
import duckdb, duckdb_extension_httpfs
job = json.load(sys.stdin)
folder = os.path.join(os.path.dirname(duckdb_extension_httpfs.__file__), "extensions")
con = duckdb.connect()
con.load_extension(sorted(glob.glob(os.path.join(folder, "*", "httpfs.duckdb_extension")))[-1])
con.execute(job["secret"])
rows = con.execute(
    "SELECT count(*), sum(id), count(DISTINCT s) FROM read_parquet(?)", [job["files"]]
).fetchall()
print(json.dumps([list(r) for r in rows]))
"""


def _peer_missing() -> str | None:
    if not PEER_PYTHON.exists():
        return f"{PEER_PYTHON} does not exist (bench/README.md, 'Peers: setup')"
    done = subprocess.run([str(PEER_PYTHON), "-c", "import duckdb_extension_httpfs"], capture_output=True)
    if done.returncode != 0:
        return (
            "bench/.venv has no duckdb-extension-httpfs: "
            "bench/.venv/bin/pip install duckdb-extension-httpfs==1.5.5"
        )
    return None


def test_duckdb_httpfs_reads_what_iceduck_wrote_with_the_generated_secret(
    tmp_path: Path, s3_configured: S3Server, s3_bucket: str
) -> None:
    reason = _peer_missing()
    if reason is not None:
        pytest.skip(reason)
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute(
        "CREATE TABLE db.t (id bigint, s string) USING iceberg PARTITIONED BY (s) "
        f"LOCATION 's3a://{s3_bucket}/httpfs-{uuid.uuid4().hex[:8]}'"
    )
    con.execute("INSERT INTO db.t SELECT i, 'p' || (i % 4) FROM range(1000) r(i)")
    files = [p for (p,) in con.execute("SELECT file_path FROM db.t.files").fetchall()]
    assert len(files) == 4 and all(f.startswith("s3a://") for f in files)
    expected = [
        list(r) for r in con.execute("SELECT count(*), sum(id), count(DISTINCT s) FROM db.t").fetchall()
    ]
    con.close()

    job = {
        "secret": s3_secret_sql(object_store.properties()),
        "files": [object_store.same_location(f) for f in files],
    }
    done = subprocess.run(
        [str(PEER_PYTHON), "-c", _SCRIPT], input=json.dumps(job), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == expected == [[1000, 499500, 4]]


def test_each_s3_scope_is_a_duckdb_secret_with_its_scope() -> None:
    """httpfs picks, for each path, the secret whose SCOPE is the longest prefix of it: the
    rule of the scopes themselves, so DuckDB reads each table with its own keys."""
    base = {"s3.endpoint": "http://127.0.0.1:9000", "s3.access-key-id": "base", "s3.secret-access-key": "b"}
    scopes = [
        Scope("s3://b2/", {"s3.access-key-id": "two", "s3.secret-access-key": "t"}),
        Scope("gs://g/", {"gcs.oauth2.token": "x"}),  # not S3: no S3 secret
        Scope("s3://b1/wh/t", {"s3.access-key-id": "one", "s3.secret-access-key": "o"}),
    ]
    sqls = s3_secrets(base, scopes, "iceduck_s3_7")
    assert len(sqls) == 3
    assert "KEY_ID 'base'" in sqls[0] and "SCOPE" not in sqls[0]
    assert sqls[1].startswith("CREATE OR REPLACE SECRET iceduck_s3_7_1 (")
    assert (
        "KEY_ID 'one'" in sqls[1]
        and "ENDPOINT '127.0.0.1:9000'" in sqls[1]
        and "SCOPE 's3://b1/wh/t'" in sqls[1]
    )
    assert "KEY_ID 'two'" in sqls[2] and "SCOPE 's3://b2/'" in sqls[2]
