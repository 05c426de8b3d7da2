import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.names import (
    check_namespace,
    children,
    is_within,
    namespace_from_string,
    namespace_to_string,
    parse_table_identifier,
)
from iceduck.errors import ValidationError


@pytest.mark.parametrize(("levels", "text"), [((), ""), (("fmt",), "fmt"), (("deep", "er"), "deep.er")])
def test_namespace_strings_round_trip(levels: tuple[str, ...], text: str) -> None:
    assert namespace_to_string(levels) == text
    assert namespace_from_string(text) == levels


def test_children_imply_parents_and_respect_levels() -> None:
    known = {("deep", "er", "est"), ("fmt",), ("fmtx", "a"), ("fmt", "sub")}
    assert children(known, ()) == [("deep",), ("fmt",), ("fmtx",)]
    assert children(known, ("deep",)) == [("deep", "er")]
    assert children(known, ("fmt",)) == [("fmt", "sub")]  # not fmtx: levels, not string prefixes
    assert children(known, ("nope",)) == []
    assert is_within(("fmt", "sub"), ("fmt",)) and not is_within(("fmtx",), ("fmt",))


def test_parse_table_identifier() -> None:
    assert parse_table_identifier("deep.er.t") == TableIdentifier(("deep", "er"), "t")
    assert str(parse_table_identifier("ns.t")) == "ns.t"
    with pytest.raises(ValidationError, match="empty name part"):
        parse_table_identifier("ns..t")


@pytest.mark.parametrize("bad", [(), ("a.b",), ("",)])
def test_check_namespace_rejects_what_dotted_strings_cannot_store(bad: tuple[str, ...]) -> None:
    with pytest.raises(ValidationError):
        check_namespace(bad)
    check_namespace(("a", "b"))
