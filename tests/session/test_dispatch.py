"""Every kind of statement :func:`iceduck.sql.classify.classify` returns has one handler."""

from __future__ import annotations

from types import UnionType
from typing import get_args

from iceduck.session.session import _BY_KIND, Session, _handler
from iceduck.sql.classify import Classified
from iceduck.sql.parse import Statement
from iceduck.sql.statements import Insert


def _kinds(union: object) -> list[type]:
    out: list[type] = []
    for kind in get_args(union):
        out.extend(_kinds(kind) if isinstance(kind, UnionType) else [kind])
    return out


def test_every_classified_kind_has_a_handler() -> None:
    kinds = _kinds(Classified)
    assert len(kinds) > 10
    for kind in kinds:
        assert _handler(kind) in _BY_KIND.values(), kind


def test_writes_and_queries_go_to_their_handlers() -> None:
    assert _handler(Insert) is Session._write_statement
    assert _handler(Statement) is Session._query_statement
