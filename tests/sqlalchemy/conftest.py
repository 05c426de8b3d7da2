"""An iceduck warehouse opened through SQLAlchemy: the dialect registered under ``iceduck``
as its entry point registers it once installed (the shared install predates the entry point,
so the registry is told here; tests/sqlalchemy/test_url.py checks the entry point's string)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import registry

import iceduck

registry.register("iceduck", "iceduck.sqlalchemy.dialect", "IceduckDialect")


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    """A warehouse with nested namespaces, a commented table and a second table."""
    path = tmp_path / "wh"
    with iceduck.connect(path) as con:
        for sql in [
            "CREATE NAMESPACE sales",
            "CREATE NAMESPACE sales.archive",
            "CREATE TABLE sales.orders (id BIGINT NOT NULL COMMENT 'order number', customer STRING, "
            "amount DECIMAL(10,2), ts TIMESTAMP, tags ARRAY<STRING>) COMMENT 'one row per order'",
            "INSERT INTO sales.orders VALUES (1, 'ann', 9.50, TIMESTAMP '2024-05-01 10:00:00', ARRAY['a']), "
            "(2, 'bob', 20.00, TIMESTAMP '2024-05-02 11:00:00', ARRAY[])",
            "CREATE TABLE sales.archive.orders_2023 (id BIGINT)",
        ]:
            con.execute(sql)
    return path


@pytest.fixture
def engine(warehouse: Path) -> Iterator[sa.Engine]:
    engine = sa.create_engine(f"iceduck:///{warehouse}")
    yield engine
    engine.dispose()
