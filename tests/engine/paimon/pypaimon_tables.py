"""Paimon tables written by pypaimon (the Paimon project's Python SDK), and its reads.

pypaimon needs older pyarrow/pandas/polars than iceduck's environment, so it runs in its
own venv (:func:`tests.support.paimon.ensure_venv`) as a subprocess: :func:`run_pypaimon`
runs a script there with a catalog on ``warehouse`` and helpers (``create``, ``commit``,
``rows``), and returns what the script put in ``result`` (JSON). Where the venv cannot be
made the tests skip, unless ``$ICEDUCK_REQUIRE_PAIMON`` is set, as in ``tests/paimon``.
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.support.paimon import PaimonEnvError, ensure_venv

PRELUDE = """
import json, sys, datetime, decimal
import pyarrow as pa
from pypaimon import CatalogFactory, Schema

cat = CatalogFactory.create({"warehouse": sys.argv[1]})
cat.create_database("db", True)
result = {}

def create(name, schema, **kwargs):
    cat.create_table("db." + name, Schema.from_pyarrow_schema(schema, **kwargs), False)
    return cat.get_table("db." + name)

def commit(table, data, schema):
    wb = table.new_batch_write_builder()
    w = wb.new_write()
    c = wb.new_commit()
    w.write_arrow(pa.table(data, schema=schema))
    c.commit(w.prepare_commit())
    w.close()
    c.close()

def rows(name):
    t = cat.get_table("db." + name)
    rb = t.new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()

def _plain(v):
    if isinstance(v, (datetime.date, datetime.datetime, decimal.Decimal)):
        return str(v)
    if isinstance(v, bytes):
        return "hex:" + v.hex()
    if isinstance(v, dict):
        return sorted([k, _plain(x)] for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v
"""

EPILOGUE = """
print(json.dumps({k: [{c: _plain(x) for c, x in r.items()} for r in v] for k, v in result.items()}))
"""


def plain(value: Any) -> Any:
    """A value as the scripts render pypaimon's (``_plain``): dates, times and decimals as
    text, bytes as ``hex:...``, structs and maps as sorted [key, value] lists."""
    if isinstance(value, datetime.date | datetime.datetime | decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return "hex:" + value.hex()
    if isinstance(value, dict):
        return sorted([k, plain(x)] for k, x in value.items())
    if isinstance(value, list | tuple):
        return [plain(x) for x in value]
    return value


def run_pypaimon(warehouse: Path, script: str) -> dict[str, list[dict[str, Any]]]:
    """Run ``script`` with pypaimon on ``warehouse``; the rows it stored in ``result``."""
    try:
        python = ensure_venv()
    except PaimonEnvError as e:
        if os.environ.get("ICEDUCK_REQUIRE_PAIMON"):
            raise
        pytest.skip(f"no pypaimon venv: {e}")
    source = PRELUDE + textwrap.dedent(script) + EPILOGUE
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run(
        [str(python), "-c", source, str(warehouse)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )
    if done.returncode != 0:
        raise AssertionError(f"pypaimon script failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
