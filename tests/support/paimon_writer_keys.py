"""The primary-key tables of the Paimon test warehouse (imported by ``paimon_writer.py``, run in
the pypaimon venv; never imports iceduck):

* ``pk``: primary key ``id``, ``bucket`` 2, six commits inserting, updating (+U) and deleting (-D)
  overlapping keys through ``rowkind.field``; ``pk_dv`` the same with deletion vectors enabled;
* ``pk_part``: partitioned by ``dt``, primary key (``dt``, ``id``), ``bucket`` 4;
* ``partial``, ``agg``, ``first``: the partial-update, aggregation and first-row merge engines;
* ``pk_multi``: a composite primary key (``region`` string, ``id`` int; the files' key columns
  ``_KEY_region``, ``_KEY_id``), ``bucket`` 3, and ``sequence.field`` ``ver``: the row with the
  highest ``ver`` wins, not the last written;
* ``pk_dynamic``: ``bucket`` -1 (Paimon's dynamic bucket mode): pypaimon assigns keys to buckets
  through a HASH index, so the index manifest holds HASH entries a reader must leave alone.
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from paimon_writer_rows import DAYS, Filter, commit, maybe
from pypaimon import Schema

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


MULTI_SCHEMA = pa.schema(
    [
        pa.field("region", pa.string(), nullable=False),
        pa.field("id", pa.int32(), nullable=False),
        ("ver", pa.int64()),
        ("v", pa.string()),
        ("rk", pa.string()),
    ]
)
DYNAMIC_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def write_pk_multi(cat: Any) -> Any:
    """Four commits over the same 60 keys per region, versions drawn at random (ties and
    lower versions arriving later included); every commit writes into every bucket."""
    options = {"bucket": "3", "sequence.field": "ver", "rowkind.field": "rk"}
    schema = Schema.from_pyarrow_schema(MULTI_SCHEMA, primary_keys=["region", "id"], options=options)
    cat.create_table("db.pk_multi", schema, False)
    t = cat.get_table("db.pk_multi")
    rng = random.Random(3)
    for c in range(4):
        rows: dict[str, list[Any]] = {f.name: [] for f in MULTI_SCHEMA}
        for region in ("eu", "us", "apac"):
            for i in sorted(rng.sample(range(60), 30)):
                rows["region"].append(region)
                rows["id"].append(i)
                rows["ver"].append(rng.randint(0, 10))
                rows["v"].append(f"{region}{i}/{c}")
                rows["rk"].append("+I" if c == 0 else rng.choice(["+I", "+U", "-D"]))
        commit(t, pa.table(rows, schema=MULTI_SCHEMA))
    return t


def write_pk_dynamic(cat: Any) -> Any:
    options = {"bucket": "-1", "dynamic-bucket.target-row-num": "50"}
    schema = Schema.from_pyarrow_schema(DYNAMIC_SCHEMA, primary_keys=["id"], options=options)
    cat.create_table("db.pk_dynamic", schema, False)
    t = cat.get_table("db.pk_dynamic")
    for c in range(4):
        ids = list(range(c * 40, c * 40 + 100))
        commit(t, pa.table({"id": ids, "v": [f"v{i}/{c}" for i in ids]}, schema=DYNAMIC_SCHEMA))
    return t


MULTI_FILTERS = [
    (
        "region = 'eu' AND id = 7",
        lambda pb: pb.and_predicates([pb.equal("region", "eu"), pb.equal("id", 7)]),
        (pc.field("region") == "eu") & (pc.field("id") == 7),
    ),
    ("id < 10", lambda pb: pb.less_than("id", 10), pc.field("id") < 10),
    ("ver >= 8", lambda pb: pb.greater_or_equal("ver", 8), pc.field("ver") >= 8),
]
DYNAMIC_FILTERS = [
    ("id = 150", lambda pb: pb.equal("id", 150), pc.field("id") == 150),
    (
        "id BETWEEN 30 AND 60",
        lambda pb: pb.between("id", 30, 60),
        (pc.field("id") >= 30) & (pc.field("id") <= 60),
    ),
]
