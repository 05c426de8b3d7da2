"""Write the Paimon benchmark tables with pypaimon (run in the pypaimon venv; never imports iceduck).

    python paimon_build.py <warehouse> <rows>

Database ``bench``, two tables of ``rows`` rows (``id``, ``device``, ``v``, ``s``):

* ``append``: append-only, unbucketed, written in 8 commits (8 data files);
* ``pk``: primary key ``id``, ``bucket`` 4, the rows in 4 commits, then 3 commits that update an
  overlapping tenth of the keys each (and delete a few), so a read must merge files by key.

Then ``<warehouse>/_bench.json``: for each table, the live data files pypaimon's scan plans (the
paths DuckDB's ``read_parquet`` baseline reads) and pypaimon's own answers to the benchmark's
queries (row count, ``sum(v)``, the point query's rows), which iceduck's answers must equal.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pypaimon import CatalogFactory, Schema

# the test warehouse's writer (also pypaimon-only): one batch commit as pypaimon's README writes one
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
from paimon_writer import commit

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("device", pa.int32()),
        ("v", pa.float64()),
        ("s", pa.string()),
    ]
)
PK_SCHEMA = pa.schema([*SCHEMA, ("rk", pa.string())])


def rows(ids: pa.Array, version: int) -> dict[str, Any]:
    ids64 = pc.cast(ids, pa.int64())
    return {
        "id": ids64,
        "device": pc.cast(pc.bit_wise_and(ids64, 1023), pa.int32()),
        "v": pc.add(pc.multiply(pc.cast(ids64, pa.float64()), 0.5), float(version)),
        "s": pc.binary_join_element_wise("s", pc.cast(pc.bit_wise_and(ids64, 4095), pa.string()), ""),
    }


def answers(table: Any, point: int) -> dict[str, Any]:
    """pypaimon's read: the live files, the count, sum(v) and the point query's rows."""
    rb = table.new_read_builder()
    splits = rb.new_scan().plan().splits()
    data = rb.new_read().to_arrow(splits)
    point_rows = data.filter(pc.field("id") == point).select(["id", "device", "v", "s"]).to_pylist()
    return {
        "files": sorted({p for split in splits for p in split.file_paths}),
        "count": data.num_rows,
        "sum_v": pc.sum(data.column("v")).as_py(),
        "point": point,
        "point_rows": [list(r.values()) for r in point_rows],
    }


def main(wh: Path, n: int) -> None:
    shutil.rmtree(wh, ignore_errors=True)
    cat = CatalogFactory.create({"warehouse": str(wh)})
    cat.create_database("bench", False)
    cat.create_table("bench.append", Schema.from_pyarrow_schema(SCHEMA), False)
    append = cat.get_table("bench.append")
    for part in range(8):
        commit(append, pa.table(rows(pa.array(range(part * n // 8, (part + 1) * n // 8)), 0), schema=SCHEMA))
    options = {"bucket": "4", "rowkind.field": "rk"}
    cat.create_table(
        "bench.pk", Schema.from_pyarrow_schema(PK_SCHEMA, primary_keys=["id"], options=options), False
    )
    pk = cat.get_table("bench.pk")
    for part in range(4):
        ids = pa.array(range(part * n // 4, (part + 1) * n // 4))
        commit(pk, pa.table({**rows(ids, 0), "rk": pa.repeat("+I", len(ids))}, schema=PK_SCHEMA))
    for version in range(1, 4):
        # a tenth of the keys, overlapping the previous update's: every eighth of them deleted
        ids = pa.array(range(version * n // 20, version * n // 20 + n // 10))
        kinds = pc.if_else(pc.equal(pc.bit_wise_and(ids, 7), 0), "-D", "+U")
        commit(pk, pa.table({**rows(ids, version), "rk": kinds}, schema=PK_SCHEMA))
    point = n // 5 + 1
    out = {"rows": n, "append": answers(append, point), "pk": answers(pk, point)}
    (wh / "_bench.json").write_text(json.dumps(out))


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
