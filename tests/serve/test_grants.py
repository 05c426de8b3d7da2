"""Every route x every privilege x where it is granted: the generated table of the issue.

One server with one principal per (privilege, scope) pair, each holding a single grant,
sends every route a request aimed at objects in ``sales`` and expects a 403
``ForbiddenException`` naming the privilege exactly when the hand-written table below says
the grant does not cover the route. Mutations aim at objects that do not exist (or carry
a body the handler refuses after the check), so the table stays as it is and a request that
gets past the check answers 404 or 400, never 403: the check comes before any lookup.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from iceduck.serve.api import ROUTES
from iceduck.serve.server import CatalogServer
from tests.serve.conftest import RestClient, serve_principals

PRIVILEGES = ("read", "write", "create", "drop", "admin")
#: where a principal's one grant is: (name, TOML of the grant target)
SCOPES = {
    "catalog": "catalog = true",
    "sales": 'namespace = "sales"',
    "ghost": 'table = "sales.ghost"',  # the table (or view) the routes aim at
    "other": 'table = "sales.other"',
    "hr": 'namespace = "hr"',
}
#: the privileges that satisfy a needed one (written out, not taken from the code)
SATISFIES = {
    "read": {"read", "write", "admin"},
    "write": {"write", "admin"},
    "create": {"create", "admin"},
    "drop": {"drop", "admin"},
    "admin": {"admin"},
}
#: what each scope covers: the catalog, the namespace sales, or the object sales.ghost
COVERS = {
    "catalog": {"catalog", "sales", "ghost"},
    "sales": {"sales", "ghost"},
    "ghost": {"ghost"},
    "other": set(),
    "hr": set(),
}
#: the scopes whose grant makes the namespace sales seen (in, above or below it)
SEES_SALES = {"catalog", "sales", "ghost", "other"}

NS = "/v1/namespaces/sales"
T = f"{NS}/tables/ghost"
V = f"{NS}/views/ghost"
GHOST = {"namespace": ["sales"], "name": "ghost"}

#: route (as /v1/config lists it) -> (method, path, body, needs); a need is
#: (privilege, what) with what one of catalog, sales, ghost, or "seen" (sees sales)
CASES: dict[str, tuple[str, str, Any, list[tuple[str, str]]]] = {
    "GET /v1/{prefix}/namespaces": ("GET", "/v1/namespaces?parent=sales", None, [("read", "seen")]),
    "POST /v1/{prefix}/namespaces": (
        "POST",
        "/v1/namespaces",
        {"namespace": ["sales", "sub"], "properties": "not an object"},
        [("create", "sales")],
    ),
    "GET /v1/{prefix}/namespaces/{namespace}": ("GET", NS, None, [("read", "seen")]),
    "HEAD /v1/{prefix}/namespaces/{namespace}": ("HEAD", NS, None, [("read", "seen")]),
    "DELETE /v1/{prefix}/namespaces/{namespace}": ("DELETE", NS, None, [("drop", "sales")]),
    "POST /v1/{prefix}/namespaces/{namespace}/properties": (
        "POST",
        f"{NS}/properties",
        {"updates": {"k": "v"}, "removals": ["k"]},
        [("write", "sales")],
    ),
    "GET /v1/{prefix}/namespaces/{namespace}/tables": ("GET", f"{NS}/tables", None, [("read", "seen")]),
    "POST /v1/{prefix}/namespaces/{namespace}/tables": (
        "POST",
        f"{NS}/tables",
        {"name": "ghost", "schema": "not a schema"},
        [("create", "sales")],
    ),
    "POST /v1/{prefix}/namespaces/{namespace}/register": (
        "POST",
        f"{NS}/register",
        {"name": "ghost", "metadata-location": "/elsewhere/v1.metadata.json"},
        [("create", "sales")],
    ),
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}": ("GET", T, None, [("read", "ghost")]),
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials": (
        "GET",
        f"{T}/credentials",
        None,
        [("read", "ghost")],
    ),
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}": (
        "POST",
        T,
        {"requirements": [], "updates": []},
        [("write", "ghost")],
    ),
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}": ("HEAD", T, None, [("read", "ghost")]),
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}": ("DELETE", T, None, [("drop", "ghost")]),
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics": (
        "POST",
        f"{T}/metrics",
        {"report-type": 7},
        [("read", "ghost")],
    ),
    "POST /v1/{prefix}/tables/rename": (
        "POST",
        "/v1/tables/rename",
        {"source": GHOST, "destination": {"namespace": ["sales"], "name": "ghost2"}},
        [("drop", "ghost"), ("create", "sales")],
    ),
    "POST /v1/{prefix}/transactions/commit": (
        "POST",
        "/v1/transactions/commit",
        {"table-changes": [{"identifier": GHOST, "requirements": [], "updates": []}]},
        [("write", "ghost")],
    ),
    "GET /v1/{prefix}/namespaces/{namespace}/views": ("GET", f"{NS}/views", None, [("read", "seen")]),
    "POST /v1/{prefix}/namespaces/{namespace}/views": (
        "POST",
        f"{NS}/views",
        {"name": "ghost"},
        [("create", "sales")],
    ),
    "GET /v1/{prefix}/namespaces/{namespace}/views/{view}": ("GET", V, None, [("read", "ghost")]),
    "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}": ("HEAD", V, None, [("read", "ghost")]),
    "POST /v1/{prefix}/namespaces/{namespace}/views/{view}": (
        "POST",
        V,
        {"requirements": [], "updates": []},
        [("write", "ghost")],
    ),
    "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}": ("DELETE", V, None, [("drop", "ghost")]),
    "POST /v1/{prefix}/views/rename": (
        "POST",
        "/v1/views/rename",
        {"source": GHOST, "destination": {"namespace": ["sales"], "name": "ghost2"}},
        [("drop", "ghost"), ("create", "sales")],
    ),
    "POST /v1/{prefix}/namespaces/{namespace}/register-view": (
        "POST",
        f"{NS}/register-view",
        {"name": "ghost", "metadata-location": "/elsewhere/v1.metadata.json"},
        [("create", "sales")],
    ),
    "POST /v1/iceduck/principals/reload": (
        "POST",
        "/v1/iceduck/principals/reload",
        None,
        [("admin", "catalog")],
    ),
}


def _principals() -> str:
    lines = ['[principals.nobody]\ntoken = "tok-nobody"\nroles = []\n']
    for privilege in PRIVILEGES:
        for scope, target in SCOPES.items():
            name = f"{privilege}-{scope}"
            lines.append(f'[principals.{name}]\ntoken = "tok-{name}"\nroles = ["{name}"]\n')
            lines.append(f'[roles.{name}]\ngrants = [{{ {target}, privileges = ["{privilege}"] }}]\n')
    return "\n".join(lines)


def _allowed(privilege: str | None, scope: str, needs: list[tuple[str, str]]) -> bool:
    if privilege is None:
        return False
    for needed, what in needs:
        if what == "seen":
            if scope not in SEES_SALES:
                return False
        elif privilege not in SATISFIES[needed] or what not in COVERS[scope]:
            return False
    return True


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CatalogServer]:
    warehouse = tmp_path_factory.mktemp("grants") / "warehouse"
    warehouse.mkdir()
    setup = serve_principals(
        warehouse,
        '[principals.root]\ntoken = "root"\nroles = ["all"]\n'
        '[roles.all]\ngrants = [{ catalog = true, privileges = ["admin"] }]\n',
    )
    root = RestClient(setup.url, "root")
    for namespace in (["sales"], ["hr"], ["sales", "sub"]):
        assert root.post("/v1/namespaces", {"namespace": namespace}).status == 200
    schema = {
        "type": "struct",
        "schema-id": 0,
        "fields": [{"id": 1, "name": "id", "type": "long", "required": False}],
    }
    assert root.post(f"{NS}/tables", {"name": "other", "schema": schema}).status == 200
    setup.stop()
    server = serve_principals(warehouse, _principals())
    yield server
    server.stop()


def test_every_route_is_in_the_table() -> None:
    listed = {r.endpoint() for r in ROUTES if not r.public and r.pattern != ("config",)}
    assert listed == set(CASES)


@pytest.mark.parametrize("route", sorted(CASES))
def test_each_privilege_on_each_route(served: CatalogServer, route: str) -> None:
    method, path, body, needs = CASES[route]
    outcomes = []
    for privilege in (None, *PRIVILEGES):
        for scope in SCOPES if privilege is not None else ("-",):
            name = "nobody" if privilege is None else f"{privilege}-{scope}"
            reply = RestClient(served.url, f"tok-{name}").call(method, path, body)
            expected = _allowed(privilege, scope, needs)
            outcomes.append((name, reply.status, expected))
            if expected:
                assert reply.status not in (401, 403), (name, reply.status, reply.body)
            else:
                assert reply.status == 403, (name, reply.status, reply.body)
                if method != "HEAD":
                    error = reply.body["error"]
                    assert error["type"] == "ForbiddenException"
                    assert f"principal '{name}' lacks the privilege" in error["message"]
    assert any(expected for *_, expected in outcomes) and not all(expected for *_, expected in outcomes)


def test_a_refusal_says_nothing_about_what_exists(served: CatalogServer) -> None:
    """The refusal of a table that exists reads as that of one that does not."""
    reader = RestClient(served.url, "tok-read-hr")
    real = reader.get(f"{NS}/tables/other")
    missing = reader.get(f"{NS}/tables/nothing")
    assert real.status == missing.status == 403
    assert real.body["error"]["message"].replace("other", "X") == missing.body["error"]["message"].replace(
        "nothing", "X"
    )
    gone = reader.get("/v1/namespaces/nowhere/tables/t")
    assert gone.status == 403  # not a 404 telling that namespace nowhere does not exist


def test_listings_show_only_what_the_caller_sees(served: CatalogServer) -> None:
    def namespaces(name: str) -> list[list[str]]:
        return RestClient(served.url, f"tok-{name}").get("/v1/namespaces").body["namespaces"]

    def tables(name: str) -> list[str]:
        return [
            t["name"] for t in RestClient(served.url, f"tok-{name}").get(f"{NS}/tables").body["identifiers"]
        ]

    assert namespaces("read-catalog") == [["hr"], ["sales"]]
    assert namespaces("read-hr") == [["hr"]]
    assert namespaces("drop-other") == [["sales"]]  # the path to a granted table is seen
    assert namespaces("nobody") == []

    def children(name: str) -> list[list[str]]:
        return RestClient(served.url, f"tok-{name}").get("/v1/namespaces?parent=sales").body["namespaces"]

    assert children("read-sales") == children("read-catalog") == [["sales", "sub"]]
    assert children("drop-other") == [] and children("read-ghost") == []  # a table's grant: only its path
    assert tables("read-sales") == ["other"]
    assert tables("read-other") == ["other"] and tables("write-ghost") == []


def test_config_lists_every_route_to_every_caller(served: CatalogServer) -> None:
    """Clients cache the endpoints for their session: a route left out for a reader would stay
    unusable after a reload granted it, so every caller is told every route (and a route not
    granted answers 403)."""

    def endpoints(name: str) -> list[str]:
        reply = RestClient(served.url, f"tok-{name}").get("/v1/config")
        assert reply.status == 200
        return list(reply.body["endpoints"])

    everything = endpoints("admin-catalog")
    assert "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}" in everything
    assert endpoints("read-sales") == endpoints("nobody") == everything
    assert not any("iceduck" in e for e in everything)  # iceduck's own route is not listed


def test_unknown_or_missing_tokens_are_401_on_every_route(served: CatalogServer) -> None:
    for route, (method, path, body, _) in CASES.items():
        for client in (RestClient(served.url), RestClient(served.url, "not-a-token")):
            reply = client.call(method, path, body)
            assert reply.status == 401, (route, reply.status)
    assert RestClient(served.url).get("/v1/config").status == 401
