"""The project's read and write scenarios through ``iceduck.connect(catalog_uri=<server>)``,
compared statement by statement with the same statements on a local warehouse.

The end-to-end scripts (``sql/tests/e2e_*.sql``: CREATE partitioned v2/v3, INSERT, INSERT
OVERWRITE, DELETE/UPDATE/MERGE copy-on-write and merge-on-read, schema/partition/sort
evolution, branches and tags, time travel, rename, DROP PURGE, bad statements) run twice:
on ``iceduck.connect(<folder>)`` and on a REST client of an ``iceduck serve``. Their Spark
steps are left out on both sides. After every step both must agree: the same error kind
(or none), the same rows of the table under test, the same answer to a query step. The
snapshot history must have the same operations at the end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck import errors
from tests.catalog.rest_client.conftest import Served
from tests.support.scenario_rows import iceduck_rows
from tests.support.scenario_script import Step, load_script

SCRIPTS = Path(__file__).resolve().parents[3] / "sql" / "tests"
MODES = {"cow": "copy-on-write", "mor": "merge-on-read"}
VARIANTS = [
    pytest.param(script, fv, mode, id=f"{script}-v{fv}-{mode}")
    for script, fv, mode in [
        ("lifecycle", 2, "cow"),
        ("lifecycle", 3, "mor"),
        ("lifecycle", 2, "mor"),
        ("evolution", 2, "mor"),
        ("evolution", 3, "cow"),
        ("refs", 3, "mor"),
        ("tables", 2, "cow"),
        ("bad_statements", 3, "mor"),
    ]
]


def _outcome(con: iceduck.Connection, step: Step) -> tuple[str, Any]:
    """What a step did: the error kind it raised, or its rows (a query) / rowcount."""
    cur = con.cursor()
    try:
        cur.execute(step.sql)
    except iceduck.Error as e:
        cause = e.__cause__
        return "error", type(cause).__name__ if cause is not None else type(e).__name__
    if step.writer == "query":
        return "rows", iceduck_rows(con, step.sql)
    return "done", cur.rowcount


def _table_rows(con: iceduck.Connection, table: str) -> Any:
    try:
        return iceduck_rows(con, f"SELECT * FROM {table} ORDER BY ALL")
    except iceduck.Error as e:
        return type(e.__cause__).__name__


@pytest.mark.parametrize(("script", "fv", "mode"), VARIANTS)
def test_scenario_through_rest_matches_local(
    any_served: Served, tmp_path: Path, script: str, fv: int, mode: str
) -> None:
    scenario = load_script(
        SCRIPTS / f"e2e_{script}.sql",
        {"fv": str(fv), "mode": MODES[mode], "ns": f"s_{script}", "writer": "iceduck"},
    )
    local = iceduck.connect(tmp_path / "local")
    remote = any_served.connect()
    table: str | None = None
    ran = 0
    for step in scenario.steps:
        if step.writer == "spark":
            continue
        table = step.table or table
        where = f"{scenario.name} line {step.line}: {step.sql[:80]!r}"
        expected = _outcome(local, step)
        assert _outcome(remote, step) == expected, where
        if step.error is not None:
            assert expected[0] == "error", where
            assert issubclass(getattr(errors, expected[1]), getattr(errors, step.error)), where
        if table is not None and step.check:
            assert _table_rows(remote, table) == _table_rows(local, table), where
        ran += 1
    assert ran >= 5
    if table is not None:
        history = f"SELECT operation FROM {table}.snapshots ORDER BY committed_at"
        assert _table_rows(remote, table) == _table_rows(local, table)
        try:
            expected_ops = local.cursor().execute(history).fetchall()
        except iceduck.Error:
            return  # the table under test was dropped at the end
        assert remote.cursor().execute(history).fetchall() == expected_ops
