"""A Paimon warehouse in object storage (a real S3 endpoint: moto's server on loopback):
attached, listed and read as a local one, its data files read by DuckDB through the
connection's object store, and pruning and time travel as on a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.dbapi import ProgrammingError
from tests.support.s3 import S3Server, client

WAREHOUSE = Path(__file__).resolve().parents[2] / "examples" / "paimon" / "warehouse"


def upload(server: S3Server, bucket: str, prefix: str) -> None:
    s3: Any = client(server.endpoint_url)
    for path in WAREHOUSE.rglob("*"):
        if path.is_file():
            s3.upload_file(str(path), bucket, f"{prefix}/{path.relative_to(WAREHOUSE).as_posix()}")


def test_paimon_warehouse_in_s3(s3_configured: S3Server, s3_bucket: str, tmp_path: Path) -> None:
    upload(s3_configured, s3_bucket, "paimon")
    location = f"s3://{s3_bucket}/paimon"
    with iceduck.connect(str(tmp_path / "wh"), paimon={"lake": location}) as con:
        assert con.execute("SHOW TABLES IN lake.shop").fetchall() == [
            ("lake.shop", "customers"),
            ("lake.shop", "events"),
        ]
        assert con.execute("SELECT id, city FROM lake.shop.customers ORDER BY id").fetchall() == [
            (1, "Oslo"),
            (2, "Paris"),
            (4, "Kyiv"),
        ]
        tagged = "SELECT count(*) FROM lake.shop.customers VERSION AS OF 'launch'"
        assert con.execute(tagged).fetchall() == [(3,)]
        spent = "SELECT sum(amount) FROM lake.shop.events WHERE day = '2024-05-02'"
        assert con.execute(spent).fetchall() == [(99.0,)]
        explained = "\n".join(str(r[0]) for r in con.execute("EXPLAIN " + spent).fetchall())
        assert "manifests: 2 total, 1 read, 1 skipped" in explained and f"s3://{s3_bucket}/" in explained
        same = f"SELECT count(*) FROM paimon_scan('{location}/shop.db/events')"
        assert con.execute(same).fetchall() == [(5,)]
        with pytest.raises(ProgrammingError, match=r"Paimon table lake\.shop\.nope not found"):
            con.execute("SELECT * FROM lake.shop.nope")
