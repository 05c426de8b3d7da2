"""Sort orders (spec: "Sorting", Appendix C "Sort Orders").

"Order id 0 is reserved for the unsorted order."
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from iceduck.spec.transforms import Transform

UNSORTED_ORDER_ID = 0


class SortDirection(Enum):
    ASC = "asc"
    DESC = "desc"


class NullOrder(Enum):
    NULLS_FIRST = "nulls-first"
    NULLS_LAST = "nulls-last"


@dataclass(frozen=True)
class SortField:
    source_id: int
    transform: Transform
    direction: SortDirection = SortDirection.ASC
    null_order: NullOrder = NullOrder.NULLS_FIRST
    #: v3 multi-argument transforms list their sources here (then ``source_id`` is the first)
    source_ids: tuple[int, ...] | None = None


@dataclass(frozen=True)
class SortOrder:
    order_id: int = UNSORTED_ORDER_ID
    fields: tuple[SortField, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))

    @property
    def is_unsorted(self) -> bool:
        return not self.fields


UNSORTED = SortOrder(UNSORTED_ORDER_ID, ())
