"""Idempotent retries of mutations: the REST spec's ``Idempotency-Key`` header.

The spec: "When present, the server ensures no additional effects for requests that carry
the same Idempotency-Key. If a prior request with this key has been finalized, the server
returns an equivalent final response without re-running the operation." Finalized are
"200, 201, 204, and deterministic terminal 4xx (including 409 ...)"; 5xx are not stored,
so a retry after one runs again. The key is "UUIDv7 in string form" (the parameter's
schema: ``format: uuid``, 36 characters): anything else is a 400. A key names one logical
operation ("no reuse across different operations"): the same key with another method,
route or body is a 400 too, never a replay of someone else's answer.

The server advertises the keys' lifetime in ``GET /v1/config`` (``idempotency-key-lifetime``,
an ISO-8601 duration), and keeps each finalized answer that long ("Catalogs SHOULD NOT
expire keys before the end of the advertised token lifetime"), in memory: a restarted
server has forgotten them, so a retry across a restart runs again and its requirements
decide (a commit asserts what it was built on, so it fails rather than lands twice).

A retry that arrives while the first request still runs waits for its answer. Answers about
the caller's credentials (401, 403, 419) are not final: the operation never ran.
"""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from iceduck.errors import UserError
from iceduck.serve.request import Response

HEADER = "idempotency-key"
#: ``idempotency-key-lifetime`` of ``GET /v1/config``
LIFETIME = "PT30M"
LIFETIME_S = 30 * 60
#: at most this many answers are kept (the oldest go first)
MAX_KEYS = 10_000
#: statuses that say nothing about the operation, only about the caller's credentials
_NOT_FINAL = frozenset({401, 403, 419})


@dataclass
class _Entry:
    #: method, route and a digest of the body: what the key was first used for
    request: tuple[str, str, str]
    done: threading.Event = field(default_factory=threading.Event)
    response: Response | None = None
    expires: float = 0.0


def check_key(key: str) -> str:
    """``key`` when it is a UUID in its 36-character form; else a 400 naming it."""
    try:
        ok = len(key) == 36 and str(uuid.UUID(key)) == key.lower()
    except ValueError:
        ok = False
    if not ok:
        raise UserError(f"Idempotency-Key must be a UUID in its 36-character form (UUIDv7), not {key[:60]!r}")
    return key.lower()


class IdempotencyKeys:
    """The finalized answers of keyed mutations, kept :data:`LIFETIME_S` seconds."""

    def __init__(
        self,
        lifetime_s: float = LIFETIME_S,
        max_keys: int = MAX_KEYS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.lifetime_s = lifetime_s
        self.max_keys = max_keys
        self.clock = clock
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def run(
        self,
        key: str,
        method: str,
        route: str,
        body: bytes,
        call: Callable[[], Response],
        principal: str | None = None,
    ) -> Response:
        """The answer to the request keyed ``key``: ``call()``'s, or the one finalized before.
        Keys are kept per ``principal``: another caller's request with the same key is
        another operation, and never sees the first one's answer."""
        given = check_key(key)
        key = f"{principal or ''}\x00{given}"
        request = (method, route, hashlib.sha256(body).hexdigest())
        while True:
            with self._lock:
                self._expire()
                entry = self._entries.get(key)
                if entry is None:
                    entry = self._entries[key] = _Entry(request)
                    break
            if entry.request != request:
                raise UserError(
                    f"Idempotency-Key {given} was used for another request ({entry.request[0]} "
                    f"{entry.request[1]}): a new operation needs a new key"
                )
            entry.done.wait()
            if entry.response is not None:
                return entry.response
            # the first attempt was not final (a 5xx, or credentials refused): run again
        return self._first(key, entry, call)

    def _first(self, key: str, entry: _Entry, call: Callable[[], Response]) -> Response:
        response: Response | None = None
        try:
            response = call()
            return response
        finally:
            with self._lock:
                if response is not None and response.status < 500 and response.status not in _NOT_FINAL:
                    entry.response = response
                    entry.expires = self.clock() + self.lifetime_s
                    self._entries.move_to_end(key)
                elif self._entries.get(key) is entry:
                    del self._entries[key]
            entry.done.set()

    def _expire(self) -> None:
        """Drop expired answers from the front (answers are kept in the order they became
        final, which is the order they expire in), then the oldest beyond :attr:`max_keys`."""
        now = self.clock()
        while self._entries:
            oldest = next(iter(self._entries))
            entry = self._entries[oldest]
            if entry.response is None or entry.expires > now:
                break
            del self._entries[oldest]
        while len(self._entries) > self.max_keys:
            oldest = next(iter(self._entries))
            if self._entries[oldest].response is None:  # still running: keep it
                break
            del self._entries[oldest]
