"""Column bounds Spark wrote before a type promotion, decoded under today's schema.

The spec, "Schema Evolution": "type promotion does not rewrite existing bounds", so in the
checked-in ``evolve/schema_v2`` table (tests/fixtures/spark) the first snapshot's files
carry 4-byte ``int``/``float`` bounds and ``decimal(10, 2)`` bytes for columns that are now
``long``, ``double`` and ``decimal(20, 2)``; the last file carries the promoted types'.
Decoded with :func:`iceduck.spec.values.bound_from_bytes`, each file's bounds must be the
extremes of the rows Spark reads from it."""

from __future__ import annotations

from typing import Any

from iceduck.spec.types import PrimitiveType
from iceduck.spec.values import bound_from_bytes
from tests.fixtures.spark.parsed import INTERNAL, entries, metadata
from tests.fixtures.spark.tables import expected


def test_bounds_of_promoted_columns_decode_to_spark_s_values() -> None:
    schema = metadata("evolve.schema_v2").schema()
    rows = expected()["evolve.schema_v2"]["rows"]
    widths: dict[str, set[int]] = {"id": set(), "f": set()}
    files = 0
    for e in entries("evolve.schema_v2"):
        f = e.data_file
        assert f.lower_bounds is not None and f.upper_bounds is not None
        decoded: dict[str, tuple[Any, Any]] = {}
        for field_id, low in f.lower_bounds.items():
            name = schema.column_name(field_id)
            if name in ("id", "f", "dec", "full_name"):
                t: PrimitiveType = schema.find_type(field_id)  # type: ignore[assignment]
                decoded[name] = (bound_from_bytes(t, low), bound_from_bytes(t, f.upper_bounds[field_id]))
                if name in widths:
                    widths[name].add(len(low))
        low_name, high_name = decoded["full_name"]
        mine = [r for r in rows if r["full_name"] is not None and low_name <= r["full_name"] <= high_name]
        for name in ("id", "f", "dec"):
            values = [INTERNAL.get(name, lambda v: v)(r[name]) for r in mine]
            assert decoded[name] == (min(values), max(values)), name
        assert f.null_value_counts is not None
        assert f.record_count - len(mine) == f.null_value_counts[1]  # the all-NULL row
        files += 1
    assert files == 3
    assert widths == {"id": {4, 8}, "f": {4, 8}}  # bounds from before and after the promotion


def test_a_bound_of_the_old_int_column_reads_as_long() -> None:
    schema = metadata("evolve.schema_v2").schema()
    old = [e.data_file for e in entries("evolve.schema_v2") if e.sequence_number == 1]
    lows = sorted(bound_from_bytes(schema.find_type(1), f.lower_bounds[1]) for f in old)  # type: ignore[arg-type, index]
    assert lows == [1, 2]
    assert all(len(f.lower_bounds[1]) == 4 for f in old)  # type: ignore[index]
