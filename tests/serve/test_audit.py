"""The audit trail: one JSON line per mutation and per refusal, and never a secret."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.serve.audit import AuditTrail
from iceduck.serve.server import CatalogServer
from tests.serve.conftest import RestClient, serve_principals, token_request

PRINCIPALS = """\
[principals.etl]
token = "etl-secret-token"
roles = ["engineer"]

[principals.analyst]
client-id = "analyst"
client-secret = "analyst-secret-value"
roles = ["reader"]

[roles.engineer]
grants = [{ catalog = true, privileges = ["admin"] }]

[roles.reader]
grants = [{ catalog = true, privileges = ["read"] }]
"""


@pytest.fixture
def trail(tmp_path: Path) -> Path:
    return tmp_path / "audit.jsonl"


@pytest.fixture
def served(warehouse: Path, trail: Path) -> Iterator[CatalogServer]:
    server = serve_principals(warehouse, PRINCIPALS, audit=AuditTrail.open(str(trail)))
    yield server
    server.stop()


def _lines(trail: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trail.read_text().splitlines()]


def test_commits_name_the_principal_and_the_snapshot(served: CatalogServer, trail: Path) -> None:
    con = iceduck.connect(catalog_uri=served.url, properties={"token": "etl-secret-token"})
    con.execute("CREATE NAMESPACE sales")
    con.execute("CREATE TABLE sales.orders (id bigint) USING iceberg")
    con.execute("INSERT INTO sales.orders VALUES (1), (2)")
    snapshot = con.execute("SELECT snapshot_id FROM sales.orders.snapshots").fetchone()[0]
    lines = _lines(trail)
    assert [(x["method"], x["route"].split("/v1/")[1], x["status"]) for x in lines] == [
        ("POST", "{prefix}/namespaces", 200),
        ("POST", "{prefix}/namespaces/{namespace}/tables", 200),
        ("POST", "{prefix}/namespaces/{namespace}/tables", 200),
        ("POST", "{prefix}/namespaces/{namespace}/tables/{table}", 200),
    ]
    assert lines[1]["stage-create"] is True and "stage-create" not in lines[2]
    del lines[1]
    assert {x["principal"] for x in lines} == {"etl"} and {x["outcome"] for x in lines} == {"ok"}
    assert lines[0]["namespace"] == ["sales"]
    assert lines[1]["namespace"] == ["sales"] and lines[1]["name"] == "orders"
    commit = lines[2]
    assert commit["namespace"] == ["sales"] and commit["table"] == "orders"
    assert commit["snapshot-ids"] == [snapshot]
    assert commit["metadata-location"].endswith(".metadata.json")
    assert len({x["request-id"] for x in lines}) == 3 and commit["client"] == "127.0.0.1"
    assert commit["time"].endswith("Z")


def test_drops_renames_and_refusals(served: CatalogServer, trail: Path) -> None:
    etl = RestClient(served.url, "etl-secret-token")
    assert etl.post("/v1/namespaces", {"namespace": ["hr"]}).status == 200
    schema = {
        "type": "struct",
        "schema-id": 0,
        "fields": [{"id": 1, "name": "id", "type": "long", "required": False}],
    }
    assert etl.post("/v1/namespaces/hr/tables", {"name": "staff", "schema": schema}).status == 200
    rename = {
        "source": {"namespace": ["hr"], "name": "staff"},
        "destination": {"namespace": ["hr"], "name": "people"},
    }
    assert etl.post("/v1/tables/rename", rename).status == 204
    reader = RestClient(served.url, "nonsense-token")
    assert reader.call("DELETE", "/v1/namespaces/hr/tables/people").status == 401
    assert etl.call("DELETE", "/v1/namespaces/hr/tables/people?purgeRequested=true").status == 204
    assert etl.call("DELETE", "/v1/namespaces/hr/tables/people").status == 404
    lines = _lines(trail)[2:]
    assert lines[0]["source"] == "hr.staff" and lines[0]["destination"] == "hr.people"
    assert lines[1]["principal"] is None and lines[1]["status"] == 401 and lines[1]["outcome"] == "refused"
    assert "unknown" in lines[1]["reason"]
    assert lines[2]["purge"] is True and lines[2]["table"] == "people" and lines[2]["outcome"] == "ok"
    assert lines[3]["status"] == 404 and "people" in lines[3]["reason"]


def test_a_forbidden_read_is_a_line_and_an_allowed_read_is_not(served: CatalogServer, trail: Path) -> None:
    etl = RestClient(served.url, "etl-secret-token")
    assert etl.post("/v1/namespaces", {"namespace": ["hr"]}).status == 200
    token = _login(served)
    analyst = RestClient(served.url, token)
    assert analyst.get("/v1/namespaces/hr").status == 200
    reply = analyst.call("DELETE", "/v1/namespaces/hr", headers={"X-Request-ID": "job-42.step-7"})
    assert reply.status == 403 and reply.headers["X-Request-ID"] == "job-42.step-7"
    refused = _lines(trail)[-1]
    assert refused == {
        **refused,
        "principal": "analyst",
        "request-id": "job-42.step-7",
        "namespace": ["hr"],
        "status": 403,
        "outcome": "refused",
        "reason": "principal 'analyst' lacks the privilege drop on namespace hr",
    }
    assert len(_lines(trail)) == 2  # the create and the refusal: reads are not mutations
    assert RestClient(served.url, token).get("/v1/config").headers["X-Request-ID"]  # always one


def test_no_secret_ever_reaches_the_trail(served: CatalogServer, trail: Path) -> None:
    etl = RestClient(served.url, "etl-secret-token")
    etl.post("/v1/namespaces", {"namespace": ["hr"], "properties": {"password": "prop-secret"}})
    _login(served, "wrong-secret-value")
    token = _login(served)
    RestClient(served.url, token).call("DELETE", "/v1/namespaces/hr")
    RestClient(served.url, "analyst-secret-value").call("DELETE", "/v1/namespaces/hr")
    text = trail.read_text()
    assert len(text.splitlines()) == 4  # create, refused login, 403, 401
    for secret in ("etl-secret-token", "analyst-secret-value", "wrong-secret-value", "prop-secret", token):
        assert secret not in text


def _login(server: CatalogServer, secret: str = "analyst-secret-value") -> str:
    """The analyst's token, or the refusal's status when its credentials are refused."""
    form = {"grant_type": "client_credentials", "client_id": "analyst", "client_secret": secret}
    reply = token_request(server, form)
    return str(reply.body["access_token"]) if reply.status == 200 else f"refused {reply.status}"


def test_a_trail_that_cannot_be_written_still_answers(
    warehouse: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A full disk under the trail: the commit's answer still reaches the client (a client
    without its answer would retry a commit that landed), and the line goes to the log."""
    import io

    class Full(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")

    server = serve_principals(warehouse, PRINCIPALS, audit=AuditTrail(Full(), "full.jsonl"))
    try:
        reply = RestClient(server.url, "etl-secret-token").post("/v1/namespaces", {"namespace": ["ok"]})
        assert reply.status == 200
    finally:
        server.stop()
    assert (
        "the audit trail full.jsonl could not be written" in caplog.text
        and '"principal":"etl"' in caplog.text
    )
