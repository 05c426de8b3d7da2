"""The append-only tables of the Paimon test warehouse (imported by ``paimon_writer.py``, run in
the pypaimon venv; never imports iceduck): ``append_part`` (partitioned by ``dt`` and ``region``,
every column type, an INSERT OVERWRITE), ``append_dv`` (deletion vectors), ``evolved`` (schema
changes between commits) and ``fmt_<format>`` (ORC, Avro data files)."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from paimon_writer_rows import DAYS, Filter, commit, maybe
from pypaimon import Schema
from pypaimon.schema.schema_change import SchemaChange

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


def write_format(cat: Any, fmt: str, notes: dict[str, Any]) -> Any | None:
    """An append table in another ``file.format``: four commits of ORC or Avro data files."""
    name = f"fmt_{fmt}"
    cat.create_table(
        f"db.{name}", Schema.from_pyarrow_schema(APPEND_DV_SCHEMA, options={"file.format": fmt}), False
    )
    t = cat.get_table(f"db.{name}")
    try:
        commit(
            t, pa.table({"id": [1, 2, 3], "s": ["a", None, "c"], "n": [1, 2, None]}, schema=APPEND_DV_SCHEMA)
        )
        for start in (4, 204, 404):  # four commits in all, as every compared table has
            rows = range(start, start + 200)
            commit(
                t,
                pa.table(
                    {
                        "id": list(rows),
                        "s": [f"s{i}" if i % 7 else None for i in rows],
                        "n": [i % 11 for i in rows],
                    },
                    schema=APPEND_DV_SCHEMA,
                ),
            )
    except Exception as e:
        notes.setdefault("refused", []).append(
            {"table": name, "change": "write", "error": f"{type(e).__name__}: {e}"}
        )
        return None
    return t
