"""Comparing serialized lower/upper bounds with typed literals, for the evaluators.

Bounds are stored as Appendix D bytes (data file metrics, manifest list field
summaries). An evaluator compares them with a literal in a *domain*: a function decoding
bound bytes to a comparison key and one turning a literal into a key of the same order.

* string, binary, fixed: the raw bytes. "UTF-8 bytes" order is code point order, the
  order Iceberg uses for strings, so string bounds are never decoded (and a bound
  truncated by a writer compares correctly as the prefix it is).
* uuid: two domains. Iceberg Java <= 1.10 orders UUIDs by signed 64-bit halves, the
  spec and Parquet by unsigned bytes; a file or manifest is kept if either order keeps
  it (see :func:`iceduck.spec.values.uuid_signed_sort_key`).
* everything else: the decoded value (:func:`iceduck.spec.values.bound_from_bytes`,
  which reads bounds written before a type promotion by their length: a 4-byte bound
  of a ``long`` column is an ``int``). Floats compare as IEEE numbers; NaN is not a
  valid bound ("NaNs are not permitted as lower or upper bounds") but ORC writers
  produce it, so evaluators treat a NaN bound as unknown.

Decoding is memoised per domain: manifests of one table repeat the same bound bytes.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from iceduck.errors import CorruptDataError, ValidationError
from iceduck.spec.expressions.bound import BoundPredicate
from iceduck.spec.types import (
    BinaryType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    PrimitiveType,
    StringType,
    UUIDType,
)
from iceduck.spec.values import bound_from_bytes, uuid_signed_sort_key

_CACHE_SIZE = 4096


@dataclass(frozen=True)
class Domain:
    """An order in which bounds and literals of one column compare."""

    #: bound bytes -> key (raises :class:`CorruptDataError` naming the field on bad bytes)
    decode: Callable[[bytes], Any]
    #: literal (in the column type's Python representation) -> key
    key: Callable[[Any], Any]
    #: keys may be NaN (float/double): a NaN bound carries no information
    floating: bool = False


def _raw(data: bytes) -> bytes:
    return data


def _utf8(value: str) -> bytes:
    return value.encode("utf-8")


def _uuid_bytes(value: uuid.UUID) -> bytes:
    return value.bytes


def _identity(value: Any) -> Any:
    return value


def _decoder(t: PrimitiveType, field_id: int, fn: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    @lru_cache(maxsize=_CACHE_SIZE)
    def decode(data: bytes) -> Any:
        try:
            return fn(data)
        except CorruptDataError as e:
            raise CorruptDataError(f"bound of field {field_id} ({t}): {e.problem}") from e

    return decode


def _signed_uuid(data: bytes) -> tuple[int, int]:
    if len(data) != 16:
        raise CorruptDataError(f"uuid value must be 16 bytes, got {len(data)}")
    return uuid_signed_sort_key(uuid.UUID(bytes=data))


@lru_cache(maxsize=1024)
def domains(t: IcebergType, field_id: int) -> tuple[Domain, ...]:
    """The domains in which bounds of a ``t`` column (id ``field_id``) compare with literals.

    A leaf may prune only if it prunes in every domain returned. Memoised, so the
    evaluators of every query share one bounded cache of decoded bounds per column.
    """
    if isinstance(t, StringType):
        return (Domain(_raw, _utf8),)
    if isinstance(t, BinaryType | FixedType):
        return (Domain(_raw, _identity),)
    if isinstance(t, UUIDType):
        return (
            Domain(_raw, _uuid_bytes),
            Domain(_decoder(t, field_id, _signed_uuid), uuid_signed_sort_key),
        )
    if not isinstance(t, PrimitiveType):
        raise ValidationError(f"field {field_id} of type {t} has no bounds to compare with")

    def decode(data: bytes) -> Any:
        return bound_from_bytes(t, data)

    return (Domain(_decoder(t, field_id, decode), _identity, isinstance(t, FloatType | DoubleType)),)


def across_domains(
    pred: BoundPredicate,
    leaf: Callable[[BoundPredicate, Domain], Callable[[Any], bool]],
    combine: Callable[[Iterable[bool]], bool],
) -> Callable[[Any], bool]:
    """The test of ``pred`` in each of its column's :func:`domains`, joined by ``combine``:
    ``any`` for inclusive evaluators (kept if any order keeps it), ``all`` for strict ones
    (proven only if proven in every order)."""
    tests = [leaf(pred, dom) for dom in domains(pred.ref.field_type, pred.ref.field_id)]
    if len(tests) == 1:
        return tests[0]
    return lambda x: combine(test(x) for test in tests)


def is_nan(key: Any) -> bool:
    return key != key
