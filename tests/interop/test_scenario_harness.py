"""The end-to-end harness itself (tests/support/scenario*.py): it must not pass vacuously.

Pure tests of the script format, the reference translation and the comparison; then, with
Spark as the only writer (so they run before iceduck writes), a deliberately wrong reference,
a "bad" statement that succeeds and a scenario that compares nothing must each fail the run,
and a second-opinion reader given a wrong answer must disagree.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from tests.interop.test_spark_select import norm
from tests.support.reference_sql import NeedsReference, translate
from tests.support.scenario import ScenarioRunner
from tests.support.scenario_peers import PeerReaders
from tests.support.scenario_rows import ScenarioMismatch, assert_same, metadata_location
from tests.support.scenario_script import ScriptError, parse_script
from tests.support.spark_warehouse import SparkWarehouse

SCRIPT = """
-- a comment
-- step: iceduck
CREATE NAMESPACE $ns
-- step: iceduck peers
-- table: $ns.t
CREATE TABLE $ns.t (id bigint, s string) USING iceberg TBLPROPERTIES ('format-version'='$fv');
-- step: spark nocheck when=fv:3
INSERT INTO $ns.t VALUES (1, 'a;b')
-- reference: INSERT INTO $ns.t
-- reference: VALUES (1, 'a;b')
-- step: iceduck error=ValidationError unless=fv:3
ALTER TABLE $ns.t ALTER COLUMN s TYPE int
-- step: query
SELECT * FROM $ns.t.branch_b
-- reference: none
"""


# -- the script format ---------------------------------------------------------------------------


def test_parse_script_steps_options_and_conditions() -> None:
    v3 = parse_script(SCRIPT, "s", {"ns": "e2e_h", "fv": "3"})
    assert [s.writer for s in v3.steps] == ["iceduck", "iceduck", "spark", "query"]
    assert v3.namespaces == ("e2e_h",)
    create, table, insert, query = v3.steps
    assert create.table is None and table.table == "e2e_h.t" and table.peers
    assert table.sql.endswith("TBLPROPERTIES ('format-version'='3')")
    assert insert.reference == "INSERT INTO e2e_h.t\nVALUES (1, 'a;b')" and not insert.check
    assert query.reference == ""
    v2 = parse_script(SCRIPT, "s", {"ns": "e2e_h", "fv": "2"})
    assert [s.writer for s in v2.steps] == ["iceduck", "iceduck", "iceduck", "query"]
    assert v2.steps[2].error == "ValidationError" and v2.steps[2].line == 12


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("SELECT 1\n-- step: iceduck\nSELECT 2", "before the first"),
        ("-- step: duckdb\nSELECT 1", "names its writer"),
        ("-- step: iceduck loud\nSELECT 1", "unknown step option"),
        ("-- step: iceduck\nINSERT INTO t VALUES (1); DELETE FROM t", "one statement per step"),
        ("-- step: spark error=UserError\nSELECT 1", "only iceduck steps"),
        ("-- step: iceduck\n-- just a comment", "without SQL"),
        ("-- step: iceduck\nCREATE NAMESPACE $missing", "placeholder"),
        ("-- step: iceduck when=zz:1\nSELECT 1", "unknown parameter"),
    ],
)
def test_malformed_scripts_are_refused(text: str, message: str) -> None:
    with pytest.raises(ScriptError, match=message):
        parse_script(text, "bad", {"ns": "e2e_h"})


# -- the reference translation -------------------------------------------------------------------


def test_translate_create_table_drops_iceberg_clauses_and_spells_duckdb_types() -> None:
    sql = (
        "CREATE TABLE ns.t (id bigint NOT NULL COMMENT 'k', ts timestamp, tn timestamp_ntz, b binary, "
        "s string) USING iceberg PARTITIONED BY (days(ts), bucket(16, id), truncate(4, s)) "
        "LOCATION '/x' TBLPROPERTIES ('format-version'='3', 'a'='(b)')"
    )
    assert translate(sql) == (
        "CREATE TABLE ns.t (id bigint NOT NULL , ts TIMESTAMPTZ, tn TIMESTAMP, b BLOB, s VARCHAR)"
    )
    ctas = (
        "CREATE OR REPLACE TABLE ns.c USING iceberg PARTITIONED BY (cat) AS SELECT TIMESTAMP '2024-01-01' x"
    )
    assert translate(ctas) == "CREATE OR REPLACE TABLE ns.c AS SELECT TIMESTAMP '2024-01-01' x"


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("CREATE NAMESPACE e2e_x", "CREATE SCHEMA e2e_x"),
        ("DROP TABLE ns.t PURGE", "DROP TABLE ns.t"),
        ("ALTER TABLE ns.t RENAME TO ns.u", "ALTER TABLE ns.t RENAME TO u"),
        (
            "ALTER TABLE ns.t ADD COLUMN c string DEFAULT 'x'",
            "ALTER TABLE ns.t ADD COLUMN c VARCHAR DEFAULT 'x'",
        ),
        ("ALTER TABLE ns.t ALTER COLUMN n TYPE bigint", "ALTER TABLE ns.t ALTER COLUMN n TYPE bigint"),
        ("ALTER TABLE ns.t ADD PARTITION FIELD bucket(4, id)", ""),
        ("ALTER TABLE ns.t REPLACE PARTITION FIELD ts_day WITH months(ts)", ""),
        ("ALTER TABLE ns.t WRITE ORDERED BY id DESC", ""),
        ("ALTER TABLE ns.t SET TBLPROPERTIES ('format-version'='3')", ""),
        ("ALTER TABLE ns.t CREATE BRANCH dev", ""),
        ("ALTER TABLE ns.t DROP TAG v1", ""),
        ("DELETE FROM ns.t WHERE id = 1", "DELETE FROM ns.t WHERE id = 1"),
    ],
)
def test_translate(sql: str, expected: str) -> None:
    assert translate(sql) == expected


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT OVERWRITE ns.t VALUES (1)",
        "INSERT INTO ns.t.branch_dev VALUES (1)",
        "SELECT * FROM ns.t VERSION AS OF 'v1'",
        "ALTER TABLE ns.t ADD COLUMN c int FIRST",
        "CREATE TABLE ns.t (p struct<a: int>) USING iceberg",
    ],
)
def test_untranslatable_statements_need_a_reference_line(sql: str) -> None:
    with pytest.raises(NeedsReference):
        translate(sql)


# -- the comparison ------------------------------------------------------------------------------


def test_assert_same_compares_columns_and_row_multisets() -> None:
    rows = (["id", "s"], [(1, "a"), (2, None)])
    assert_same("same", rows, (["id", "s"], [(1, "a"), (2, None)]))
    with pytest.raises(ScenarioMismatch, match="columns"):
        assert_same("renamed", (["id", "t"], rows[1]), rows)
    with pytest.raises(ScenarioMismatch, match=r"not in the reference: \[\(2, 'b'\)\]"):
        assert_same("value", (["id", "s"], [(1, "a"), (2, "b")]), rows)
    with pytest.raises(ScenarioMismatch, match="3 rows, the reference has 2"):
        assert_same("duplicate", (["id", "s"], [(1, "a"), (1, "a"), (2, None)]), rows)


# -- runs that must fail (Spark writes, so these run before iceduck writes) -----------------------

BASE = """
-- step: spark
CREATE NAMESPACE $ns
-- step: spark
-- table: $ns.t
CREATE TABLE $ns.t (id bigint, ts timestamp, d decimal(10, 2)) USING iceberg
TBLPROPERTIES ('format-version'='2')
-- step: spark
INSERT INTO $ns.t VALUES (1, TIMESTAMP '2024-01-01 10:00:00', 1.50), (2, NULL, NULL)
"""


def _run(spark, warehouse: Path, text: str, name: str) -> object:
    scenario = parse_script(text, name, {"ns": f"e2e_harness_{name}"})
    return ScenarioRunner(spark, warehouse, substitute={"iceduck": "spark"}).run(scenario)


def test_agreeing_run_reports_what_it_compared(spark, spark_warehouse: SparkWarehouse) -> None:
    report = _run(spark, spark_warehouse.path, BASE, "agree")
    assert (report.steps, report.checks, report.max_rows) == (3, 2, 2)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        # the reference gets another value: iceduck's and Spark's reads must disagree with it
        (
            "-- step: spark\nINSERT INTO $ns.t VALUES (3, NULL, 3.00)\n"
            "-- reference: INSERT INTO $ns.t VALUES (3, NULL, 3.01)",
            "iceduck reading .*missing",
        ),
        # a timestamp an hour off
        (
            "-- step: spark\nINSERT INTO $ns.t VALUES (3, TIMESTAMP '2024-01-01 10:00:00', NULL)\n"
            "-- reference: INSERT INTO $ns.t VALUES (3, TIMESTAMP '2024-01-01 11:00:00', NULL)",
            "rows, the reference has",
        ),
        # a row missing from the reference
        (
            "-- step: spark\nINSERT INTO $ns.t VALUES (3, NULL, NULL)\n-- reference: none",
            "3 rows, the reference has 2",
        ),
        # a query step whose reference differs
        ("-- step: query\nSELECT id FROM $ns.t\n-- reference: SELECT id + 1 AS id FROM $ns.t", "iceduck"),
        # a "bad" statement that is fine
        ("-- step: iceduck error=UserError\nINSERT INTO $ns.t VALUES (3, NULL, NULL)", "succeeded"),
        # an unknown error kind
        ("-- step: iceduck error=KeyError\nINSERT INTO $ns.t VALUES ('x')", "not an iceduck error kind"),
        # a writer that fails
        ("-- step: spark\nINSERT INTO $ns.t VALUES (1, 2, 3, 4)", "spark failed"),
    ],
    ids=[
        "value",
        "timestamp",
        "missing-row",
        "query",
        "bad-statement-succeeds",
        "error-kind",
        "writer-fails",
    ],
)
def test_mismatches_fail_the_run(spark, spark_warehouse: SparkWarehouse, extra: str, message: str) -> None:
    with pytest.raises(ScenarioMismatch, match=message):
        _run(spark, spark_warehouse.path, BASE + extra, "mismatch")


def test_a_run_that_compares_nothing_fails(spark, spark_warehouse: SparkWarehouse) -> None:
    with pytest.raises(ScenarioMismatch, match="nothing was compared"):
        _run(spark, spark_warehouse.path, "-- step: spark\nCREATE NAMESPACE $ns", "empty")


def test_peers_disagree_with_a_wrong_answer(spark, spark_warehouse: SparkWarehouse) -> None:
    peers = PeerReaders()
    if peers.unavailable:
        pytest.skip("; ".join(f"{name}: {why}" for name, why in peers.unavailable.items()))
    report = _run(
        spark,
        spark_warehouse.path,
        BASE.replace("-- step: spark\nINSERT", "-- step: spark peers\nINSERT"),
        "peers",
    )
    assert report.checks == 2
    table = "e2e_harness_peers.t"
    assert metadata_location(spark_warehouse.path, table) is not None
    rows = [(norm(1), norm(1704103200000000), norm(Decimal("1.50"))), (norm(2), None, None)]
    right = (["id", "ts", "d"], sorted(rows, key=repr))
    assert peers.check("here", spark_warehouse.path, table, right) == ["pyiceberg", "duckdb-iceberg"]
    wrong = (right[0], right[1][:1])
    with pytest.raises(ScenarioMismatch, match="pyiceberg reading"):
        peers.check("here", spark_warehouse.path, table, wrong)
