"""The Paimon warehouse pypaimon writes, once per test session (``tests/support/paimon.py``).

``paimon_warehouse`` -- ``PaimonWarehouse(path, expected, notes)``: database ``db`` with the tables
of ``tests/support/paimon_writer.py`` and pypaimon's own reads of every snapshot, tag and filter.
The pypaimon venv is created on first use; where it cannot be (no PyPI locally) the tests skip
naming the reason, except where ``$ICEDUCK_REQUIRE_PAIMON`` is set (``.ci/run`` sets it): a failure there.
"""

from __future__ import annotations

import os

import pytest

from tests.support.paimon import PaimonEnvError, PaimonWarehouse, write_warehouse


@pytest.fixture(scope="session")
def paimon_warehouse(tmp_path_factory: pytest.TempPathFactory) -> PaimonWarehouse:
    try:
        return write_warehouse(tmp_path_factory.mktemp("paimon") / "wh")
    except PaimonEnvError as e:
        if os.environ.get("ICEDUCK_REQUIRE_PAIMON"):
            raise
        pytest.skip(f"no pypaimon venv: {e}")
