"""``iceduck serve --audit FILE`` (or ``-`` for stdout): one JSON line per mutation and per
refusal, saying who changed what.

A line is written for every request to a route that changes the catalog (every ``POST``
and ``DELETE`` but ``/metrics`` reports), whatever its answer, and for every 401 or 403 on
any route, after the answer is decided::

    {"time": "2026-11-29T04:05:06.789Z", "request-id": "5f0c...", "principal": "etl",
     "client": "10.0.0.7", "method": "POST",
     "route": "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
     "namespace": ["sales"], "table": "orders", "status": 200, "outcome": "ok",
     "snapshot-ids": [4839201], "metadata-location": "s3://.../00004-....metadata.json"}

``outcome`` is ``ok`` (2xx), ``refused`` (4xx, with the answer's message as ``reason``) or
``failed`` (5xx). A commit names the snapshots it added (``snapshot-ids``, from its
``add-snapshot`` updates) and the metadata file it made; a multi-table commit lists each
table under ``tables``; a rename names ``source`` and ``destination``; a drop says whether
it was a ``purge``; a staged create (which creates nothing until the commit that follows)
says ``stage-create``. The request id is the client's ``X-Request-ID`` header when it sent a
sane one, else a new one, and is sent back in the answer's ``X-Request-ID``.

No secret is ever written: no header, no body but the names and ids above, and a reason is
the message the client itself received (which never holds a secret: a 500's is the error's
class name only), with the server's static token masked should it appear.
"""

from __future__ import annotations

import datetime
import json
import logging
import re
import sys
import threading
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

from iceduck.errors import UserError

log = logging.getLogger("iceduck.rest")

#: routes that are ``POST`` but change nothing
_READ_ONLY_POSTS = ("metrics",)
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:@/+=-]{1,128}")


class AuditTrail:
    """Appends lines to a stream, one whole line at a time (threads share it)."""

    def __init__(self, stream: TextIO, name: str = "-") -> None:
        self.stream = stream
        self.name = name
        self._lock = threading.Lock()

    @classmethod
    def open(cls, target: str) -> AuditTrail:
        """``-``: stdout; otherwise the file, appended to (created if missing)."""
        if target == "-":
            return cls(sys.stdout, "-")
        path = Path(target).expanduser()
        try:
            stream = path.open("a", encoding="utf-8")
        except OSError as e:
            raise UserError(f"audit file {path}: {e.strerror}") from None
        return cls(stream, str(path))

    def write(self, line: Mapping[str, Any]) -> None:
        """Append ``line``; a trail that cannot be written (a full disk) is logged as an error
        and the request still gets its answer: what it did is done, and a client left without
        an answer would retry a commit that landed."""
        text = json.dumps(line, separators=(",", ":"), default=str) + "\n"
        with self._lock:
            try:
                self.stream.write(text)
                self.stream.flush()
            except (OSError, ValueError) as e:  # ValueError: the stream was closed
                log.error("the audit trail %s could not be written (%s): %s", self.name, e, text.strip())


def request_id(given: str | None) -> str:
    """The client's ``X-Request-ID`` when it is a short token of safe characters, else a new one."""
    if given is not None and _REQUEST_ID.fullmatch(given.strip()):
        return given.strip()
    return uuid.uuid4().hex


def audited(method: str, pattern: tuple[str, ...], status: int) -> bool:
    """Whether a request gets a line: a mutation, or any refusal of credentials."""
    if status in (401, 403):
        return True
    return (
        method in ("POST", "DELETE")
        and pattern[-1] not in _READ_ONLY_POSTS
        and pattern != ("oauth", "tokens")
    )


def audit_line(
    *,
    route: str,
    method: str,
    params: Mapping[str, str],
    query: Mapping[str, str],
    body: bytes,
    status: int,
    answer: Mapping[str, Any] | None,
    principal: str | None,
    client: str,
    request_id: str,
    mask: Callable[[str], str] = lambda text: text,
    now: datetime.datetime | None = None,
) -> dict[str, Any]:
    """The line for one request (a pure function of what the server saw and answered)."""
    when = now or datetime.datetime.now(datetime.UTC)
    line: dict[str, Any] = {
        "time": when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z",
        "request-id": request_id,
        "principal": principal,
        "client": client,
        "method": method,
        "route": route,
    }
    if "namespace" in params:
        line["namespace"] = params["namespace"].split("\x1f")
    for key in ("table", "view"):
        if key in params:
            line[key] = params[key]
    line["status"] = status
    line["outcome"] = "ok" if status < 400 else "refused" if status < 500 else "failed"
    if status >= 400:
        line["reason"] = mask(_reason(answer))
        return line
    line.update(_effects(method, params, query, _json(body), answer or {}))
    return line


def _reason(answer: Mapping[str, Any] | None) -> str:
    if not answer:
        return ""
    error = answer.get("error")
    if isinstance(error, dict):
        return str(error.get("message", ""))
    if "error_description" in answer:  # an OAuthError
        return str(answer["error_description"])
    return str(answer.get("message", ""))  # the views' bare ErrorModel


def _json(body: bytes) -> dict[str, Any]:
    try:
        value = json.loads(body) if body else {}
    except (ValueError, UnicodeDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def _effects(
    method: str,
    params: Mapping[str, str],
    query: Mapping[str, str],
    body: dict[str, Any],
    answer: Mapping[str, Any],
) -> dict[str, Any]:
    """What a successful mutation did, in names and ids only."""
    effects: dict[str, Any] = {}
    added = _added_snapshots(body)
    if added:
        effects["snapshot-ids"] = added
    if isinstance(answer.get("metadata-location"), str):
        effects["metadata-location"] = answer["metadata-location"]
    if isinstance(body.get("table-changes"), list):
        effects["tables"] = [
            {"identifier": _dotted(c.get("identifier")), "snapshot-ids": _added_snapshots(c)}
            for c in body["table-changes"]
            if isinstance(c, dict)
        ]
    if "source" in body and "destination" in body:
        effects["source"], effects["destination"] = _dotted(body["source"]), _dotted(body["destination"])
    if method == "POST" and isinstance(body.get("name"), str):
        effects["name"] = body["name"]
    if body.get("stage-create") is True:  # nothing created yet: a later commit does
        effects["stage-create"] = True
    if method == "POST" and "table" not in params and isinstance(body.get("namespace"), list):
        effects["namespace"] = [str(level) for level in body["namespace"]]
    if method == "DELETE" and "table" in params:
        effects["purge"] = query.get("purgeRequested", "false").lower() == "true"
    return effects


def _added_snapshots(change: Mapping[str, Any]) -> list[int]:
    updates = change.get("updates")
    if not isinstance(updates, list):
        return []
    return [
        u["snapshot"]["snapshot-id"]
        for u in updates
        if isinstance(u, dict)
        and u.get("action") == "add-snapshot"
        and isinstance(u.get("snapshot"), dict)
        and isinstance(u["snapshot"].get("snapshot-id"), int)
    ]


def _dotted(identifier: Any) -> str | None:
    if not isinstance(identifier, dict):
        return None
    namespace = identifier.get("namespace")
    levels = [str(level) for level in namespace] if isinstance(namespace, list) else []
    return ".".join([*levels, str(identifier.get("name"))])
