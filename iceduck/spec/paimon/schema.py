"""A Paimon table schema (``schema/schema-<id>``): fields with ids, keys and options."""

from __future__ import annotations

from dataclasses import dataclass, field

from iceduck.spec.paimon.types import PaimonType


@dataclass(frozen=True)
class DataField:
    """A column: Paimon field ids are stable across schema evolution (renames keep them)."""

    id: int
    name: str
    type: PaimonType
    description: str | None = None


@dataclass(frozen=True)
class TableSchema:
    """One version of a table's schema, as its schema file holds it."""

    id: int
    fields: tuple[DataField, ...]
    highest_field_id: int
    partition_keys: tuple[str, ...] = ()
    primary_keys: tuple[str, ...] = ()
    options: dict[str, str] = field(default_factory=dict)
    comment: str | None = None
    time_millis: int | None = None
    version: int = 1
