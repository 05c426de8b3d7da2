"""A second opinion on what iceduck's REST client commits: PyIceberg's RestCatalog, another
client of the same ``iceduck serve``, reads every table iceduck wrote through it (CTAS made
by stage-create + ``assert-create``, v2 position deletes, schema and partition evolution),
and iceduck reads what PyIceberg appends."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.catalog.rest_client.conftest import Served


def test_pyiceberg_reads_what_iceduck_commits_and_the_reverse(served: Served) -> None:
    rest = pytest.importorskip("pyiceberg.catalog.rest", reason="PyIceberg is not installed")
    cur = served.connect().cursor()
    cur.execute("CREATE NAMESPACE p")
    cur.execute(
        "CREATE TABLE p.t (id bigint, s string) USING iceberg PARTITIONED BY (bucket(4, id)) "
        "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read')"
    )
    cur.execute("INSERT INTO p.t SELECT i, 'v' || i FROM range(10) r(i)")
    cur.execute("DELETE FROM p.t WHERE id % 3 = 0")
    cur.execute("ALTER TABLE p.t ADD COLUMN n int")
    cur.execute("ALTER TABLE p.t ADD PARTITION FIELD truncate(1, s)")
    cur.execute("INSERT INTO p.t VALUES (100, 'x', 7)")
    cur.execute("CREATE TABLE p.c AS SELECT id, s FROM p.t WHERE id < 5")
    catalog = rest.RestCatalog("peer", uri=served.url)

    def peer_rows(name: str) -> list[tuple[object, ...]]:
        arrow = catalog.load_table(name).scan().to_arrow()
        return sorted(tuple(row.values()) for row in arrow.to_pylist())

    for name in ("p.t", "p.c"):
        assert peer_rows(name) == sorted(cur.execute(f"SELECT * FROM {name}").fetchall()), name
    catalog.load_table("p.c").append(pa.table({"id": pa.array([42], pa.int64()), "s": ["peer"]}))
    assert cur.execute("SELECT * FROM p.c WHERE id = 42").fetchall() == [(42, "peer")]
