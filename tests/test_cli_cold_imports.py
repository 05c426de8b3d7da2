"""A one-shot CLI query imports only what the statement needs.

``iceduck WAREHOUSE -c "SELECT ..."`` in a new process pays for every module it imports
(pyarrow with numpy alone cost about as much as DuckDB's import), so the modules a plain
SELECT on a local warehouse never runs are imported where they are used: the object-store
filesystems, compression codecs of compressed files, deletion vectors, Paimon, metadata
tables, procedures, the REST, Glue and Hive catalogs, data frames. The test runs the query in
a new interpreter and lists what it imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import iceduck

#: imported only by the statements, tables and catalogs that need them
NOT_FOR_A_LOCAL_SELECT = (
    # the object-store filesystems (pyarrow.fs pulls pyarrow, numpy and ssl in)
    "pyarrow",
    "numpy",
    "ssl",
    "fsspec",
    # compression codecs of files this table does not have (lz4 comes with fastavro)
    "zstandard",
    # deletion vectors, and Puffin files that hold them
    "pyroaring",
    "iceduck.formats.puffin",
    "iceduck.formats.deletion_vector",
    "iceduck.spec.deletion_vector",
    "iceduck.formats.theta_sketch",
    # Paimon warehouses
    "iceduck.catalog.paimon_warehouse",
    "iceduck.engine.paimon_read",
    "iceduck.engine.paimon_files",
    "iceduck.formats.paimon",
    "iceduck.scan.paimon",
    "iceduck.spec.paimon",
    "iceduck.formats.avro_arrow",
    # metadata tables and procedures (CALL)
    "iceduck.scan.metadata",
    "iceduck.ops.procedures",
    # other catalogs, the REST server, other engines' data frames
    "http.client",
    "boto3",
    "botocore",
    "thrift",
    "iceduck.catalog.rest_client",
    "iceduck.catalog.glue",
    "iceduck.catalog.hive",
    "iceduck.serve",
    "pandas",
    "polars",
    "pyspark",
)

CHILD = """
import json, sys
from iceduck.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cold")
    con = iceduck.connect(root)
    con.execute("CREATE NAMESPACE ns")
    con.execute("CREATE TABLE ns.t AS SELECT i::BIGINT AS id, i / 7 AS v FROM range(1000) r(i)")
    con.close()
    return root


def imported_by_cli(*args: str) -> tuple[str, set[str]]:
    """(what the CLI printed, the modules loaded afterwards) of a CLI run in a new interpreter
    that imports this checkout's iceduck."""
    source_root = str(Path(iceduck.__file__).resolve().parents[1])
    paths = [source_root, *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    run = subprocess.run(
        [sys.executable, "-c", CHILD, *args], capture_output=True, text=True, env=env, cwd=source_root
    )
    assert run.returncode == 0, run.stderr
    *printed, last = run.stdout.strip().splitlines()
    report = json.loads(last)
    assert report["code"] == 0, run.stdout + run.stderr
    return "\n".join(printed), set(report["modules"])


def loaded(modules: set[str], name: str) -> list[str]:
    return sorted(m for m in modules if m == name or m.startswith(name + "."))


def test_a_cold_select_imports_only_what_it_needs(warehouse: Path) -> None:
    printed, modules = imported_by_cli(str(warehouse), "--csv", "-c", "SELECT count(*), sum(v) FROM ns.t")
    assert printed.splitlines()[-1].startswith("1000,")  # the query ran and read the table
    assert "iceduck.engine.read" in modules and "duckdb" in modules
    unexpected = {name: loaded(modules, name) for name in NOT_FOR_A_LOCAL_SELECT if loaded(modules, name)}
    assert not unexpected
