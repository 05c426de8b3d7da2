"""Iceberg's own catalog test suite against ``iceduck serve``: the REST Compatibility Kit.

Iceberg judges REST servers with ``RESTCompatibilityKitCatalogTests`` (its ``CatalogTests``
run through Java's ``RESTCatalog`` against a server it does not start, ``rck.local=false``).
The class path is Iceberg 1.10.1's published test jars and their dependencies, resolved by
Maven from ``tests/support/rck/pom.xml`` (nothing is compiled); JUnit's console launcher runs
the class against a server started here, and its XML report is read.

Every test passes but those in :data:`REFUSED`, where the server refuses on purpose (the
README lists them): a table location outside the served warehouse (the kit creates tables
at ``file:/tmp/...``), and names with ``/`` (which the kit's own newer versions skip).

``RESTCompatibilityKitViewCatalogTests`` (Iceberg's ``ViewCatalogTests``) runs the same way;
its refusals, :data:`VIEW_REFUSED`, are the views created or moved to a location outside
the served warehouse.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support import maven
from tests.support.rest import start_server
from tests.support.spark_jars import cache_dir

SUITE = "org.apache.iceberg.rest.RESTCompatibilityKitCatalogTests"
#: the kit's view suite: Iceberg's ``ViewCatalogTests`` through Java's ``RESTCatalog``
VIEW_SUITE = "org.apache.iceberg.rest.RESTCompatibilityKitViewCatalogTests"
#: the kit's tests the server fails on purpose, and why
REFUSED = {
    **dict.fromkeys(
        [
            "testCompleteCreateTable()",
            "testCompleteCreateTransaction()",
            "testCompleteCreateTransactionV2()",
            "testCompleteCreateTransactionMultipleSchemas()",
            "testCompleteCreateOrReplaceTransactionCreate()",
            "testCompleteCreateOrReplaceTransactionReplace()",
            "testCompleteReplaceTransaction()",
            "testLoadTable()",
            "testCreateTableWithDefaultColumnValue()",
        ],
        "a table location outside the served warehouse is refused",
    ),
    "testNamespaceWithSlash()": "names with / are refused",
    "testTableNameWithSlash()": "names with / are refused",
}
#: the view suite's tests the server fails on purpose, and why (``listViewsInEmptyNamespace``
#: is skipped by the kit itself: Java's REST client supports no empty namespace)
VIEW_REFUSED = dict.fromkeys(
    [
        "completeCreateView()",
        "createAndReplaceViewWithLocation()",
        "createViewWithCustomMetadataLocation()",
        "updateViewLocation()",
    ],
    "a view location outside the served warehouse is refused",
)


def _classpath() -> list[Path]:
    try:
        return maven.classpath(maven.RCK_POM, cache_dir())
    except maven.MavenUnavailable as e:
        if os.environ.get("ICEDUCK_REQUIRE_MAVEN"):
            raise
        pytest.skip(f"the REST Compatibility Kit: {e}")


def _results(reports: Path) -> dict[str, str]:
    """{test name: "passed" | "failed: <message>" | "skipped"} of the XML reports."""
    results: dict[str, str] = {}
    for report in reports.glob("*.xml"):
        for case in ET.parse(report).iter("testcase"):
            problems = [*case.findall("failure"), *case.findall("error")]
            if problems:
                results[case.get("name", "")] = f"failed: {(problems[0].get('message') or '')[:300]}"
            elif case.find("skipped") is not None:
                results[case.get("name", "")] = "skipped"
            else:
                results[case.get("name", "")] = "passed"
    return results


def _run_suite(suite: str, tmp_path: Path) -> tuple[dict[str, str], str]:
    """Run the kit's ``suite`` class against a fresh ``iceduck serve``: {test: outcome} (see
    :func:`_results`) and the launcher's last output, for a failure's message."""
    if shutil.which("java") is None:
        pytest.skip("no Java")
    jars = _classpath()
    launcher = next(j for j in jars if j.name.startswith("junit-platform-console-standalone"))
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    server = start_server(warehouse)
    reports = tmp_path / "reports"
    try:
        run = subprocess.run(
            [
                "java",
                "-Drck.local=false",
                f"-Duri={server.url}",
                "-Dwarehouse=iceduck",  # the served catalog's name (its /v1/config warehouse)
                "-Drck.requires-namespace-create=true",
                "-jar",
                str(launcher),
                "execute",
                "--class-path",
                os.pathsep.join(str(j) for j in jars if j != launcher),
                "--select-class",
                suite,
                "--reports-dir",
                str(reports),
                "--details=none",
                "--disable-banner",
            ],
            capture_output=True,
            text=True,
            timeout=900,
            cwd=tmp_path,
        )
    finally:
        server.stop()
    return _results(reports), run.stdout[-5000:] + run.stderr[-5000:]


def _check(results: dict[str, str], output: str, refused: dict[str, str], at_least: int) -> None:
    """Every test passed but the ``refused`` ones, which all failed, and ``at_least`` ran."""
    assert results, output
    failed = {name: outcome for name, outcome in results.items() if outcome.startswith("failed")}
    unexpected = {name: outcome for name, outcome in failed.items() if name not in refused}
    assert not unexpected, unexpected
    assert set(failed) == set(refused), set(refused) - set(failed)  # a refusal gone: update README
    passed = sum(outcome == "passed" for outcome in results.values())
    assert passed >= at_least, (passed, len(results))


def test_icebergs_catalog_tests_pass_against_iceduck_serve(tmp_path: Path) -> None:
    _check(*_run_suite(SUITE, tmp_path), REFUSED, 84)


def test_icebergs_view_catalog_tests_pass_against_iceduck_serve(tmp_path: Path) -> None:
    _check(*_run_suite(VIEW_SUITE, tmp_path), VIEW_REFUSED, 42)
