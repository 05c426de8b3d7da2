"""Interop fixtures shared by the Spark and DuckDB peer tests (``spark`` and the fixture
warehouse come from ``tests/conftest.py``).

* ``warehouse`` -- a fresh, empty warehouse folder for one test (an ``iceduck serve`` to
  start over it, say);
* ``con`` -- a connection on the Spark fixture warehouse whose namespace ``NS`` (the test
  module's constant) is dropped and created anew, so each test module writes into an
  empty namespace both engines see (one connection per module).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.connection import Connection


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    folder = tmp_path / "warehouse"
    folder.mkdir()
    return folder


@pytest.fixture(scope="module")
def con(spark: Any, spark_warehouse_path: Path, request: pytest.FixtureRequest) -> Iterator[Connection]:
    namespace: str = request.module.NS
    with iceduck.connect(spark_warehouse_path, "iceduck") as connection:
        connection.execute(f"DROP NAMESPACE IF EXISTS {namespace} CASCADE")
        connection.execute(f"CREATE NAMESPACE {namespace}")
        yield connection
