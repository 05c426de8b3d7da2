"""``iceduck serve`` held to the REST catalog's OpenAPI document by a property-based fuzz.

Schemathesis (the standard OpenAPI fuzzer) generates requests from Iceberg's
``open-api/rest-catalog-open-api.yaml`` (checked in under ``tests/fixtures/openapi/``, from
apache/iceberg at 0e7a36d48ff8) -- examples, boundary values, random data, and stateful
sequences that create namespaces and tables and then use them -- and checks every answer:
no server error, a documented status code, the documented content type and headers, a body
valid against the response schema, 405 with ``Allow`` for an undeclared method, and 401 for
a missing or wrong token. The run is bounded (a fixed seed and number of examples), and a
failure prints schemathesis's report with a ``curl`` line per failure.

Left out are the operations the server does not offer (not in its ``endpoints``):
server-side scan planning, the S3 request signer, functions, credentials and unregister.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.rest import start_server

DOCUMENT = Path(__file__).resolve().parents[1] / "fixtures" / "openapi" / "rest-catalog-open-api.yaml"
TOKEN = "fuzz-token"
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "unsupported_method",
    "ignored_auth",
)
NOT_OFFERED = r"/(plan|tasks|sign|credentials|unregister|functions)(/|$)"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("schemathesis") is None, reason="schemathesis is not installed (the test extra)"
)


def test_no_answer_violates_the_openapi_document(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    server = start_server(warehouse, token=TOKEN, prefix="p")
    config = tmp_path / "schemathesis.toml"
    config.write_text('[parameters]\nprefix = "p"\n')
    command = [
        sys.executable,
        "-c",
        "from schemathesis.cli import schemathesis; schemathesis()",
        "--config-file",
        str(config),
        "--no-color",
        "run",
        str(DOCUMENT),
        "--url",
        server.url,
        "--header",
        f"Authorization: Bearer {TOKEN}",
        "--checks",
        ",".join(CHECKS),
        "--exclude-path-regex",
        NOT_OFFERED,
        "--max-examples",
        "15",
        "--seed",
        "1",
    ]
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    finally:
        server.stop()
    assert run.returncode == 0, run.stdout[-20000:] + run.stderr[-3000:]
