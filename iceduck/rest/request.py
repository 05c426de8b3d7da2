"""A request as handlers see it, and the response they return: no HTTP machinery here.

Names arrive percent-decoded per path segment, so a ``%2F`` inside a table name is a ``/``
in the name (and refused by :mod:`iceduck.rest.names`), never a path separator.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from iceduck.errors import UserError


@dataclass(frozen=True)
class Request:
    method: str
    #: the route's ``{placeholders}``, percent-decoded
    params: dict[str, str]
    #: query parameters, the last value of each
    query: dict[str, str]
    body: bytes = b""

    def json(self) -> dict[str, Any]:
        """The body as a JSON object; malformed JSON or another value is a 400."""
        if not self.body:
            raise UserError("the request needs a JSON body")
        try:
            value = json.loads(self.body)
        except (ValueError, UnicodeDecodeError) as e:
            raise UserError(f"malformed JSON body: {e}") from None
        if not isinstance(value, dict):
            raise UserError(f"the JSON body must be an object, not {type(value).__name__}")
        return value

    def flag(self, name: str) -> bool:
        """A boolean query parameter (``purgeRequested=true``)."""
        value = self.query.get(name, "false").lower()
        if value not in ("true", "false"):
            raise UserError(f"query parameter {name} must be true or false, not {value!r}")
        return value == "true"


@dataclass(frozen=True)
class Response:
    status: int = 200
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


NO_CONTENT = Response(204)
