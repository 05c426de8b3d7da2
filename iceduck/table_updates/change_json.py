"""Shared reading of REST change objects (requirements and updates) from parsed JSON.

A commit request comes from a client, not from a file: a malformed one is the caller's
mistake (the REST spec answers it with 400 ``BadRequestException``), so the JSON helpers'
:class:`CorruptDataError` becomes a :class:`ValidationError` here, with the same message
naming the field.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from iceduck.errors import CorruptDataError, ValidationError
from iceduck.formats.schema_json import get_str, require_object


@contextmanager
def bad_request() -> Iterator[None]:
    """Turn a malformed-JSON error into a :class:`ValidationError` (a bad request)."""
    try:
        yield
    except CorruptDataError as e:
        raise ValidationError(e.problem) from e


def discriminator(obj: Any, key: str, where: str) -> tuple[dict[str, Any], str]:
    """The object and its ``key`` (``type`` of a requirement, ``action`` of an update)."""
    with bad_request():
        obj = require_object(obj, where)
        return obj, get_str(obj, key, where)
