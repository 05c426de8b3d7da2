"""Namespaces and table identifiers as catalogs spell them.

The JDBC layout shared with Spark and PyIceberg stores a namespace as one string, its
levels joined by dots (Java's ``JdbcUtil.namespaceToString``/``stringToNamespace``,
PyIceberg's ``Catalog.namespace_to_string``): ``("deep", "er")`` <-> ``"deep.er"``. A
level that itself contains a dot therefore cannot round-trip; Java and PyIceberg accept
that, and so does reading here (looking ``("a.b",)`` up finds ``"a.b"``, as Java would);
writers must refuse such levels (:func:`check_namespace`).

Names become folders. A new table's default location is ``<warehouse>/<level>/.../<table>``
(:meth:`~iceduck.catalog.base.Catalog.default_table_location`), so every namespace level
and table name a writer creates must be exactly one folder name under the warehouse
(:func:`folder_name_problem`): not ``.`` or ``..``, no ``/`` (``a/b`` would share the
folder of namespace ``a.b``, ``../../x`` would leave the warehouse), no ``\\`` (DuckDB
reads it as a separator when it writes a folder of data files), no NUL, and at most 255
bytes of UTF-8 (the name limit of ext4, XFS, APFS, ...). Iceberg Java does not encode
such names, nor check them: ``JdbcCatalog.defaultWarehouseLocation`` and
``HadoopCatalog.defaultWarehouseLocation`` (1.10.2) join the raw levels and name with
``/``, ``BaseMetastoreCatalog.isValidIdentifier`` accepts every identifier, and Hadoop's
``Path`` then normalises ``..`` away, so Spark would put ``db."../x"`` outside its
warehouse too. iceduck refuses instead of encoding: an encoded folder would not be the
one Java computes for the same name (Spark's Hadoop catalog would look for the table
elsewhere), and an encoding such as ``%2F`` would collide with a table really named
``%2F``. Only new names are checked: a table whose catalog row already has such a name
(written by Spark, say) keeps its stored location and is read, written, replaced and
dropped as usual.
"""

from __future__ import annotations

from iceduck.catalog.base import Namespace, TableIdentifier
from iceduck.errors import ValidationError

SEPARATOR = "."

#: the longest file or folder name, in bytes, of the usual local file systems (``NAME_MAX``)
MAX_FOLDER_NAME_BYTES = 255

#: characters a folder name cannot hold, and how messages name them
_FORBIDDEN_CHARACTERS = {"/": "a slash '/'", "\\": "a backslash '\\'", "\x00": "a NUL character"}

#: why a new name is checked at all, appended to every refusal
_WHY = "{kind}s become folder names under the warehouse (<warehouse>/<namespace>/<table>)"


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


def folder_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be one folder directly inside another, or None if it can."""
    if not name:
        return "it is empty"
    if name in (".", ".."):
        return f"{name!r} names the {'current' if name == '.' else 'parent'} folder"
    for character, what in _FORBIDDEN_CHARACTERS.items():
        if character in name:
            return f"it contains {what}"
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        return "it is not valid Unicode text (it holds a lone surrogate)"
    if size > MAX_FOLDER_NAME_BYTES:
        return f"it has {size} bytes in UTF-8, over the {MAX_FOLDER_NAME_BYTES} bytes of a folder name"
    return None


def check_folder_name(name: str, kind: str) -> None:
    """Refuse a new ``kind`` (``table name``, ``namespace level``) named ``name`` that is
    not exactly one folder name (see the module docstring)."""
    problem = folder_name_problem(name)
    if problem is not None:
        raise ValidationError(f"invalid {kind} {_shown(name)}: {problem}; {_WHY.format(kind=kind)}")


def check_table_name(name: str) -> None:
    """Refuse a table name that cannot be the table's folder (for writers creating it)."""
    check_folder_name(name, "table name")


def check_new_table(identifier: TableIdentifier) -> None:
    """Refuse a table identifier a writer must not create (or rename a table to): its
    namespace (:func:`check_namespace`) and its name must each be one folder name."""
    check_namespace(identifier.namespace)
    check_table_name(identifier.name)


def _shown(name: str) -> str:
    """``name`` quoted for a message, cut to 60 characters (a refused name may be huge)."""
    return repr(name if len(name) <= 60 else f"{name[:40]}...{name[-12:]}")


def check_namespace(namespace: Namespace) -> None:
    """Refuse a namespace the dotted-string layout cannot store faithfully, or whose
    levels cannot be folder names (for writers creating tables or namespaces in it)."""
    if not namespace:
        raise ValidationError("a namespace needs at least one level")
    for level in namespace:
        check_folder_name(level, "namespace level")
        if SEPARATOR in level:
            raise ValidationError(
                f"invalid namespace level {level!r} in {namespace!r}: levels must be non-empty "
                f"and must not contain {SEPARATOR!r} (catalogs store namespaces as dotted strings)"
            )
