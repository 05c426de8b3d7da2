"""Write the Paimon test warehouse with pypaimon, and what pypaimon itself reads back from it.

Runs in the pypaimon venv (``tests/support/paimon.py`` creates it), as a subprocess, so it must
not import iceduck: the expected results come from the Paimon project's own Python SDK, never
from the code under test. Usage::

    python paimon_writer.py <warehouse folder>

It writes database ``db`` (the tables below, several commits each, a tag on ``pk``) and, for every
table, every snapshot id and every tag, pypaimon's full read as
``<wh>/_expected/<table>/snapshot-<id>.parquet`` (``tag-<name>.parquet``), plus filtered reads
through pypaimon's predicate builder; ``<wh>/_expected/index.json`` lists them all with the SQL
``WHERE`` text iceduck should be given for each, and ``<wh>/_expected/notes.json`` records what
pypaimon refused to write. The data is deterministic (fixed seeds), so two runs write the same rows.

pypaimon's filters are applied to the rows it reads (not only for pruning); each filtered read is
also checked here against the full read filtered by an equivalent pyarrow expression, so an
expected file is never a pruning-only over-approximation.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import random
import shutil
import sys
import traceback
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pypaimon import CatalogFactory, Schema
from pypaimon.schema.schema_change import SchemaChange

#: a pypaimon predicate from a predicate builder, and the same filter as a pyarrow expression
Filter = tuple[str, Callable[[Any], Any], pc.Expression]

DAYS = ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"]


def commit(table: Any, data: pa.Table) -> None:
    """One batch commit, as pypaimon's README writes one."""
    wb = table.new_batch_write_builder()
    write, cmt = wb.new_write(), wb.new_commit()
    write.write_arrow(data)
    cmt.commit(write.prepare_commit())
    write.close()
    cmt.close()


# ---------------------------------------------------------------- append_part

APPEND_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("t8", pa.int8()),
        ("t16", pa.int16()),
        ("t32", pa.int32()),
        ("f32", pa.float32()),
        ("f64", pa.float64()),
        ("d10", pa.decimal128(10, 2)),
        ("d30", pa.decimal128(30, 5)),
        ("s", pa.string()),
        ("b", pa.binary()),
        ("flag", pa.bool_()),
        ("day", pa.date32()),
        ("ts3", pa.timestamp("ms")),
        ("ts6", pa.timestamp("us")),
        ("tsltz", pa.timestamp("us", tz="UTC")),
        ("arr", pa.list_(pa.int32())),
        ("st", pa.struct([("a", pa.int32()), ("b", pa.string())])),
        ("dt", pa.string()),
        ("region", pa.int32()),
    ]
)


def maybe(rng: random.Random, value: Any, p: float = 0.1) -> Any:
    """``value`` or (with probability ``p``) None: nulls in every nullable column."""
    return None if rng.random() < p else value


def append_rows(rng: random.Random, start: int, n: int, days: list[str]) -> pa.Table:
    base = dt.datetime(2024, 1, 1)
    rows: dict[str, list[Any]] = {f.name: [] for f in APPEND_SCHEMA}
    for i in range(start, start + n):
        day = days[i % len(days)]
        rows["id"].append(i)
        rows["t8"].append(maybe(rng, rng.randint(-128, 127)))
        rows["t16"].append(maybe(rng, rng.randint(-32768, 32767)))
        rows["t32"].append(maybe(rng, rng.randint(-(2**31), 2**31 - 1)))
        rows["f32"].append(maybe(rng, float(rng.randint(-1000, 1000)) / 4))
        rows["f64"].append(maybe(rng, rng.uniform(-1e6, 1e6)))
        rows["d10"].append(maybe(rng, Decimal(rng.randint(-(10**9), 10**9)).scaleb(-2)))
        rows["d30"].append(maybe(rng, Decimal(rng.randint(-(10**25), 10**25)).scaleb(-5)))
        rows["s"].append(maybe(rng, f"s{rng.randint(0, 500):04d}" + "x" * rng.randint(0, 12)))
        rows["b"].append(maybe(rng, bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 10)))))
        rows["flag"].append(maybe(rng, rng.random() < 0.5))
        rows["day"].append(maybe(rng, dt.date(2020, 1, 1) + dt.timedelta(days=rng.randint(0, 2000))))
        offset = dt.timedelta(seconds=rng.randint(0, 10**8), microseconds=rng.randint(0, 999999))
        rows["ts3"].append(
            maybe(rng, (base + offset).replace(microsecond=(offset.microseconds // 1000) * 1000))
        )
        rows["ts6"].append(maybe(rng, base - offset))
        rows["tsltz"].append(maybe(rng, (base + offset).replace(tzinfo=dt.UTC)))
        rows["arr"].append(maybe(rng, [maybe(rng, rng.randint(0, 9)) for _ in range(rng.randint(0, 4))]))
        rows["st"].append(maybe(rng, {"a": maybe(rng, rng.randint(0, 99)), "b": maybe(rng, f"b{i % 7}")}))
        rows["dt"].append(day)
        rows["region"].append(None if i % 97 == 0 else i % 3)
    return pa.table(rows, schema=APPEND_SCHEMA)


def write_append_part(cat: Any) -> Any:
    cat.create_table(
        "db.append_part", Schema.from_pyarrow_schema(APPEND_SCHEMA, partition_keys=["dt", "region"]), False
    )
    t = cat.get_table("db.append_part")
    rng = random.Random(17)
    commit(t, append_rows(rng, 0, 1500, DAYS[:2]))
    commit(t, append_rows(rng, 1500, 1500, DAYS[1:3]))
    commit(t, append_rows(rng, 3000, 1000, DAYS[3:]))
    # an INSERT OVERWRITE of one day: the manifests then hold DELETE entries (_KIND 1) for its files
    wb = t.new_batch_write_builder().overwrite({"dt": DAYS[0]})
    write, cmt = wb.new_write(), wb.new_commit()
    write.write_arrow(append_rows(rng, 4000, 300, DAYS[:1]))
    cmt.commit(write.prepare_commit())
    write.close()
    cmt.close()
    return t


APPEND_FILTERS: list[Filter] = [
    ("id = 1235", lambda pb: pb.equal("id", 1235), pc.field("id") == 1235),
    ("dt = '2024-01-04'", lambda pb: pb.equal("dt", "2024-01-04"), pc.field("dt") == "2024-01-04"),
    (
        "dt = '2024-01-02' AND region = 1",
        lambda pb: pb.and_predicates([pb.equal("dt", "2024-01-02"), pb.equal("region", 1)]),
        (pc.field("dt") == "2024-01-02") & (pc.field("region") == 1),
    ),
    (
        "id >= 1000 AND id < 1100",
        lambda pb: pb.between("id", 1000, 1099),
        (pc.field("id") >= 1000) & (pc.field("id") < 1100),
    ),
    ("t32 IS NULL", lambda pb: pb.is_null("t32"), pc.field("t32").is_null()),
    ("region IS NULL", lambda pb: pb.is_null("region"), pc.field("region").is_null()),
    (
        "id IN (3, 1501, 3999, 99999)",
        lambda pb: pb.is_in("id", [3, 1501, 3999, 99999]),
        pc.field("id").isin([3, 1501, 3999, 99999]),
    ),
    (
        "d10 > 5000000.00",
        lambda pb: pb.greater_than("d10", Decimal("5000000.00")),
        pc.field("d10") > pa.scalar(Decimal("5000000.00"), pa.decimal128(10, 2)),
    ),
]


# ---------------------------------------------------------------- pk tables

PK_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("v", pa.string()),
        ("n", pa.int32()),
        ("amount", pa.decimal128(10, 2)),
        ("ts", pa.timestamp("us")),
        ("rk", pa.string()),
    ]
)


def pk_batches(seed: int, commits: int, keys: int) -> list[pa.Table]:
    """``commits`` batches over overlapping key ranges: inserts, updates (+U) and deletes (-D)."""
    rng = random.Random(seed)
    out = []
    for c in range(commits):
        lo = c * keys // 3
        ids = sorted(rng.sample(range(lo, lo + keys), keys // 2))
        rows: dict[str, list[Any]] = {f.name: [] for f in PK_SCHEMA}
        for i in ids:
            kind = "+I" if c == 0 else rng.choice(["+I", "+U", "+U", "-D"])
            rows["id"].append(i)
            rows["v"].append(maybe(rng, f"v{i}-{c}"))
            rows["n"].append(maybe(rng, rng.randint(-1000, 1000)))
            rows["amount"].append(maybe(rng, Decimal(rng.randint(-(10**6), 10**6)).scaleb(-2)))
            rows["ts"].append(
                maybe(rng, dt.datetime(2024, 1, 1) + dt.timedelta(seconds=rng.randint(0, 10**7)))
            )
            rows["rk"].append(kind)
        out.append(pa.table(rows, schema=PK_SCHEMA))
    return out


def write_pk(cat: Any, name: str, options: dict[str, str], seed: int = 5) -> Any:
    opts = {"bucket": "2", "rowkind.field": "rk", **options}
    cat.create_table(
        f"db.{name}", Schema.from_pyarrow_schema(PK_SCHEMA, primary_keys=["id"], options=opts), False
    )
    t = cat.get_table(f"db.{name}")
    for batch in pk_batches(seed, 6, 300):
        commit(t, batch)
    return t


PK_FILTERS: list[Filter] = [
    ("id = 150", lambda pb: pb.equal("id", 150), pc.field("id") == 150),
    (
        "id IN (1, 2, 250, 400, 9999)",
        lambda pb: pb.is_in("id", [1, 2, 250, 400, 9999]),
        pc.field("id").isin([1, 2, 250, 400, 9999]),
    ),
    (
        "n >= 0 AND n < 200",
        lambda pb: pb.and_predicates([pb.greater_or_equal("n", 0), pb.less_than("n", 200)]),
        (pc.field("n") >= 0) & (pc.field("n") < 200),
    ),
    ("v IS NULL", lambda pb: pb.is_null("v"), pc.field("v").is_null()),
    ("id > 500", lambda pb: pb.greater_than("id", 500), pc.field("id") > 500),
]

PK_PART_SCHEMA = pa.schema(
    [
        pa.field("dt", pa.string(), nullable=False),
        pa.field("id", pa.int64(), nullable=False),
        ("v", pa.string()),
        ("n", pa.int64()),
        ("rk", pa.string()),
    ]
)


def write_pk_part(cat: Any) -> Any:
    """Partitions appear in later commits too. A partition's first commit inserts only: pypaimon
    records ``_DELETE_ROW_COUNT`` 0 for files holding -D rows, and a bucket of one such file is
    then "raw convertible" (Paimon's MergeTreeSplitGenerator: one file, no delete rows), read
    without merging, so pypaimon's reader returns -D rows of a new partition as live rows."""
    opts = {"bucket": "4", "rowkind.field": "rk"}
    schema = Schema.from_pyarrow_schema(
        PK_PART_SCHEMA, partition_keys=["dt"], primary_keys=["dt", "id"], options=opts
    )
    cat.create_table("db.pk_part", schema, False)
    t = cat.get_table("db.pk_part")
    rng = random.Random(11)
    seen: set[str] = set()
    for c in range(5):
        rows: dict[str, list[Any]] = {f.name: [] for f in PK_PART_SCHEMA}
        for day in DAYS[: 2 + c % 3]:
            kinds = ["+I", "+U", "-D"] if day in seen else ["+I"]
            seen.add(day)
            for i in sorted(rng.sample(range(c * 40, c * 40 + 200), 60)):
                rows["dt"].append(day)
                rows["id"].append(i)
                rows["v"].append(maybe(rng, f"{day}/{i}/{c}"))
                rows["n"].append(maybe(rng, rng.randint(0, 10**12)))
                rows["rk"].append(rng.choice(kinds))
        commit(t, pa.table(rows, schema=PK_PART_SCHEMA))
    return t


PK_PART_FILTERS: list[Filter] = [
    ("dt = '2024-01-02'", lambda pb: pb.equal("dt", "2024-01-02"), pc.field("dt") == "2024-01-02"),
    (
        "dt = '2024-01-03' AND id = 119",
        lambda pb: pb.and_predicates([pb.equal("dt", "2024-01-03"), pb.equal("id", 119)]),
        (pc.field("dt") == "2024-01-03") & (pc.field("id") == 119),
    ),
    (
        "id BETWEEN 100 AND 130",
        lambda pb: pb.between("id", 100, 130),
        (pc.field("id") >= 100) & (pc.field("id") <= 130),
    ),
    ("n IS NULL", lambda pb: pb.is_null("n"), pc.field("n").is_null()),
]


def write_pk_dv(cat: Any) -> Any:
    """A primary-key table with ``deletion-vectors.enabled``: pypaimon writes its level-0 files only."""
    return write_pk(cat, "pk_dv", {"deletion-vectors.enabled": "true"}, seed=7)


APPEND_DV_SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("s", pa.string()), ("n", pa.int32())]
)


def write_append_dv(cat: Any) -> Any:
    """An append-only table with deletion vectors: pypaimon deletes rows of an append table only on a
    ``data-evolution.enabled`` + ``row-tracking.enabled`` table (``TableUpdate.delete_by_predicate``),
    which it records as deletion vectors in the index manifest."""
    opts = {
        "deletion-vectors.enabled": "true",
        "row-tracking.enabled": "true",
        "data-evolution.enabled": "true",
    }
    cat.create_table("db.append_dv", Schema.from_pyarrow_schema(APPEND_DV_SCHEMA, options=opts), False)
    t = cat.get_table("db.append_dv")
    for c in range(2):
        ids = list(range(c * 500, c * 500 + 500))
        commit(
            t,
            pa.table(
                {"id": ids, "s": [f"s{i % 13}" for i in ids], "n": [i % 17 for i in ids]},
                schema=APPEND_DV_SCHEMA,
            ),
        )
    for predicate in (
        lambda pb: pb.equal("n", 3),
        lambda pb: pb.between("id", 100, 160),
        lambda pb: pb.equal("s", "s5"),
    ):
        wb = t.new_batch_write_builder()
        update = wb.new_update()
        messages = update.delete_by_predicate(predicate(t.new_read_builder().new_predicate_builder()))
        cmt = wb.new_commit()
        cmt.commit(messages)
        cmt.close()
    return t


APPEND_DV_FILTERS: list[Filter] = [
    ("id = 101", lambda pb: pb.equal("id", 101), pc.field("id") == 101),
    ("n = 4", lambda pb: pb.equal("n", 4), pc.field("n") == 4),
]

EVOLVED_SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("a", pa.int32()), ("b", pa.string()), ("c", pa.float64())]
)


def write_evolved(cat: Any, notes: dict[str, Any]) -> Any:
    """Commits between schema changes made through ``Catalog.alter_table``; a change pypaimon refuses
    is recorded in ``notes`` and skipped (the table's later commits follow the schema it has)."""
    cat.create_table(
        "db.evolved", Schema.from_pyarrow_schema(EVOLVED_SCHEMA, options={"bucket": "-1"}), False
    )
    t = cat.get_table("db.evolved")
    next_id = 0

    def write(t: Any) -> None:
        nonlocal next_id
        schema = t.table_schema
        arrow = pa.schema([pa.field(f.name, to_arrow(f), nullable=f.type.nullable) for f in schema.fields])
        rows: dict[str, list[Any]] = {f.name: [] for f in arrow}
        for i in range(next_id, next_id + 50):
            for f in arrow:
                if f.name == "id":
                    rows["id"].append(i)
                elif pa.types.is_integer(f.type):
                    rows[f.name].append(
                        None if i % 9 == 0 else i * 1000003 if pa.types.is_int64(f.type) else i
                    )
                elif pa.types.is_floating(f.type):
                    rows[f.name].append(None if i % 7 == 0 else i / 8)
                else:
                    rows[f.name].append(None if i % 5 == 0 else f"{f.name}{i}")
        next_id += 50
        commit(t, pa.table(rows, schema=arrow))

    write(t)
    changes = [
        ("add column e string", SchemaChange.add_column("e", _paimon_type("STRING"))),
        ("rename column b to b2", SchemaChange.rename_column("b", "b2")),
        ("widen a int to bigint", SchemaChange.update_column_type("a", _paimon_type("BIGINT"))),
        ("drop column c", SchemaChange.drop_column("c")),
    ]
    applied = []
    for label, change in changes:
        try:
            cat.alter_table("db.evolved", [change], False)
        except Exception as e:
            notes.setdefault("refused", []).append(
                {"table": "evolved", "change": label, "error": f"{type(e).__name__}: {e}"}
            )
            continue
        applied.append(label)
        t = cat.get_table("db.evolved")
        write(t)
    notes["evolved_changes"] = applied
    return cat.get_table("db.evolved")


#: filters on the current names of an added, a renamed and a widened column
EVOLVED_FILTERS: list[Filter] = [
    ("e IS NULL", lambda pb: pb.is_null("e"), pc.field("e").is_null()),
    ("b2 = 'b12'", lambda pb: pb.equal("b2", "b12"), pc.field("b2") == "b12"),
    ("a > 200", lambda pb: pb.greater_than("a", 200), pc.field("a") > 200),
]


def _paimon_type(name: str) -> Any:
    from pypaimon.schema.data_types import AtomicType

    return AtomicType(name)


def to_arrow(field: Any) -> pa.DataType:
    from pypaimon.schema.data_types import PyarrowFieldParser

    return PyarrowFieldParser.from_paimon_type(field.type)


# ---------------------------------------------------------------- merge engines, formats

ENGINE_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("total", pa.int64()),
        ("hi", pa.int32()),
        ("lo", pa.float64()),
        ("last", pa.string()),
        ("dflt", pa.string()),
    ]
)

ENGINES: dict[str, dict[str, str]] = {
    "partial": {"merge-engine": "partial-update"},
    "agg": {
        "merge-engine": "aggregation",
        "fields.total.aggregate-function": "sum",
        "fields.hi.aggregate-function": "max",
        "fields.lo.aggregate-function": "min",
        "fields.last.aggregate-function": "last_non_null_value",
    },
    "first": {"merge-engine": "first-row"},
}


def engine_batches(seed: int) -> list[pa.Table]:
    """Four commits over overlapping keys with nulls, so each engine's rule changes the answer."""
    rng = random.Random(seed)
    out = []
    for c in range(4):
        ids = sorted(rng.sample(range(c * 20, c * 20 + 80), 40))
        out.append(
            pa.table(
                {
                    "id": ids,
                    "total": [maybe(rng, rng.randint(-100, 100), 0.3) for _ in ids],
                    "hi": [maybe(rng, rng.randint(-100, 100), 0.3) for _ in ids],
                    "lo": [maybe(rng, rng.randint(-100, 100) / 4, 0.3) for _ in ids],
                    "last": [maybe(rng, f"l{c}-{i}", 0.3) for i in ids],
                    "dflt": [maybe(rng, f"d{c}-{i}", 0.3) for i in ids],
                },
                schema=ENGINE_SCHEMA,
            )
        )
    return out


def write_engine(cat: Any, name: str, notes: dict[str, Any]) -> Any | None:
    opts = {"bucket": "2", **ENGINES[name]}
    cat.create_table(
        f"db.{name}", Schema.from_pyarrow_schema(ENGINE_SCHEMA, primary_keys=["id"], options=opts), False
    )
    t = cat.get_table(f"db.{name}")
    for batch in engine_batches(23):
        try:
            commit(t, batch)
        except Exception as e:
            notes.setdefault("refused", []).append(
                {"table": name, "change": "write", "error": f"{type(e).__name__}: {e}"}
            )
            return None
    return t


def write_format(cat: Any, fmt: str, notes: dict[str, Any]) -> Any | None:
    """An append table in another ``file.format`` (iceduck reads Parquet data files only)."""
    name = f"fmt_{fmt}"
    cat.create_table(
        f"db.{name}", Schema.from_pyarrow_schema(APPEND_DV_SCHEMA, options={"file.format": fmt}), False
    )
    t = cat.get_table(f"db.{name}")
    try:
        commit(
            t, pa.table({"id": [1, 2, 3], "s": ["a", None, "c"], "n": [1, 2, None]}, schema=APPEND_DV_SCHEMA)
        )
    except Exception as e:
        notes.setdefault("refused", []).append(
            {"table": name, "change": "write", "error": f"{type(e).__name__}: {e}"}
        )
        return None
    return t


# ---------------------------------------------------------------- expected reads


def read_all(
    table: Any, options: dict[str, str] | None = None, flt: Callable[[Any], Any] | None = None
) -> pa.Table:
    """pypaimon's own read of ``table`` (time travel through ``scan.snapshot-id`` / ``scan.tag-name``)."""
    if options:
        table = table.copy(options)
    rb = table.new_read_builder()
    if flt is not None:
        rb = rb.with_filter(flt(rb.new_predicate_builder()))
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


def sort_key(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, default=repr)


def save(wh: Path, table: str, stem: str, data: pa.Table) -> str:
    rel = f"{table}/{stem}.parquet"
    path = wh / "_expected" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(data, path)
    return rel


def expected_reads(
    wh: Path, name: str, table: Any, filters: list[Filter], tags: list[str]
) -> list[dict[str, Any]]:
    """Every snapshot and tag of ``table`` read in full, and ``filters`` at the latest snapshot."""
    entries: list[dict[str, Any]] = []
    latest = table.snapshot_manager().get_latest_snapshot()
    if latest is None:
        return entries
    for sid in range(1, latest.id + 1):
        rel = save(wh, name, f"snapshot-{sid}", read_all(table, {"scan.snapshot-id": str(sid)}))
        entries.append({"table": name, "snapshot": sid, "where": None, "file": rel})
    for tag in tags:
        rel = save(wh, name, f"tag-{tag}", read_all(table, {"scan.tag-name": tag}))
        entries.append({"table": name, "tag": tag, "where": None, "file": rel})
    full = read_all(table)
    rel = save(wh, name, "current", full)
    entries.append({"table": name, "where": None, "file": rel})
    for n, (where, flt, expr) in enumerate(filters):
        got = read_all(table, flt=flt)
        exact = full.filter(expr)
        if sorted(map(sort_key, got.to_pylist())) != sorted(map(sort_key, exact.to_pylist())):
            # pypaimon may return more rows than match (pruning only); never fewer
            if sorted(map(sort_key, got.filter(expr).to_pylist())) != sorted(
                map(sort_key, exact.to_pylist())
            ):
                raise AssertionError(
                    f"pypaimon's filtered read of {name} WHERE {where} disagrees with its full read"
                )
        rel = save(wh, name, f"filter-{n}", exact)
        entries.append({"table": name, "where": where, "file": rel, "rows": exact.num_rows})
    return entries


#: Paimon's system tables (``<table>$snapshots``...) pypaimon reads, compared with iceduck's metadata tables
SYSTEM_TABLES = ("snapshots", "schemas", "options", "tags", "files", "manifests")


def system_tables(wh: Path, cat: Any, name: str) -> list[dict[str, Any]]:
    """pypaimon's reads of the system tables of ``name`` at its latest snapshot."""
    entries = []
    for system in SYSTEM_TABLES:
        rel = save(wh, name, f"system-{system}", read_all(cat.get_table(f"db.{name}${system}")))
        entries.append({"table": name, "system": system, "where": None, "file": rel})
    return entries


def main(wh: Path) -> None:
    shutil.rmtree(wh, ignore_errors=True)
    cat = CatalogFactory.create({"warehouse": str(wh)})
    cat.create_database("db", False)
    notes: dict[str, Any] = {"pypaimon": importlib.metadata.version("pypaimon")}
    index: list[dict[str, Any]] = []

    pk = write_pk(cat, "pk", {})
    pk.create_tag("after2", snapshot_id=2)
    pk.create_tag("after4", snapshot_id=4)
    tables: list[tuple[str, Any, list[Filter], list[str]]] = [
        ("append_part", write_append_part(cat), APPEND_FILTERS, []),
        ("pk", pk, PK_FILTERS, ["after2", "after4"]),
        ("pk_part", write_pk_part(cat), PK_PART_FILTERS, []),
        ("pk_dv", write_pk_dv(cat), PK_FILTERS[:2], []),
        ("evolved", write_evolved(cat, notes), EVOLVED_FILTERS, []),
    ]
    for optional in (lambda: ("append_dv", write_append_dv(cat), APPEND_DV_FILTERS, []),):
        try:
            tables.append(optional())
        except Exception as e:
            notes.setdefault("refused", []).append(
                {"table": "append_dv", "change": "write", "error": f"{type(e).__name__}: {e}"}
            )
    for engine in ENGINES:
        t = write_engine(cat, engine, notes)
        if t is not None:
            tables.append(
                (engine, t, [("id < 50", lambda pb: pb.less_than("id", 50), pc.field("id") < 50)], [])
            )
    for fmt in ("orc", "avro"):
        t = write_format(cat, fmt, notes)
        if t is not None:
            tables.append((f"fmt_{fmt}", t, [], []))
    for name, table, filters, tags in tables:
        try:
            index += expected_reads(wh, name, table, filters, tags)
            index += system_tables(wh, cat, name)
        except Exception as e:
            notes.setdefault("unreadable", []).append({"table": name, "error": f"{type(e).__name__}: {e}"})
            traceback.print_exc()
    (wh / "_expected").mkdir(exist_ok=True)
    (wh / "_expected" / "index.json").write_text(json.dumps(index, indent=1))
    (wh / "_expected" / "notes.json").write_text(json.dumps(notes, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
