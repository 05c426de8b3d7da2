"""MERGE INTO on iceduck tables equals MERGE INTO on plain DuckDB tables."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from iceduck.errors import UserError, ValidationError
from tests.ops.conftest import LAYOUTS, create_events
from tests.ops.harness import Pair


def _source(pair: Pair) -> None:
    pair.run(
        "CREATE TABLE ns.src (id INT, data STRING, cat STRING, v DOUBLE)",
        reference="CREATE TABLE ns.src (id INT, data VARCHAR, cat VARCHAR, v DOUBLE)",
    )
    pair.run(
        "INSERT INTO ns.src VALUES (1, 'm1', 'a', 1.0), (2, 'm2', 'b', 2.0), (3, 'del', 'a', 3.0), "
        "(500, 'new', 'c', 5.0), (501, 'new2', NULL, NULL), (102, 'z2', 'c', 9.0)"
    )


@pytest.mark.parametrize(("version", "mode", "partitioned"), LAYOUTS)
def test_merges_match_duckdb(pair: Pair, version: int, mode: str, partitioned: bool) -> None:
    t = create_events(pair, version, mode, partitioned)
    _source(pair)
    pair.run(
        f"MERGE INTO {t} AS t USING ns.src AS s ON t.id = s.id "
        "WHEN MATCHED AND s.data = 'del' THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET data = s.data, v = t.v + s.v "
        "WHEN NOT MATCHED AND s.id > 500 THEN INSERT (id, data) VALUES (s.id, s.data) "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    pair.check(t)
    pair.run(
        f"MERGE INTO {t} AS t USING (SELECT id, data FROM ns.src WHERE id < 3) AS s ON t.id = s.id + 100 "
        "WHEN NOT MATCHED BY SOURCE AND t.id >= 200 THEN DELETE "
        "WHEN NOT MATCHED BY SOURCE AND t.cat = 'b' THEN UPDATE SET v = 42"
    )
    pair.check(t)
    pair.run(f"MERGE INTO {t} AS t USING ns.src AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *")
    pair.check(t)


def test_merge_only_inserts_appends(pair: Pair) -> None:
    t = create_events(pair, 3, "merge-on-read", False)
    _source(pair)
    pair.run(f"MERGE INTO {t} t USING ns.src s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *")
    assert pair.ice.fetch(f"SELECT operation FROM {t}.snapshots ORDER BY committed_at DESC LIMIT 1") == [
        ("append",)
    ]
    pair.check(t)


def test_merge_cardinality_violation(pair: Pair) -> None:
    t = create_events(pair, 2, "copy-on-write", False)
    _source(pair)
    pair.run("INSERT INTO ns.src VALUES (1, 'again', 'a', 1.0)")
    with pytest.raises(UserError, match="multiple source rows matched"):
        pair.ice.execute(f"MERGE INTO {t} t USING ns.src s ON t.id = s.id WHEN MATCHED THEN DELETE")
    pair.check(t)
    # no MATCHED clause: duplicates are fine (Spark checks only when a row could change twice)
    pair.run(f"MERGE INTO {t} t USING ns.src s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *")
    pair.check(t)


def test_v3_merge_keeps_row_ids_of_updated_rows(pair: Pair) -> None:
    t = create_events(pair, 3, "copy-on-write", True)
    _source(pair)
    before = {i: r for i, (r, _) in pair.ice.lineage(t).items()}
    pair.run(
        f"MERGE INTO {t} t USING ns.src s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET data = s.data WHEN NOT MATCHED THEN INSERT *"
    )
    after = {i: r for i, (r, _) in pair.ice.lineage(t).items()}
    assert all(after[i] == before[i] for i in before)
    new_ids = [after[i] for i in after if i not in before]
    assert len(new_ids) == 2 and len(set(after.values())) == len(after)
    assert min(new_ids) > max(before.values())
    pair.check(t)


def test_merge_with_target_predicate_in_on(pair: Pair) -> None:
    """``t.cat = 'c'`` in ON lets the target scan skip other partitions (no BY SOURCE
    clause): results still equal DuckDB's, and files of other partitions stay untouched."""
    t = create_events(pair, 2, "copy-on-write", True)
    _source(pair)
    others = f"SELECT file_path FROM {t}.data_files WHERE partition.cat <> 'c'"
    before = {r[0] for r in pair.ice.fetch(others)}
    pair.run(
        f"MERGE INTO {t} t USING ns.src s ON t.id = s.id AND t.cat = 'c' "
        "WHEN MATCHED THEN UPDATE SET data = 'on-c' WHEN NOT MATCHED THEN INSERT *"
    )
    pair.check(t)
    after = {r[0] for r in pair.ice.fetch(f"SELECT file_path FROM {t}.data_files")}
    assert before <= after


def test_merge_type_error_names_the_column(pair: Pair) -> None:
    t = create_events(pair, 2, "copy-on-write", False)
    _source(pair)
    with pytest.raises(ValidationError, match="column v "):
        pair.ice.execute(
            f"MERGE INTO {t} t USING ns.src s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.data"
        )
    pair.check(t)


@pytest.mark.parametrize(
    "source",
    [
        "read_parquet('{dir}/src.parquet') s",
        "read_parquet('{dir}/src.parquet') AS s",
        "read_csv('{dir}/src.csv') AS s",
        "(VALUES (1, 'm1'), (3, 'del'), (500, 'new')) AS s(id, data)",
        "(SELECT i::INT AS id, 'r' || i AS data FROM range(0, 600, 100) r(i)) s",
        "range(3) AS s(id)",
    ],
)
def test_merge_using_table_functions_and_values(pair: Pair, tmp_path: Path, source: str) -> None:
    t = create_events(pair, 2, "merge-on-read", False)
    duckdb.sql(
        "COPY (SELECT * FROM (VALUES (1, 'm1'), (3, 'del'), (500, 'new')) v(id, data)) "
        f"TO '{tmp_path}/src.parquet'"
    )
    (tmp_path / "src.csv").write_text("id,data\n1,m1\n3,del\n500,new\n")
    data = "s.data" if "range(3)" not in source else "'q'"
    pair.run(
        f"MERGE INTO {t} t USING {source.format(dir=tmp_path)} ON t.id = s.id "
        f"WHEN MATCHED AND {data} = 'del' THEN DELETE "
        f"WHEN MATCHED THEN UPDATE SET data = {data} "
        f"WHEN NOT MATCHED THEN INSERT (id, data) VALUES (s.id, {data})"
    )
    pair.check(t)


def test_merge_insert_values_without_a_column_list(pair: Pair) -> None:
    """DuckDB's ``INSERT VALUES (...)``: the values fill the table's columns in order."""
    t = create_events(pair, 2, "merge-on-read", False)
    _source(pair)
    pair.run(
        f"MERGE INTO {t} AS t USING ns.src AS s ON t.id = s.id "
        "WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.data, s.cat, s.v)"
    )
    pair.check(t)
    with pytest.raises(UserError, match="4 columns but 2 values"):
        pair.ice.execute(
            f"MERGE INTO {t} AS t USING ns.src AS s ON false WHEN NOT MATCHED THEN INSERT VALUES (1, 2)"
        )
