"""``https://`` catalogs: ``iceduck serve``'s socket wrapped in TLS with a certificate made
for the test (``openssl``). The client verifies it with the system's trusted roots
(:func:`ssl.create_default_context`): untrusted, it is one clear error naming the catalog;
trusted (``SSL_CERT_FILE``, which OpenSSL's default paths read), every request goes through."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.serve.server import CatalogServer
from tests.catalog.rest_client.conftest import serve


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[CatalogServer, Path]]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed: it makes the test's certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    running = serve(tmp_path)
    server = running.server
    server.shutdown()  # rewrap the listening socket before serving again
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.start()
    yield server, cert
    server.stop()


def test_https_is_verified(tls_server: tuple[CatalogServer, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    server, cert = tls_server
    uri = server.url.replace("http://", "https://")
    with pytest.raises(iceduck.OperationalError, match="TLS certificate not trusted") as info:
        iceduck.connect(catalog_uri=uri)
    assert uri in str(info.value)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    cur = iceduck.connect(catalog_uri=uri).cursor()
    cur.execute("CREATE NAMESPACE s")
    cur.execute("CREATE TABLE s.t (id bigint)")
    cur.execute("INSERT INTO s.t VALUES (1)")
    assert cur.execute("SELECT * FROM s.t").fetchall() == [(1,)]
