"""Runs end-to-end write scenarios: each step by one writer, then every reader must agree.

A scenario (:mod:`tests.support.scenario_script`) is an ordered list of statements, each
run by iceduck (``iceduck.connect(warehouse).cursor().execute(sql)``, the public SQL surface
and nothing else) or by Spark (the ``spark`` fixture). After each step the table under
test is read

* by iceduck: ``SELECT * FROM <table> ORDER BY ALL``;
* by Spark: ``SELECT * FROM <table>``, timestamps as epoch microseconds;
* and the same statements are run on plain DuckDB tables in memory -- the *reference
  answer* (:mod:`tests.support.reference_sql` translates the DDL),

and the three results (column names, and rows as a multiset after normalisation: UTC
microseconds for timestamps, decimals by value, bytes, nested values as tuples) must be
equal. At ``peers`` checkpoints PyIceberg (its SQL catalog on the same ``catalog.db``) and
DuckDB's Iceberg extension (``iceberg_scan`` of the current metadata file, in
``bench/.venv``: see bench/README.md) must return the reference answer as well.

A *bad statement* step must raise the named :mod:`iceduck.errors` kind and leave the table
unchanged: the same metadata location in the catalog, the same files under the table's
location (a failed statement cleans up what it wrote), the same rows.

``substitute={"iceduck": "spark"}`` runs iceduck's steps on Spark instead: the scenario then
checks the reference answers and iceduck's *reads* of Spark-written tables, which is how the
scripts are validated before iceduck writes.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

import iceduck
from iceduck import errors
from tests.support.reference_sql import translate
from tests.support.scenario_peers import PeerReaders
from tests.support.scenario_rows import (
    Rows,
    ScenarioMismatch,
    assert_same,
    duck_rows,
    iceduck_rows,
    metadata_location,
    spark_rows,
    table_state,
)
from tests.support.scenario_script import Scenario, Step
from tests.support.spark_session import CATALOG, CATALOG_DB

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass
class RunReport:
    """What a run checked: proof that a passing scenario compared something."""

    steps: int = 0
    checks: int = 0
    #: rows in the table at the largest check
    max_rows: int = 0
    #: reader name -> checkpoints it agreed at
    peer_checks: Counter[str] = field(default_factory=Counter)
    #: bad statements that failed as expected and changed nothing
    refused: int = 0


#: iceduck's INSERT OVERWRITE is dynamic (replaces the partitions written) without a PARTITION
#: clause and static (replaces what the clause selects) with one; Spark is told the same
OVERWRITE_MODE = "spark.sql.sources.partitionOverwriteMode"
_STATIC_OVERWRITE = re.compile(r"^\s*INSERT\s+OVERWRITE\s+(TABLE\s+)?\S+\s+PARTITION\b", re.IGNORECASE)
_CREATE = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([\w.]+)", re.I)
_DROP_PURGE = re.compile(r"^\s*DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?(\S+)\s+PURGE\s*$", re.IGNORECASE)


class ScenarioRunner:
    """Replays scenarios against one warehouse (whose ``iceduck`` catalog ``spark`` serves)."""

    def __init__(
        self,
        spark: SparkSession,
        warehouse: Path,
        *,
        substitute: dict[str, str] | None = None,
        peers: PeerReaders | None = None,
    ) -> None:
        self.spark = spark
        self.warehouse = Path(warehouse)
        self.substitute = dict(substitute or {})
        self.peers = peers

    # -- the run ---------------------------------------------------------------------------------

    def run(self, scenario: Scenario) -> RunReport:
        drop_namespaces(self.warehouse, scenario.namespaces)
        report = RunReport()
        reference = duckdb.connect()
        reference.execute("SET TimeZone = 'UTC'")
        previous_catalog = self.spark.catalog.currentCatalog()
        previous_mode = self.spark.conf.get(OVERWRITE_MODE)
        self.spark.sql(f"USE {CATALOG}")
        try:
            with iceduck.connect(self.warehouse, CATALOG) as con:
                table: str | None = None
                for step in scenario.steps:
                    table = step.table or table
                    self._step(scenario, step, con, reference, table, report)
        finally:
            self.spark.catalog.setCurrentCatalog(previous_catalog)
            self.spark.conf.set(OVERWRITE_MODE, previous_mode)
            reference.close()
        if report.checks == 0 or report.max_rows == 0:
            raise ScenarioMismatch(f"{scenario.name}: nothing was compared (no check saw a row)")
        return report

    def _step(
        self,
        scenario: Scenario,
        step: Step,
        con: iceduck.Connection,
        reference: duckdb.DuckDBPyConnection,
        table: str | None,
        report: RunReport,
    ) -> None:
        where = f"{scenario.name} {step.where()} ({step.writer}: {_short(step.sql)})"
        report.steps += 1
        if step.writer == "query":
            self._query(where, step, con, reference)
            report.checks += 1
            return
        writer = self.substitute.get(step.writer, step.writer)
        if step.error:
            self._bad_statement(where, step, writer, con, table)
            report.refused += 1
        else:
            self._write(where, writer, step.sql, con)
            ref_sql = translate(step.sql) if step.reference is None else step.reference
            if ref_sql:
                _run(where, "reference", lambda: reference.execute(ref_sql))
        if step.check and table is not None:
            expected = self._compare(where, table, con, reference)
            report.checks += 1
            report.max_rows = max(report.max_rows, len(expected[1]))
            if step.peers and self.peers is not None:
                for name in self.peers.check(where, self.warehouse, table, expected):
                    report.peer_checks[name] += 1

    def _write(self, where: str, writer: str, sql: str, con: iceduck.Connection) -> None:
        dropped = _DROP_PURGE.match(sql)
        before = table_state(self.warehouse, dropped.group(1)) if dropped else None
        if writer == "iceduck":
            _run(where, "iceduck", lambda: con.cursor().execute(sql))
        elif writer == "spark":
            self.spark.conf.set(OVERWRITE_MODE, "static" if _STATIC_OVERWRITE.match(sql) else "dynamic")
            _run(where, "spark", lambda: self.spark.sql(sql).collect())
        else:
            raise ScenarioMismatch(f"{where}: unknown writer {writer!r}")
        if dropped and before is not None:
            _check_purged(where, self.warehouse, dropped.group(1), before[1])

    # -- checks ----------------------------------------------------------------------------------

    def _compare(
        self, where: str, table: str, con: iceduck.Connection, reference: duckdb.DuckDBPyConnection
    ) -> Rows:
        expected = _run(where, "reference read", lambda: duck_rows(reference, f"SELECT * FROM {table}"))
        got = _run(where, "iceduck read", lambda: iceduck_rows(con, f"SELECT * FROM {table} ORDER BY ALL"))
        assert_same(f"{where}: iceduck reading {table}", got, expected)
        spark = _run(where, "spark read", lambda: spark_rows(self.spark, f"SELECT * FROM {table}"))
        assert_same(f"{where}: Spark reading {table}", spark, expected)
        return expected

    def _query(
        self, where: str, step: Step, con: iceduck.Connection, reference: duckdb.DuckDBPyConnection
    ) -> None:
        ref_sql = translate(step.sql) if step.reference is None else step.reference
        expected = _run(where, "reference query", lambda: duck_rows(reference, ref_sql))
        assert_same(
            f"{where}: iceduck", _run(where, "iceduck", lambda: iceduck_rows(con, step.sql)), expected
        )
        assert_same(
            f"{where}: Spark", _run(where, "spark", lambda: spark_rows(self.spark, step.sql)), expected
        )

    def _bad_statement(
        self, where: str, step: Step, writer: str, con: iceduck.Connection, table: str | None
    ) -> None:
        if table is None:
            raise ScenarioMismatch(f"{where}: a bad statement needs a table to check")
        before = table_state(self.warehouse, table)
        kind = getattr(errors, step.error or "", None)
        if not (isinstance(kind, type) and issubclass(kind, errors.IceduckError)):
            raise ScenarioMismatch(f"{where}: {step.error!r} is not an iceduck error kind")
        try:
            if writer == "iceduck":
                con.cursor().execute(step.sql)
            else:
                self.spark.sql(step.sql).collect()
        except Exception as exc:  # checked below: the kind, then that nothing changed
            if writer == "iceduck" and not isinstance(exc, kind):
                raise ScenarioMismatch(
                    f"{where}: expected iceduck's {step.error}, got {type(exc).__name__}: {exc}"
                ) from exc
        else:
            raise ScenarioMismatch(f"{where}: the bad statement succeeded on {writer}")
        created = _CREATE.match(step.sql)
        if created and metadata_location(self.warehouse, created.group(1)) is not None:
            raise ScenarioMismatch(f"{where}: the failed CREATE left {created.group(1)} in the catalog")
        after = table_state(self.warehouse, table)
        if after != before:
            raise ScenarioMismatch(
                f"{where}: the failed statement changed the table: {_state_diff(before, after)}"
            )


def drop_namespaces(warehouse: Path, namespaces: tuple[str, ...]) -> None:
    """Forget the scenario's namespaces (catalog rows and folders) left by an earlier run.

    Done on the catalog tables directly, not through an engine: a run interrupted halfway
    may leave tables whose files are gone, which no engine would drop.
    """
    for namespace in namespaces:
        if not namespace.startswith("e2e_"):
            raise ValueError(f"scenario namespaces start with e2e_, not {namespace!r}")
    db_path = warehouse / CATALOG_DB
    if db_path.exists():
        with sqlite3.connect(db_path) as db:
            for namespace in namespaces:
                for sql in (
                    "DELETE FROM iceberg_tables WHERE catalog_name = ? AND "
                    "(table_namespace = ? OR table_namespace LIKE ? || '.%')",
                    "DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND "
                    "(namespace = ? OR namespace LIKE ? || '.%')",
                ):
                    db.execute(sql, (CATALOG, namespace, namespace))
    for namespace in namespaces:
        shutil.rmtree(warehouse / namespace, ignore_errors=True)


# -- helpers -------------------------------------------------------------------------------------


def _check_purged(where: str, warehouse: Path, table: str, files: frozenset[str]) -> None:
    """DROP TABLE ... PURGE: the catalog forgot the table and every file it had is gone."""
    if metadata_location(warehouse, table) is not None:
        raise ScenarioMismatch(f"{where}: {table} is still in the catalog")
    # Hadoop's local file system (Spark) writes a `.<name>.crc` checksum beside each file; they
    # are no Iceberg files (nothing references them), so a purge may leave them.
    left = sorted(f for f in files if Path(f).exists() and not Path(f).name.endswith(".crc"))
    if left:
        raise ScenarioMismatch(f"{where}: PURGE left {len(left)} files, e.g. {left[:3]}")


def _run(where: str, who: str, fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except ScenarioMismatch:
        raise
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise ScenarioMismatch(f"{where}: {who} failed: {type(exc).__name__}: {first}") from exc


def _short(sql: str) -> str:
    text = " ".join(sql.split())
    return text if len(text) <= 100 else text[:97] + "..."


def _state_diff(before: tuple[str | None, frozenset[str]], after: tuple[str | None, frozenset[str]]) -> str:
    parts = []
    if before[0] != after[0]:
        parts.append(f"metadata {before[0]} -> {after[0]}")
    if after[1] - before[1]:
        parts.append(f"new files {sorted(after[1] - before[1])[:5]}")
    if before[1] - after[1]:
        parts.append(f"deleted files {sorted(before[1] - after[1])[:5]}")
    return "; ".join(parts)
