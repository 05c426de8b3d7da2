"""Paimon data types, as a table's schema file spells them.

A schema file (``schema/schema-<id>``) writes an atomic type as a SQL string
(``"BIGINT NOT NULL"``, ``"VARCHAR(10)"``, ``"DECIMAL(10, 2)"``,
``"TIMESTAMP(6) WITH LOCAL TIME ZONE"``) and a nested one as a JSON object
(``{"type": "ARRAY", "element": ...}``, ``{"type": "MAP", "key": ..., "value": ...}``,
``{"type": "ROW", "fields": [...]}``), each with an optional ``NOT NULL``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from iceduck.spec.paimon.schema import DataField


@dataclass(frozen=True)
class PaimonType:
    """One Paimon type.

    ``root`` is Paimon's type root without parameters: BOOLEAN, TINYINT, SMALLINT, INT,
    BIGINT, FLOAT, DOUBLE, DECIMAL, CHAR, VARCHAR (STRING is VARCHAR of the maximum
    length), BINARY, VARBINARY (BYTES), DATE, TIME, TIMESTAMP,
    TIMESTAMP_WITH_LOCAL_TIME_ZONE, ARRAY, MULTISET, MAP, ROW, VARIANT, BLOB.
    """

    root: str
    nullable: bool = True
    #: CHAR/VARCHAR/BINARY/VARBINARY length
    length: int | None = None
    #: DECIMAL precision, or TIME/TIMESTAMP fractional-second precision
    precision: int | None = None
    #: DECIMAL scale
    scale: int | None = None
    #: ARRAY/MULTISET element, MAP key and value
    element: PaimonType | None = None
    key: PaimonType | None = None
    value: PaimonType | None = None
    #: ROW fields
    fields: tuple[DataField, ...] = field(default=())
