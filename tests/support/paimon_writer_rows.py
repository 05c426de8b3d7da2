"""What the Paimon test warehouse's writers share (run in the pypaimon venv; never imports iceduck):
one commit, nulls at random, the filter triple and the partition days."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

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


def maybe(rng: random.Random, value: Any, p: float = 0.1) -> Any:
    """``value`` or (with probability ``p``) None: nulls in every nullable column."""
    return None if rng.random() < p else value
