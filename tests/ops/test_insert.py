"""INSERT INTO / INSERT OVERWRITE on iceduck tables equal the same writes on DuckDB tables."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

import iceduck
from iceduck.catalog.base import TableIdentifier
from iceduck.engine.write import write_data_files
from iceduck.errors import NotFoundError, UserError, ValidationError
from iceduck.ops.snapshot_commit import file_target
from tests.ops.conftest import create_events
from tests.ops.harness import Pair


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("partitioned", [False, True])
def test_inserts_match_duckdb(pair: Pair, version: int, partitioned: bool) -> None:
    partition = " PARTITIONED BY (bucket(4, id), days(ts))" if partitioned else ""
    pair.run(
        f"CREATE TABLE ns.t (id BIGINT, s STRING, ts TIMESTAMP, d DECIMAL(10, 2), ok BOOLEAN) USING iceberg"
        f"{partition} TBLPROPERTIES ('format-version'='{version}')",
        reference="CREATE TABLE ns.t (id BIGINT, s VARCHAR, ts TIMESTAMPTZ, d DECIMAL(10, 2), ok BOOLEAN)",
    )
    pair.run("INSERT INTO ns.t VALUES (1, 'a', TIMESTAMPTZ '2024-01-01 10:00:00+00', 1.25, true)")
    pair.run("INSERT INTO ns.t (s, id) VALUES ('only-s', 2), (NULL, 3)")
    pair.run(
        "INSERT INTO ns.t SELECT i, 's' || i, TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_hours(i * 7), "
        "i / 4, i % 2 = 0 FROM range(10, 60) AS r(i)"
    )
    pair.run("INSERT INTO ns.t BY NAME SELECT 'by-name' AS s, 99 AS id")
    pair.run("INSERT INTO ns.t SELECT id + 1000, s, ts, d, ok FROM ns.t WHERE id < 20")
    pair.check("ns.t")


def test_insert_errors_name_the_problem(pair: Pair) -> None:
    pair.run(
        "CREATE TABLE ns.t (id INT NOT NULL, s STRING, n INT) USING iceberg",
        reference="CREATE TABLE ns.t (id INT NOT NULL, s VARCHAR, n INT)",
    )
    pair.run("INSERT INTO ns.t VALUES (1, 'a', 1)")
    with pytest.raises(UserError, match="3 columns"):
        pair.ice.execute("INSERT INTO ns.t VALUES (1, 'a')")
    with pytest.raises(ValidationError, match="id"):
        pair.ice.execute("INSERT INTO ns.t VALUES (NULL, 'a', 1)")
    with pytest.raises(ValidationError, match="n"):
        pair.ice.execute("INSERT INTO ns.t VALUES (2, 'a', 'not a number')")
    with pytest.raises(ValidationError, match="id"):
        pair.ice.execute("INSERT INTO ns.t (s) VALUES ('no id')")
    with pytest.raises(NotFoundError, match="nope"):
        pair.ice.execute("INSERT INTO ns.t (id, nope) VALUES (1, 2)")
    pair.check("ns.t")
    assert len(pair.ice.fetch("SELECT * FROM ns.t.snapshots")) == 1


def test_insert_fills_write_defaults(pair: Pair) -> None:
    pair.run(
        "CREATE TABLE ns.t (id INT, s STRING) USING iceberg TBLPROPERTIES ('format-version'='3')",
        reference="CREATE TABLE ns.t (id INT, s VARCHAR, n INT DEFAULT 7)",
    )
    pair.ice.execute("ALTER TABLE ns.t ADD COLUMN n INT DEFAULT 7")
    pair.run("INSERT INTO ns.t (id, s) VALUES (1, 'x')")
    pair.run("INSERT INTO ns.t BY NAME SELECT 2 AS id")
    pair.check("ns.t")


@pytest.mark.parametrize("version", [2, 3])
def test_dynamic_overwrite_replaces_partitions(pair: Pair, version: int) -> None:
    t = create_events(pair, version, "merge-on-read", True)
    pair.run(f"DELETE FROM {t} WHERE id = 3")  # a DV/position delete in partition 'a'
    pair.run(
        f"INSERT OVERWRITE {t} VALUES (7, 'over', 'a', 1.0), (8, 'over', NULL, 2.0)",
        reference=(
            f"DELETE FROM {t} WHERE cat = 'a' OR cat IS NULL; "
            f"INSERT INTO {t} VALUES (7, 'over', 'a', 1.0), (8, 'over', NULL, 2.0)"
        ),
    )
    pair.check(t)
    assert pair.ice.scalar(f"SELECT count(*) FROM {t}.delete_files") == 0


def test_dynamic_overwrite_unpartitioned_replaces_all(pair: Pair) -> None:
    t = create_events(pair, 2, "copy-on-write", False)
    pair.run(
        f"INSERT OVERWRITE {t} SELECT 1, 'only', 'a', 0.5",
        reference=f"DELETE FROM {t}; INSERT INTO {t} VALUES (1, 'only', 'a', 0.5)",
    )
    pair.check(t)


@pytest.mark.parametrize("version", [2, 3])
def test_static_overwrite(pair: Pair, version: int) -> None:
    t = create_events(pair, version, "copy-on-write", True)
    pair.run(
        f"INSERT OVERWRITE {t} PARTITION (cat = 'b') SELECT 1, 'static', 9.5",
        reference=f"DELETE FROM {t} WHERE cat = 'b'; INSERT INTO {t} VALUES (1, 'static', 'b', 9.5)",
    )
    pair.check(t)


def test_static_overwrite_rewrites_files_straddling_the_partition(pair: Pair) -> None:
    """Files written before the table was partitioned hold several ``cat`` values: they are
    rewritten without the overwritten rows."""
    t = create_events(pair, 2, "copy-on-write", False)
    pair.ice.execute(f"ALTER TABLE {t} ADD PARTITION FIELD cat")
    pair.run(
        f"INSERT OVERWRITE {t} PARTITION (cat = 'a') VALUES (5, 'fresh', 5.5)",
        reference=f"DELETE FROM {t} WHERE cat = 'a'; INSERT INTO {t} VALUES (5, 'fresh', 'a', 5.5)",
    )
    pair.check(t)


def test_dynamic_overwrite_by_transformed_partitions(pair: Pair) -> None:
    """Partition tuples of new files (month ordinals) compare with the manifests' own."""
    pair.run(
        "CREATE TABLE ns.m (id INT, d DATE) USING iceberg PARTITIONED BY (months(d))",
        reference="CREATE TABLE ns.m (id INT, d DATE)",
    )
    pair.run("INSERT INTO ns.m SELECT i, DATE '2024-01-01' + CAST(i * 10 AS INT) FROM range(12) AS r(i)")
    pair.run(
        "INSERT OVERWRITE ns.m SELECT id + 100, d FROM ns.m WHERE d < DATE '2024-02-01'",
        reference=(
            "CREATE TEMP TABLE jan AS SELECT id + 100 AS id, d FROM ns.m WHERE d < DATE '2024-02-01'; "
            "DELETE FROM ns.m WHERE d < DATE '2024-02-01'; "
            "INSERT INTO ns.m SELECT * FROM jan"
        ),
    )
    pair.check("ns.m")


def test_written_files_stay_uncommitted(pair: Pair) -> None:
    """Writing a query's rows as data files of a table (what CREATE TABLE AS and INSERT do
    before their commit) casts them to the schema and commits nothing: the caller commits
    or deletes the files."""
    pair.run("CREATE TABLE ns.w (id BIGINT, s STRING)", reference="CREATE TABLE ns.w (id BIGINT, s VARCHAR)")
    session = pair.ice.con.session
    loaded = session.catalog.load_table(TableIdentifier(("ns",), "w"))
    duck = session.database.cursor()
    try:
        query = "SELECT 1, 'a' UNION ALL SELECT 2, 'b'"
        files = write_data_files(duck, query, file_target(loaded.metadata))
    finally:
        duck.close()
    assert sum(f.record_count for f in files) == 2
    assert all(Path(f.file_path).is_file() for f in files)
    assert pair.ice.scalar("SELECT count(*) FROM ns.w") == 0
    assert duckdb.sql(f"SELECT sum(id) FROM read_parquet('{files[0].file_path}')").fetchall() == [(3,)]


def _queries(con: iceduck.Connection) -> list[str]:
    """The statements DuckDB ran in the connection's database since logging was enabled."""
    rows = con.session.database.execute("SELECT message FROM duckdb_logs WHERE type = 'QueryLog'").fetchall()
    return [r[0] for r in rows]


def test_an_insert_binds_its_query_once_before_writing(tmp_path: Path) -> None:
    """The INSERT's query is described once (its column names); the select written from it
    has one item per column by construction, and describing it again cost ~0.7 ms a commit."""
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute("CREATE TABLE db.t (id bigint, s string) PARTITIONED BY (bucket(2, id))")
    con.session.database.execute("CALL enable_logging('QueryLog')")
    for n in range(3):
        con.execute(f"INSERT INTO db.t VALUES ({n}, 'x')")
    probes = [q for q in _queries(con) if q.endswith("LIMIT 0")]
    assert len(probes) == 3
    assert con.execute("SELECT count(*) FROM db.t").fetchall() == [(3,)]
