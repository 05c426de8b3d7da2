"""Schema evolution rules (iceduck.txn.schema_update), without Spark; the same cases are
compared with Spark's results in tests/interop/test_txn_evolution_spark.py. Most cases are ALTER TABLE
statements, translated into change requests as the ALTER TABLE operation does
(iceduck.ops.alter_requests); the others build the requests directly."""

from __future__ import annotations

import pytest

from iceduck.errors import AlreadyExistsError, NotFoundError, UserError, ValidationError
from iceduck.ops.alter_requests import evolve_schema
from iceduck.spec.schema import Schema
from iceduck.spec.sort import SortField, SortOrder
from iceduck.spec.transforms import IdentityTransform, VoidTransform
from iceduck.spec.types import (
    DecimalType,
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    VariantType,
)
from iceduck.txn import change_requests as ch
from iceduck.txn.schema_update import SchemaUpdate, apply_schema_changes
from tests.txn.evolution_helpers import BUCKET16, IDENTITY, alter, nested_schema, spec_of

LAST = 22


def evolve(sql: str, schema: Schema | None = None, version: int = 2, **refs: object) -> tuple[Schema, int]:
    base = schema or nested_schema()
    return evolve_schema(base, base.highest_field_id, alter(sql), version, **refs)  # type: ignore[arg-type]


def names(schema: Schema, path: str = "") -> list[str]:
    fields = schema.fields if not path else schema.find_field(path).field_type.fields  # type: ignore[attr-defined]
    return [f.name for f in fields]


# -- ADD COLUMN ---------------------------------------------------------------------------


def test_add_nested_struct_numbers_the_column_then_its_fields_level_by_level() -> None:
    schema, last = evolve("ADD COLUMN z struct<p:int, q:struct<r:int>, w:array<int>> AFTER id")
    z = schema.find_field("z")
    assert z.field_id == LAST + 1
    assert names(schema)[:3] == ["id", "z", "s"]
    assert [(f.name, f.field_id) for f in z.field_type.fields] == [("p", 23 + 1), ("q", 25), ("w", 26)]  # type: ignore[attr-defined]
    assert schema.find_field("z.q.r").field_id == 27
    assert schema.find_field("z.w.element").field_id == 28
    assert last == 28


def test_add_into_struct_list_element_and_map_value() -> None:
    schema, last = evolve("ADD COLUMN st.e string FIRST")
    assert names(schema, "st") == ["e", "a", "b"]
    assert schema.find_field("st.e").field_id == LAST + 1
    schema, _ = evolve("ADD COLUMN st.b.g int AFTER c", schema)
    assert names(schema, "st.b") == ["c", "g"]
    schema, _ = evolve("ADD COLUMN l.element.y int", schema)
    schema, last = evolve("ADD COLUMN m.value.y int", schema)
    assert schema.find_field("l.element.y").field_id == LAST + 3
    assert schema.find_field("m.value.y").field_id == LAST + 4 == last
    assert schema.find_field("m.value.v").field_id == 21  # untouched ids stay


def test_add_refuses_non_struct_parent_and_existing_names_case_insensitively() -> None:
    with pytest.raises(UserError, match="not a struct"):
        evolve("ADD COLUMN li.element.y int")
    with pytest.raises(AlreadyExistsError, match="'id' already exists"):
        evolve("ADD COLUMN ID int")
    with pytest.raises(AlreadyExistsError):
        evolve("ADD COLUMN st.A int")
    with pytest.raises(NotFoundError, match="nope"):
        evolve("ADD COLUMN new1 int AFTER nope")
    with pytest.raises(NotFoundError, match="parent column 'nope'"):
        evolve("ADD COLUMN nope.x int")


def test_add_columns_applies_in_order() -> None:
    schema, last = evolve("ADD COLUMNS (c1 int, c2 string FIRST)")
    assert names(schema)[0] == "c2" and names(schema)[-1] == "c1"
    assert (schema.find_field("c1").field_id, schema.find_field("c2").field_id, last) == (23, 24, 24)


def test_required_column_needs_a_v3_default() -> None:
    with pytest.raises(UserError, match="cannot add required column r without a default"):
        evolve("ADD COLUMN r int NOT NULL")
    with pytest.raises(ValidationError, match="format-version 3"):
        evolve("ADD COLUMN r int NOT NULL DEFAULT 5")
    schema, _ = evolve("ADD COLUMN r int NOT NULL DEFAULT 5", version=3)
    r = schema.find_field("r")
    assert (r.required, r.initial_default, r.write_default) == (True, 5, 5)


def test_add_refuses_types_newer_than_the_table() -> None:
    action = ch.AddColumn(("v",), VariantType())
    with pytest.raises(ValidationError, match="variant, which needs format-version 3"):
        apply_schema_changes(nested_schema(), LAST, [action], 2)
    schema, _ = apply_schema_changes(nested_schema(), LAST, [action], 3)
    assert schema.find_field("v").field_type == VariantType()


def test_nested_defaults_are_refused() -> None:
    action = ch.AddColumn(("p",), StructType(()), has_default=True, default={})
    with pytest.raises(ValidationError, match="only primitive columns"):
        apply_schema_changes(nested_schema(), LAST, [action], 3)


# -- DROP -----------------------------------------------------------------------------------


def test_drop_nested_and_if_exists() -> None:
    schema, last = evolve("DROP COLUMN st.b.c")
    assert names(schema, "st.b") == [] and last == LAST
    same, _ = evolve("DROP COLUMN IF EXISTS nope")
    assert same == nested_schema()
    with pytest.raises(NotFoundError):
        evolve("DROP COLUMN nope")
    with pytest.raises(UserError, match="list element"):
        evolve("DROP COLUMN l.element")


def test_drop_refuses_identifier_fields_and_their_parents() -> None:
    schema, _ = evolve("SET IDENTIFIER FIELDS k")
    assert schema.identifier_field_ids == (12,)
    with pytest.raises(ValidationError, match="identifier field k"):
        evolve("DROP COLUMN k", schema)
    required_struct = Schema(
        (
            schema.fields[0],
            NestedField(30, "rs", StructType((NestedField(31, "a", IntegerType(), True),)), True),
        ),
        0,
        (31,),
    )
    with pytest.raises(ValidationError, match=r"holds identifier field rs\.a"):
        evolve("DROP COLUMN rs", required_struct)


def test_drop_refuses_current_partition_and_sort_sources_but_not_void_fields() -> None:
    spec = spec_of((1, 1000, "id_bucket", BUCKET16), (14, 1001, "st.a", IDENTITY))
    with pytest.raises(ValidationError, match=r"drop column id: the current partition spec uses it"):
        evolve("DROP COLUMN id", spec=spec)
    with pytest.raises(ValidationError, match=r"drop column st.a: .*partition field st.a"):
        evolve("DROP COLUMN st", spec=spec)
    order = SortOrder(1, (SortField(2, IdentityTransform()),))
    with pytest.raises(ValidationError, match="drop column s: the current sort order uses it"):
        evolve("DROP COLUMN s", sort_order=order)
    void = spec_of((4, 1000, "n", VoidTransform()))
    schema, _ = evolve("DROP COLUMN n", spec=void)
    assert schema.find_field_or_none("n") is None


def test_cannot_drop_the_only_column() -> None:
    only = Schema((nested_schema().fields[1],), 0, ())
    with pytest.raises(UserError, match="only column"):
        evolve("DROP COLUMN s", only)


# -- RENAME ---------------------------------------------------------------------------------


def test_rename_keeps_ids_and_refuses_duplicates() -> None:
    schema, last = evolve("RENAME COLUMN dc TO DC2")
    assert schema.find_field("DC2").field_id == 6 and last == LAST
    schema, _ = evolve("RENAME COLUMN st.a TO a2", schema)
    assert schema.find_field("st.a2").field_id == 14
    with pytest.raises(AlreadyExistsError, match="'ts' already exists"):
        evolve("RENAME COLUMN f TO TS")
    with pytest.raises(UserError, match="fixed names"):
        evolve("RENAME COLUMN l.element TO foo")


def test_rename_keeps_identifier_fields_by_id() -> None:
    schema, _ = evolve("SET IDENTIFIER FIELDS id, k")
    schema, _ = evolve("RENAME COLUMN id TO id2", schema)
    assert schema.identifier_field_ids == (1, 12)


def test_rename_refuses_ambiguous_dotted_names() -> None:
    with pytest.raises(ValidationError, match="ambiguous"):
        evolve("RENAME COLUMN k TO `st.a`")
    schema, _ = evolve("RENAME COLUMN k TO `a.b`")
    assert schema.find_field(12).name == "a.b"


# -- ALTER COLUMN ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("column", "new_type", "expected"),
    [("n", "bigint", LongType()), ("f", "double", DoubleType()), ("dc", "decimal(12,2)", DecimalType(12, 2))],
)
def test_allowed_promotions(column: str, new_type: str, expected: object) -> None:
    schema, _ = evolve(f"ALTER COLUMN {column} TYPE {new_type}")
    assert schema.find_field(column).field_type == expected


@pytest.mark.parametrize(
    ("column", "new_type", "message"),
    [
        ("s", "int", "from string to int: not an allowed promotion"),
        ("dc", "decimal(12,3)", "from decimal(9, 2) to decimal(12, 3)"),
        ("id", "int", "from long to int"),
        ("st", "int", "only primitive types"),
    ],
)
def test_refused_promotions(column: str, new_type: str, message: str) -> None:
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        evolve(f"ALTER COLUMN {column} TYPE {new_type}")


def test_date_to_timestamp_is_refused_as_java_does() -> None:
    action = ch.UpdateColumn(("d",), type=TimestampType())
    with pytest.raises(ValidationError, match=r"Iceberg Java 1\.10"):
        apply_schema_changes(nested_schema(), LAST, [action], 3)


def test_nullability() -> None:
    with pytest.raises(UserError, match="nullable to NOT NULL"):
        evolve("ALTER COLUMN s SET NOT NULL")
    schema, _ = evolve("ALTER COLUMN id SET NOT NULL")  # already required: no-op
    assert schema == nested_schema()
    schema, _ = evolve("ALTER COLUMN id DROP NOT NULL")
    assert not schema.find_field("id").required
    required_element = Schema((NestedField(1, "l", ListType(2, StringType(), True)),), 0)
    schema, _ = evolve("ALTER COLUMN l.element DROP NOT NULL", required_element)
    assert schema.find_field("l").field_type == ListType(2, StringType(), False)
    with pytest.raises(ValidationError, match="identifier field"):
        evolve("ALTER COLUMN k DROP NOT NULL", evolve("SET IDENTIFIER FIELDS k")[0])


def test_comment_and_positions() -> None:
    schema, _ = evolve("ALTER COLUMN s COMMENT 'hello'")
    assert schema.find_field("s").doc == "hello"
    schema, _ = evolve("ALTER COLUMN d FIRST", schema)
    assert names(schema)[:2] == ["d", "id"]
    schema, _ = evolve("ALTER COLUMN st.a AFTER b", schema)
    assert names(schema, "st") == ["b", "a"]
    with pytest.raises(NotFoundError):
        evolve("ALTER COLUMN ts AFTER nope")
    with pytest.raises(UserError, match="after itself"):
        evolve("ALTER COLUMN ts AFTER ts")


def test_set_default_is_v3_and_changes_only_the_write_default() -> None:
    with pytest.raises(ValidationError, match="format-version 3"):
        evolve("ALTER COLUMN n SET DEFAULT 8")
    schema, _ = evolve("ADD COLUMN r int DEFAULT 7", version=3)
    schema, _ = evolve("ALTER COLUMN r SET DEFAULT 8", schema, version=3)
    r = schema.find_field("r")
    assert (r.initial_default, r.write_default) == (7, 8)
    with pytest.raises(UserError, match="does not fit"):
        evolve("ALTER COLUMN r SET DEFAULT 'x'", schema, version=3)


def test_a_default_is_typed_after_the_type_change_of_the_same_clause() -> None:
    schema, _ = evolve("ALTER COLUMN n TYPE bigint SET DEFAULT 5", version=3)
    n = schema.find_field("n")
    assert (n.field_type, n.write_default) == (LongType(), 5)
    with pytest.raises(UserError, match="DEFAULT 'x' does not fit column n of type long"):
        evolve("ALTER COLUMN n TYPE bigint SET DEFAULT 'x'", version=3)
    # the refused promotion is reported, not the default that would not fit either
    with pytest.raises(ValidationError, match="from string to int: not an allowed promotion"):
        evolve("ALTER COLUMN s TYPE int SET DEFAULT 'x'", version=3)
    schema, _ = evolve("ALTER COLUMN N SET DEFAULT 3 FIRST", version=3)
    assert (schema.fields[0].name, schema.fields[0].write_default) == ("n", 3)


def test_defaults_only_on_struct_fields() -> None:
    with pytest.raises(UserError, match="map keys cannot be changed"):
        evolve("ALTER COLUMN m.key SET DEFAULT 5", version=3)
    with pytest.raises(UserError, match=r"li\.element: only struct fields have defaults"):
        evolve("ALTER COLUMN li.element TYPE bigint SET DEFAULT 5", version=3)
    assert evolve("ALTER COLUMN li.element SET DEFAULT NULL", version=3)[0] == nested_schema()


def test_schema_update_sees_each_change_before_the_next() -> None:
    update = SchemaUpdate(nested_schema(), LAST, 3)
    update.apply(ch.RenameColumn(("n",), "count"))
    update.apply(ch.UpdateColumn(("count",), type=LongType()))
    column, full = update.column(("COUNT",))
    assert (column.field_id, column.field_type, full) == (4, LongType(), "count")
    update.apply(ch.SetColumnDefault(("count",), 7))
    update.apply(ch.MoveColumn(("count",), ch.MoveAfter("st")))
    update.apply(ch.AddColumn(("st", "z"), StringType(), placement=ch.MoveFirst()))
    schema, last = update.result()
    assert names(schema)[6:8] == ["st", "count"] and names(schema, "st")[0] == "z"
    assert schema.find_field("count").write_default == 7 and last == LAST + 1
    with pytest.raises(UserError, match="map keys cannot be changed"):
        update.column(("m", "key"))


# -- identifier fields ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ("dbl", "float and double"),
        ("n", "not a required"),
        ("st", "not a primitive"),
        ("li.element", "not a required"),
        ("nope", "cannot find column 'nope'"),
    ],
)
def test_identifier_field_rules(columns: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        evolve(f"SET IDENTIFIER FIELDS {columns}")


def test_identifier_fields_in_optional_struct_or_collections() -> None:
    cls = NestedField
    schema = Schema(
        (
            cls(1, "os", StructType((cls(3, "a", IntegerType(), True),))),
            cls(2, "l", ListType(4, StructType((cls(5, "x", IntegerType(), True),)), True), True),
        ),
        0,
    )
    with pytest.raises(ValidationError, match="optional struct os"):
        evolve("SET IDENTIFIER FIELDS os.a", schema)
    with pytest.raises(ValidationError, match="nested in l"):
        evolve("SET IDENTIFIER FIELDS l.element.x", schema)


def test_set_and_drop_identifier_fields() -> None:
    schema, _ = evolve("SET IDENTIFIER FIELDS k, id")
    assert schema.identifier_field_ids == (1, 12)
    schema, _ = evolve("DROP IDENTIFIER FIELDS id", schema)
    assert schema.identifier_field_ids == (12,)
    with pytest.raises(UserError, match="not an identifier field"):
        evolve("DROP IDENTIFIER FIELDS id", schema)


def test_non_schema_actions_are_skipped_and_schema_id_is_kept() -> None:
    schema, last = evolve("ADD PARTITION FIELD bucket(4, id)")
    assert schema == nested_schema() and last == LAST
    base = Schema(nested_schema().fields, 7, ())
    changed, _ = evolve("ADD COLUMN q int", base)
    assert changed.schema_id == 7


def test_map_keys_cannot_change_and_element_comments_are_dropped_as_java_does() -> None:
    with pytest.raises(UserError, match="map keys cannot be changed"):
        evolve("ALTER COLUMN m.key COMMENT 'k'")
    with pytest.raises(UserError, match="map keys"):
        evolve("ALTER COLUMN m.key DROP NOT NULL")
    schema, _ = evolve("ALTER COLUMN m.value COMMENT 'v'")
    assert schema == nested_schema()
    schema, _ = evolve("ALTER COLUMN l.element.x TYPE bigint")
    assert schema.find_field("l.element.x").field_type == LongType()
    schema, _ = evolve("RENAME COLUMN m.value.v TO v2")
    assert schema.find_field("m.value.v2").field_id == 21
