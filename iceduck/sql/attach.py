"""``ATTACH '<path>' AS <alias> (TYPE paimon)`` and ``DETACH <alias>``: Paimon warehouses
beside the Iceberg catalog.

DuckDB's spelling (``ATTACH [DATABASE] [IF NOT EXISTS] 'path' [AS alias] [(TYPE t, ...)]``,
``DETACH [DATABASE] [IF EXISTS] alias``) is kept, so a line that attaches a DuckDB file in
DuckDB attaches a Paimon warehouse here when its type says so. Only ``TYPE paimon`` is
attached: any other type (or none, a DuckDB database file) is refused by name, because
the session's DuckDB database is the engine's scratch space, not a place to keep tables.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from iceduck.errors import UnsupportedError, UserError
from iceduck.sql.parse import DIALECT, leading_word

#: the ``TYPE`` an ATTACH of a Paimon warehouse names
PAIMON = "paimon"


@dataclass(frozen=True)
class Attach:
    """``ATTACH 'location' AS alias (TYPE paimon)``; ``alias`` defaults to the location's
    last folder name, as DuckDB names an attached file after its stem."""

    location: str
    alias: str
    if_not_exists: bool = False


@dataclass(frozen=True)
class Detach:
    """``DETACH [IF EXISTS] alias``."""

    alias: str
    if_exists: bool = False


def parse_attach(text: str) -> Attach | Detach | None:
    """The ATTACH or DETACH statement ``text`` is; None when it starts with another word."""
    word = leading_word(text)
    if word not in ("ATTACH", "DETACH"):
        return None
    try:
        tree: exp.Expr = exp.maybe_parse(text.strip().rstrip(";"), dialect=DIALECT)
    except (ParseError, TokenError) as e:
        raise UserError(f"syntax error in {word}: {str(e).splitlines()[0]}") from None
    if isinstance(tree, exp.Detach):
        return Detach(tree.this.name, bool(tree.args.get("exists")))
    if not isinstance(tree, exp.Attach):
        raise UserError(f"syntax error in {word}: expected {word} 'location' AS name (TYPE paimon)")
    return _attach(tree)


def _attach(tree: exp.Attach) -> Attach:
    target = tree.this
    alias = None
    if isinstance(target, exp.Alias):
        alias, target = target.alias, target.this
    if not (isinstance(target, exp.Literal) and target.is_string):
        raise UserError("ATTACH takes the location as a string: ATTACH 'path' AS name (TYPE paimon)")
    location = target.this
    options = {
        option.this.name.upper(): option.expression.name if option.expression is not None else ""
        for option in tree.expressions
        if isinstance(option, exp.AttachOption)
    }
    kind = options.pop("TYPE", "")
    options.pop("READ_ONLY", None)  # a Paimon warehouse is only ever read
    if kind.lower() != PAIMON:
        shown = f"TYPE {kind}" if kind else "no TYPE (a DuckDB database file)"
        raise UnsupportedError(
            f"ATTACH of {shown} is not supported: iceduck attaches Paimon warehouses "
            f"(ATTACH '{location}' AS name (TYPE paimon)); Iceberg tables come from the session's catalog"
        )
    if options:
        raise UnsupportedError(f"ATTACH option {sorted(options)[0]} is not supported for Paimon warehouses")
    if not location:
        raise UserError("ATTACH needs a location: ATTACH 'path' AS name (TYPE paimon)")
    if alias is None:
        alias = location.rstrip("/").rsplit("/", 1)[-1]
    return Attach(location, alias, bool(tree.args.get("exists")))
