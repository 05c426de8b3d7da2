"""Parquet schema trees from footers, and the name mapping of files without field ids."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from iceduck.engine.connection import open_database
from iceduck.engine.layout import (
    LIST,
    MAP,
    PRIMITIVE,
    STRUCT,
    FileField,
    LayoutCache,
    apply_name_mapping,
    has_field_ids,
    parse_name_mapping,
    read_file_schemas,
)
from iceduck.errors import CorruptDataError
from tests.engine.helpers import write_parquet


@pytest.fixture
def con() -> Any:
    database = open_database(threads=1)
    yield database
    database.close()


def shape(f: FileField) -> Any:
    """(name, id, kind, children) without DuckDB's type strings."""
    return (f.name, f.field_id, f.kind, tuple(shape(c) for c in f.children))


def test_tree_of_an_iceberg_file(con: Any, tmp_path: Path) -> None:
    path = write_parquet(
        con,
        tmp_path / "a.parquet",
        "SELECT 1::INT AS id, {'a': 1, 'b': [1]} AS s, MAP {'k': {'p': 1}} AS m",
        {
            "id": 1,
            "s": {"__duckdb_field_id": 2, "a": 3, "b": {"__duckdb_field_id": 4, "element": 5}},
            "m": {"__duckdb_field_id": 6, "key": 7, "value": {"__duckdb_field_id": 8, "p": 9}},
        },
    )
    (schema,) = read_file_schemas(con, [str(path)]).values()
    assert [shape(f) for f in schema] == [
        ("id", 1, PRIMITIVE, ()),
        ("s", 2, STRUCT, (("a", 3, PRIMITIVE, ()), ("b", 4, LIST, (("element", 5, PRIMITIVE, ()),)))),
        ("m", 6, MAP, (("key", 7, PRIMITIVE, ()), ("value", 8, STRUCT, (("p", 9, PRIMITIVE, ()),)))),
    ]
    assert has_field_ids(schema)
    assert schema[0].duckdb_type == "INTEGER"


def test_tree_of_a_pyarrow_file_without_ids(con: Any, tmp_path: Path) -> None:
    """pyarrow names list elements ``element`` (or ``item`` in older files): both map."""
    table = pa.table(
        {
            "tags": pa.array([["x"]], pa.list_(pa.string())),
            "points": pa.array([[{"lat": 1.0}]], pa.list_(pa.struct([("lat", pa.float64())]))),
        }
    )
    path = tmp_path / "b.parquet"
    pq.write_table(table, path, use_compliant_nested_type=False)  # elements named "item"
    (schema,) = read_file_schemas(con, [str(path)]).values()
    assert [shape(f) for f in schema] == [
        ("tags", None, LIST, (("item", None, PRIMITIVE, ()),)),
        ("points", None, LIST, (("item", None, STRUCT, (("lat", None, PRIMITIVE, ()),)),)),
    ]
    assert not has_field_ids(schema)
    mapping = parse_name_mapping(
        '[{"field-id": 1, "names": ["tags"], "fields": [{"field-id": 2, "names": ["element"]}]},'
        ' {"field-id": 3, "names": ["points"], "fields": [{"field-id": 4, "names": ["element"], '
        '"fields": [{"field-id": 5, "names": ["latitude", "lat"]}]}]}]'
    )
    mapped = apply_name_mapping(schema, mapping)
    assert [shape(f) for f in mapped] == [
        ("tags", 1, LIST, (("item", 2, PRIMITIVE, ()),)),
        ("points", 3, LIST, (("item", 4, STRUCT, (("lat", 5, PRIMITIVE, ()),)),)),
    ]


def test_name_mapping_rules() -> None:
    """A dotted name is a literal name; fields without field-id stay without one."""
    mapping = parse_name_mapping('[{"names": ["a.b"], "field-id": 7}, {"names": ["extra"]}, {"names": []}]')
    schema = (
        FileField("a.b", None, PRIMITIVE, "INTEGER"),
        FileField("extra", None, PRIMITIVE, "INTEGER"),
        FileField("a", None, PRIMITIVE, "INTEGER"),
    )
    assert [f.field_id for f in apply_name_mapping(schema, mapping)] == [7, None, None]


@pytest.mark.parametrize(
    "text", ["{}", "[{}]", '[{"names": "a"}]', '[{"names": ["a"], "field-id": "1"}]', "nope"]
)
def test_bad_name_mappings_are_corrupt(text: str) -> None:
    with pytest.raises(CorruptDataError, match="name-mapping"):
        parse_name_mapping(text)


def test_cache_reads_each_file_once_and_evicts(con: Any, tmp_path: Path) -> None:
    paths = [
        str(write_parquet(con, tmp_path / f"{n}.parquet", "SELECT 1 AS a", {"a": n + 1})) for n in range(3)
    ]
    cache = LayoutCache(max_entries=2)
    first = cache.get_many(con, paths[:2])
    assert len(cache) == 2
    Path(paths[0]).unlink()  # cached: not read again
    assert cache.get_many(con, paths[:1]) == {paths[0]: first[paths[0]]}
    cache.get_many(con, paths[2:])
    assert len(cache) == 2  # the least recently used (paths[1]) went
    assert set(cache.get_many(con, [paths[0], paths[2]])) == {paths[0], paths[2]}
