"""PyIceberg, a second reader of view metadata, agrees with iceduck's view files.

PyIceberg (0.9 and later) models the view spec (``pyiceberg.view.metadata.ViewMetadata``,
pydantic, strict about required fields and ``format-version`` 1); its SQL catalog keeps
no views, so the check is on the files: every metadata file iceduck's JDBC catalog writes
for a view (created, replaced, a property set) parses in PyIceberg into the same view
(uuid, location, versions with their SQL, dialects, default namespace and catalog, schemas
with field ids, types and docs, version log, properties), and PyIceberg's own
serialisation of Spark's files (tests/fixtures/views) reads back in iceduck as Spark's.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.view.metadata import ViewMetadata as PyViewMetadata

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.formats.view_metadata_json import parse_view_metadata
from iceduck.io.fileio import to_local_path
from iceduck.spec.schema import Schema
from iceduck.spec.types import (
    DateType,
    DecimalType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
)
from iceduck.spec.view_metadata import (
    ViewMetadata,
    ViewRepresentation,
    add_view_version,
    new_view,
    set_view_properties,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "views"
V = TableIdentifier(("ns",), "v")
SCHEMA = Schema(
    (
        NestedField(0, "id", LongType(), required=True, doc="the order"),
        NestedField(1, "amount", DecimalType(10, 2)),
        NestedField(2, "day", DateType()),
        NestedField(3, "tags", ListType(5, StringType(), element_required=False)),
        NestedField(4, "info", StructType((NestedField(6, "score", IntegerType()),))),
    )
)
SCHEMA_2 = Schema((NestedField(0, "who", StringType()),))


def file_text(location: str) -> bytes:
    data = Path(to_local_path(location)).read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def same_view(ours: ViewMetadata, theirs: PyViewMetadata) -> None:
    """iceduck's model of a file and PyIceberg's say the same, field by field."""
    assert theirs.view_uuid == ours.view_uuid
    assert theirs.format_version == ours.format_version
    assert theirs.location == ours.location
    assert theirs.current_version_id == ours.current_version_id
    assert dict(theirs.properties) == dict(ours.properties)
    assert [(h.version_id, h.timestamp_ms) for h in theirs.version_log] == [
        (h.version_id, h.timestamp_ms) for h in ours.version_log
    ]
    assert len(theirs.versions) == len(ours.versions)
    for py_version, version in zip(theirs.versions, ours.versions, strict=True):
        assert py_version.version_id == version.version_id
        assert py_version.schema_id == version.schema_id
        assert py_version.timestamp_ms == version.timestamp_ms
        assert dict(py_version.summary) == dict(version.summary)
        assert tuple(py_version.default_namespace) == version.default_namespace
        assert py_version.default_catalog == version.default_catalog
        assert [(r.root.type, r.root.sql, r.root.dialect) for r in py_version.representations] == [
            (r.type, r.sql, r.dialect) for r in version.representations
        ]
    assert [s.schema_id for s in theirs.schemas] == [s.schema_id for s in ours.schemas]
    for py_schema, schema in zip(theirs.schemas, ours.schemas, strict=True):
        assert fields(py_schema) == [(f.field_id, f.name, f.required, f.doc) for f in schema.fields]
        assert [str(f.field_type) for f in py_schema.fields] == [
            _pyiceberg_type_text(f.field_type) for f in schema.fields
        ]


def fields(py_schema: Any) -> list[tuple[int, str, bool, str | None]]:
    return [(f.field_id, f.name, f.required, f.doc) for f in py_schema.fields]


def _pyiceberg_type_text(field_type: Any) -> str:
    """iceduck's type as PyIceberg prints the same type (its ``str`` of a type)."""
    import pyiceberg.types as py

    def convert(t: Any) -> Any:
        if isinstance(t, LongType):
            return py.LongType()
        if isinstance(t, IntegerType):
            return py.IntegerType()
        if isinstance(t, StringType):
            return py.StringType()
        if isinstance(t, DateType):
            return py.DateType()
        if isinstance(t, DecimalType):
            return py.DecimalType(t.precision, t.scale)
        if isinstance(t, ListType):
            return py.ListType(t.element_id, convert(t.element_type), t.element_required)
        if isinstance(t, StructType):
            return py.StructType(
                *(
                    py.NestedField(f.field_id, f.name, convert(f.field_type), f.required, f.doc)
                    for f in t.fields
                )
            )
        raise TypeError(t)

    return str(convert(field_type))


def test_pyiceberg_reads_every_view_file_iceduck_writes(tmp_path: Path) -> None:
    catalog = SqliteCatalog(tmp_path / "wh")
    catalog.create_namespace(("ns",))
    created = catalog.create_view(
        V,
        new_view(
            catalog.default_view_location(V),
            SCHEMA,
            [ViewRepresentation("SELECT * FROM t", "duckdb"), ViewRepresentation("SELECT * FROM t", "spark")],
            ("ns",),
            default_catalog="iceduck",
            summary={"engine-name": "iceduck", "engine-version": "test"},
            properties={"comment": "a view"},
        ),
    )
    replaced = catalog.commit_view(
        created,
        add_view_version(
            created.metadata,
            SCHEMA_2,
            [
                ViewRepresentation("SELECT who FROM u", "duckdb"),
                ViewRepresentation("SELECT who FROM u", "spark"),
            ],
            ("other",),
            None,
            {"engine-name": "iceduck"},
            created.metadata.current_version.timestamp_ms + 1,
        ),
    )
    altered = catalog.commit_view(replaced, set_view_properties(replaced.metadata, {"k": "v"}, ["comment"]))
    for loaded in (created, replaced, altered):
        theirs = PyViewMetadata.model_validate_json(file_text(loaded.metadata_location))
        same_view(loaded.metadata, theirs)
    catalog.close()


@pytest.mark.parametrize(
    "path", sorted(FIXTURES.glob("ns/*/metadata/*.metadata.json")), ids=lambda p: p.name[:5]
)
def test_pyiceberg_serialisation_of_sparks_files_reads_back_as_sparks(path: Path) -> None:
    text = gzip.decompress(path.read_bytes())
    theirs = PyViewMetadata.model_validate_json(text)
    ours = parse_view_metadata(text, str(path))
    same_view(ours, theirs)
    assert parse_view_metadata(theirs.model_dump_json(by_alias=True, exclude_none=True), "pyiceberg") == ours


def test_pyiceberg_reads_and_creates_views_through_serve(tmp_path: Path) -> None:
    """PyIceberg's REST client on ``iceduck serve``: it lists and loads a view iceduck made
    (the same metadata as the served catalog's), and a view it creates (a ``spark``
    representation, as Spark would write it) is one iceduck's catalog loads and its SQL reads."""
    from pyiceberg.catalog.rest import RestCatalog
    from pyiceberg.schema import Schema as PySchema
    from pyiceberg.types import LongType as PyLong
    from pyiceberg.types import NestedField as PyField
    from pyiceberg.view.metadata import SQLViewRepresentation
    from pyiceberg.view.metadata import ViewRepresentation as PyRepresentation
    from pyiceberg.view.metadata import ViewVersion as PyVersion

    import iceduck
    from tests.support.rest_duckdb import served

    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    with iceduck.connect(warehouse) as con:
        con.execute("CREATE NAMESPACE ns")
        con.execute("CREATE TABLE ns.t AS SELECT * FROM (VALUES (1), (2), (3)) AS v(id)")
    catalog = SqliteCatalog(warehouse)
    made = catalog.create_view(
        V,
        new_view(
            catalog.default_view_location(V),
            SCHEMA_2,
            [
                ViewRepresentation("SELECT 'x' AS who", "duckdb"),
                ViewRepresentation("SELECT 'x' AS who", "spark"),
            ],
            ("ns",),
        ),
    )
    with served(warehouse) as server:
        rest = RestCatalog("served", uri=server.url)
        assert rest.list_views("ns") == [("ns", "v")]
        same_view(made.metadata, rest.load_view("ns.v").metadata)
        version = PyVersion(
            version_id=1,
            schema_id=0,
            timestamp_ms=made.metadata.current_version.timestamp_ms,
            summary={"engine-name": "pyiceberg"},
            representations=[
                PyRepresentation(
                    SQLViewRepresentation(type="sql", sql="SELECT id FROM t WHERE id > 1", dialect="spark")
                )
            ],
            default_namespace=["ns"],
        )
        rest.create_view("ns.py_v", PySchema(PyField(1, "id", PyLong(), required=False)), version)
    loaded = catalog.load_view(TableIdentifier(("ns",), "py_v"))
    representation = loaded.metadata.current_version.representation("spark")
    assert representation is not None and representation.sql == "SELECT id FROM t WHERE id > 1"
    assert [f.name for f in loaded.metadata.schema.fields] == ["id"]
    catalog.close()
    with iceduck.connect(warehouse) as con:
        assert sorted(con.execute("SELECT * FROM ns.py_v").fetchall()) == [(2,), (3,)]
