"""Change data: upserts by key against MERGE, reading after upserts, and a changelog.

In a fresh warehouse under ``bench/.warehouse/upserts-<rows>/`` (namespace ``cdc``), tables of
the same deterministic ``rows`` rows (``id`` key, ``v``, ``s``), partitioned by
``bucket(8, id)``:

* **upsert vs MERGE**: one batch of 1% of ``rows`` (half existing keys spread over the whole
  table, half new keys) applied to the same table three ways -- ``INSERT OR REPLACE`` (equality
  deletes plus the rows, nothing read), and ``MERGE INTO t USING batch ON t.id = s.id WHEN
  MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *`` with merge-on-read in v2
  (position-delete files) and v3 (deletion vectors). Each runs ``runs`` times on its own copy
  with a new batch each time; the cell is the median; the figure is MERGE / upsert (target:
  at least 5x).
* **reading after 20 upsert batches** (1% each) against the same table after
  ``CALL system.rewrite_data_files`` (``rewrite-all``): two copies built alike, one compacted,
  queries interleaved (target: within 1.3x). The queries: the full scan ``count(*), sum(v),
  count(DISTINCT s)`` and a point query on one key.
* **table_changes** over the last upsert batch (one snapshot, 1% of the rows changed) against
  the full scan of the table, with the data files each reads.

Every answer is checked: the three writes give the same table, the two read copies the same
answers, and the changelog as many rows as the batch changed.

    python3 bench/upserts.py [--rows N] [--runs N]
"""

from __future__ import annotations

import checkout  # noqa: F401  (first: this checkout's iceduck, not an installed one)

# isort: split
import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from common import WAREHOUSE_ROOT, Measure, Section, fmt_ms, fmt_ratio, ratio, table_lines

import iceduck

NAMESPACE = "cdc"
DATA = (
    "SELECT i::BIGINT AS id, ((i * 7919) % 1000003) / 100.0 AS v, 's' || (i % 100003) AS s "
    "FROM range({rows}) r(i)"
)
#: batch ``b`` of ``n`` rows: n/2 existing keys spread over the table, n/2 new keys past ``rows``
BATCH = (
    "SELECT CASE WHEN i % 2 = 0 THEN (i * 104729 + {b} * 7) % {rows} ELSE {rows} + {b} * {n} + i END::BIGINT "
    "AS id, "
    "{b} + i / 1000.0 AS v, 'u' || {b} AS s FROM range({n}) r(i)"
)
FULL = "SELECT count(*), sum(v), count(DISTINCT s) FROM {table}"
POINT = "SELECT * FROM {table} WHERE id = {key}"
BATCHES = 20
SUM_TOLERANCE = 1e-9


def _create(con: Any, table: str, rows: int, properties: str) -> None:
    con.execute(
        f"CREATE TABLE {NAMESPACE}.{table} (id bigint NOT NULL, v double, s string) "
        f"PARTITIONED BY (bucket(8, id)) TBLPROPERTIES ({properties})"
    )
    con.execute(f"ALTER TABLE {NAMESPACE}.{table} SET IDENTIFIER FIELDS id")
    con.execute(f"INSERT INTO {NAMESPACE}.{table} {DATA.format(rows=rows)}")


def _timed(con: Any, sql: str) -> float:
    started = time.perf_counter()
    con.execute(sql).fetchall()
    return (time.perf_counter() - started) * 1000


def _same(one: list[Any], two: list[Any]) -> bool:
    (a,), (b,) = one, two
    return a[0] == b[0] and a[2] == b[2] and abs(a[1] - b[1]) <= SUM_TOLERANCE * max(1.0, abs(a[1]))


def writes(con: Any, rows: int, runs: int, section: Section) -> list[list[str]]:
    """INSERT OR REPLACE against MERGE (merge-on-read, v2 and v3)."""
    n = max(2, rows // 100)
    ways = {
        "upsert (INSERT OR REPLACE)": (
            "up",
            "'format-version'='2'",
            "INSERT OR REPLACE INTO {t} SELECT * FROM {src}",
        ),
        "MERGE, v2 position deletes": (
            "merge2",
            "'format-version'='2', 'write.merge.mode'='merge-on-read'",
            "MERGE INTO {t} t USING {src} s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * "
            "WHEN NOT MATCHED THEN INSERT *",
        ),
        "MERGE, v3 deletion vectors": (
            "merge3",
            "'format-version'='3', 'write.merge.mode'='merge-on-read'",
            "MERGE INTO {t} t USING {src} s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * "
            "WHEN NOT MATCHED THEN INSERT *",
        ),
    }
    for table, properties, _ in ways.values():
        _create(con, table, rows, properties)
    times: dict[str, list[float]] = {way: [] for way in ways}
    for b in range(runs):
        con.execute(f"CREATE OR REPLACE TABLE {NAMESPACE}.batch{b} AS {BATCH.format(b=b, n=n, rows=rows)}")
        for way, (table, _, sql) in ways.items():  # interleaved: the machine's load hits all three
            times[way].append(_timed(con, sql.format(t=f"{NAMESPACE}.{table}", src=f"{NAMESPACE}.batch{b}")))
    answers = [con.execute(FULL.format(table=f"{NAMESPACE}.{t}")).fetchall() for t, _, _ in ways.values()]
    if not all(_same(answers[0], a) for a in answers[1:]):
        section.mismatches.append(f"upserts: the three writes disagree {answers}")
    medians = {way: statistics.median(t) for way, t in times.items()}
    upsert = medians["upsert (INSERT OR REPLACE)"]
    out = []
    for way, ms in medians.items():
        out.append([way, fmt_ms(ms), fmt_ratio(ratio(ms, upsert))])
        if way != "upsert (INSERT OR REPLACE)":
            section.measures.append(
                Measure(f"upsert 1% by key vs {way}", upsert, ms, note="iceduck=upsert, limit=MERGE")
            )
    section.data["writes_ms"] = medians
    return out


def reads(con: Any, rows: int, runs: int, section: Section) -> list[list[str]]:
    """Reading after 20 upsert batches against the same table compacted."""
    n = max(2, rows // 100)
    for table in ("upserted", "compacted"):
        _create(con, table, rows, "'format-version'='2'")
        for b in range(BATCHES):
            con.execute(f"INSERT OR REPLACE INTO {NAMESPACE}.{table} {BATCH.format(b=b, n=n, rows=rows)}")
    started = time.perf_counter()
    con.execute(
        f"CALL system.rewrite_data_files(table => '{NAMESPACE}.compacted', "
        "options => map('rewrite-all', 'true'))"
    )
    section.data["rewrite_ms"] = (time.perf_counter() - started) * 1000
    out = []
    key = (BATCHES - 1) * 7 % rows
    for name, query in (("full scan", FULL), ("point query", POINT)):
        tables = {t: query.format(table=f"{NAMESPACE}.{t}", key=key) for t in ("upserted", "compacted")}
        answers = {t: con.execute(q).fetchall() for t, q in tables.items()}  # untimed: warm
        times: dict[str, list[float]] = {t: [] for t in tables}
        for _ in range(runs):
            for t, q in tables.items():
                times[t].append(_timed(con, q))
        if answers["upserted"] != answers["compacted"] and not (
            name == "full scan" and _same(answers["upserted"], answers["compacted"])
        ):
            section.mismatches.append(f"upserts {name}: {answers}")
        up, comp = statistics.median(times["upserted"]), statistics.median(times["compacted"])
        out.append([name, fmt_ms(up), fmt_ms(comp), fmt_ratio(ratio(up, comp))])
        section.measures.append(
            Measure(f"{name} after {BATCHES} upsert batches vs compacted", up, comp, note="limit=compacted")
        )
    files = {
        t: con.execute(f"SELECT count(*) FROM {NAMESPACE}.{t}.files").fetchall()[0][0]
        for t in ("upserted", "compacted")
    }
    section.data["files"] = files
    return out


def changes(con: Any, rows: int, runs: int, section: Section) -> list[str]:
    """table_changes over the last upsert batch against the full scan."""
    table = f"{NAMESPACE}.upserted"
    ids = [
        r[0]
        for r in con.execute(f"SELECT snapshot_id FROM {table}.history ORDER BY made_current_at").fetchall()
    ]
    query = f"SELECT _change_type, count(*) FROM table_changes('{table}', {ids[-2]}, {ids[-1]}) GROUP BY ALL"
    got = dict(con.execute(query).fetchall())
    n = max(2, rows // 100)
    if got.get("INSERT") != n or got.get("DELETE") != n // 2:
        section.mismatches.append(f"upserts changelog: {got}, expected {n} inserts and {n // 2} deletes")
    # a new text each run: a repeated text would reuse the changelog computed when planned
    changed = [_timed(con, f"/* run {n} */ {query}") for n in range(runs)]
    full = [_timed(con, f"/* run {n} */ {FULL.format(table=table)}") for n in range(runs)]
    c, f = statistics.median(changed), statistics.median(full)
    section.measures.append(
        Measure("table_changes of one 1% upsert vs full scan", c, f, note="limit=full scan")
    )
    # an append of 1% to the compacted table: its changes are in its own files alone
    appended = f"{NAMESPACE}.compacted"
    con.execute(f"INSERT INTO {appended} {BATCH.format(b=BATCHES, n=n, rows=rows * 2)}")
    last = con.execute(
        f"SELECT snapshot_id, parent_id FROM {appended}.snapshots ORDER BY committed_at DESC LIMIT 1"
    )
    ((end, start),) = last.fetchall()
    append_query = f"SELECT count(*) FROM table_changes('{appended}', {start}, {end})"
    if con.execute(append_query).fetchall() != [(n,)]:
        section.mismatches.append("upserts changelog of an append: wrong row count")
    appends = [_timed(con, f"/* run {k} */ {append_query}") for k in range(runs)]
    full_appended = [_timed(con, f"/* run {k} */ {FULL.format(table=appended)}") for k in range(runs)]
    a, fa = statistics.median(appends), statistics.median(full_appended)
    section.measures.append(
        Measure("table_changes of one 1% append vs full scan", a, fa, note="limit=full scan")
    )
    section.data["changes_ms"] = {
        "table_changes": c,
        "full_scan": f,
        "append_changes": a,
        "append_full_scan": fa,
    }
    return [
        f"table_changes of the last upsert batch (1% of the rows changed; equality deletes: the older "
        f"rows with those keys are looked up): {fmt_ms(c)}; full scan: {fmt_ms(f)} "
        f"({fmt_ratio(ratio(c, f))})",
        f"table_changes of a 1% append (its own files only): {fmt_ms(a)}; full scan: {fmt_ms(fa)} "
        f"({fmt_ratio(ratio(a, fa))})",
    ]


def run_section(rows: int, runs: int, root: Path | None = None) -> Section:
    warehouse = root or WAREHOUSE_ROOT / f"upserts-{rows}"
    shutil.rmtree(warehouse, ignore_errors=True)
    section = Section("upserts")
    with iceduck.connect(warehouse) as con:
        con.execute(f"CREATE NAMESPACE {NAMESPACE}")
        write_rows = writes(con, rows, runs, section)
        read_rows = reads(con, rows, runs, section)
        change_lines = changes(con, rows, runs, section)
    section.lines = [
        f"upserts: {rows:,} rows, bucket(8, id), batches of 1% (half updates, half new keys), "
        f"median of {runs}",
        *table_lines(["write of one batch", "time", "vs upsert"], write_rows),
        "",
        *table_lines(["after 20 upsert batches", "upserted", "compacted", "ratio"], read_rows),
        "",
        *change_lines,
    ]
    return section


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    section = run_section(args.rows, args.runs)
    print("\n".join(section.lines))
    if section.mismatches:
        print("\n".join(section.mismatches), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
