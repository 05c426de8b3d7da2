from pathlib import Path

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.filesystem import HadoopCatalog
from iceduck.catalog.names import (
    MAX_FOLDER_NAME_BYTES,
    check_namespace,
    check_new_table,
    children,
    folder_name_problem,
    is_within,
    namespace_from_string,
    namespace_to_string,
    parse_table_identifier,
)
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.errors import ValidationError
from iceduck.spec.partition import UNPARTITIONED
from iceduck.spec.schema import Schema
from iceduck.spec.sort import UNSORTED
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.types import LongType, NestedField
from iceduck.txn.builder import new_table_metadata


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


#: (name, what the refusal says) for names that cannot be one folder under the warehouse
NOT_FOLDERS = [
    ("", "empty"),
    (".", "current folder"),
    ("..", "parent folder"),
    ("a/b", "slash"),
    ("../../../escaped", "slash"),
    ("a\\b", "backslash"),
    ("nul\x00", "NUL"),
    ("x" * 256, "256 bytes"),
    ("é" * 128, "256 bytes"),  # 128 characters, but 2 bytes each
    ("\ud800", "lone surrogate"),
]

FOLDERS = ["t", "...", ".x", "a..b", "a.b", "with space", "%2F", "ü" * 127, "x" * MAX_FOLDER_NAME_BYTES, "🧊"]


@pytest.mark.parametrize(("name", "says"), NOT_FOLDERS)
def test_folder_name_problem_names_the_reason(name: str, says: str) -> None:
    problem = folder_name_problem(name)
    assert problem is not None and says in problem


@pytest.mark.parametrize("name", FOLDERS)
def test_folder_names_that_are_one_folder_pass(name: str) -> None:
    assert folder_name_problem(name) is None
    check_new_table(TableIdentifier(("db",), name))


@pytest.mark.parametrize(("name", "says"), NOT_FOLDERS)
def test_new_tables_and_namespaces_refuse_them_saying_why(name: str, says: str) -> None:
    with pytest.raises(ValidationError, match="table names become folder names under the warehouse") as e:
        check_new_table(TableIdentifier(("db",), name))
    assert says in str(e.value)
    with pytest.raises(ValidationError, match="namespace levels become folder names") as e:
        check_new_table(TableIdentifier(("db", name), "t"))
    assert says in str(e.value)
    with pytest.raises(ValidationError, match="namespace level"):
        check_namespace((name,))


def test_a_huge_name_is_shortened_in_the_message() -> None:
    with pytest.raises(ValidationError) as e:
        check_new_table(TableIdentifier(("db",), "x" * 10_000))
    assert len(str(e.value)) < 300


def _metadata(location: str) -> TableMetadata:
    schema = Schema((NestedField(1, "id", LongType(), True),))
    return new_table_metadata(schema, UNPARTITIONED, UNSORTED, location, {})


@pytest.mark.parametrize("kind", ["sqlite", "hadoop"])
@pytest.mark.parametrize(("name", "says"), NOT_FOLDERS[:-1])
def test_every_catalog_refuses_them_without_writing(tmp_path: Path, kind: str, name: str, says: str) -> None:
    """The catalogs check too (callers other than SQL): nothing is written anywhere."""
    warehouse = tmp_path / "wh"
    catalog = SqliteCatalog(warehouse) if kind == "sqlite" else HadoopCatalog(warehouse)
    catalog.create_namespace(("db",))
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(ValidationError, match=says):
        catalog.create_namespace((name,))
    with pytest.raises(ValidationError, match=says):
        catalog.create_table(TableIdentifier(("db",), name), _metadata(str(tmp_path / "elsewhere")))
    with pytest.raises(ValidationError, match=says):
        catalog.create_table(TableIdentifier(("db", name), "t"), _metadata(str(tmp_path / "elsewhere")))
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.parametrize(("name", "says"), NOT_FOLDERS[:-1])
def test_sqlite_rename_refuses_them(tmp_path: Path, name: str, says: str) -> None:
    catalog = SqliteCatalog(tmp_path / "wh")
    catalog.create_namespace(("db",))
    source = TableIdentifier(("db",), "t")
    catalog.create_table(source, _metadata(catalog.default_table_location(source)))
    with pytest.raises(ValidationError, match=says):
        catalog.rename_table(source, TableIdentifier(("db",), name))
    assert catalog.list_tables(("db",)) == [source]
