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
  ``<fixtures>`` (a script names it ``$fixtures``: ``iceduck_scan('$fixtures/ns/t')``), the
  repository's ``examples/`` by ``<examples>`` (``$examples``: its Paimon warehouse);
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
from collections.abc import Callable
from pathlib import Path

import pytest

import iceduck
from iceduck import errors
from iceduck.sql.references import TABLE_FUNCTION
from tests.fixtures.spark.tables import GENERATED_ROOT, linked_root
from tests.support.scenario_script import ScriptError, Step, load_script, parse_script

SCRIPTS = Path(__file__).resolve().parents[2] / "sql" / "tests"
#: the repository's examples (``$examples``: the pypaimon-written Paimon warehouse)
EXAMPLES = str(Path(__file__).resolve().parents[2] / "examples")
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
        return normalise(lines, self.warehouse, self.snapshot_ordinals)

    def snapshot_ordinals(self, table: str) -> dict[int, int]:
        """A warehouse table's snapshots numbered from 1 in commit order (ancestors first;
        snapshots on different branches at the same depth by commit time). Tables read
        with ``iceduck_scan`` are not in the catalog: their ids stay as they are."""
        if table.startswith(TABLE_FUNCTION):
            return {}
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


def normalise(lines: list[str], warehouse: str, ordinals: Callable[[str], dict[int, int]]) -> list[str]:
    """iceduck's lines of an EXPLAIN, with what changes between runs replaced (see the
    module docstring); ``ordinals`` numbers the snapshots of a table by its name."""
    if DUCKDB_PLAN in lines:
        lines = lines[: lines.index(DUCKDB_PLAN)]
    out: list[str] = []
    table = None
    for line in lines:
        line = line.replace(warehouse, "<warehouse>").replace(GENERATED_ROOT, "<fixtures>")
        line = line.replace(EXAMPLES, "<examples>")
        line = _FILE.sub(r"<file>.\1", line)
        scan = _SCAN.match(line)
        table = scan.group(1) if scan else table
        snapshot = _SNAPSHOT.match(line)
        if snapshot and table is not None:
            ordinal = ordinals(table).get(int(snapshot.group(2)))
            if ordinal is not None:
                line = f"{snapshot.group(1)}<snapshot {ordinal}>{snapshot.group(3)}"
        out.append(line)
    return sort_file_lists(out)


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
    scenario = load_script(path, {"fixtures": GENERATED_ROOT, "examples": EXAMPLES})
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


def test_expect_blocks_are_parsed_with_their_indentation() -> None:
    text = """-- step: iceduck
CREATE NAMESPACE $ns

-- step: iceduck
EXPLAIN SELECT 1
-- expect:
-- Iceberg scan of x
--   snapshot: 1 (current snapshot of main)

-- a comment after the block is a comment
-- step: iceduck
EXPLAIN SELECT 2
-- expect:
"""
    first, second, third = parse_script(text, "s", {"ns": "g"}).steps
    assert (first.expect, first.expect_line) == (None, 0)
    assert second.expect == "Iceberg scan of x\n  snapshot: 1 (current snapshot of main)"
    assert second.expect_line == 6
    assert (third.sql, third.expect) == ("EXPLAIN SELECT 2", "")


def test_sql_after_an_expect_block_is_refused() -> None:
    with pytest.raises(ScriptError, match="SQL after"):
        parse_script("-- step: iceduck\nSELECT 1\n-- expect:\n-- 1\nSELECT 2\n", "s", {})


def test_normalised_lines() -> None:
    lines = [
        "Iceberg scan of iceduck.ns.t",
        "  snapshot: 42 (current snapshot of main)",
        "  files read:",
        "    /w/h/t/data/b=2/00001-0-0a1b2c3d-0000-4000-8000-00000000000a-00001.parquet (1 rows)",
        "    /w/h/t/data/b=1/0a1b2c3d-0000-4000-8000-00000000000b-deletes.puffin (2 rows)",
        DUCKDB_PLAN,
        "  anything DuckDB prints",
    ]
    assert normalise(lines, "/w/h", lambda table: {42: 2} if table == "iceduck.ns.t" else {}) == [
        "Iceberg scan of iceduck.ns.t",
        "  snapshot: <snapshot 2> (current snapshot of main)",
        "  files read:",
        "    <warehouse>/t/data/b=1/<file>.puffin (2 rows)",
        "    <warehouse>/t/data/b=2/<file>.parquet (1 rows)",
    ]
