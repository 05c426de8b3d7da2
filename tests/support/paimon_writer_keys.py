"""More primary-key layouts for the Paimon test warehouse (imported by ``paimon_writer.py``, run in
the pypaimon venv; never imports iceduck):

* ``pk_multi``: a composite primary key (``region`` string, ``id`` int; the files' key columns
  ``_KEY_region``, ``_KEY_id``), ``bucket`` 3, and ``sequence.field`` ``ver``: the row with the
  highest ``ver`` wins, not the last written;
* ``pk_dynamic``: ``bucket`` -1 (Paimon's dynamic bucket mode): pypaimon assigns keys to buckets
  through a HASH index, so the index manifest holds HASH entries a reader must leave alone.
"""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pypaimon import Schema

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


def write_pk_multi(cat: Any, commit: Any) -> Any:
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


def write_pk_dynamic(cat: Any, commit: Any) -> Any:
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
