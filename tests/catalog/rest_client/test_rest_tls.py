"""``https://`` catalogs: ``iceduck serve`` over TLS with a certificate a private CA signed
(:mod:`tests.support.tls`). The client verifies it with the system's trusted roots
(:func:`ssl.create_default_context`) plus the CA file the ``ssl.ca-cert`` property (or
PyIceberg's ``ssl.cabundle``) names: untrusted, it is one clear error naming the catalog;
trusted, every request goes through."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.serve.server import CatalogServer
from tests.support.rest import start_server
from tests.support.tls import Pki, TlsUnavailable, private_ca


@pytest.fixture(scope="module")
def pki() -> Pki:
    try:
        return private_ca()
    except TlsUnavailable as e:
        pytest.skip(str(e))


@pytest.fixture
def tls_server(tmp_path: Path, pki: Pki) -> Iterator[CatalogServer]:
    server = start_server(tmp_path, tls=pki.server_context())
    yield server
    server.stop()


def _create_insert_select(con: iceduck.Connection) -> None:
    cur = con.cursor()
    cur.execute("CREATE NAMESPACE s")
    cur.execute("CREATE TABLE s.t (id bigint, name varchar)")
    cur.execute("INSERT INTO s.t VALUES (1, 'a'), (2, NULL)")
    assert cur.execute("SELECT * FROM s.t ORDER BY id").fetchall() == [(1, "a"), (2, None)]


def test_the_system_store_alone_does_not_trust_a_private_ca(tls_server: CatalogServer) -> None:
    with pytest.raises(iceduck.OperationalError, match="TLS certificate not trusted") as info:
        iceduck.connect(catalog_uri=tls_server.url)
    assert tls_server.url in str(info.value)


@pytest.mark.parametrize("name", ["ssl.ca-cert", "ssl.cabundle"])
def test_the_ca_property_is_trusted(tls_server: CatalogServer, pki: Pki, name: str) -> None:
    with iceduck.connect(catalog_uri=tls_server.url, properties={name: str(pki.ca)}) as con:
        _create_insert_select(con)


def test_the_system_store_is_trusted_too(
    tls_server: CatalogServer, pki: Pki, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CA file is added to the system's roots, not put in their place: with the CA in the
    system store (``SSL_CERT_FILE``, which OpenSSL's default paths read) and the property
    naming an unrelated certificate, the server is still trusted."""
    monkeypatch.setenv("SSL_CERT_FILE", str(pki.ca))
    with iceduck.connect(catalog_uri=tls_server.url, properties={"ssl.ca-cert": str(pki.cert)}) as con:
        _create_insert_select(con)


def test_a_missing_or_unreadable_ca_file_is_named(tls_server: CatalogServer, tmp_path: Path) -> None:
    missing = tmp_path / "no-ca.pem"
    with pytest.raises(iceduck.Error, match=f"ssl.ca-cert names '{missing}', which is not a file"):
        iceduck.connect(catalog_uri=tls_server.url, properties={"ssl.ca-cert": str(missing)})
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    with pytest.raises(iceduck.Error, match=f"ssl.cabundle: cannot read CA certificates from {garbage}"):
        iceduck.connect(catalog_uri=tls_server.url, properties={"ssl.cabundle": str(garbage)})
