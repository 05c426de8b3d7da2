"""The write acceptance suite: tables iceduck writes, read back by Spark and checked.

Every scenario of ``sql/tests/e2e_*.sql`` (the step format: tests/support/scenario_script.py)
is replayed through ``iceduck.connect(warehouse).cursor().execute(sql)`` -- and, for the
alternating scenario, Spark -- on the fixture warehouse's catalog, in namespaces ``e2e_*``
(dropped first, so a kept warehouse works). After every step iceduck's ``SELECT``, Spark's
``SELECT`` and the reference answer (the same statements on plain DuckDB tables) must be
equal; at ``peers`` checkpoints PyIceberg and DuckDB's Iceberg extension must agree too
(tests/support/scenario.py). Bad statements must fail with the named iceduck error and
leave the table unchanged.

``test_scripts_agree_with_spark`` replays the same scripts with Spark running iceduck's
steps: it validates every reference answer against Spark and iceduck's reads of what Spark
wrote, independently of iceduck's writers.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.scenario import ScenarioRunner
from tests.support.scenario_peers import PeerReaders
from tests.support.scenario_script import Scenario, load_script
from tests.support.spark_warehouse import SparkWarehouse

pytestmark = pytest.mark.spark

SCRIPTS = Path(__file__).resolve().parents[2] / "sql" / "tests"
MODES = {"cow": "copy-on-write", "mor": "merge-on-read"}


def _variants(script: str, versions: tuple[int, ...], modes: tuple[str, ...] = ("cow", "mor")) -> list:
    return [
        pytest.param(script, {"fv": str(fv), "mode": MODES[mode]}, id=f"{script}-v{fv}-{mode}")
        for fv in versions
        for mode in modes
    ]


VARIANTS = [
    *_variants("lifecycle", (2, 3)),
    *_variants("evolution", (2,), ("mor",)),  # ends with an upgrade to v3 and a DV
    *_variants("evolution", (3,), ("cow",)),  # ADD COLUMN ... DEFAULT
    *_variants("refs", (2,), ("cow",)),
    *_variants("refs", (3,), ("mor",)),
    *_variants("tables", (2, 3), ("cow",)),
    *_variants("alternating", (2,), ("cow",)),
    *_variants("alternating", (3,), ("mor",)),
    *_variants("bad_statements", (2,), ("cow",)),
    *_variants("bad_statements", (3,), ("mor",)),
]
#: ``ICEDUCK_E2E_SPARK_WRITES=1`` also replays every variant with Spark running iceduck's steps
SPARK_WRITES = os.environ.get("ICEDUCK_E2E_SPARK_WRITES") == "1"


def scenario(script: str, params: dict[str, str], writer: str = "iceduck") -> Scenario:
    """The script for one variant; ``writer`` (a parameter scripts may test) is who runs
    iceduck's steps, and names the namespace so both runs can share a warehouse."""
    prefix = "e2e" if writer == "iceduck" else f"e2e_{writer}"
    ns = f"{prefix}_{script}_v{params['fv']}_{params['mode'].split('-')[0]}"
    return load_script(SCRIPTS / f"e2e_{script}.sql", {**params, "ns": ns, "writer": writer})


@pytest.fixture(scope="module")
def peers() -> PeerReaders:
    return PeerReaders()


def test_every_script_has_variants() -> None:
    scripts = {p.stem.removeprefix("e2e_") for p in SCRIPTS.glob("e2e_*.sql")}
    assert scripts == {v.values[0] for v in VARIANTS}


@pytest.mark.parametrize(("script", "params"), VARIANTS)
def test_scenario(
    spark, spark_warehouse: SparkWarehouse, peers: PeerReaders, script: str, params: dict[str, str]
) -> None:
    chosen = scenario(script, params)
    report = ScenarioRunner(spark, spark_warehouse.path, peers=peers).run(chosen)
    assert report.steps == len(chosen.steps)
    assert report.refused == sum(1 for s in chosen.steps if s.error)
    if any(s.peers for s in chosen.steps):
        for name in peers.names():
            assert report.peer_checks[name] == sum(1 for s in chosen.steps if s.peers), name


@pytest.mark.parametrize(("script", "params"), VARIANTS)
def test_scripts_agree_with_spark(
    spark, spark_warehouse: SparkWarehouse, script: str, params: dict[str, str]
) -> None:
    """The scripts run on Spark alone: the reference answers are Spark's, iceduck reads them.

    This validates the scripts and the reference translation (done for every variant when
    the suite was written); it doubles the suite's time, so it runs on request only.
    """
    if not SPARK_WRITES:
        pytest.skip("set ICEDUCK_E2E_SPARK_WRITES=1 to replay the scripts with Spark as the writer")
    chosen = scenario(script, params, writer="spark")
    if any("DEFAULT" in s.sql and s.writer == "iceduck" for s in chosen.steps):
        pytest.skip("Spark 3.5 cannot run ADD COLUMN ... DEFAULT: covered by the iceduck run only")
    report = ScenarioRunner(spark, spark_warehouse.path, substitute={"iceduck": "spark"}).run(chosen)
    assert report.checks >= len([s for s in chosen.steps if s.check]) - 2


def test_second_opinion_readers_available(peers: PeerReaders) -> None:
    """PyIceberg and DuckDB's Iceberg extension are installed; otherwise say why, as a skip."""
    if peers.unavailable:
        pytest.skip("; ".join(f"{name}: {why}" for name, why in peers.unavailable.items()))
    assert list(peers.names()) == ["pyiceberg", "duckdb-iceberg"]
