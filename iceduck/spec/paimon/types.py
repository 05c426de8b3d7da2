"""Paimon data types, as a table's schema file spells them.

A schema file (``schema/schema-<id>``) writes an atomic type as a SQL string
(``"BIGINT NOT NULL"``, ``"VARCHAR(10)"``, ``"DECIMAL(10, 2)"``,
``"TIMESTAMP(6) WITH LOCAL TIME ZONE"``) and a nested one as a JSON object
(``{"type": "ARRAY", "element": ...}``, ``{"type": "MAP", "key": ..., "value": ...}``,
``{"type": "ROW", "fields": [...]}``), each with an optional ``NOT NULL``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, NoReturn

from iceduck.errors import CorruptDataError, UnsupportedError


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
    #: VECTOR length (a fixed-length array of a primitive element)
    vector_length: int | None = None

    def __str__(self) -> str:
        return render(self)


@dataclass(frozen=True)
class DataField:
    """A column (of a schema, or of a ROW type): Paimon field ids are stable across schema
    evolution (renames keep them). :mod:`iceduck.spec.paimon.schema` exports it too."""

    id: int
    name: str
    type: PaimonType
    description: str | None = None


def data_field_from_json(obj: Any, path: str) -> DataField:
    """``{"id": 0, "name": "id", "type": ..., "description": ...}``."""
    if not isinstance(obj, dict):
        raise CorruptDataError(f"a Paimon field is not an object: {obj!r}", path or None)
    field_id = obj.get("id")
    name = obj.get("name")
    if not isinstance(field_id, int) or isinstance(field_id, bool) or not isinstance(name, str):
        raise CorruptDataError(
            f"a Paimon field needs an integer 'id' and a string 'name': {obj!r}", path or None
        )
    if "type" not in obj:
        raise CorruptDataError(f"Paimon field {name!r} has no 'type'", path or None)
    description = obj.get("description")
    doc = description if isinstance(description, str) else None
    return DataField(field_id, name, parse_type(obj["type"], path), doc)


#: VARCHAR/VARBINARY of this length are written STRING/BYTES (Java ``VarCharType.MAX_LENGTH``)
MAX_LENGTH = 2147483647

#: roots that take no parameters
_PLAIN = {"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DATE", "VARIANT", "BLOB"}
#: what Java's ``DataTypeParser`` accepts for a root; the value is the canonical root
_KEYWORDS = {
    "BOOLEAN": "BOOLEAN",
    "TINYINT": "TINYINT",
    "SMALLINT": "SMALLINT",
    "INT": "INT",
    "INTEGER": "INT",
    "BIGINT": "BIGINT",
    "FLOAT": "FLOAT",
    "REAL": "FLOAT",
    "DOUBLE": "DOUBLE",
    "DATE": "DATE",
    "VARIANT": "VARIANT",
    "BLOB": "BLOB",
    "CHAR": "CHAR",
    "CHARACTER": "CHAR",
    "VARCHAR": "VARCHAR",
    "STRING": "VARCHAR",
    "BINARY": "BINARY",
    "VARBINARY": "VARBINARY",
    "BYTES": "VARBINARY",
    "DECIMAL": "DECIMAL",
    "DEC": "DECIMAL",
    "NUMERIC": "DECIMAL",
    "TIME": "TIME",
    "TIMESTAMP": "TIMESTAMP",
    "TIMESTAMP_LTZ": "TIMESTAMP_WITH_LOCAL_TIME_ZONE",
    "ARRAY": "ARRAY",
    "MULTISET": "MULTISET",
    "MAP": "MAP",
    "ROW": "ROW",
    "VECTOR": "VECTOR",
}
_TOKEN = re.compile(r"\s*(?:([A-Za-z_][A-Za-z0-9_]*)|(\d+)|(`(?:[^`]|``)*`)|('(?:[^']|'')*')|([(),<>:]))")


def parse_type(value: str | dict[str, Any], path: str = "") -> PaimonType:
    """A Paimon type from a schema file's ``type`` value: a SQL string for an atomic type
    (``"DECIMAL(10, 2) NOT NULL"``), a JSON object for a nested one.

    Parameter defaults are Java's (``DataTypeParser``): CHAR/VARCHAR/BINARY/VARBINARY
    length 1, DECIMAL(10, 0), TIME(0), TIMESTAMP(6). A malformed type raises
    :class:`CorruptDataError`, a type name this reader does not know (a newer Paimon's)
    :class:`UnsupportedError`, both naming ``path`` (the schema file).
    """
    if isinstance(value, str):
        return _Parser(value, path).parse_whole()
    if isinstance(value, dict):
        return _from_json(value, path)
    raise CorruptDataError(f"a Paimon type must be a string or an object, got {value!r}", path or None)


def _from_json(obj: dict[str, Any], path: str) -> PaimonType:
    """A nested type's JSON object: ``{"type": "ARRAY NOT NULL", "element": ...}``."""
    text = obj.get("type")
    if not isinstance(text, str):
        raise CorruptDataError(f"a Paimon type object has no 'type' string: {obj!r}", path or None)
    words = text.split()
    head = words[0].upper() if words else ""
    tail = " ".join(words[1:]).upper()
    if tail not in ("", "NOT NULL", "NULL"):
        raise CorruptDataError(f"unknown Paimon type {text!r}", path or None)
    nullable = tail != "NOT NULL"
    if head in ("ARRAY", "MULTISET"):
        return PaimonType(head, nullable, element=parse_type(_required(obj, "element", path), path))
    if head == "VECTOR":
        length = obj.get("length")
        if not isinstance(length, int):
            raise CorruptDataError(f"a VECTOR type has no integer 'length': {obj!r}", path or None)
        element = parse_type(_required(obj, "element", path), path)
        return PaimonType("VECTOR", nullable, element=element, vector_length=length)
    if head == "MAP":
        key = parse_type(_required(obj, "key", path), path)
        return PaimonType("MAP", nullable, key=key, value=parse_type(_required(obj, "value", path), path))
    if head == "ROW":
        raw = obj.get("fields", [])
        if not isinstance(raw, list):
            raise CorruptDataError(f"a ROW type's 'fields' is not a list: {obj!r}", path or None)
        return PaimonType("ROW", nullable, fields=tuple(data_field_from_json(f, path) for f in raw))
    return parse_type(text, path)


def _required(obj: dict[str, Any], key: str, path: str) -> Any:
    if key not in obj:
        raise CorruptDataError(f"a Paimon {obj.get('type')} type has no {key!r}: {obj!r}", path or None)
    return obj[key]


class _Parser:
    """Java ``DataTypeParser``'s grammar for one type string, nested ``ARRAY<...>``,
    ``MAP<..., ...>`` and ``ROW<name TYPE, ...>`` forms included (DDL and older files)."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.tokens: list[str] = []
        pos = 0
        stripped = text.rstrip()
        while pos < len(stripped):
            m = _TOKEN.match(stripped, pos)
            if m is None or m.end() == pos:
                self.fail()
            self.tokens.append(m.group(m.lastindex or 0))
            pos = m.end()
        self.pos = 0

    def fail(self, why: str = "") -> NoReturn:
        suffix = f" ({why})" if why else ""
        raise CorruptDataError(f"unknown Paimon type {self.text!r}{suffix}", self.path or None)

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def word(self) -> str | None:
        token = self.peek()
        return token.upper() if token is not None else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token.upper() != expected):
            self.fail(f"expected {expected}" if expected else "unexpected end")
        self.pos += 1
        return token

    def number(self) -> int:
        token = self.take()
        if not token.isdigit():
            self.fail(f"expected a number, got {token!r}")
        return int(token)

    def parse_whole(self) -> PaimonType:
        t = self.parse()
        if self.peek() is not None:
            self.fail(f"unexpected {self.peek()!r}")
        return t

    def parse(self) -> PaimonType:
        head = self.take().upper()
        root = _KEYWORDS.get(head)
        if root is None:
            if head in ("LONG", "SHORT", "BYTE", "BOOL"):
                root = {"LONG": "BIGINT", "SHORT": "SMALLINT", "BYTE": "TINYINT", "BOOL": "BOOLEAN"}[head]
            elif head[0].isalpha():
                # a type name this reader does not know (a newer Paimon's): valid, not corrupt
                where = f"{self.path}: " if self.path else ""
                raise UnsupportedError(f"{where}Paimon type {self.text!r} is not supported ({head})")
            else:
                self.fail()
        t = self.parameters(head, root)
        if self.word() == "NOT":
            self.take()
            self.take("NULL")
            return _with_nullable(t, False)
        if self.word() == "NULL":
            self.take()
        return t

    def optional_length(self, default: int) -> int:
        if self.peek() != "(":
            return default
        self.take("(")
        n = self.number()
        self.take(")")
        return n

    def parameters(self, head: str, root: str) -> PaimonType:
        if root in _PLAIN:
            if root == "DOUBLE" and self.word() == "PRECISION":
                self.take()
            return PaimonType(root)
        if head == "STRING":
            return PaimonType("VARCHAR", length=MAX_LENGTH)
        if head == "BYTES":
            return PaimonType("VARBINARY", length=MAX_LENGTH)
        if root == "CHAR" and self.word() == "VARYING":
            self.take()
            root = "VARCHAR"
        if root in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
            return PaimonType(root, length=self.optional_length(1))
        if root == "DECIMAL":
            precision, scale = 10, 0
            if self.peek() == "(":
                self.take("(")
                precision = self.number()
                if self.peek() == ",":
                    self.take(",")
                    scale = self.number()
                self.take(")")
            return PaimonType("DECIMAL", precision=precision, scale=scale)
        if root == "TIME":
            precision = self.optional_length(0)
            self.zone(allow_local=False)
            return PaimonType("TIME", precision=precision)
        if root in ("TIMESTAMP", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
            precision = self.optional_length(6)
            if root == "TIMESTAMP" and self.zone(allow_local=True):
                root = "TIMESTAMP_WITH_LOCAL_TIME_ZONE"
            return PaimonType(root, precision=precision)
        return self.nested(root)

    def zone(self, allow_local: bool) -> bool:
        """``WITHOUT TIME ZONE`` (the default) or ``WITH LOCAL TIME ZONE``; True for the latter."""
        if self.word() == "WITHOUT":
            self.take()
            self.take("TIME")
            self.take("ZONE")
            return False
        if self.word() == "WITH" and allow_local:
            self.take()
            self.take("LOCAL")
            self.take("TIME")
            self.take("ZONE")
            return True
        return False

    def nested(self, root: str) -> PaimonType:
        self.take("<")
        if root in ("ARRAY", "MULTISET"):
            t = PaimonType(root, element=self.parse())
        elif root == "VECTOR":
            element = self.parse()
            self.take(",")
            t = PaimonType(root, element=element, vector_length=self.number())
        elif root == "MAP":
            key = self.parse()
            self.take(",")
            t = PaimonType(root, key=key, value=self.parse())
        else:
            t = PaimonType(root, fields=self.row_fields())
        self.take(">")
        return t

    def row_fields(self) -> tuple[DataField, ...]:
        fields: list[DataField] = []
        while self.peek() != ">":
            if fields:
                self.take(",")
            name = self.take()
            if name.startswith("`"):
                name = name[1:-1].replace("``", "`")
            if self.peek() == ":":
                self.take()
            t = self.parse()
            description = None
            if self.word() == "COMMENT":
                self.take()
                text = self.take()
                description = text[1:-1].replace("''", "'")
            fields.append(DataField(len(fields), name, t, description))
        return tuple(fields)


def _with_nullable(t: PaimonType, nullable: bool) -> PaimonType:
    from dataclasses import replace

    return replace(t, nullable=nullable)


def render(t: PaimonType) -> str:
    """The type as Paimon writes it in SQL (``DECIMAL(10, 2) NOT NULL``, ``ARRAY<INT>``)."""
    root = t.root
    if root == "VARCHAR" and t.length == MAX_LENGTH:
        text = "STRING"
    elif root == "VARBINARY" and t.length == MAX_LENGTH:
        text = "BYTES"
    elif root in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
        text = f"{root}({t.length})"
    elif root == "DECIMAL":
        text = f"DECIMAL({t.precision}, {t.scale})"
    elif root in ("TIME", "TIMESTAMP"):
        text = f"{root}({t.precision})"
    elif root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE":
        text = f"TIMESTAMP({t.precision}) WITH LOCAL TIME ZONE"
    elif root in ("ARRAY", "MULTISET"):
        text = f"{root}<{t.element}>"
    elif root == "VECTOR":
        text = f"VECTOR<{t.element}, {t.vector_length}>"
    elif root == "MAP":
        text = f"MAP<{t.key}, {t.value}>"
    elif root == "ROW":
        text = "ROW<" + ", ".join(f"`{f.name}` {f.type}" for f in t.fields) + ">"
    else:
        text = root
    return text if t.nullable else text + " NOT NULL"
