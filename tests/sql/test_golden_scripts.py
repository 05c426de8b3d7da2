"""Golden EXPLAIN scripts: ``sql/tests/explain_*.sql``, replayed by iceduck, no Spark.

Each script is in the scenario format of ``tests/support/scenario_script.py`` (the
end-to-end scripts' format): ``-- step: iceduck`` statements that build tables, and
statements followed by ``-- expect:`` and the output they must return, one comment line
per line, as sqlglot's optimizer fixtures pair a statement with its expected text and
toydb's test scripts follow each statement with its output.

Only iceduck's part of an EXPLAIN is pinned: the lines before ``DuckDB plan:`` (snapshot,
pushed filter, manifests and files read and skipped, deletes). DuckDB's physical plan
changes with its version and is cut off. What changes from run to run is replaced:

* the warehouse folder by ``<warehouse>``, the checked-in Spark tables' folder by
  ``<fixtures>`` (a script names it ``$fixtures``: ``iceduck_scan('$fixtures/ns/t')``);
* a file name holding a UUID by ``<file>.parquet`` (``.puffin``, ``.avro``), keeping
  its partition folders;
* a snapshot id of a warehouse table by ``<snapshot N>``, N its place in the table's
  history (1 for the first commit), so time travel reads as which commit it chose;
* the file lists of a scan are sorted (DuckDB writes partitions in parallel).

To regenerate the expected blocks after a deliberate change of EXPLAIN's output, run
``ICEDUCK_UPDATE_GOLDEN=1 python3 -m pytest tests/sql/test_golden_scripts.py`` and review
the diff of ``sql/tests/``. A new case gets an empty ``-- expect:`` line, filled the same way.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import iceduck
from iceduck import errors
from tests.fixtures.spark.tables import GENERATED_ROOT, linked_root
from tests.support.scenario_script import Step, load_script

SCRIPTS = Path(__file__).resolve().parents[2] / "sql" / "tests"
UPDATE = os.environ.get("ICEDUCK_UPDATE_GOLDEN") == "1"
DUCKDB_PLAN = "DuckDB plan:"

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_FILE = re.compile(rf"[^/\s]*{_UUID}[^/\s]*?\.(parquet|puffin|avro)")
_SCAN = re.compile(r"^Iceberg scan of (\S+)$")
_SNAPSHOT = re.compile(r"^(  snapshot: )(\d+)( .*)$")


def scripts() -> list[Path]:
    return sorted(SCRIPTS.glob("explain_*.sql"))


class GoldenRun:
    """One script replayed on a fresh warehouse, its outputs normalised."""

    def __init__(self, warehouse: Path) -> None:
        self.warehouse = str(warehouse)
        self.connection = iceduck.connect(self.warehouse)
        self.cursor = self.connection.cursor()

    def run(self, step: Step) -> list[str] | None:
        """Run one step; the normalised output lines of a step that expects some."""
        if step.writer != "iceduck":
            raise AssertionError(f"{step.where()}: golden scripts run iceduck steps only, not {step.writer}")
        if step.error:
            kind = getattr(errors, step.error)
            with pytest.raises(kind):
                self.cursor.execute(step.sql)
            return None
        self.cursor.execute(step.sql)
        if step.expect is None:
            return None
        return self.normalise([str(row[0]) for row in self.cursor.fetchall()])

    def normalise(self, lines: list[str]) -> list[str]:
        if DUCKDB_PLAN in lines:
            lines = lines[: lines.index(DUCKDB_PLAN)]
        out: list[str] = []
        table = None
        for line in lines:
            line = line.replace(self.warehouse, "<warehouse>").replace(GENERATED_ROOT, "<fixtures>")
            line = _FILE.sub(r"<file>.\1", line)
            scan = _SCAN.match(line)
            table = scan.group(1) if scan else table
            snapshot = _SNAPSHOT.match(line)
            if snapshot and table is not None:
                ordinal = self.snapshot_ordinals(table).get(int(snapshot.group(2)))
                if ordinal is not None:
                    line = f"{snapshot.group(1)}<snapshot {ordinal}>{snapshot.group(3)}"
            out.append(line)
        return sort_file_lists(out)

    def snapshot_ordinals(self, table: str) -> dict[int, int]:
        """A warehouse table's snapshots numbered from 1 in commit order (ancestors first;
        snapshots on different branches at the same depth by commit time). Tables read
        with ``iceduck_scan`` are not in the catalog: their ids stay as they are."""
        cursor = self.connection.cursor()
        try:
            cursor.execute(f"SELECT snapshot_id, parent_id, committed_at FROM {table}.snapshots")
        except errors.IceduckError:
            return {}
        rows = cursor.fetchall()
        parents = {snapshot: parent for snapshot, parent, _ in rows}

        def depth(snapshot: int) -> int:
            parent = parents.get(snapshot)
            return 0 if parent is None else 1 + depth(parent)

        ordered = sorted(rows, key=lambda r: (depth(r[0]), r[2]))
        return {row[0]: n for n, row in enumerate(ordered, start=1)}

    def close(self) -> None:
        self.connection.close()


def sort_file_lists(lines: list[str]) -> list[str]:
    """Each run of listed files (lines indented by four) sorted."""
    out: list[str] = []
    run: list[str] = []
    for line in [*lines, ""]:
        if line.startswith("    "):
            run.append(line)
            continue
        out.extend(sorted(run))
        run = []
        out.append(line)
    return out[:-1]


def rewrite_expected(path: Path, actual: dict[int, list[str]], expected: dict[int, str]) -> None:
    """Replace each ``-- expect:`` block (by its directive's line) with the actual output."""
    lines = path.read_text().splitlines()
    for line in sorted(actual, reverse=True):
        old = len(expected[line].splitlines())
        lines[line : line + old] = [f"-- {text}".rstrip() for text in actual[line]]
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("path", scripts(), ids=lambda p: p.stem)
def test_golden_script(path: Path, tmp_path: Path) -> None:
    text = path.read_text()
    if "$fixtures" in text and linked_root() is None:
        pytest.skip(f"{GENERATED_ROOT} is taken by something other than tests/fixtures/spark")
    scenario = load_script(path, {"fixtures": GENERATED_ROOT})
    run = GoldenRun(tmp_path / "warehouse")
    actual: dict[int, list[str]] = {}
    expected: dict[int, str] = {}
    try:
        for step in scenario.steps:
            output = run.run(step)
            if output is not None and step.expect is not None:
                actual[step.expect_line], expected[step.expect_line] = output, step.expect
    finally:
        run.close()
    changed = {line: out for line, out in actual.items() if "\n".join(out) != expected[line]}
    if UPDATE:
        if changed:
            rewrite_expected(path, actual, expected)
        return
    for line, out in changed.items():
        assert "\n".join(out) == expected[line], f"{path.name}:{line}: EXPLAIN output differs"


def test_there_are_golden_scripts() -> None:
    assert len(scripts()) >= 4
