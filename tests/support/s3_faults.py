"""An S3 endpoint that fails on demand: :class:`~tests.support.latency_proxy.LatencyProxy`
(no delay) in front of moto, with :class:`Faults` a test sets.

A rule names a method, a pattern searched in the request's path (``/bucket/key``) and how
many matching requests it spoils (``times``; None: every one until :meth:`Faults.clear`).
What a spoiled request gets (:data:`KINDS`):

* ``500`` -- S3's ``InternalError`` (the request never reaches moto);
* ``503`` -- a bare 503 without a body, as a load balancer in front of the store answers;
* ``slowdown`` -- S3's ``503 SlowDown`` throttling error;
* ``hang`` -- the request is forwarded (so a PUT lands), and its answer held until the test
  releases it (:meth:`Faults.release`, at teardown): the client's request timeout fires;
* ``cut`` -- the request is forwarded and the answer's head sent with its full
  ``Content-Length``, then half the body, then the connection closed; an answer without
  a body (a PUT's) is not sent at all: the store acted, the connection just ends.

No sleeps: a held answer waits on an ``Event``. :attr:`Faults.spoiled` records each
request that met a rule, so a test can check its fault was met (a test whose fault never
fired tests nothing).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from tests.support.latency_proxy import LatencyProxy

#: the faults a rule may inject
KINDS = ("500", "503", "slowdown", "hang", "cut")

#: the faults answered with an error status instead of the store's answer: (status, reason, S3 code)
ERRORS: dict[str, tuple[int, str, str]] = {
    "500": (500, "Internal Server Error", "InternalError"),
    "503": (503, "Service Unavailable", ""),
    "slowdown": (503, "Slow Down", "SlowDown"),
}

_MESSAGES = {
    "InternalError": "We encountered an internal error. Please try again.",
    "SlowDown": "Please reduce your request rate.",
}


@dataclass
class Rule:
    kind: str
    method: str
    pattern: re.Pattern[str]
    #: how many more requests it spoils (None: all)
    left: int | None


@dataclass
class Faults:
    """The rules in effect, and what they spoiled (a lock: requests arrive on many threads)."""

    rules: list[Rule] = field(default_factory=list)
    #: ``(kind, method, path)`` of each spoiled request, in order
    spoiled: list[tuple[str, str, str]] = field(default_factory=list)
    #: set at teardown: every held answer is let go (its connection then closes)
    released: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, kind: str, method: str, pattern: str, times: int | None = 1) -> None:
        """Spoil the next ``times`` requests ``method`` whose path matches ``pattern``."""
        if kind not in KINDS:
            raise ValueError(f"unknown fault {kind!r}: one of {', '.join(KINDS)}")
        with self._lock:
            self.rules.append(Rule(kind, method.upper(), re.compile(pattern), times))

    def clear(self) -> None:
        """No more faults (the record of the spoiled requests stays)."""
        with self._lock:
            self.rules.clear()

    def reset(self) -> None:
        """No faults, and no record of earlier ones (a fixture shared by several tests)."""
        with self._lock:
            self.rules.clear()
            self.spoiled.clear()

    def release(self) -> None:
        self.clear()
        self.released.set()

    def take(self, method: str, path: str) -> str | None:
        """The fault this request meets, counted, or None."""
        with self._lock:
            for rule in self.rules:
                if rule.method == method and rule.pattern.search(path) and rule.left != 0:
                    if rule.left is not None:
                        rule.left -= 1
                    self.spoiled.append((rule.kind, method, path))
                    return rule.kind
        return None

    @staticmethod
    def refusal(
        kind: str | None, method: str, path: str
    ) -> tuple[int, str, list[tuple[str, str]], bytes] | None:
        """The error answer of fault ``kind`` (status, reason, headers, body), or None when
        the fault is not an error answer: S3's XML error document (none for a HEAD, or for
        a bare 503)."""
        if kind not in ERRORS:
            return None
        status, reason, code = ERRORS[kind]
        body = b""
        if code and method != "HEAD":
            key = path.split("?", 1)[0].lstrip("/").partition("/")[2]
            body = (
                '<?xml version="1.0" encoding="UTF-8"?>\n'
                f"<Error><Code>{code}</Code><Message>{_MESSAGES[code]}</Message>"
                f"<Key>{key}</Key><RequestId>fault-proxy</RequestId></Error>"
            ).encode()
        return status, reason, [("Content-Type", "application/xml")], body

    def met(self, kind: str | None = None) -> list[tuple[str, str, str]]:
        """The spoiled requests (of ``kind``)."""
        with self._lock:
            return [s for s in self.spoiled if kind is None or s[0] == kind]


@contextmanager
def fault_proxy(upstream: str) -> Iterator[tuple[LatencyProxy, Faults]]:
    """A proxy to ``upstream`` spoiling what its :class:`Faults` say, for the block; held
    answers are released before it stops."""
    faults = Faults()
    proxy = LatencyProxy(upstream, 0.0, faults=faults)
    proxy.start()
    try:
        yield proxy, faults
    finally:
        faults.release()
        proxy.stop()
