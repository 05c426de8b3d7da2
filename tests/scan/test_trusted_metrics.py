"""Metrics of files without field ids, once the name mapping stops mapping a column: every
kind of predicate gives the same rows with pruning and without (``SET iceduck.pruning``),
and DELETE's whole-file shortcut deletes no row the condition does not match.

The table gets files written by pyarrow without field ids (``CALL system.add_files``, which
stores their metrics under the ids the mapping gives their columns) and a file of its own
(with ids); then the mapping drops ``b`` and maps ``f`` to a name the files do not have, so
those columns read as null in the imported files while their metrics still say otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.scan.trusted_metrics import MetricsTrust, trusted_only
from iceduck.spec.manifest import DataFile, FileContent, FileFormat

MAPPING = (
    '[{"field-id": 1, "names": ["i"]}, {"field-id": 3, "names": ["ff"]}, {"field-id": 4, "names": ["s"]}]'
)
COLUMNS = ("b", "f", "s", "i")
PREDICATES = [
    "{c} IS NULL",
    "{c} IS NOT NULL",
    "{c} = 5",
    "{c} <> 5",
    "{c} < 3",
    "{c} <= 3",
    "{c} > 7",
    "{c} >= 7",
    "{c} IN (1, 5, 9)",
    "{c} NOT IN (1, 5)",
    "{c} BETWEEN 2 AND 4",
    "NOT ({c} = 5)",
    "{c} IS NULL OR i = 1",
    "{c} IS NOT NULL AND i > 0",
]
FLOAT_ONLY = ["isnan({c})", "NOT isnan({c})", "{c} > 1.5"]
STRING_PREDICATES = [
    "s IS NULL",
    "s IS NOT NULL",
    "s = 'x5'",
    "s < 'x3'",
    "s IN ('x1', 'x9')",
    "s NOT IN ('x1')",
    "s LIKE 'x%'",
    "s NOT LIKE 'x%'",
]


def _wheres() -> list[str]:
    found = [p.format(c=c) for c in ("b", "f", "i") for p in PREDICATES]
    found += [p.format(c="f") for p in FLOAT_ONLY]
    return found + STRING_PREDICATES


def _write(path: Path, start: int, nulls: bool) -> None:
    n = 10
    b = [start + k if not (nulls and k % 3 == 0) else None for k in range(n)]
    f = [float(start + k) if k != 4 else float("nan") for k in range(n)]
    pq.write_table(
        pa.table(
            {
                "i": pa.array([start + k for k in range(n)], pa.int64()),
                "b": pa.array(b, pa.int64()),
                "f": pa.array(f, pa.float64()),
                "s": pa.array([f"x{start + k}" for k in range(n)], pa.string()),
            }
        ),
        path,
    )


@pytest.fixture
def con(tmp_path: Path) -> Iterator[Connection]:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute("CREATE TABLE db.t (i bigint, b bigint, f double, s string)")
    src = tmp_path / "src"
    src.mkdir()
    _write(src / "a.parquet", 0, nulls=False)  # no nulls in b: its metrics say so
    _write(src / "b.parquet", 100, nulls=True)
    con.execute(f"CALL system.add_files(table => 'db.t', source_table => '`parquet`.`{src}`')")
    con.execute("INSERT INTO db.t VALUES (1000, 5, 1.0, 'x5'), (1001, NULL, 2.0, NULL)")  # with ids
    con.execute(f"ALTER TABLE db.t SET TBLPROPERTIES ('schema.name-mapping.default' = '{MAPPING}')")
    yield con
    con.close()


def outcome(con: Connection, sql: str) -> list[tuple[Any, ...]] | str:
    try:
        return sorted(con.execute(sql).fetchall(), key=repr)
    except iceduck.Error as e:
        return type(e).__name__


def test_unmapped_columns_read_as_null(con: Connection) -> None:
    """The premise: the imported files' b and f are null now, the table's own file keeps them."""
    rows = con.execute("SELECT i, b, f FROM db.t WHERE i IN (1, 1000)").fetchall()
    assert sorted(rows) == [(1, None, None), (1000, 5, 1.0)]


@pytest.mark.parametrize("where", _wheres())
def test_every_predicate_agrees_with_pruning_off(con: Connection, where: str) -> None:
    sql = f"SELECT i FROM db.t WHERE {where}"
    pruned = outcome(con, sql)
    con.execute("SET iceduck.pruning = false")
    read_all = outcome(con, sql)
    assert pruned == read_all


def test_metrics_of_mapped_columns_still_prune(con: Connection) -> None:
    """Only the unmapped fields lose their metrics: ``i`` (mapped, present) still skips files."""
    lines = [r[0] for r in con.execute("EXPLAIN SELECT * FROM db.t WHERE i = 1000").fetchall()]
    assert any("data files: 1 read, 2 skipped" in line for line in lines), lines


@pytest.mark.parametrize("where", ["b IS NOT NULL", "f >= 0", "b IS NOT NULL AND i < 200"])
def test_delete_settles_no_file_by_untrusted_metrics(con: Connection, where: str) -> None:
    """Strict metrics said every row of the imported files matches; they match none."""
    expected = con.execute(f"SELECT count(*) FROM db.t WHERE NOT ({where}) OR ({where}) IS NULL").fetchall()
    con.execute(f"DELETE FROM db.t WHERE {where}")
    assert con.execute("SELECT count(*) FROM db.t").fetchall() == expected


def _file(**metrics: Any) -> DataFile:
    return DataFile(FileContent.DATA, "/x.parquet", FileFormat.PARQUET, (), 10, 100, **metrics)


def test_trusted_only_keeps_the_provided_ids() -> None:
    f = _file(value_counts={1: 10, 2: 10}, null_value_counts={1: 0, 2: 0}, lower_bounds={2: b"\0"})
    kept = trusted_only(f, frozenset({1}))
    assert (kept.value_counts, kept.null_value_counts, kept.lower_bounds) == ({1: 10}, {1: 0}, {})
    assert trusted_only(f, frozenset({1, 2})) is f


def test_files_with_field_ids_keep_every_metric_and_unknown_files_none() -> None:
    f = _file(value_counts={1: 10}, null_value_counts={1: 0})
    assert MetricsTrust(True, lambda paths: dict.fromkeys(paths)).trusted([f]) == [f]
    assert MetricsTrust(True, None).trusted([f])[0].value_counts == {}
    assert MetricsTrust(False, None).trusted([f]) == [f]
