"""``iceduck serve --tls-cert --tls-key``: HTTPS with a certificate a private CA signed
(:mod:`tests.support.tls`).

The server: a bad or mismatched pair stops ``iceduck serve`` at start with the files named;
a client speaking plain HTTP, or only TLS 1.1, or nothing at all, is refused or waited for
in its own thread while everyone else is served. The clients: PyIceberg (its ``ssl`` >
``cabundle`` property) and DuckDB's Iceberg extension (httpfs's ``ca_cert_file``) create,
write and read tables over HTTPS (iceduck's own client: tests/catalog/rest_client/test_rest_tls.py).
"""

from __future__ import annotations

import logging
import os
import re
import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import iceduck
from iceduck.serve.server import CatalogServer
from tests.support.rest import start_server
from tests.support.tls import PASSPHRASE, Pki, TlsUnavailable, private_ca

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pki() -> Pki:
    try:
        return private_ca()
    except TlsUnavailable as e:
        pytest.skip(str(e))


@pytest.fixture
def server(pki: Pki, warehouse: Path) -> Iterator[CatalogServer]:
    served = start_server(warehouse, tls=pki.server_context())
    yield served
    served.stop()


def _client(pki: Pki, url: str) -> iceduck.Connection:
    return iceduck.connect(catalog_uri=url, properties={"ssl.ca-cert": str(pki.ca)})


def _list_namespaces(pki: Pki, url: str) -> list[tuple[str, ...]]:
    with _client(pki, url) as con:
        return con.execute("SHOW NAMESPACES").fetchall()


def test_the_url_is_https(server: CatalogServer) -> None:
    assert server.url.startswith("https://127.0.0.1:")


def test_plain_http_to_the_tls_port_is_closed_and_logged(
    server: CatalogServer, pki: Pki, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="iceduck.rest")
    host, port = server.server_address[:2]
    with socket.create_connection((str(host), port), timeout=30) as plain:
        plain.sendall(b"GET /v1/config HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = _read_all(plain)
    assert b"HTTP/1." not in answer  # no HTTP answer in the clear
    assert any("plain HTTP sent to the TLS port" in r.getMessage() for r in caplog.records), caplog.text
    assert not [r for r in caplog.records if r.exc_info], caplog.text  # a line, not a traceback
    assert _list_namespaces(pki, server.url) == []  # the server still serves the others


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    try:
        while chunk := sock.recv(4096):
            data += chunk
    except ConnectionResetError:
        pass
    return data


def test_a_silent_client_does_not_hold_up_the_others(server: CatalogServer, pki: Pki) -> None:
    """A client that connects and never starts its handshake: the accept loop only wraps the
    socket, so the next client's handshake and request go through at once. (With the
    handshake in the accept loop, the second client's connect times out.)"""
    host, port = server.server_address[:2]
    with socket.create_connection((str(host), port), timeout=30):
        con = iceduck.connect(
            catalog_uri=server.url,
            properties={"ssl.ca-cert": str(pki.ca), "rest.client.connection-timeout-ms": "5000"},
        )
        with con:
            con.execute("CREATE NAMESPACE while_silent")
            assert con.execute("SHOW NAMESPACES").fetchall() == [("while_silent",)]


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion.TLSv1_1 is deprecated:DeprecationWarning")
def test_a_tls_1_1_client_is_refused(server: CatalogServer, pki: Pki) -> None:
    client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client.load_verify_locations(pki.ca)
    try:
        client.minimum_version = ssl.TLSVersion.TLSv1_1
        client.maximum_version = ssl.TLSVersion.TLSv1_1
        client.set_ciphers("DEFAULT:@SECLEVEL=0")  # OpenSSL 3 offers 1.1 only at level 0
    except (ValueError, ssl.SSLError) as e:
        pytest.skip(f"the local OpenSSL cannot make a TLS 1.1 client: {e}")
    host, port = server.server_address[:2]
    with socket.create_connection((str(host), port), timeout=30) as raw:
        with pytest.raises(ssl.SSLError) as info:
            client.wrap_socket(raw, server_hostname="127.0.0.1")
    if info.value.reason == "NO_PROTOCOLS_AVAILABLE":  # refused by the client itself, never sent
        pytest.skip(f"the local OpenSSL will not offer TLS 1.1 ({info.value})")
    assert info.value.reason in ("TLSV1_ALERT_PROTOCOL_VERSION", "UNSUPPORTED_PROTOCOL"), info.value
    assert _list_namespaces(pki, server.url) == []


# -- the command line --------------------------------------------------------------------------


def _serve(tmp_path: Path, *options: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "iceduck", "serve", str(tmp_path / "wh"), "--port", "0", *options],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_serve_with_a_key_behind_a_passphrase(tmp_path: Path, pki: Pki) -> None:
    process = _serve(
        tmp_path,
        *("--tls-cert", str(pki.cert), "--tls-key", str(pki.encrypted_key)),
        *("--tls-key-password-file", str(pki.passphrase_file)),
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"at (https://127\.0\.0\.1:\d+)", line)
        assert found, line
        assert _list_namespaces(pki, found.group(1)) == []
    finally:
        process.terminate()
        process.wait(timeout=30)


def _refused(tmp_path: Path, *options: str) -> str:
    """``iceduck serve``'s message for ``options`` it refuses to start with (exit 1)."""
    process = _serve(tmp_path, *options)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 1, err
    assert "Traceback" not in err, err
    assert err.startswith("Error: "), err
    return err


def test_a_key_that_is_not_the_certificates_is_refused(tmp_path: Path, pki: Pki) -> None:
    err = _refused(tmp_path, "--tls-cert", str(pki.cert), "--tls-key", str(pki.other_key))
    assert "key values mismatch" in err and str(pki.other_key) in err and str(pki.cert) in err
    assert not (tmp_path / "wh").exists()  # refused before the warehouse was made


def test_missing_and_non_pem_files_are_named(tmp_path: Path, pki: Pki) -> None:
    missing = tmp_path / "nowhere.pem"
    err = _refused(tmp_path, "--tls-cert", str(missing), "--tls-key", str(pki.key))
    assert f"the TLS certificate file {missing} does not exist" in err
    der = tmp_path / "cert.der"
    subprocess.run(["openssl", "x509", "-in", str(pki.cert), "-outform", "DER", "-out", str(der)], check=True)
    err = _refused(tmp_path, "--tls-cert", str(der), "--tls-key", str(pki.key))
    assert f"the TLS certificate {der} is not PEM" in err
    err = _refused(tmp_path, "--tls-cert", str(pki.cert), "--tls-key", str(pki.cert))
    assert f"the TLS key {pki.cert} is not a PEM private key" in err


def test_a_passphrase_is_asked_for_never_prompted(tmp_path: Path, pki: Pki) -> None:
    err = _refused(tmp_path, "--tls-cert", str(pki.cert), "--tls-key", str(pki.encrypted_key))
    assert f"the TLS key {pki.encrypted_key} is protected by a passphrase" in err
    assert "--tls-key-password-file" in err
    wrong = tmp_path / "wrong.txt"
    wrong.write_text("not " + PASSPHRASE)
    err = _refused(
        tmp_path,
        *("--tls-cert", str(pki.cert), "--tls-key", str(pki.encrypted_key)),
        *("--tls-key-password-file", str(wrong)),
    )
    assert f"does not decrypt the TLS key {pki.encrypted_key}" in err
    assert PASSPHRASE not in err


def test_half_a_pair_is_refused(tmp_path: Path, pki: Pki) -> None:
    err = _refused(tmp_path, "--tls-cert", str(pki.cert))
    assert "TLS needs both --tls-cert FILE and --tls-key FILE" in err
    err = _refused(tmp_path, "--tls-key", str(pki.key))
    assert "TLS needs both --tls-cert FILE and --tls-key FILE" in err


def test_no_message_shows_key_material(tmp_path: Path, pki: Pki) -> None:
    key_lines = [line for line in pki.key.read_text().splitlines() if line and "-----" not in line]
    for options in (
        ("--tls-cert", str(pki.key), "--tls-key", str(pki.key)),  # the key given as the certificate
        ("--tls-cert", str(pki.cert), "--tls-key", str(pki.other_key)),
    ):
        err = _refused(tmp_path, *options)
        assert not [line for line in key_lines if line in err], err


# -- other clients -------------------------------------------------------------------------------


def test_pyiceberg_over_https(server: CatalogServer, pki: Pki, monkeypatch: pytest.MonkeyPatch) -> None:
    """PyIceberg's ``ssl: {cabundle: FILE}`` becomes ``requests``' ``verify``, which
    ``REQUESTS_CA_BUNDLE``/``CURL_CA_BUNDLE`` override when set (requests' own rule): the
    test unsets them, as a user relying on the property must."""
    rest = pytest.importorskip("pyiceberg.catalog.rest")
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    catalog = rest.RestCatalog("tls", uri=server.url, ssl={"cabundle": str(pki.ca)})
    catalog.create_namespace("py")
    rows = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["a", "b", None])})
    table = catalog.create_table("py.t", schema=rows.schema)
    table.append(rows)
    read = catalog.load_table("py.t").scan().to_arrow().sort_by("id")
    assert read.to_pylist() == rows.to_pylist()
    with _client(pki, server.url) as con:
        assert con.execute("SELECT id, name FROM py.t ORDER BY id").fetchall() == [
            (1, "a"),
            (2, "b"),
            (3, None),
        ]
    with pytest.raises(Exception, match="CERTIFICATE_VERIFY_FAILED"):  # requests' own error type
        rest.RestCatalog("untrusting", uri=server.url)


def test_duckdb_over_https(server: CatalogServer, pki: Pki) -> None:
    """DuckDB's extension speaks HTTP through httpfs (curl): ``SET ca_cert_file`` makes it
    trust the CA (``SSL_CERT_FILE``/``CURL_CA_BUNDLE`` do not, checked on DuckDB 1.5.5)."""
    from tests.support.rest_duckdb import DuckRest, Step, duckdb_rest_unavailable
    from tests.support.scenario_peers import PeerError

    why = duckdb_rest_unavailable()
    if why is not None:
        pytest.skip(why)
    with pytest.raises(PeerError, match="SSL peer certificate"):
        DuckRest(server.url).run([Step("SHOW ALL TABLES")])
    trusting = DuckRest(server.url, setup=[f"SET ca_cert_file = '{pki.ca}'"])
    outcomes = trusting.run(
        [
            Step("CREATE SCHEMA r.duck"),
            Step("CREATE TABLE r.duck.t (id BIGINT, name VARCHAR)"),
            Step("INSERT INTO r.duck.t VALUES (1, 'a'), (2, NULL)"),
        ]
    )
    assert [o.error for o in outcomes] == [None, None, None]
    with _client(pki, server.url) as con:
        assert con.execute("SELECT * FROM duck.t ORDER BY id").fetchall() == [(1, "a"), (2, None)]
        con.execute("INSERT INTO duck.t VALUES (3, 'c')")
    (read,) = trusting.run([Step("SELECT * FROM r.duck.t ORDER BY id", query=True)])
    assert read.rows.to_pylist() == [
        {"id": 1, "name": "a"},
        {"id": 2, "name": None},
        {"id": 3, "name": "c"},
    ]
