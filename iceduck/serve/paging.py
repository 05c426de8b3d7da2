"""Paging of list responses: ``pageToken`` and ``pageSize`` in, ``next-page-token`` out.

The spec leaves the token opaque to clients ("An opaque token that allows clients to make
use of pagination"); here it is the offset of the next item in the sorted full list, so
a page is stable while nothing is created or dropped. No ``pageSize`` means every item at
once, as clients that do not page expect.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from iceduck.errors import UserError

T = TypeVar("T")

#: the largest page a client may ask for
MAX_PAGE_SIZE = 10_000


def _non_negative(text: str, name: str) -> int:
    if not text.isdigit():
        raise UserError(f"{name} must be a non-negative integer, not {text!r}")
    return int(text)


def page(items: Sequence[T], query: dict[str, str]) -> tuple[list[T], str | None]:
    """The page of ``items`` the query asks for, and the token of the next one (``None``
    at the end)."""
    token = query.get("pageToken") or ""
    start = _non_negative(token, "pageToken") if token else 0
    if "pageSize" not in query:
        return list(items[start:]), None
    size = _non_negative(query["pageSize"], "pageSize")
    if not 1 <= size <= MAX_PAGE_SIZE:
        raise UserError(f"pageSize must be between 1 and {MAX_PAGE_SIZE}, not {size}")
    end = start + size
    return list(items[start:end]), (str(end) if end < len(items) else None)
