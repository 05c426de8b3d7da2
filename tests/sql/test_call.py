"""Reading ``CALL [catalog.]system.name(args)`` as Spark writes it."""

from __future__ import annotations

import pytest

from iceduck.errors import UserError
from iceduck.sql.call import BoundParameter, CallArgument, CallStatement, Unevaluated, parse_call


def test_named_arguments_with_spark_constants() -> None:
    call = parse_call(
        "CALL cat.system.rewrite_data_files(table => 'db.t', options => map('min-input-files', '2'), "
        "snapshot_ids => array(1, -2), dry_run => true, where => NULL);"
    )
    assert call == CallStatement(
        "cat",
        "rewrite_data_files",
        (
            CallArgument("table", "db.t", "'db.t'"),
            CallArgument("options", {"min-input-files": "2"}, "map('min-input-files', '2')"),
            CallArgument("snapshot_ids", [1, -2], "array(1, -2)"),
            CallArgument("dry_run", True, "true"),
            CallArgument("where", None, "NULL"),
        ),
    )
    assert call.named


def test_positional_arguments_and_expressions() -> None:
    text = "-- old ones\nCALL System.Expire_Snapshots('db.t', TIMESTAMP '2024-01-31 00:00:00', 1.5)"
    call = parse_call(text)
    assert call.catalog is None and call.procedure == "expire_snapshots" and not call.named
    assert [a.value for a in call.arguments] == [
        "db.t",
        Unevaluated("CAST('2024-01-31 00:00:00' AS TIMESTAMPTZ)"),
        1.5,
    ]
    assert parse_call("CALL system.ancestors_of()").arguments == ()


def test_parameters_are_numbered_as_duckdb_numbers_them() -> None:
    call = parse_call("CALL system.x(?, $name, array(?, 5, ?), ?, map('k', ?), $7)")
    assert [a.value for a in call.arguments] == [
        BoundParameter(1),
        BoundParameter("name"),
        [BoundParameter(2), 5, BoundParameter(3)],
        BoundParameter(4),
        {"k": BoundParameter(5)},
        BoundParameter(7),
    ]


@pytest.mark.parametrize(
    ("sql", "says"),
    [
        ("CALL x", "CALL takes a procedure and its arguments"),
        ("CALL rollback()", "[catalog.]system.name, not rollback"),
        ("CALL a.b.system.c()", "[catalog.]system.name"),
        ("CALL db.other.c()", "[catalog.]system.name"),
        ("CALL system.x(1, a => 2)", "cannot be mixed"),
        ("CALL system.x(1,,2)", "missing between commas"),
        ("CALL system.x(a => 1, A => 2)", "duplicate procedure argument: a"),
        ("CALL system.x(now() - ?)", "a parameter must be a whole CALL argument"),
        ("CALL system.x(1 +)", "cannot read the CALL argument"),
    ],
)
def test_malformed_calls_say_what_is_wrong(sql: str, says: str) -> None:
    with pytest.raises(UserError, match=None) as raised:
        parse_call(sql)
    assert says in str(raised.value)
