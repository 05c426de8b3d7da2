"""UPDATE on iceduck tables equals UPDATE on plain DuckDB tables; v3 keeps row ids."""

from __future__ import annotations

import pytest

from iceduck.errors import UserError
from tests.ops.conftest import LAYOUTS, create_events
from tests.ops.harness import Pair


@pytest.mark.parametrize(("version", "mode", "partitioned"), LAYOUTS)
def test_updates_match_duckdb(pair: Pair, version: int, mode: str, partitioned: bool) -> None:
    t = create_events(pair, version, mode, partitioned)
    pair.run(f"UPDATE {t} SET data = upper(data), v = v * 2 WHERE id % 5 = 0")
    pair.check(t)
    pair.run(f"UPDATE {t} SET cat = 'moved' WHERE cat = 'a' AND id < 20")  # across partitions
    pair.check(t)
    pair.run(f"UPDATE {t} AS x SET v = -1 WHERE x.v IS NULL")
    pair.check(t)
    first_b = f"SELECT id FROM {t} WHERE cat = 'b' ORDER BY id LIMIT 3"
    pair.run(f"UPDATE {t} SET id = id + 1000 WHERE id IN ({first_b})")
    pair.check(t)
    pair.run(f"UPDATE {t} SET data = 'none' WHERE id = -5")
    pair.check(t)
    pair.run(f"UPDATE {t} SET v = 0")
    pair.check(t)


def test_update_from(pair: Pair) -> None:
    t = create_events(pair, 2, "copy-on-write", True)
    pair.run(
        "CREATE TABLE ns.fix (id INT, data STRING)", reference="CREATE TABLE ns.fix (id INT, data VARCHAR)"
    )
    pair.run("INSERT INTO ns.fix VALUES (1, 'one'), (3, 'three'), (101, 'hundred-one')")
    pair.run(f"UPDATE {t} SET data = f.data FROM ns.fix AS f WHERE {t.split('.')[-1]}.id = f.id")
    pair.check(t)
    pair.run("INSERT INTO ns.fix VALUES (1, 'uno')")
    with pytest.raises(UserError, match="more than one"):
        pair.ice.execute(f"UPDATE {t} SET data = f.data FROM ns.fix AS f WHERE t.id = f.id")
    pair.check(t)


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_v3_update_keeps_row_ids(pair: Pair, mode: str) -> None:
    t = create_events(pair, 3, mode, False)
    lineage = pair.ice.lineage(t)
    before = {i: r for i, (r, _) in lineage.items()}
    seq_before = {i: s for i, (_, s) in lineage.items()}
    pair.run(f"UPDATE {t} SET data = 'changed' WHERE id IN (1, 2, 101)")
    lineage = pair.ice.lineage(t)
    assert {i: r for i, (r, _) in lineage.items()} == before
    seqs = {i: s for i, (_, s) in lineage.items()}
    newest = max(seqs.values())
    assert newest == max(seq_before.values()) + 1
    assert {i for i, s in seqs.items() if s == newest} == {1, 2, 101}
    assert all(seqs[i] == seq_before[i] for i in seqs if i not in (1, 2, 101))
    pair.check(t)


def test_update_nested_field(pair: Pair) -> None:
    pair.run(
        "CREATE TABLE ns.n (id INT, p STRUCT<x: INT, y: STRING>) USING iceberg",
        reference="CREATE TABLE ns.n (id INT, p STRUCT(x INT, y VARCHAR))",
    )
    pair.run("INSERT INTO ns.n VALUES (1, {'x': 1, 'y': 'a'}), (2, {'x': 2, 'y': 'b'})")
    pair.ice.execute("UPDATE ns.n SET p.x = p.x + 10 WHERE id = 2")
    pair.ref.execute("UPDATE ns.n SET p = struct_pack(x := p.x + 10, y := p.y) WHERE id = 2")
    pair.check("ns.n")


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_update_and_merge_with_parameters(pair: Pair, mode: str) -> None:
    """Parameters reach every piece of the statement they appear in (SET, WHERE, source)."""
    t = create_events(pair, 3, mode, True)
    assert pair.ice.execute(f"UPDATE {t} SET data = $1 WHERE id = $2 OR id = $3", ["p", 5, 6]) == 2
    pair.ref.execute(f"UPDATE {t} SET data = 'p' WHERE id = 5 OR id = 6")
    merged = pair.ice.execute(
        f"MERGE INTO {t} t USING (SELECT CAST($key AS INT) AS id) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET data = $data",
        {"key": 7, "data": "named"},
    )
    assert merged == 1
    pair.ref.execute(f"UPDATE {t} SET data = 'named' WHERE id = 7")
    pair.check(t)
