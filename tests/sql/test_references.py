"""Finding and resolving table references (iceduck.sql.references)."""

from __future__ import annotations

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.errors import UnsupportedError, UserError
from iceduck.sql.parse import parse_statement
from iceduck.sql.references import (
    ResolvedName,
    TimeTravel,
    metadata_columns_named,
    name_candidates,
    resolve_name,
    table_refs,
)


def refs(sql: str, timezone: str = "UTC", params: object = None) -> list[tuple]:
    statement = parse_statement(sql)
    return [
        (r.parts, r.alias, r.time_travel, r.path, statement.text[r.span[0] : r.span[1]])
        for r in table_refs(statement, timezone, params)
    ]


def test_plain_names_with_and_without_alias() -> None:
    assert refs("SELECT * FROM ns.t JOIN iceduck.deep.er.u AS u ON t.a = u.a, single") == [
        (("ns", "t"), None, None, None, "ns.t"),
        (("iceduck", "deep", "er", "u"), "u", None, None, "iceduck.deep.er.u"),
    ]


def test_quoted_names_keep_their_text_and_span() -> None:
    assert refs('SELECT * FROM "my ns"."T ""x"""') == [
        (("my ns", 'T "x"'), None, None, None, '"my ns"."T ""x"""')
    ]


@pytest.mark.parametrize(
    ("clause", "travel"),
    [
        ("VERSION AS OF 123", TimeTravel(version=123)),
        ("FOR VERSION AS OF 'b_dev'", TimeTravel(version="b_dev")),
        ("FOR SYSTEM_VERSION AS OF 7", TimeTravel(version=7)),
        ("TIMESTAMP AS OF '2024-01-01 00:00:00'", TimeTravel(timestamp_ms=1704067200000)),
        ("FOR SYSTEM_TIME AS OF '2024-01-01T01:00:00+01:00'", TimeTravel(timestamp_ms=1704067200000)),
        ("TIMESTAMP AS OF TIMESTAMP '2024-01-01 00:00:00.5'", TimeTravel(timestamp_ms=1704067200500)),
        ("TIMESTAMP AS OF CAST('2024-01-01' AS DATE)", TimeTravel(timestamp_ms=1704067200000)),
        ("TIMESTAMP AS OF 1704067200", TimeTravel(timestamp_ms=1704067200000)),
    ],
)
def test_time_travel_clauses_and_their_spans(clause: str, travel: TimeTravel) -> None:
    [(parts, alias, found, _, span)] = refs(f"SELECT * FROM ns.t {clause} AS x WHERE x.a = 1")
    assert (parts, alias, found) == (("ns", "t"), "x", travel)
    assert span.startswith("ns.t ") and span.endswith(clause.split(" OF ")[-1])


def test_time_travel_string_without_offset_is_read_in_the_session_zone() -> None:
    [(_, _, travel, _, _)] = refs("SELECT * FROM ns.t TIMESTAMP AS OF '2024-01-01 01:00:00'", "Europe/Paris")
    assert travel == TimeTravel(timestamp_ms=1704067200000)


def test_time_travel_takes_parameters() -> None:
    [(_, _, travel, _, _)] = refs("SELECT * FROM ns.t VERSION AS OF ?", params=[42])
    assert travel == TimeTravel(version=42)


def test_time_travel_needs_a_constant() -> None:
    with pytest.raises(UserError, match="TIMESTAMP AS OF takes a constant"):
        refs("SELECT * FROM ns.t TIMESTAMP AS OF now()")
    with pytest.raises(UserError, match="VERSION AS OF takes"):
        refs("SELECT * FROM ns.t VERSION AS OF 1.5")


def test_time_travel_on_a_one_part_name_is_refused() -> None:
    with pytest.raises(UnsupportedError, match="not an Iceberg table name"):
        refs("SELECT * FROM t VERSION AS OF 1")


def test_table_function_and_pass_through_functions() -> None:
    assert refs("SELECT * FROM iceduck_scan('/w/t') s, read_parquet('x.parquet')") == [
        ((), "s", None, "/w/t", "iceduck_scan('/w/t')")
    ]
    with pytest.raises(UserError, match="takes one string"):
        refs("SELECT * FROM iceduck_scan(1)")


def test_metadata_table_and_ref_suffixes_are_candidates_after_the_table() -> None:
    found = list(name_candidates(("iceduck", "ns", "t", "snapshots"), "iceduck"))
    assert found == [
        ResolvedName(TableIdentifier(("ns", "t"), "snapshots")),
        ResolvedName(TableIdentifier(("iceduck", "ns", "t"), "snapshots")),
        ResolvedName(TableIdentifier(("ns",), "t"), metadata_table="snapshots"),
        ResolvedName(TableIdentifier(("iceduck", "ns"), "t"), metadata_table="snapshots"),
    ]


@pytest.mark.parametrize(
    ("suffix", "expected"),
    [
        ("branch_b_dev", {"branch": "b_dev"}),
        ("tag_t_first", {"tag": "t_first"}),
        ("snapshot_id_123", {"snapshot_id": 123}),
        ("at_timestamp_1700000000000", {"timestamp_ms": 1700000000000}),
        ("FILES", {"metadata_table": "files"}),
    ],
)
def test_suffix_readings(suffix: str, expected: dict) -> None:
    table = TableIdentifier(("ns",), "t")
    resolved = resolve_name(("ns", "t", suffix), "iceduck", lambda ident: ident == table)
    assert resolved == ResolvedName(table, **expected)


def test_nested_namespaces_resolve_by_asking_the_catalog() -> None:
    existing = {TableIdentifier(("deep", "er"), "t")}
    assert resolve_name(("deep", "er", "t"), "iceduck", existing.__contains__) == ResolvedName(
        TableIdentifier(("deep", "er"), "t")
    )
    assert resolve_name(("iceduck", "deep", "er", "t"), "iceduck", existing.__contains__) == ResolvedName(
        TableIdentifier(("deep", "er"), "t")
    )
    assert resolve_name(("deep", "er", "nope"), "iceduck", existing.__contains__) is None


def test_a_table_named_like_a_suffix_wins_over_the_suffix() -> None:
    existing = {TableIdentifier(("ns", "t"), "snapshots"), TableIdentifier(("ns",), "t")}
    assert resolve_name(("ns", "t", "snapshots"), "iceduck", existing.__contains__) == ResolvedName(
        TableIdentifier(("ns", "t"), "snapshots")
    )


def test_catalog_name_matches_without_case() -> None:
    existing = {TableIdentifier(("ns",), "t")}
    assert resolve_name(("ICEDUCK", "ns", "t"), "iceduck", existing.__contains__) == ResolvedName(
        TableIdentifier(("ns",), "t")
    )


def bare_refs(sql: str) -> list[tuple[str, ...]]:
    return [r.parts for r in table_refs(parse_statement(sql), bare_names=True)]


def test_bare_names_are_references_unless_a_cte_in_scope_has_the_name() -> None:
    assert bare_refs("SELECT * FROM orders o JOIN ns.t ON o.a = t.a, range(3)") == [("orders",), ("ns", "t")]
    assert bare_refs("WITH Orders AS (SELECT 1) SELECT * FROM orders, ns.orders") == [("ns", "orders")]
    # a CTE of a subquery hides the name inside it only
    assert bare_refs("SELECT * FROM (WITH o AS (SELECT 1) SELECT * FROM o), o") == [("o",)]
    assert bare_refs("WITH a AS (SELECT * FROM b) SELECT * FROM a") == [("b",)]
    assert bare_refs("SELECT * FROM read_parquet('x.parquet'), 'y.csv'") == []
    [travel] = table_refs(parse_statement("SELECT * FROM t VERSION AS OF 1"), bare_names=True)
    assert (travel.parts, travel.time_travel) == (("t",), TimeTravel(version=1))
    with pytest.raises(UnsupportedError, match="not an Iceberg table name"):
        bare_refs("WITH t AS (SELECT 1) SELECT * FROM t VERSION AS OF 1")


def test_names_read_in_the_current_namespace_after_the_name_as_written() -> None:
    shop = ("shop",)
    assert [c.identifier for c in name_candidates(("orders",), "iceduck", shop)] == [
        TableIdentifier(shop, "orders")
    ]
    found = list(name_candidates(("orders", "snapshots"), "iceduck", shop))
    assert found == [
        ResolvedName(TableIdentifier(("orders",), "snapshots")),  # as written first
        ResolvedName(TableIdentifier(("shop", "orders"), "snapshots")),
        ResolvedName(TableIdentifier(shop, "orders"), metadata_table="snapshots"),
    ]
    # three parts or more are never relative to the namespace
    assert [c.identifier for c in name_candidates(("a", "b", "t"), "iceduck", shop)] == [
        TableIdentifier(("a", "b"), "t")
    ]
    existing = {TableIdentifier(shop, "orders"), TableIdentifier(("archive",), "orders")}
    assert resolve_name(("archive", "orders"), "iceduck", existing.__contains__, shop) == ResolvedName(
        TableIdentifier(("archive",), "orders")
    )
    assert resolve_name(("orders", "branch_dev"), "iceduck", existing.__contains__, shop) == ResolvedName(
        TableIdentifier(shop, "orders"), branch="dev"
    )
    assert resolve_name(("orders",), "iceduck", existing.__contains__) is None


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT a FROM db.t", set()),
        ("SELECT _file, t._pos FROM db.t AS t WHERE _row_id > 3", {"_file", "_pos", "_row_id"}),
        ("SELECT 'x_file' AS a, a AS _spec_ids FROM db.t", set()),  # in the text, not a column
        ('SELECT "_spec_id" FROM db.t', {"_spec_id"}),
    ],
)
def test_metadata_columns_named(sql: str, expected: set[str]) -> None:
    assert metadata_columns_named(parse_statement(sql)) == expected
