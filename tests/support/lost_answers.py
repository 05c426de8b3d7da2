"""A loopback TCP proxy that can lose a server's answer: the request reaches the server, the
server answers (so whatever it did has happened), and the client's connection is closed
without a byte of the answer -- a network that failed at the worst moment, on demand.

No timeouts are involved: the client sees its connection end the moment the server's
first bytes come back, which is what makes a test of "the commit may or may not have
landed" deterministic (a tiny socket timeout is not: a fast server answers within it).
"""

from __future__ import annotations

import socket
import threading
from typing import Any


class AnswerLosingProxy:
    """Forwards ``127.0.0.1:<port>`` to ``upstream``; after :meth:`lose_next_answer`, the next
    answer coming back is dropped and its client connection closed (:attr:`lost` is set)."""

    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self._upstream = (upstream_host, upstream_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        # accept() wakes every 50 ms to see close(): closing a socket another thread blocks
        # in does not wake it, and its descriptor, reused by the next socket opened (another
        # test's server), would be accepted on by this thread
        self._listener.settimeout(0.05)
        self._closed = threading.Event()
        self.port: int = self._listener.getsockname()[1]
        self._armed = threading.Event()
        #: with :meth:`lose_answer_to`: only the answer on the connection whose request held
        #: the first marker, then the next marker's, and so on
        self._markers: list[bytes] = []
        self._marked: set[int] = set()
        self.lost = threading.Event()
        self._refuse_after_loss = False
        self._forward_after_loss: str | None = None
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def lose_next_answer(self, *, then_refuse: bool = False, then_forward_to: str | None = None) -> None:
        """Drop the next answer. At that moment, with ``then_refuse``, also stop listening, so
        the client's next connection is refused (the server went away after answering); with
        ``then_forward_to`` (``http://host:port``), send the next connections there instead
        (the server was restarted, and forgot what it kept in memory)."""
        self.lost.clear()
        self._refuse_after_loss = then_refuse
        self._forward_after_loss = then_forward_to
        self._armed.set()

    def lose_answer_to(self, *markers: bytes, **then: Any) -> None:
        """Lose the next answer to a request holding ``markers[0]`` (a Thrift call's method
        name, an HTTP request line: the calls before it are answered), then the next to one
        holding ``markers[1]``...; ``then`` as for :meth:`lose_next_answer`."""
        self._markers = list(markers)
        self.lose_next_answer(**then)

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue  # look at _closed again
            except OSError:
                return  # closed
            if self._closed.is_set():
                client.close()
                return
            try:
                server = socket.create_connection(self._upstream)
            except OSError:
                client.close()  # the upstream is gone: the client sees its connection end
                continue
            with self._lock:
                self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, False, id(client)), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, True, id(client)), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, answers: bool, pair: int) -> None:
        try:
            while data := source.recv(65536):
                if not answers and self._markers and self._markers[0] in data:
                    self._marked.add(pair)  # a client waits for each answer: the next one is this call's
                if answers and self._armed.is_set() and (not self._markers or pair in self._marked):
                    self._marked.discard(pair)
                    if self._markers:
                        self._markers.pop(0)
                    if not self._markers:
                        self._armed.clear()
                        if self._refuse_after_loss:
                            self._stop_listening()
                        if self._forward_after_loss:
                            host, port = self._forward_after_loss.removeprefix("http://").split(":")
                            self._upstream = (host, int(port))
                        self.lost.set()
                    break  # the answer is dropped
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _stop_listening(self) -> None:
        """Refuse new connections from now on: a shut-down listening socket stops listening
        (Linux), and the accept loop's ``accept`` fails and ends it."""
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def close(self) -> None:
        self._closed.set()
        self._accepting.join(5)
        self._listener.close()
        with self._lock:
            for s in self._sockets:
                s.close()

    def __enter__(self) -> AnswerLosingProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
