"""The dispatch table: (method, path pattern) -> handler, and matching a path against it.

A pattern is the path after ``/v1/`` (and after the prefix, when the server has one), as
segments; ``{name}`` segments capture. The table is also what ``GET /v1/config`` lists as
the server's ``endpoints`` (spec: "A list of endpoints that the server supports"), so the
two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from iceduck.serve.context import ServeContext
from iceduck.serve.permissions import ANY, Need
from iceduck.serve.request import Request, Response

Handler = Callable[[ServeContext, Request], Response]


@dataclass(frozen=True)
class Route:
    method: str
    pattern: tuple[str, ...]
    #: the resource a plain not-found error is about ("table" or "namespace"); see errors.py
    resource: str
    handler: Handler
    #: listed in /v1/config's endpoints as "METHOD /v1/{prefix}/...", or unprefixed (config, oauth)
    prefixed: bool = True
    #: served without a bearer token (``/v1/oauth/tokens``, where clients get one)
    public: bool = False
    #: a view route: listed in ``/v1/config``'s endpoints only when the catalog keeps views
    views: bool = False
    #: the privilege the caller needs, and where (:mod:`iceduck.serve.permissions`)
    need: Need = ANY
    #: listed in ``GET /v1/config``'s endpoints (iceduck's own routes are not)
    listed: bool = True

    def endpoint(self) -> str:
        head = "/v1/{prefix}/" if self.prefixed else "/v1/"
        return f"{self.method} {head}{'/'.join(self.pattern)}"

    def match(self, segments: list[str]) -> dict[str, str] | None:
        if len(segments) != len(self.pattern):
            return None
        params: dict[str, str] = {}
        for want, got in zip(self.pattern, segments, strict=True):
            if want.startswith("{") and want.endswith("}"):
                params[want[1:-1]] = got
            elif want != got:
                return None
        return params


def parse_pattern(text: str) -> tuple[str, ...]:
    return tuple(text.strip("/").split("/"))


def find_route(
    routes: list[Route], method: str, segments: list[str]
) -> tuple[Route, dict[str, str]] | tuple[None, bool]:
    """The route for ``method`` on ``segments`` and its parameters; else ``(None, known)``
    where ``known`` says whether the path exists for another method (405, not 404)."""
    known = False
    for route in routes:
        params = route.match(segments)
        if params is None:
            continue
        if route.method == method:
            return route, params
        known = True
    return None, known
