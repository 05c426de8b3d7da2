"""Namespaces and table identifiers as catalogs spell them.

The JDBC layout shared with Spark and PyIceberg stores a namespace as one string, its
levels joined by dots (Java's ``JdbcUtil.namespaceToString``/``stringToNamespace``,
PyIceberg's ``Catalog.namespace_to_string``): ``("deep", "er")`` <-> ``"deep.er"``. A
level that itself contains a dot therefore cannot round-trip; Java and PyIceberg accept
that, and so does reading here (looking ``("a.b",)`` up finds ``"a.b"``, as Java would);
writers must refuse such levels (:func:`check_namespace`).
"""

from __future__ import annotations

from iceduck.catalog.base import Namespace, TableIdentifier
from iceduck.errors import ValidationError

SEPARATOR = "."


def namespace_to_string(namespace: Namespace) -> str:
    """``("deep", "er")`` -> ``"deep.er"``; the empty (root) namespace is ``""``."""
    return SEPARATOR.join(namespace)


def namespace_from_string(value: str) -> Namespace:
    """``"deep.er"`` -> ``("deep", "er")``; ``""`` is the root namespace ``()`` (as in Java)."""
    return tuple(value.split(SEPARATOR)) if value else ()


def namespace_display(namespace: Namespace) -> str:
    """How messages name a namespace: dotted, or ``<root>`` for the empty one."""
    return namespace_to_string(namespace) or "<root>"


def is_within(namespace: Namespace, parent: Namespace) -> bool:
    """Whether ``namespace`` is ``parent`` or lies below it, level by level (not by prefix
    string: ``"fmtx"`` is not inside ``"fmt"``)."""
    return namespace[: len(parent)] == parent


def children(namespaces: set[Namespace] | list[Namespace], parent: Namespace) -> list[Namespace]:
    """The direct children of ``parent`` implied by ``namespaces``, sorted.

    A namespace ``a.b.c`` implies ``a`` and ``a.b``: Java's and PyIceberg's catalogs list a
    parent even when only a deeper namespace has rows (``listNamespaces`` truncates every
    namespace to one level below the parent), and so do we.
    """
    depth = len(parent) + 1
    return sorted({ns[:depth] for ns in namespaces if len(ns) >= depth and is_within(ns, parent)})


def table_identifier(parts: tuple[str, ...] | list[str]) -> TableIdentifier:
    """``("deep", "er", "t")`` -> ``TableIdentifier(("deep", "er"), "t")``."""
    if not parts or any(not p for p in parts):
        raise ValidationError(f"invalid table name {SEPARATOR.join(parts)!r}: empty name part")
    return TableIdentifier(tuple(parts[:-1]), parts[-1])


def parse_table_identifier(name: str) -> TableIdentifier:
    """``"deep.er.t"`` -> ``TableIdentifier(("deep", "er"), "t")``: a plain dotted name, as
    typed in an API call (SQL names, with quoting, are parsed by the SQL layer)."""
    return table_identifier(name.split(SEPARATOR))


def check_namespace(namespace: Namespace) -> None:
    """Refuse a namespace the dotted-string layout cannot store faithfully (for writers)."""
    if not namespace:
        raise ValidationError("a namespace needs at least one level")
    for level in namespace:
        if not level or SEPARATOR in level:
            raise ValidationError(
                f"invalid namespace level {level!r} in {namespace!r}: levels must be non-empty "
                f"and must not contain {SEPARATOR!r} (catalogs store namespaces as dotted strings)"
            )
