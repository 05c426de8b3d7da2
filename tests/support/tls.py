"""A private certificate authority for the TLS tests, made once per test run with ``openssl``.

:func:`private_ca` makes, in a temporary folder removed at exit: a CA (``ca.pem``), a server
certificate it signed for ``127.0.0.1``/``localhost`` (``server.pem``, key ``server.key``),
the same key behind a passphrase (``server-encrypted.key``, passphrase in
``passphrase.txt``) and a key that belongs to no certificate (``other.key``). Elliptic-curve
keys (P-256): quick to make, and every client of the tests (Python, the JVM, DuckDB's
OpenSSL) speaks ECDSA. :func:`jvm_trust_store` adds the CA to a copy of the JDK's trusted
roots, for ``-Djavax.net.ssl.trustStore`` (a JVM reads it once, at start).
"""

from __future__ import annotations

import atexit
import shutil
import ssl
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from iceduck.serve.tls import server_context

PASSPHRASE = "correct horse"
#: the password of the JVM trust store (the JDK's own default, nothing secret is in it)
TRUST_STORE_PASSWORD = "changeit"
_SERVER_EXTENSIONS = (
    "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
    "basicConstraints=critical,CA:FALSE\n"
    "keyUsage=critical,digitalSignature\n"
    "extendedKeyUsage=serverAuth\n"
)


class TlsUnavailable(Exception):
    """``openssl`` (or, for Java, ``keytool``) is missing: the reason to skip."""


@dataclass(frozen=True)
class Pki:
    folder: Path

    @property
    def ca(self) -> Path:
        return self.folder / "ca.pem"

    @property
    def cert(self) -> Path:
        return self.folder / "server.pem"

    @property
    def key(self) -> Path:
        return self.folder / "server.key"

    @property
    def encrypted_key(self) -> Path:
        return self.folder / "server-encrypted.key"

    @property
    def passphrase_file(self) -> Path:
        return self.folder / "passphrase.txt"

    @property
    def other_key(self) -> Path:
        return self.folder / "other.key"

    def server_context(self) -> ssl.SSLContext:
        """The server's context, built as ``iceduck serve --tls-cert --tls-key`` builds it."""
        return server_context(self.cert, self.key)


_pki: Pki | None = None
_trust_store: Path | None = None


def private_ca() -> Pki:
    """The run's CA and server certificate (made on first call)."""
    global _pki
    if _pki is None:
        if shutil.which("openssl") is None:
            raise TlsUnavailable("openssl is not installed: it makes the tests' certificates")
        folder = Path(tempfile.mkdtemp(prefix="iceduck-tls-"))
        atexit.register(shutil.rmtree, folder, True)
        _make(Pki(folder))
        _pki = Pki(folder)
    return _pki


def _make(pki: Pki) -> None:
    folder = pki.folder
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl(
        "req", "-x509", *ec, "-days", "2", "-subj", "/CN=iceduck test CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-keyout", str(folder / "ca.key"), "-out", str(pki.ca),
    )  # fmt: skip
    csr = folder / "server.csr"
    _openssl("req", *ec, "-subj", "/CN=127.0.0.1", "-keyout", str(pki.key), "-out", str(csr))
    extensions = folder / "server.ext"
    extensions.write_text(_SERVER_EXTENSIONS)
    _openssl(
        "x509", "-req", "-in", str(csr), "-CA", str(pki.ca), "-CAkey", str(folder / "ca.key"),
        "-CAcreateserial", "-days", "2", "-extfile", str(extensions), "-out", str(pki.cert),
    )  # fmt: skip
    pki.passphrase_file.write_text(PASSPHRASE + "\n")
    _openssl(
        "pkey", "-in", str(pki.key), "-aes256", "-passout", f"file:{pki.passphrase_file}",
        "-out", str(pki.encrypted_key),
    )  # fmt: skip
    _openssl(
        "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", str(pki.other_key)
    )


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


def jvm_trust_store() -> Path:
    """A PKCS#12 trust store holding the JDK's trusted roots and the test CA (password
    :data:`TRUST_STORE_PASSWORD`): what ``-Djavax.net.ssl.trustStore`` names, the JDK's
    roots kept so the JVM still trusts what it trusted before (Maven Central, say)."""
    global _trust_store
    if _trust_store is None:
        pki = private_ca()
        keytool = shutil.which("keytool")
        if keytool is None:
            raise TlsUnavailable("keytool (the JDK's) is not installed: it makes the JVM's trust store")
        store = pki.folder / "truststore.p12"
        cacerts = Path(keytool).resolve().parents[1] / "lib" / "security" / "cacerts"
        common = ["-storetype", "PKCS12", "-storepass", TRUST_STORE_PASSWORD, "-noprompt"]
        if cacerts.is_file():
            _keytool(
                "-importkeystore", "-srckeystore", str(cacerts), "-srcstorepass", "changeit",
                "-destkeystore", str(store), "-deststoretype", "PKCS12",
                "-deststorepass", TRUST_STORE_PASSWORD, "-noprompt",
            )  # fmt: skip
        _keytool(
            "-importcert", "-alias", "iceduck-test-ca", "-file", str(pki.ca), "-keystore", str(store), *common
        )
        _trust_store = store
    return _trust_store


def jvm_trust_options() -> str:
    """The JVM options trusting the test CA besides the JDK's roots; empty (and the HTTPS
    tests of Java skip) where ``openssl`` or ``keytool`` is missing."""
    try:
        store = jvm_trust_store()
    except TlsUnavailable:
        return ""
    return f"-Djavax.net.ssl.trustStore={store} -Djavax.net.ssl.trustStorePassword={TRUST_STORE_PASSWORD}"


def _keytool(*args: str) -> None:
    subprocess.run(["keytool", *args], check=True, capture_output=True, timeout=120)
