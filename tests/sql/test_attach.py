"""ATTACH/DETACH of Paimon warehouses, as the classifier reads them."""

from __future__ import annotations

import pytest

from iceduck.errors import UnsupportedError, UserError
from iceduck.sql.attach import Attach, Detach, parse_attach
from iceduck.sql.classify import classify


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ATTACH '/lake/paimon' AS p (TYPE paimon)", Attach("/lake/paimon", "p")),
        ("attach database '/lake/paimon' as P (type PAIMON);", Attach("/lake/paimon", "P")),
        ("ATTACH IF NOT EXISTS 's3://b/wh/' (TYPE paimon)", Attach("s3://b/wh/", "wh", True)),
        ("ATTACH '/lake/paimon' AS p (TYPE paimon, READ_ONLY)", Attach("/lake/paimon", "p")),
        ("DETACH p", Detach("p")),
        ("DETACH DATABASE IF EXISTS p", Detach("p", True)),
    ],
)
def test_attach_statements(text: str, expected: Attach | Detach) -> None:
    assert parse_attach(text) == expected
    assert classify(text) == expected


def test_other_statements_are_not_attach() -> None:
    assert parse_attach("SELECT 1") is None


@pytest.mark.parametrize(
    ("text", "kind", "words"),
    [
        ("ATTACH 'file.duckdb' AS d", UnsupportedError, "no TYPE"),
        ("ATTACH 'x.db' AS d (TYPE sqlite)", UnsupportedError, "TYPE sqlite"),
        ("ATTACH '/p' AS d (TYPE paimon, BLOCK_SIZE 16384)", UnsupportedError, "BLOCK_SIZE"),
        ("ATTACH lake AS d (TYPE paimon)", UserError, "location as a string"),
        ("ATTACH '' AS d (TYPE paimon)", UserError, "needs a location"),
    ],
)
def test_refusals_name_the_problem(text: str, kind: type[Exception], words: str) -> None:
    with pytest.raises(kind, match=words):
        parse_attach(text)
