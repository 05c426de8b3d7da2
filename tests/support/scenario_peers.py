"""Second opinions at scenario checkpoints: PyIceberg and DuckDB's Iceberg extension.

Both read the table iceduck (or Spark) just wrote and must return the reference answer:

* PyIceberg: ``SqlCatalog("iceduck")`` on the warehouse's ``catalog.db`` (the layout Spark's
  JDBC catalog and iceduck share), ``load_table(...).scan().to_arrow()``.
* DuckDB's Iceberg extension: it only exists for DuckDB 1.5.5, so it runs in
  ``bench/.venv`` (bench/README.md, "Peers: setup"), in a subprocess that copies
  ``iceberg_scan('<current metadata file>')`` into a Parquet file this process reads.

A reader that is not installed is *unavailable* (:attr:`PeerReaders.unavailable` says
why); the suite reports that as a skipped test rather than passing silently. A reader that
is installed but cannot read a table feature it does not implement (``limits``) is not
asked about tables using it.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from tests.support.scenario_rows import ScenarioMismatch, arrow_rows, assert_same, metadata_location
from tests.support.spark_session import CATALOG, CATALOG_DB

REPO = Path(__file__).resolve().parents[2]
PEER_PYTHON = REPO / "bench" / ".venv" / "bin" / "python"
PEER_TIMEOUT_S = 120

#: runs in bench/.venv: argv = metadata location, output parquet path, JSON list of setup
#: statements (run after loading httpfs when there are any: a CREATE SECRET for S3), and
#: extra ``iceberg_scan`` arguments (``, snapshot_from_id => 42``)
_DUCKDB_SCRIPT = """
import json, sys
sys.path.insert(0, {bench!r})
from duckdb_iceberg_peer import connect, extension_path
con = connect(True)
location, out, setup, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
if setup:
    con.load_extension(extension_path("duckdb_extension_httpfs", "httpfs"))
for statement in setup:
    con.execute(statement)
quoted = location.replace("'", "''")
con.execute(f"COPY (SELECT * FROM iceberg_scan('{{quoted}}'{{options}})) TO '{{out}}' (FORMAT parquet)")
"""


class PeerError(ScenarioMismatch):
    """A second-opinion reader failed or disagreed."""


def pyiceberg_reader(warehouse: Path) -> Callable[[str], Any]:
    """``identifier -> pyarrow.Table`` through PyIceberg's SQL catalog on ``catalog.db``."""
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog(CATALOG, uri=f"sqlite:///{warehouse / CATALOG_DB}", warehouse=warehouse.as_uri())
    return lambda identifier: catalog.load_table(identifier).scan().to_arrow()


def duckdb_iceberg_read(
    metadata_location: str, setup: Sequence[str] = (), snapshot_id: int | None = None
) -> Any:
    """``iceberg_scan`` of one metadata file by DuckDB 1.5.5's extension, as a ``pyarrow.Table``.

    ``setup`` statements (a ``CREATE SECRET`` for an object store) run after loading the
    ``httpfs`` extension; ``snapshot_id`` reads that snapshot (``snapshot_from_id``).
    """
    script = _DUCKDB_SCRIPT.format(bench=str(REPO / "bench"))
    options = "" if snapshot_id is None else f", snapshot_from_id => {int(snapshot_id)}"
    with tempfile.TemporaryDirectory(prefix="iceduck-peer-") as tmp:
        out = Path(tmp) / "rows.parquet"
        done = subprocess.run(
            [str(PEER_PYTHON), "-c", script, metadata_location, str(out), json.dumps(list(setup)), options],
            capture_output=True,
            text=True,
            timeout=PEER_TIMEOUT_S,
        )
        if done.returncode != 0:
            lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
            raise PeerError(f"DuckDB's iceberg_scan failed: {lines[-1] if lines else done.returncode}")
        return pq.read_table(out)


def duckdb_iceberg_unavailable() -> str | None:
    """Why DuckDB's Iceberg extension cannot run here, or None."""
    if not PEER_PYTHON.exists():
        return (
            f"DuckDB's Iceberg extension needs {PEER_PYTHON.parent.parent} (DuckDB 1.5.5 and the "
            "extension wheels): run `python3 bench/run.py --scale small` once to create it"
        )
    probe = subprocess.run(
        [str(PEER_PYTHON), "-c", "import duckdb_extension_iceberg, duckdb_extension_avro"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return f"{PEER_PYTHON} lacks duckdb-extension-iceberg/avro: {probe.stderr.strip()[-200:]}"
    return None


def pyiceberg_unavailable() -> str | None:
    try:
        import pyiceberg.catalog.sql  # noqa: F401
    except ImportError as exc:
        return f"PyIceberg's SQL catalog is not installed ({exc}): pip install -e '.[test]'"
    return None


class PeerReaders:
    """The second-opinion readers available here, checked against a reference answer.

    ``limits`` maps a reader name to a predicate over the table's metadata JSON: True means
    the reader does not implement something the table uses (say, deletion vectors) and is
    not asked. Each use of a limit is counted in :attr:`skipped` so tests can show it.
    """

    def __init__(self, limits: dict[str, Callable[[dict[str, Any]], str | None]] | None = None) -> None:
        self.unavailable: dict[str, str] = {}
        for name, why in (
            ("pyiceberg", pyiceberg_unavailable()),
            ("duckdb-iceberg", duckdb_iceberg_unavailable()),
        ):
            if why:
                self.unavailable[name] = why
        self.limits = dict(limits or {})
        self.skipped: list[str] = []

    def names(self) -> Iterator[str]:
        yield from (n for n in ("pyiceberg", "duckdb-iceberg") if n not in self.unavailable)

    def check(self, where: str, warehouse: Path, table: str, expected: Any) -> list[str]:
        """Every available reader must return ``expected``; returns the readers that agreed."""
        location = metadata_location(warehouse, table)
        if location is None:
            raise PeerError(f"{where}: {table} is not in the catalog")
        metadata = json.loads(Path(location.removeprefix("file:").removeprefix("//")).read_text())
        agreed = []
        for name in self.names():
            limit = self.limits.get(name)
            reason = limit(metadata) if limit else None
            if reason:
                self.skipped.append(f"{where}: {name} not asked: {reason}")
                continue
            try:
                if name == "pyiceberg":
                    arrow = pyiceberg_reader(warehouse)(table)
                else:
                    arrow = duckdb_iceberg_read(location)
            except PeerError:
                raise
            except Exception as exc:
                raise PeerError(
                    f"{where}: {name} failed to read {table}: {type(exc).__name__}: {exc}"
                ) from exc
            assert_same(f"{where}: {name} reading {table}", arrow_rows(arrow), expected)
            agreed.append(name)
        return agreed
