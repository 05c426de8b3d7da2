"""A clock for the product's ``clock`` seams (token lifetimes, say): it stands still until a
test advances it, so "after the token expired" is a step of the test, not a wait."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class SteppedClock:
    """Seconds, like :func:`time.monotonic`, moving only by :meth:`advance`; thread safe,
    as the server that reads it answers on its own threads."""

    def __init__(self, start: float = 1_000.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a monotonic clock never goes back")
        with self._lock:
            self._now += seconds


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Return once ``condition()`` holds, checking it every 50 ms; fail after ``timeout``
    seconds with ``what`` did not happen. For time kept by another process (a JVM's token
    refresh), where no clock can be handed in: a bound, never a fixed wait."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {timeout} s"
        time.sleep(0.05)
