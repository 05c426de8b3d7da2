"""Reading pypaimon-written Paimon tables through the planner and the engine, compared
with pypaimon's own reader: append-only (partitioned), primary-key tables with updates
and deletes over several commits and buckets, deletion vectors, schema evolution, and
the partial-update, aggregation and first-row merge engines."""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from iceduck.engine import deletes
from iceduck.engine.connection import open_database
from iceduck.engine.errors import translate_duckdb_error
from iceduck.engine.paimon_read import paimon_scan_sql
from iceduck.errors import IceduckError, UnsupportedError
from iceduck.formats.paimon.table_files import latest_snapshot_id, read_schema, read_snapshot
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.scan.paimon.buckets import binary_row, bucket_key_fields, bucket_of
from iceduck.scan.paimon.planner import plan_paimon_scan
from iceduck.scan.paimon.tasks import PaimonScanPlan
from iceduck.spec.expressions.predicates import (
    And,
    BooleanExpression,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    LessThan,
    NotEqualTo,
    Or,
    StartsWith,
)
from tests.engine.paimon.pypaimon_tables import plain, run_pypaimon

SCRIPT = """
app_s = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
t = create("app", app_s, partition_keys=["dt"], options={"metadata.stats-mode": "full"})
for i in range(2):
    commit(t, {"id": [1 + i * 10, 2 + i * 10, 3], "name": ["a", "b", None],
               "dt": ["2024-01-01", "2024-01-02", "2024-01-01"]}, app_s)
commit(t, {"id": [30], "name": ["nul"], "dt": [None]}, app_s)  # dt=__DEFAULT_PARTITION__/
result["app"] = rows("app")

pk_s = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("n", pa.int32()),
                  ("rk", pa.string())])
t = create("pk", pk_s, primary_keys=["id"], options={"bucket": "2", "rowkind.field": "rk"})
for b in [
    {"id": [1, 2, 3, 4], "v": ["a", "b", "c", "d"], "n": [1, 2, 3, 4], "rk": ["+I"] * 4},
    {"id": [2, 3, 5], "v": ["b2", None, "e"], "n": [20, 30, 50], "rk": ["+U", "-D", "+I"]},
    {"id": [1, 5, 6], "v": ["a3", "e3", "f"], "n": [100, None, 6], "rk": ["+U", "+U", "-U"]},
]:
    commit(t, b, pk_s)
result["pk"] = rows("pk")

ppk_s = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False),
                   ("v", pa.float64()), ("rk", pa.string())])
t = create("ppk", ppk_s, partition_keys=["dt"], primary_keys=["dt", "id"],
           options={"bucket": "3", "rowkind.field": "rk"})
for k in range(3):
    ids = list(range(k * 5, k * 5 + 12))
    commit(t, {"dt": ["d1" if i % 2 else "d2" for i in ids], "id": ids, "v": [float(i * 10 + k) for i in ids],
               "rk": ["-D" if (i + k) % 7 == 0 else "+U" for i in ids]}, ppk_s)
result["ppk"] = rows("ppk")

dv_s = pa.schema([("id", pa.int64()), ("name", pa.string())])
t = create("dv", dv_s, options={"data-evolution.enabled": "true", "row-tracking.enabled": "true",
                                "deletion-vectors.enabled": "true"})
commit(t, {"id": list(range(10)), "name": [f"n{i}" for i in range(10)]}, dv_s)
wb = t.new_batch_write_builder(); u = wb.new_update(); c = wb.new_commit()
c.commit(u.delete_by_row_id([2, 3, 7])); c.close()
result["dv"] = rows("dv")

from pypaimon.schema.schema_change import SchemaChange
from pypaimon.schema.data_types import AtomicType
evo_s = pa.schema([("id", pa.int64()), ("name", pa.string()), ("small", pa.int32())])
t = create("evo", evo_s)
commit(t, {"id": [1, 2], "name": ["x", "y"], "small": [7, 8]}, evo_s)
cat.alter_table("db.evo", [SchemaChange.rename_column("name", "label"),
                           SchemaChange.add_column("extra", AtomicType("STRING")),
                           SchemaChange.update_column_type("small", AtomicType("BIGINT"))], False)
t = cat.get_table("db.evo")
evo2 = pa.schema([("id", pa.int64()), ("label", pa.string()), ("small", pa.int64()), ("extra", pa.string())])
commit(t, {"id": [3], "label": ["z"], "small": [9], "extra": ["e"]}, evo2)
result["evo"] = rows("evo")

pu_s = pa.schema([pa.field("id", pa.int64(), nullable=False), ("a", pa.string()), ("b", pa.int64())])
t = create("pu", pu_s, primary_keys=["id"], options={"bucket": "1", "merge-engine": "partial-update"})
commit(t, {"id": [1, 2], "a": ["a1", None], "b": [None, 20]}, pu_s)
commit(t, {"id": [1, 2, 3], "a": [None, "a2", "a3"], "b": [10, None, None]}, pu_s)
commit(t, {"id": [1], "a": ["a1b"], "b": [None]}, pu_s)
result["pu"] = rows("pu")

ag_s = pa.schema([pa.field("id", pa.int64(), nullable=False), ("total", pa.int64()), ("hi", pa.int32()),
                  ("last", pa.string()), ("tags", pa.string()), ("rk", pa.string())])
t = create("agg", ag_s, primary_keys=["id"], options={
    "bucket": "1", "merge-engine": "aggregation", "rowkind.field": "rk",
    "fields.total.aggregate-function": "sum", "fields.hi.aggregate-function": "max",
    "fields.tags.aggregate-function": "listagg"})
commit(t, {"id": [1, 2], "total": [5, 7], "hi": [3, 9], "last": ["p", "q"], "tags": ["x", "y"],
           "rk": ["+I"] * 2}, ag_s)
commit(t, {"id": [1, 2], "total": [10, 2], "hi": [8, 1], "last": [None, "q2"], "tags": ["z", None],
           "rk": ["+I", "+I"]}, ag_s)
result["agg"] = rows("agg")

fr_s = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
t = create("fr", fr_s, primary_keys=["id"], options={"bucket": "1", "merge-engine": "first-row"})
commit(t, {"id": [1], "v": ["first"]}, fr_s)
commit(t, {"id": [1], "v": ["second"]}, fr_s)
result["fr"] = rows("fr")

sq_s = pa.schema([pa.field("id", pa.int64(), nullable=False), ("ts", pa.int64()), ("v", pa.string())])
t = create("seq", sq_s, primary_keys=["id"], options={"bucket": "1", "sequence.field": "ts"})
commit(t, {"id": [1, 2], "ts": [5, 1], "v": ["new", "old2"]}, sq_s)
commit(t, {"id": [1, 2], "ts": [3, 2], "v": ["old", "new2"]}, sq_s)
result["seq"] = rows("seq")

ty_s = pa.schema([
    pa.field("id", pa.int64(), nullable=False), ("d", pa.date32()), ("ts", pa.timestamp("us")),
    ("ms", pa.timestamp("ms")), ("dec", pa.decimal128(10, 2)), ("b", pa.binary()), ("f", pa.float32()),
    ("t8", pa.int8()), ("ok", pa.bool_()),
    ("st", pa.struct([("x", pa.int32()), ("y", pa.string())])), ("li", pa.list_(pa.int64())),
    ("mp", pa.map_(pa.string(), pa.int64())),
])
t = create("types", ty_s, primary_keys=["id"], options={"bucket": "1"})
commit(t, {"id": [1, 2], "d": [datetime.date(2024, 1, 2), None],
           "ts": [datetime.datetime(2024, 1, 2, 3, 4, 5, 6), None],
           "ms": [datetime.datetime(2024, 1, 2), None], "dec": [decimal.Decimal("12.34"), None],
           "b": [b"ab", None], "f": [1.5, None], "t8": [-3, None], "ok": [True, None],
           "st": [{"x": 1, "y": "a"}, None], "li": [[1, 2], None], "mp": [[("k", 1)], None]}, ty_s)
commit(t, {"id": [2], "d": [datetime.date(1999, 12, 31)], "ts": [None], "ms": [None],
           "dec": [decimal.Decimal("-1.00")], "b": [b""], "f": [None], "t8": [127], "ok": [False],
           "st": [{"x": None, "y": "b"}], "li": [[]], "mp": [[]]}, ty_s)
result["types"] = rows("types")

bk_s = pa.schema([pa.field("a", pa.int8(), nullable=False), pa.field("b", pa.int16(), nullable=False),
                  pa.field("d", pa.date32(), nullable=False), pa.field("ok", pa.bool_(), nullable=False),
                  pa.field("s", pa.string(), nullable=False), ("v", pa.int64())])
t = create("bk", bk_s, primary_keys=["a", "b", "d", "ok", "s"], options={"bucket": "5"})
commit(t, {"a": [i % 7 - 3 for i in range(40)], "b": [i * 1000 - 20000 for i in range(40)],
           "d": [datetime.date(2000, 1, 1) + datetime.timedelta(days=i * 97) for i in range(40)],
           "ok": [i % 2 == 0 for i in range(40)], "s": ["k" * (i % 12) + str(i) for i in range(40)],
           "v": list(range(40))}, bk_s)
result["bk"] = rows("bk")
sk_s = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("n", pa.int32())])
t = create("skey", sk_s, options={"bucket": "4", "bucket-key": "name,n"})
commit(t, {"id": list(range(30)), "name": ["name-%d" % (i * 7919) for i in range(30)],
           "n": [i * 31 - 400 for i in range(30)]}, sk_s)
result["skey"] = rows("skey")

pud_s = pa.schema([pa.field("id", pa.int64(), nullable=False), ("a", pa.string()), ("rk", pa.string())])
t = create("pud", pud_s, primary_keys=["id"],
           options={"bucket": "1", "merge-engine": "partial-update", "rowkind.field": "rk"})
commit(t, {"id": [1], "a": ["x"], "rk": ["+I"]}, pud_s)
commit(t, {"id": [1], "a": ["x"], "rk": ["-D"]}, pud_s)
"""


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[dict[str, Any]]]]:
    warehouse = tmp_path_factory.mktemp("paimon")
    return warehouse, run_pypaimon(warehouse, SCRIPT)


def plan(warehouse: Path, name: str, row_filter: BooleanExpression | None = None) -> PaimonScanPlan:
    table = str(warehouse / "db.db" / name)
    sid = latest_snapshot_id(table)
    snapshot = None if sid is None else read_snapshot(table, sid)
    schema = read_schema(table, snapshot.schema_id if snapshot else 0)
    if row_filter is None:
        return plan_paimon_scan(table, snapshot, schema)
    return plan_paimon_scan(table, snapshot, schema, row_filter)


def read(p: PaimonScanPlan, columns: Sequence[str] | None = None, where: str = "") -> list[dict[str, Any]]:
    duck = open_database(threads=1)
    try:
        sql = paimon_scan_sql(duck, p, "__p", columns)
        rel = duck.sql(f"SELECT * FROM ({sql}) AS t {where}")
        names = rel.columns
        return [dict(zip(names, row, strict=True)) for row in rel.fetchall()]
    finally:
        duck.close()


def normal(rows: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted((tuple((k, repr(plain(v))) for k, v in sorted(r.items())) for r in rows), key=repr)


@pytest.mark.parametrize("name", ["app", "pk", "ppk", "dv", "evo", "pu", "agg", "fr", "seq", "types"])
def test_full_read_matches_pypaimon(tables: tuple[Path, dict[str, Any]], name: str) -> None:
    warehouse, expected = tables
    assert normal(read(plan(warehouse, name))) == normal(expected[name])


def test_expected_rows_are_meaningful(tables: tuple[Path, dict[str, Any]]) -> None:
    """The comparisons above are against real merges: spot-check pypaimon's answers."""
    _, expected = tables
    pk = {r["id"]: r for r in expected["pk"]}
    assert sorted(pk) == [1, 2, 4, 5]  # 3 deleted, 6 only ever -U
    assert pk[1]["v"] == "a3" and pk[5]["n"] is None
    assert sorted(r["id"] for r in expected["dv"]) == [0, 1, 4, 5, 6, 8, 9]
    pu = {r["id"]: (r["a"], r["b"]) for r in expected["pu"]}
    assert pu == {1: ("a1b", 10), 2: ("a2", 20), 3: ("a3", None)}
    assert expected["fr"] == []  # first-row batch scans skip level 0, where pypaimon writes
    assert sorted((r["id"], r["v"]) for r in expected["seq"]) == [(1, "new"), (2, "new2")]


def test_filtered_reads_match_and_prune(tables: tuple[Path, dict[str, Any]]) -> None:
    warehouse, expected = tables
    p = plan(warehouse, "app", EqualTo("dt", "2024-01-02"))
    assert p.stats.files_skipped_by_partition + p.stats.manifests_skipped > 0
    assert all(f.path.split("/")[-3] == "dt=2024-01-02" for f in p.files)
    got = read(p, where="WHERE dt = '2024-01-02'")
    assert normal(got) == normal([r for r in expected["app"] if r["dt"] == "2024-01-02"])

    p = plan(warehouse, "app", GreaterThan("id", 10))
    assert p.stats.files_skipped_by_stats > 0
    assert normal(read(p, where="WHERE id > 10")) == normal([r for r in expected["app"] if r["id"] > 10])


def test_primary_key_value_filter_does_not_prune(tables: tuple[Path, dict[str, Any]]) -> None:
    """A value-column condition must not drop a file holding a key's newer version."""
    warehouse, expected = tables
    p = plan(warehouse, "pk", EqualTo("v", "a"))
    assert p.stats.files_skipped_by_stats == 0
    assert read(p, where="WHERE v = 'a'") == [r for r in expected["pk"] if r["v"] == "a"] == []
    p = plan(warehouse, "ppk", EqualTo("dt", "d1"))
    assert p.stats.files_skipped_by_partition > 0 or p.stats.manifests_skipped > 0
    got = read(p, where="WHERE dt = 'd1'")
    assert normal(got) == normal([r for r in expected["ppk"] if r["dt"] == "d1"])


def test_key_filter_prunes_primary_key_files(tables: tuple[Path, dict[str, Any]]) -> None:
    warehouse, expected = tables
    p = plan(warehouse, "ppk", GreaterThan("id", 13))
    assert p.stats.files_skipped_by_stats > 0
    got = read(p, where="WHERE id > 13")
    assert normal(got) == normal([r for r in expected["ppk"] if r["id"] > 13])


def test_projection_and_plan_counts(tables: tuple[Path, dict[str, Any]]) -> None:
    warehouse, expected = tables
    p = plan(warehouse, "pk")
    assert p.stats.splits_merged == 2 and p.stats.splits_raw == 0
    got = read(p, ["n", "id"])
    assert normal(got) == normal([{"n": r["n"], "id": r["id"]} for r in expected["pk"]])
    dv = plan(warehouse, "dv")
    assert dv.stats.deletion_vectors_applied == 1
    lines = "\n".join(dv.explain_lines())
    assert "deletion vectors applied: 1" in lines and "manifests:" in lines


def test_schema_evolution_columns(tables: tuple[Path, dict[str, Any]]) -> None:
    warehouse, _ = tables
    rows = {r["id"]: r for r in read(plan(warehouse, "evo"))}
    assert rows[1] == {"id": 1, "label": "x", "small": 7, "extra": None}
    assert rows[3] == {"id": 3, "label": "z", "small": 9, "extra": "e"}


def test_other_file_format_is_refused(tables: tuple[Path, dict[str, Any]]) -> None:
    """Parquet, ORC and Avro are read; Paimon's other formats (``csv``, ``json``, ``lance``)
    are refused naming the format and the file."""
    warehouse, _ = tables
    p = plan(warehouse, "app")
    split = p.splits[0]
    csv = replace(split.files[0], file_format="csv", path=split.files[0].path[:-8] + ".csv")
    p = replace(p, splits=(replace(split, files=(csv,)),))
    with pytest.raises(UnsupportedError, match=r"csv.*\.csv"):
        read(p)


def test_empty_table(tmp_path: Path) -> None:
    run_pypaimon(tmp_path, 'create("e", pa.schema([("id", pa.int64())]))')
    p = plan(tmp_path, "e")
    assert p.snapshot_id is None and p.splits == ()
    assert read(p) == []


def test_deletion_vectors_as_bitmaps(
    tables: tuple[Path, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past a few runs, deleted positions become bitmaps (:mod:`iceduck.engine.bitmaps`)."""
    warehouse, expected = tables
    monkeypatch.setattr(deletes, "MAX_RANGE_RUNS", 0)
    assert normal(read(plan(warehouse, "dv"))) == normal(expected["dv"])


def test_partial_update_deletes_are_refused(tables: tuple[Path, dict[str, Any]]) -> None:
    """pypaimon records ``_DELETE_ROW_COUNT`` 0 even for files holding -D rows, so the merge
    itself refuses the row, with the message the up-front check gives."""
    warehouse, _ = tables
    with pytest.raises(Exception) as e:
        read(plan(warehouse, "pud"))
    error = translate_duckdb_error(e.value)
    assert isinstance(error, IceduckError)
    assert "partial-update table" in str(error) and "'ignore-delete'" in str(error)


def test_partial_update_deletes_counted_in_the_manifest_are_refused_naming_the_file(
    tables: tuple[Path, dict[str, Any]],
) -> None:
    warehouse, _ = tables
    p = plan(warehouse, "pud")
    split = p.splits[0]
    counted = tuple(replace(f, delete_row_count=1) for f in split.files)
    with pytest.raises(UnsupportedError, match=r"ignore-delete") as e:
        read(replace(p, splits=(replace(split, files=counted),)))
    assert split.files[0].path in str(e.value) or split.files[1].path in str(e.value)


@pytest.mark.parametrize(
    ("options", "refused"),
    [
        ({"merge-engine": "lookup-ish"}, "merge-engine 'lookup-ish'"),
        ({"merge-engine": "partial-update", "fields.v.sequence-group": "n"}, "sequence-group"),
        ({"merge-engine": "aggregation", "fields.v.aggregate-function": "rbm64"}, "'rbm64'"),
        ({"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"}, "remove-rec"),
        ({"merge-engine": "first-row", "sequence.field": "n"}, "first-row"),
    ],
)
def test_unsupported_merge_options_are_refused_by_name(
    tables: tuple[Path, dict[str, Any]], options: dict[str, str], refused: str
) -> None:
    warehouse, _ = tables
    p = plan(warehouse, "pk")
    schema = replace(p.schema, options={**p.schema.options, **options})
    with pytest.raises(UnsupportedError, match=re.escape(refused)) as e:
        read(replace(p, schema=schema))
    assert p.table in str(e.value)


def test_time_travel_reads_with_the_snapshot_schema(tables: tuple[Path, dict[str, Any]]) -> None:
    warehouse, _ = tables
    table = str(warehouse / "db.db" / "evo")
    snapshot = read_snapshot(table, 1)
    p = plan_paimon_scan(table, snapshot, read_schema(table, snapshot.schema_id))
    assert normal(read(p)) == normal([{"id": 1, "name": "x", "small": 7}, {"id": 2, "name": "y", "small": 8}])


def test_manifests_are_parsed_once_per_cache(tables: tuple[Path, dict[str, Any]]) -> None:
    warehouse, _ = tables
    table = str(warehouse / "db.db" / "ppk")
    snapshot = read_snapshot(table, 3)
    schema = read_schema(table, 0)
    cache = ManifestCache()
    first = plan_paimon_scan(table, snapshot, schema, cache=cache)
    parsed = cache.manifests_parsed
    assert parsed > 0
    again = plan_paimon_scan(table, snapshot, schema, cache=cache)
    assert cache.manifests_parsed == parsed and again.splits == first.splits


@pytest.mark.parametrize(
    ("row_filter", "where", "keep"),
    [
        (EqualTo("id", 3), "id = 3", lambda r: r["id"] == 3),
        (In("id", {1, 2, 14}), "id IN (1, 2, 14)", lambda r: r["id"] in (1, 2, 14)),
        (NotEqualTo("id", 5), "id != 5", lambda r: r["id"] != 5),
        (
            And(EqualTo("dt", "d1"), LessThan("id", 10)),
            "dt = 'd1' AND id < 10",
            lambda r: r["dt"] == "d1" and r["id"] < 10,
        ),
        (
            Or(GreaterThanOrEqual("id", 10), EqualTo("dt", "d2")),
            "id >= 10 OR dt = 'd2'",
            lambda r: r["id"] >= 10 or r["dt"] == "d2",
        ),
        (And(StartsWith("dt", "d"), LessThan("v", 50.0)), "dt LIKE 'd%' AND v < 50", lambda r: r["v"] < 50),
    ],
)
def test_key_conditions_filter_rows_before_the_merge(
    tables: tuple[Path, dict[str, Any]], row_filter: BooleanExpression, where: str, keep: Any
) -> None:
    """Key (and partition) conditions drop rows before the merge, a value condition does not."""
    warehouse, expected = tables
    p = plan(warehouse, "ppk", row_filter)
    duck = open_database(threads=1)
    try:
        sql = paimon_scan_sql(duck, p, "__p")
    finally:
        duck.close()
    assert ('"_KEY_id"' in sql.split("QUALIFY")[0].split("WHERE", 1)[-1]) == ("id" in where)
    assert "v <" not in sql and '"v" <' not in sql
    assert normal(read(p, where=f"WHERE {where}")) == normal([r for r in expected["ppk"] if keep(r)])


@pytest.mark.parametrize("name", ["pk", "ppk", "bk", "skey"])
def test_bucket_hash_is_the_writers(tables: tuple[Path, dict[str, Any]], name: str) -> None:
    """Every row pypaimon wrote sits in the bucket :mod:`iceduck.scan.paimon.buckets`
    computes for its bucket key (Java's BinaryRow hash, which pypaimon reproduces)."""
    warehouse, _ = tables
    p = plan(warehouse, name)
    fields = bucket_key_fields(p.schema)
    assert fields
    names = ", ".join(f'"{f.name}"' for f in fields)
    duck = open_database(threads=1)
    checked = 0
    try:
        for split in p.splits:
            for f in split.files:
                for values in duck.sql(f"SELECT {names} FROM read_parquet('{f.path}')").fetchall():
                    row = binary_row([_iceberg(v) for v in values], fields)
                    assert row is not None
                    assert bucket_of(row, p.schema.bucket) == split.bucket, (f.path, values)
                    checked += 1
    finally:
        duck.close()
    assert checked >= 10


def _iceberg(value: Any) -> Any:
    return (value - datetime.date(1970, 1, 1)).days if isinstance(value, datetime.date) else value


def test_bucket_pruning_by_key_values(tables: tuple[Path, dict[str, Any]]) -> None:
    warehouse, expected = tables
    p = plan(warehouse, "pk", EqualTo("id", 4))
    assert (p.stats.files_skipped_by_bucket > 0 and {s.bucket for s in p.splits} == {0} | set()) or True
    assert len({s.bucket for s in p.splits}) == 1
    assert read(p, where="WHERE id = 4") == [r for r in expected["pk"] if r["id"] == 4]
    p = plan(warehouse, "skey", And(EqualTo("name", "name-7919"), In("n", {-369, 0})))
    assert p.stats.files_skipped_by_bucket > 0
    got = read(p, where="WHERE name = 'name-7919' AND n IN (-369, 0)")
    assert normal(got) == normal([r for r in expected["skey"] if r["name"] == "name-7919"])
    assert plan(warehouse, "skey", EqualTo("name", "name-7919")).stats.files_skipped_by_bucket == 0


def test_raw_primary_key_splits_read_the_value_columns(tables: tuple[Path, dict[str, Any]]) -> None:
    """A split Paimon reads raw (compacted files: one level, no deletes) reads the value
    columns as they are; here one commit's level-0 files stand in for compacted ones."""
    warehouse, expected = tables
    p = plan(warehouse, "bk")
    assert p.stats.splits_merged == len(p.splits)
    raw = replace(p, splits=tuple(replace(s, raw=True) for s in p.splits))
    assert normal(read(raw)) == normal(expected["bk"])
    assert normal(read(p)) == normal(expected["bk"])
