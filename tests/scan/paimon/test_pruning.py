"""Pruning decisions of the Paimon planner on hand-built manifest records.

BinaryRows are written by :func:`iceduck.scan.paimon.buckets.binary_row` (Java's
``BinaryRowWriter`` layout; checked against Part A's decoder and pypaimon's buckets) with
the 4-byte big-endian arity ``serializeBinaryRow`` puts first.
"""

from __future__ import annotations

import struct
from typing import Any

from iceduck.scan.paimon import buckets
from iceduck.scan.paimon.filters import restrict_filter
from iceduck.scan.paimon.planner import PaimonPlanner
from iceduck.scan.paimon.stats import stats_metrics
from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.predicates import And, EqualTo, GreaterThan, LessThan
from iceduck.spec.paimon.binary_row import decode_row
from iceduck.spec.paimon.iceberg_bridge import iceberg_schema
from iceduck.spec.paimon.manifest import DataFileMeta, FileKind, ManifestEntry, SimpleStats
from iceduck.spec.paimon.schema import DataField, TableSchema
from iceduck.spec.paimon.types import PaimonType

BIGINT = PaimonType("BIGINT")
STRING = PaimonType("VARCHAR", length=2147483647)


def binary_row(values: list[Any]) -> bytes:
    """A serialised BinaryRow (``serializeBinaryRow``: the arity, then the row) of ints
    (BIGINT) and strings (VARCHAR)."""
    fields = [DataField(i, f"f{i}", STRING if isinstance(v, str) else BIGINT) for i, v in enumerate(values)]
    row = buckets.binary_row(values, fields)
    assert row is not None
    return struct.pack(">i", len(values)) + row


def stats(mins: list[Any], maxs: list[Any], nulls: list[int]) -> SimpleStats:
    return SimpleStats(binary_row(mins), binary_row(maxs), tuple(nulls))


SCHEMA = TableSchema(
    id=0,
    fields=(DataField(0, "dt", STRING), DataField(1, "id", BIGINT), DataField(2, "v", BIGINT)),
    highest_field_id=2,
    partition_keys=("dt",),
    primary_keys=("dt", "id"),
    options={"bucket": "2"},
)


def entry(
    dt: str, key: tuple[int, int], value: tuple[int, int], level: int = 0, stats_cols: Any = None
) -> ManifestEntry:
    value_stats = stats([dt, key[0], value[0]], [dt, key[1], value[1]], [0, 0, 0])
    if stats_cols == ():
        value_stats = SimpleStats(binary_row([]), binary_row([]), ())
    f = DataFileMeta(
        file_name=f"data-{dt}-{key}-{level}.parquet",
        file_size=100,
        row_count=10,
        min_key=binary_row([key[0]]),
        max_key=binary_row([key[1]]),
        key_stats=stats([key[0]], [key[1]], [0]),
        value_stats=value_stats,
        min_sequence_number=0,
        max_sequence_number=9,
        schema_id=0,
        level=level,
        delete_row_count=0,
        value_stats_cols=stats_cols,
    )
    return ManifestEntry(FileKind.ADD, binary_row([dt]), 0, 2, f)


def planner(schema: TableSchema, row_filter: Any) -> PaimonPlanner:
    return PaimonPlanner("/t", schema, row_filter, None)


def test_partition_value_prunes() -> None:
    p = planner(SCHEMA, EqualTo("dt", "2024-01-02"))
    assert not p.entry_may_match(entry("2024-01-01", (1, 5), (0, 9)))
    assert p.entry_may_match(entry("2024-01-02", (1, 5), (0, 9)))
    assert p.counts.by_partition == 1


def test_key_stats_prune_but_value_stats_do_not_on_merged_tables() -> None:
    p = planner(SCHEMA, And(GreaterThan("id", 10), LessThan("v", 100)))
    assert not p.entry_may_match(entry("a", (1, 5), (0, 9)))  # no key above 10
    # keys may match; values all >= 100 would rule the file out, but a newer version of a key
    # in another file must not lose to an older one: value stats are not used
    assert p.entry_may_match(entry("a", (1, 50), (200, 300)))
    assert p.counts.by_stats == 1


def test_value_stats_prune_append_tables_and_level0_free_scans() -> None:
    append = TableSchema(0, SCHEMA.fields, 2, partition_keys=("dt",))
    p = planner(append, LessThan("v", 100))
    assert not p.entry_may_match(entry("a", (1, 50), (200, 300)))
    assert p.entry_may_match(entry("a", (1, 50), (50, 300)))
    # "_VALUE_STATS_COLS": [] means no statistics: nothing to prune by
    assert p.entry_may_match(entry("a", (1, 50), (200, 300), stats_cols=()))
    dv = TableSchema(0, SCHEMA.fields, 2, ("dt",), ("dt", "id"), {"deletion-vectors.enabled": "true"})
    p = planner(dv, LessThan("v", 100))
    assert not p.entry_may_match(entry("a", (1, 50), (50, 300), level=0))  # level 0 skipped
    assert p.counts.level0 == 1
    assert not p.entry_may_match(entry("a", (1, 50), (200, 300), level=1))
    assert p.entry_may_match(entry("a", (1, 50), (50, 300), level=1))


def test_raw_split_rule() -> None:
    from iceduck.scan.paimon.tasks import PaimonFile

    def f(level: int, deletes: int | None = 0) -> PaimonFile:
        return PaimonFile("p", "n", 0, level, 1, 1, 0, 0, deletes, "parquet")

    p = planner(SCHEMA, EqualTo("dt", "x"))
    assert p.raw_convertible([f(1), f(1)])  # one level above 0, no delete rows
    assert not p.raw_convertible([f(1), f(2)])  # two levels: keys may overlap
    assert not p.raw_convertible([f(0)])
    assert not p.raw_convertible([f(1, 3)]) and not p.raw_convertible([f(1, None)])
    dv = planner(
        TableSchema(0, SCHEMA.fields, 2, ("dt",), ("dt", "id"), {"deletion-vectors.enabled": "true"}),
        EqualTo("dt", "x"),
    )
    assert dv.raw_convertible([f(1), f(3)])


def test_restrict_filter_keeps_only_named_conjuncts() -> None:
    ice = iceberg_schema(SCHEMA)
    bound = bind(ice, And(EqualTo("dt", "a"), And(GreaterThan("id", 3), LessThan("v", 1))))
    kept = restrict_filter(bound, {0, 1})
    assert "v" not in str(kept) and "dt" in str(kept) and "id" in str(kept)


def test_stats_of_a_renamed_or_widened_column_map_by_field_id() -> None:
    old = [DataField(1, "old_id", PaimonType("INT"))]
    fields = {f.field_id: f for f in iceberg_schema(SCHEMA).fields}
    m = stats_metrics(stats([1], [5], [0]), old, fields, 10, "f")
    assert m.null_value_counts == {1: 0}
    assert m.lower_bounds == {}  # INT then, BIGINT now: no bound of the old type
    same = [DataField(1, "old_id", BIGINT)]
    m = stats_metrics(stats([1], [5], [0]), same, fields, 10, "f")
    assert m.lower_bounds is not None and set(m.lower_bounds) == {1}


def test_postpone_bucket_files_are_not_read() -> None:
    postpone = TableSchema(0, SCHEMA.fields, 2, ("dt",), ("dt", "id"), {"bucket": "-2"})
    p = planner(postpone, EqualTo("dt", "a"))
    waiting = entry("a", (1, 5), (0, 9), level=0)
    waiting = ManifestEntry(waiting.kind, waiting.partition, -2, waiting.total_buckets, waiting.file)
    assert not p.entry_may_match(waiting)
    assert p.entry_may_match(entry("a", (1, 5), (0, 9), level=1))
    assert p.counts.postponed == 1


def test_murmur_words_is_javas() -> None:
    """``MurmurHashUtils.hashBytesByWords`` is MurmurHash3 x86-32's body and finalisation
    over whole words: the reference vectors of MurmurHash3 for whole-word inputs."""
    assert buckets.murmur_words(b"", 0) == 0
    assert buckets.murmur_words(b"", 1) == 0x514E28B7
    assert buckets.murmur_words(b"\xff\xff\xff\xff", 0) == 0x76293B50
    assert buckets.murmur_words(b"\x21\x43\x65\x87", 0) == unsigned_to_signed(0xF55B516B)
    assert buckets.murmur_words(b"\x21\x43\x65\x87", 0x5082EDEE) == unsigned_to_signed(0x2362F9DE)


def unsigned_to_signed(x: int) -> int:
    return x - (1 << 32) if x >= 1 << 31 else x


def test_bucket_selection_needs_every_bucket_key_pinned() -> None:
    fixed = TableSchema(0, SCHEMA.fields, 2, ("dt",), ("dt", "id"), {"bucket": "4"})
    ice = iceberg_schema(fixed)
    assert buckets.bucket_selector(fixed, bind(ice, GreaterThan("id", 3))) is None
    assert (
        buckets.bucket_selector(fixed, bind(ice, EqualTo("dt", "a"))) is None
    )  # dt is not in the bucket key
    chosen = buckets.bucket_selector(fixed, bind(ice, And(EqualTo("dt", "a"), EqualTo("id", 7))))
    assert chosen is not None
    found = [b for b in range(4) if chosen.may_contain(b, 4)]
    assert len(found) == 1 and found[0] == buckets.bucket_of(
        buckets.binary_row([7], [fixed.fields[1]]) or b"", 4
    )
    assert sum(chosen.may_contain(b, 8) for b in range(8)) == 1  # each bucket count on its own
    dynamic = TableSchema(0, SCHEMA.fields, 2, ("dt",), ("dt", "id"), {"bucket": "-1"})
    assert buckets.bucket_selector(dynamic, bind(ice, EqualTo("id", 7))) is None


def test_binary_rows_written_decode_back() -> None:
    """The writer bucket pruning hashes with lays rows out as the reader decodes them."""
    types = [PaimonType(t) for t in ("BOOLEAN", "TINYINT", "SMALLINT", "INT", "DATE", "BIGINT")]
    types += [STRING, STRING]
    fields = [DataField(i, f"f{i}", t) for i, t in enumerate(types)]
    values = [True, -5, -300, 70000, 19723, -(2**40), "short", "a longer string than seven"]
    row = buckets.binary_row(values, fields)
    assert row is not None
    assert decode_row(struct.pack(">i", len(values)) + row, types, "t") == tuple(values)
    nulls = [None] * len(values)
    assert decode_row(
        struct.pack(">i", len(values)) + (buckets.binary_row(nulls, fields) or b""), types, "t"
    ) == (tuple(nulls))
    assert buckets.binary_row([1.5], [DataField(0, "f", PaimonType("DOUBLE"))]) is None
