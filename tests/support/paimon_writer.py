"""Write the Paimon test warehouse with pypaimon, and what pypaimon itself reads back from it.

Runs in the pypaimon venv (``tests/support/paimon.py`` creates it), as a subprocess, so it must
not import iceduck: the expected results come from the Paimon project's own Python SDK, never
from the code under test. Usage::

    python paimon_writer.py <warehouse folder>

It writes database ``db`` (the tables of ``paimon_writer_append.py`` and ``paimon_writer_keys.py``,
several commits each, tags on ``pk``) and, for every table, every snapshot id and every tag,
pypaimon's full read as
``<wh>/_expected/<table>/snapshot-<id>.parquet`` (``tag-<name>.parquet``), plus filtered reads
through pypaimon's predicate builder; ``<wh>/_expected/index.json`` lists them all with the SQL
``WHERE`` text iceduck should be given for each, and ``<wh>/_expected/notes.json`` records what
pypaimon refused to write. The data is deterministic (fixed seeds), so two runs write the same rows.

pypaimon's filters are applied to the rows it reads (not only for pruning); each filtered read is
also checked here against the full read filtered by an equivalent pyarrow expression, so an
expected file is never a pruning-only over-approximation.
"""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paimon_writer_append as app  # beside this script (its folder is on sys.path when run)
import paimon_writer_keys as keys
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from paimon_writer_rows import Filter
from pypaimon import CatalogFactory

# ---------------------------------------------------------------- expected reads


def read_all(
    table: Any, options: dict[str, str] | None = None, flt: Callable[[Any], Any] | None = None
) -> pa.Table:
    """pypaimon's own read of ``table`` (time travel through ``scan.snapshot-id`` / ``scan.tag-name``)."""
    if options:
        table = table.copy(options)
    rb = table.new_read_builder()
    if flt is not None:
        rb = rb.with_filter(flt(rb.new_predicate_builder()))
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


def sort_key(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, default=repr)


def save(wh: Path, table: str, stem: str, data: pa.Table) -> str:
    rel = f"{table}/{stem}.parquet"
    path = wh / "_expected" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(data, path)
    return rel


def expected_reads(
    wh: Path, name: str, table: Any, filters: list[Filter], tags: list[str]
) -> list[dict[str, Any]]:
    """Every snapshot and tag of ``table`` read in full, and ``filters`` at the latest snapshot."""
    entries: list[dict[str, Any]] = []
    latest = table.snapshot_manager().get_latest_snapshot()
    if latest is None:
        return entries
    for sid in range(1, latest.id + 1):
        rel = save(wh, name, f"snapshot-{sid}", read_all(table, {"scan.snapshot-id": str(sid)}))
        entries.append({"table": name, "snapshot": sid, "where": None, "file": rel})
    for tag in tags:
        rel = save(wh, name, f"tag-{tag}", read_all(table, {"scan.tag-name": tag}))
        entries.append({"table": name, "tag": tag, "where": None, "file": rel})
    full = read_all(table)
    rel = save(wh, name, "current", full)
    entries.append({"table": name, "where": None, "file": rel})
    for n, (where, flt, expr) in enumerate(filters):
        got = read_all(table, flt=flt)
        exact = full.filter(expr)
        if sorted(map(sort_key, got.to_pylist())) != sorted(map(sort_key, exact.to_pylist())):
            # pypaimon may return more rows than match (pruning only); never fewer
            if sorted(map(sort_key, got.filter(expr).to_pylist())) != sorted(
                map(sort_key, exact.to_pylist())
            ):
                raise AssertionError(
                    f"pypaimon's filtered read of {name} WHERE {where} disagrees with its full read"
                )
        rel = save(wh, name, f"filter-{n}", exact)
        entries.append({"table": name, "where": where, "file": rel, "rows": exact.num_rows})
    return entries


#: Paimon's system tables (``<table>$snapshots``...) pypaimon reads, compared with iceduck's metadata tables
SYSTEM_TABLES = ("snapshots", "schemas", "options", "tags", "files", "manifests", "partitions", "buckets")


def system_tables(wh: Path, cat: Any, name: str) -> list[dict[str, Any]]:
    """pypaimon's reads of the system tables of ``name`` at its latest snapshot."""
    entries = []
    for system in SYSTEM_TABLES:
        rel = save(wh, name, f"system-{system}", read_all(cat.get_table(f"db.{name}${system}")))
        entries.append({"table": name, "system": system, "where": None, "file": rel})
    return entries


def main(wh: Path) -> None:
    shutil.rmtree(wh, ignore_errors=True)
    cat = CatalogFactory.create({"warehouse": str(wh)})
    cat.create_database("db", False)
    notes: dict[str, Any] = {"pypaimon": importlib.metadata.version("pypaimon")}
    index: list[dict[str, Any]] = []

    pk = keys.write_pk(cat, "pk", {})
    pk.create_tag("after2", snapshot_id=2)
    pk.create_tag("after4", snapshot_id=4)
    tables: list[tuple[str, Any, list[Filter], list[str]]] = [
        ("append_part", app.write_append_part(cat), app.APPEND_FILTERS, []),
        ("pk", pk, keys.PK_FILTERS, ["after2", "after4"]),
        ("pk_part", keys.write_pk_part(cat), keys.PK_PART_FILTERS, []),
        ("pk_dv", keys.write_pk_dv(cat), keys.PK_FILTERS[:2], []),
        ("evolved", app.write_evolved(cat, notes), app.EVOLVED_FILTERS, []),
        ("pk_multi", keys.write_pk_multi(cat), keys.MULTI_FILTERS, []),
        (
            "pk_dynamic",
            keys.write_pk_dynamic(cat),
            keys.DYNAMIC_FILTERS,
            [],
        ),
    ]
    for optional in (lambda: ("append_dv", app.write_append_dv(cat), app.APPEND_DV_FILTERS, []),):
        try:
            tables.append(optional())
        except Exception as e:
            notes.setdefault("refused", []).append(
                {"table": "append_dv", "change": "write", "error": f"{type(e).__name__}: {e}"}
            )
    for engine in keys.ENGINES:
        t = keys.write_engine(cat, engine, notes)
        if t is not None:
            tables.append(
                (engine, t, [("id < 50", lambda pb: pb.less_than("id", 50), pc.field("id") < 50)], [])
            )
    for fmt in ("orc", "avro"):
        t = app.write_format(cat, fmt, notes)
        if t is not None:
            tables.append((f"fmt_{fmt}", t, app.APPEND_DV_FILTERS, []))
        # the primary-key table's commits, in ORC and Avro data files: merged as the Parquet ones
        pk_format = keys.write_pk(cat, f"pk_{fmt}", {"file.format": fmt})
        tables.append((f"pk_{fmt}", pk_format, keys.PK_FILTERS, []))
    for name, table, filters, tags in tables:
        try:
            index += expected_reads(wh, name, table, filters, tags)
            index += system_tables(wh, cat, name)
        except Exception as e:
            notes.setdefault("unreadable", []).append({"table": name, "error": f"{type(e).__name__}: {e}"})
            traceback.print_exc()
    (wh / "_expected").mkdir(exist_ok=True)
    (wh / "_expected" / "index.json").write_text(json.dumps(index, indent=1))
    (wh / "_expected" / "notes.json").write_text(json.dumps(notes, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
