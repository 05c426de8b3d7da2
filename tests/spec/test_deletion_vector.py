"""The pure deletion vector model: a set of 64-bit row positions split into 32-bit keys."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pytest
from pyroaring import BitMap

from iceduck.errors import ValidationError
from iceduck.spec.deletion_vector import MAX_KEY, MAX_POSITION, DeletionVector

TWO_32 = 1 << 32


def reference_runs(positions: np.ndarray) -> list[tuple[int, int]]:
    """Maximal [start, end) runs of a sorted unique array, computed the slow obvious way."""
    runs: list[tuple[int, int]] = []
    for p in positions.tolist():
        if runs and runs[-1][1] == p:
            runs[-1] = (runs[-1][0], p + 1)
        else:
            runs.append((p, p + 1))
    return runs


# -- empty vector ---------------------------------------------------------------------------


def test_empty_vector() -> None:
    dv = DeletionVector()
    assert len(dv) == 0
    assert dv.cardinality == 0
    assert not dv
    assert 0 not in dv
    assert list(dv) == []
    assert dv.to_numpy().dtype == np.int64
    assert dv.to_numpy().size == 0
    assert dv.to_array().type == pa.int64()
    assert len(dv.to_array()) == 0
    assert list(dv.ranges()) == []
    assert dv.bitmaps() == []
    assert repr(dv) == "DeletionVector([])"
    with pytest.raises(ValidationError):
        dv.min()
    with pytest.raises(ValidationError):
        dv.max()


# -- adding positions -----------------------------------------------------------------------


def test_add_and_contains_across_the_32_bit_boundary() -> None:
    dv = DeletionVector()
    for position in (0, 7, TWO_32 - 1, TWO_32, TWO_32 + 1, 5 * TWO_32 + 3, MAX_POSITION):
        dv.add(position)
    assert len(dv) == 7
    for position in (0, 7, TWO_32 - 1, TWO_32, TWO_32 + 1, 5 * TWO_32 + 3, MAX_POSITION):
        assert position in dv
    for position in (1, TWO_32 - 2, TWO_32 + 2, 3, 4 * TWO_32 + 3, 5 * TWO_32 + 2):
        assert position not in dv
    # the spec's key/sub-position split: key = high 32 bits, sub-position = low 32 bits
    assert [key for key, _ in dv.bitmaps()] == [0, 1, 5, MAX_KEY]
    assert list(dv.bitmaps()[1][1]) == [0, 1]
    assert list(dv.bitmaps()[2][1]) == [3]
    assert dv.min() == 0
    assert dv.max() == MAX_POSITION


def test_add_is_idempotent() -> None:
    dv = DeletionVector()
    dv.add(42)
    dv.add(42)
    assert len(dv) == 1


def test_contains_accepts_numpy_integers_and_rejects_other_things() -> None:
    dv = DeletionVector([3, TWO_32 + 3])
    assert np.int64(3) in dv
    assert np.uint64(TWO_32 + 3) in dv
    assert 3.0 not in dv
    assert "3" not in dv
    assert -1 not in dv
    assert MAX_POSITION + 1 not in dv


@pytest.mark.parametrize("bad", [-1, MAX_POSITION + 1, 1 << 64])
def test_add_rejects_positions_outside_the_positive_64_bit_range(bad: int) -> None:
    with pytest.raises(ValidationError, match="outside"):
        DeletionVector().add(bad)


def test_add_rejects_non_integers() -> None:
    with pytest.raises(ValidationError, match="integer"):
        DeletionVector().add(1.5)  # type: ignore[arg-type]


def test_add_range_within_and_across_keys() -> None:
    dv = DeletionVector()
    dv.add_range(10, 20)
    dv.add_range(TWO_32 - 3, TWO_32 + 2)
    assert len(dv) == 10 + 5
    assert list(dv)[-5:] == [TWO_32 - 3, TWO_32 - 2, TWO_32 - 1, TWO_32, TWO_32 + 1]
    assert 20 not in dv
    assert list(dv.ranges()) == [(10, 20), (TWO_32 - 3, TWO_32 + 2)]


def test_add_range_spanning_whole_keys() -> None:
    dv = DeletionVector.from_range(TWO_32 - 1, 3 * TWO_32 + 1)
    assert len(dv) == 2 * TWO_32 + 2
    assert [key for key, _ in dv.bitmaps()] == [0, 1, 2, 3]
    assert list(dv.ranges()) == [(TWO_32 - 1, 3 * TWO_32 + 1)]


def test_add_range_edge_cases() -> None:
    dv = DeletionVector()
    dv.add_range(5, 5)
    dv.add_range(9, 3)
    assert len(dv) == 0
    dv.add_range(MAX_POSITION, MAX_POSITION + 1)
    assert list(dv) == [MAX_POSITION]
    with pytest.raises(ValidationError):
        dv.add_range(0, MAX_POSITION + 2)
    with pytest.raises(ValidationError):
        dv.add_range(-1, 3)


# -- construction from bulk positions -------------------------------------------------------


@pytest.mark.parametrize(
    "positions",
    [
        [9, 1, 5, 1, TWO_32 + 2],
        (p for p in [9, 1, 5, 1, TWO_32 + 2]),
        np.array([9, 1, 5, 1, TWO_32 + 2], dtype=np.int64),
        np.array([9, 1, 5, 1, TWO_32 + 2], dtype=np.uint64),
        pa.array([9, 1, 5, 1, TWO_32 + 2], type=pa.int64()),
        pa.chunked_array([[9, 1], [5, 1, TWO_32 + 2]], type=pa.int64()),
    ],
    ids=["list", "generator", "int64", "uint64", "arrow", "chunked-arrow"],
)
def test_construct_from_positions(positions: object) -> None:
    dv = DeletionVector(positions)
    assert list(dv) == [1, 5, 9, TWO_32 + 2]
    assert dv.to_numpy().tolist() == [1, 5, 9, TWO_32 + 2]


def test_construct_from_small_integer_dtypes() -> None:
    assert list(DeletionVector(np.array([3, 1, 2], dtype=np.int32))) == [1, 2, 3]
    assert list(DeletionVector(np.array([3, 1, 2], dtype=np.uint8))) == [1, 2, 3]
    assert len(DeletionVector(np.array([], dtype=np.float64))) == 0


@pytest.mark.parametrize(
    "bad",
    [
        [1, -2],
        np.array([1, -2], dtype=np.int64),
        np.array([1, MAX_POSITION + 1], dtype=np.uint64),
        np.array([1.0, 2.0]),
        np.array([True, False]),
        pa.array([1, None, 3], type=pa.int64()),
        [1, 2.5],
        ["1"],
        7,
    ],
    ids=["neg-list", "neg-int64", "big-uint64", "float", "bool", "arrow-null", "float-item", "str", "int"],
)
def test_construct_rejects_bad_positions(bad: object) -> None:
    with pytest.raises(ValidationError):
        DeletionVector(bad)


def test_large_random_vector_matches_numpy() -> None:
    rng = np.random.default_rng(7)
    positions = np.concatenate(
        [
            rng.integers(0, 10_000_000, 400_000),
            rng.integers(TWO_32 - 1000, TWO_32 + 1000, 2_000),
            rng.integers(0, 1 << 40, 50_000),
        ]
    )
    expected = np.unique(positions)
    dv = DeletionVector(positions)
    assert len(dv) == len(expected)
    out = dv.to_numpy()
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, expected)
    arrow = dv.to_array()
    assert arrow.type == pa.int64()
    np.testing.assert_array_equal(arrow.to_numpy(), expected)
    sample = rng.choice(expected, 100)
    assert all(int(p) in dv for p in sample)
    assert all(int(p) + 1 in dv for p in sample) == all(int(p) + 1 in set(expected.tolist()) for p in sample)


def _peak_bytes(work: Callable[[], object]) -> int:
    """The most memory ``work`` held at once (tracemalloc sees numpy's and pyroaring's
    buffers): what decoding a range position by position, or a Python int per position,
    would show long before it showed as time."""
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_bulk_construction_stays_in_arrays() -> None:
    positions = np.random.default_rng(1).permutation(10_000_000)[:5_000_000]
    built: list[np.ndarray] = []
    peak = _peak_bytes(lambda: built.append(DeletionVector(positions).to_numpy()))
    assert len(built[0]) == 5_000_000
    # a few int64/uint32 copies of the 40 MB input; a Python int per position is 36 bytes more
    assert peak < 4 * positions.nbytes, f"building and exporting 5M positions held {peak / 1e6:.0f} MB"


# -- union ------------------------------------------------------------------------------------


def test_update_merges_vectors_and_positions() -> None:
    dv = DeletionVector([1, 2, TWO_32])
    dv.update(DeletionVector([2, 3, 2 * TWO_32]))
    dv.update([4, TWO_32 + 1])
    dv.merge(np.array([5], dtype=np.int64))
    assert list(dv) == [1, 2, 3, 4, 5, TWO_32, TWO_32 + 1, 2 * TWO_32]


def test_union_and_operators_do_not_share_state() -> None:
    a = DeletionVector([1, 2])
    b = DeletionVector([2, 3])
    c = a | b
    assert list(c) == [1, 2, 3]
    assert list(a) == [1, 2] and list(b) == [2, 3]
    c.add(100)
    assert 100 not in a and 100 not in b
    b_before = b.copy()
    a |= b
    assert list(a) == [1, 2, 3]
    a.add(50)
    assert b == b_before  # update copied b's bitmaps instead of aliasing them
    assert list(a.union([7])) == [1, 2, 3, 7, 50]
    with pytest.raises(TypeError):
        _ = a | [1]  # type: ignore[operator]


def test_copy_is_independent() -> None:
    a = DeletionVector([1, TWO_32])
    b = a.copy()
    b.add(2)
    assert 2 not in a
    assert a == DeletionVector([1, TWO_32])


# -- equality, iteration, bitmaps ---------------------------------------------------------


def test_equality_compares_positions_not_construction() -> None:
    a = DeletionVector.from_range(0, 1000)
    b = DeletionVector(np.arange(1000))
    c = DeletionVector()
    for p in range(999, -1, -1):
        c.add(p)
    assert a == b == c
    b.run_optimize()
    assert a == b
    assert a != DeletionVector(np.arange(999))
    assert a != list(range(1000))
    with pytest.raises(TypeError):
        hash(a)


def test_iteration_is_ascending_across_keys() -> None:
    dv = DeletionVector([3 * TWO_32, 5, TWO_32 + 9, 1])
    assert list(dv) == [1, 5, TWO_32 + 9, 3 * TWO_32]
    assert "cardinality=4" in repr(dv)


def test_from_bitmaps_drops_empty_bitmaps_and_unions_repeated_keys() -> None:
    dv = DeletionVector.from_bitmaps([(0, BitMap()), (2, BitMap([5])), (2, BitMap([6])), (1, BitMap([1]))])
    assert [key for key, _ in dv.bitmaps()] == [1, 2]
    assert list(dv) == [TWO_32 + 1, 2 * TWO_32 + 5, 2 * TWO_32 + 6]


@pytest.mark.parametrize("key", [-1, MAX_KEY + 1, "0"])
def test_from_bitmaps_rejects_bad_keys(key: object) -> None:
    with pytest.raises(ValidationError):
        DeletionVector.from_bitmaps([(key, BitMap([1]))])  # type: ignore[list-item]


def test_from_bitmaps_rejects_non_bitmaps() -> None:
    with pytest.raises(ValidationError):
        DeletionVector.from_bitmaps([(0, {1, 2})])  # type: ignore[list-item]


def test_run_optimize_keeps_positions() -> None:
    dv = DeletionVector(np.arange(0, 200_000, 1))
    dv.add(TWO_32 + 5)
    before = dv.to_numpy()
    dv.run_optimize()
    np.testing.assert_array_equal(dv.to_numpy(), before)


# -- ranges -----------------------------------------------------------------------------------


def test_ranges_of_scattered_and_clustered_positions() -> None:
    dv = DeletionVector([1, 2, 3, 7, 9, 10, TWO_32 - 1, TWO_32, TWO_32 + 1, TWO_32 + 5])
    assert list(dv.ranges()) == [(1, 4), (7, 8), (9, 11), (TWO_32 - 1, TWO_32 + 2), (TWO_32 + 5, TWO_32 + 6)]
    starts, ends = dv.range_arrays()
    assert starts.dtype == np.int64 and ends.dtype == np.int64
    assert int((ends - starts).sum()) == len(dv)


def test_ranges_coalesce_across_scan_windows() -> None:
    window = 1 << 20
    dv = DeletionVector.from_range(window - 10, 3 * window + 10)
    dv.add(5)  # breaks the single-run fast path, forcing the windowed scan
    dv.add_range(5 * window - 1, 5 * window + 1)
    dv.add(TWO_32 - 1)
    assert list(dv.ranges()) == [
        (5, 6),
        (window - 10, 3 * window + 10),
        (5 * window - 1, 5 * window + 1),
        (TWO_32 - 1, TWO_32),
    ]


def test_ranges_of_a_huge_range_are_cheap() -> None:
    dv = DeletionVector.from_range(0, 3_000_000_000)
    dv.add(3_000_000_005)
    dv.add_range(TWO_32 + 10, TWO_32 + 20)
    ranges: list[tuple[int, int]] = []
    peak = _peak_bytes(lambda: ranges.extend(dv.ranges()))
    assert ranges == [(0, 3_000_000_000), (3_000_000_005, 3_000_000_006), (TWO_32 + 10, TWO_32 + 20)]
    # full 2**20-position windows are recognized without decoding: decoding even one of
    # them takes 8 MB of int64 positions (about 18 MB with its run arithmetic)
    assert peak < 4_000_000, f"ranges() over 3e9 positions held {peak / 1e6:.1f} MB"


def test_ranges_of_random_vector_match_reference() -> None:
    rng = np.random.default_rng(3)
    positions = np.concatenate(
        [
            rng.integers(0, 3_000_000, 200_000),  # scattered, many short runs
            np.arange(5_000_000, 5_300_000),  # a long run crossing containers and windows
            rng.integers(TWO_32 - 500, TWO_32 + 500, 900),  # runs crossing the key boundary
        ]
    )
    dv = DeletionVector(positions)
    assert list(dv.ranges()) == reference_runs(np.unique(positions))


def test_construct_from_python_ranges() -> None:
    assert list(DeletionVector(range(5, 10))) == [5, 6, 7, 8, 9]
    assert list(DeletionVector(range(10, 0, -3))) == [1, 4, 7, 10]
    assert len(DeletionVector(range(3, 3))) == 0
    # a unit-step range is added as a range: run containers only, never position by position
    crossing = DeletionVector(range(TWO_32 - 5, TWO_32 + 100_000))
    for _, bitmap in crossing.bitmaps():
        stats = bitmap.get_statistics()
        assert stats["n_run_containers"] == stats["n_containers"], stats
    assert len(DeletionVector(range(TWO_32 - 5, 10**10))) == 10**10 - TWO_32 + 5
    with pytest.raises(ValidationError):
        DeletionVector(range(-2, 3))
