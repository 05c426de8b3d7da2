"""Finding the unaliased select items around a rewritten table reference."""

from __future__ import annotations

import pytest

from iceduck.sql.item_names import unnamed_items
from iceduck.sql.parse import parse_statement


def _items(sql: str, *names: str) -> list[str]:
    """The unaliased items of ``sql`` that hold one of ``names`` (table names, as written)."""
    statement = parse_statement(sql)
    spans = []
    for name in names:
        start = statement.text.index(name)
        spans.append((start, start + len(name)))
    return [statement.text[a:b] for a, b in unnamed_items(statement, spans)]


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT (SELECT max(id) FROM shop.orders)", ["(SELECT max(id) FROM shop.orders)"]),
        ("SELECT (SELECT max(id) FROM shop.orders) AS m", []),
        ("SELECT (SELECT max(id) FROM shop.orders) m", []),
        ('SELECT (SELECT max(id) FROM shop.orders) "m m"', []),
        ("SELECT max(id) FROM shop.orders", []),  # the table is in FROM, not in an item
        (
            "SELECT 1, coalesce((SELECT max(id) FROM shop.orders), 0) + 1, 2 FROM t",
            ["coalesce((SELECT max(id) FROM shop.orders), 0) + 1"],
        ),
        (
            "SELECT * FROM (SELECT (SELECT 1 FROM shop.orders LIMIT 1)) AS d",
            ["(SELECT 1 FROM shop.orders LIMIT 1)"],
        ),
        (
            "SELECT DISTINCT ON (a) a, EXISTS (SELECT 1 FROM shop.orders) FROM t ORDER BY a",
            ["EXISTS (SELECT 1 FROM shop.orders)"],
        ),
        (
            "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x), x IN (SELECT id FROM shop.orders) FROM t",
            ["x IN (SELECT id FROM shop.orders)"],
        ),
        (
            "SELECT 1 UNION ALL SELECT (SELECT count(*) FROM shop.orders)",
            ["(SELECT count(*) FROM shop.orders)"],
        ),
        (  # nested: both the outer item and the one inside it are named
            "SELECT (SELECT (SELECT 1 FROM shop.orders))",
            ["(SELECT (SELECT 1 FROM shop.orders))", "(SELECT 1 FROM shop.orders)"],
        ),
    ],
)
def test_unnamed_items(sql: str, expected: list[str]) -> None:
    assert _items(sql, "shop.orders") == expected
