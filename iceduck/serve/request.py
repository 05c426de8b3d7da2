"""A request as handlers see it, and the response they return: no HTTP machinery here.

Names arrive percent-decoded per path segment, so a ``%2F`` inside a table name is a ``/``
in the name (and refused by :mod:`iceduck.serve.names`), never a path separator.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from iceduck.errors import UserError
from iceduck.serve.access import ANYONE, Caller
from iceduck.serve.errors import HttpRefusal

#: bodies that are certainly not JSON: a form posted to a JSON route is a client mistake
#: (``curl -d`` sends this type unless told otherwise) named as such, not a parse error
_NOT_JSON = ("application/x-www-form-urlencoded", "multipart/form-data")


@dataclass(frozen=True)
class Request:
    method: str
    #: the route's ``{placeholders}``, percent-decoded
    params: dict[str, str]
    #: query parameters, the last value of each
    query: dict[str, str]
    body: bytes = b""
    #: request headers, names lower-cased (HTTP header names are case-insensitive)
    headers: Mapping[str, str] = field(default_factory=dict)
    #: who sent it (:mod:`iceduck.serve.access`): listings show only what the caller sees
    caller: Caller = ANYONE

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def json(self) -> dict[str, Any]:
        """The body as a JSON object; malformed JSON or another value is a 400."""
        if not self.body:
            raise UserError("the request needs a JSON body")
        media_type = (self.header("Content-Type") or "").partition(";")[0].strip().lower()
        if media_type in _NOT_JSON:
            raise HttpRefusal(
                415, "UnsupportedMediaTypeException", f"the body must be application/json, not {media_type}"
            )
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
