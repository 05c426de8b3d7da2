"""DuckDB's messages about text iceduck rewrote, told in the user's terms.

DuckDB runs a statement whose Iceberg tables became derived tables
(``(SELECT ...) AS "t"``, :mod:`iceduck.sql.rewrite`) and whose writes read the target
through helper relations with extra columns (``_file``, ``_pos``, ``__iceduck_c0``...). A
binder error then speaks of that text: ``Values list "t" does not have a column named
"x"`` where DuckDB, over its own table, says ``Table "t"``; candidate lists offer the
helper columns; a ``LINE`` excerpt quotes text the user never wrote. :func:`user_terms`
gives such a message the wording DuckDB uses for a table and drops what only names
iceduck's helpers.
"""

from __future__ import annotations

import re

#: how DuckDB names a derived table in "... does not have a column named ..."
_DERIVED = re.compile(r'\bValues list ("[^"]*" does not have a column named)')
#: a candidate list, on its line
_CANDIDATES = re.compile(r"^\s*Candidate [^\n]*$", re.MULTILINE)
#: names only iceduck's helper relations carry: scan row addresses, numbered columns, objects
_HELPER = re.compile(r'"(?:_file|_pos|__iceduck\w*)"')
#: a helper relation of a write, as DuckDB prints it: ``temp.main."__iceduck_target_3" AS "t"``
_HELPER_RELATION = re.compile(r'(?:temp\.main\.)?"__iceduck_\w+" AS ("[^"]*")')


def user_terms(message: str) -> str:
    """``message`` (DuckDB's, about rewritten text, its ``LINE`` excerpt already cut) in the
    user's terms (see the module docstring)."""
    message = _DERIVED.sub(r"Table \1", message)
    message = _HELPER_RELATION.sub(r"\1", message)
    message = _CANDIDATES.sub(lambda m: "" if _HELPER.search(m.group(0)) else m.group(0), message)
    return re.sub(r"\n{3,}", "\n\n", message).strip()
