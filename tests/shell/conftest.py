"""A small warehouse for the shell tests: namespace ``shop``, table ``shop.orders`` (3 rows)."""

from __future__ import annotations

from pathlib import Path

import pytest

import iceduck


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("shell") / "warehouse"
    with iceduck.connect(path) as con:
        con.execute("CREATE NAMESPACE shop")
        con.execute("CREATE TABLE shop.orders (id BIGINT, customer VARCHAR, amount DECIMAL(10, 2))")
        con.execute("INSERT INTO shop.orders VALUES (1, 'ann', 10.50), (2, 'bob', 3.25), (3, NULL, 7)")
    return path
