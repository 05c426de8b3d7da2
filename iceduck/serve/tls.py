"""The server's TLS context, built from a PEM certificate and key (``--tls-cert``/``--tls-key``).

Only the standard library's :mod:`ssl`: ``PROTOCOL_TLS_SERVER`` with TLS 1.2 as the oldest
version offered (RFC 8996 deprecates TLS 1.0 and 1.1: "MUST NOT be used"), OpenSSL's
default ciphers. Everything that can be wrong with the pair is found here, at start, and
named with the files: a missing or unreadable file, a file that is not PEM, a key that
does not match the certificate, a key behind a passphrase nobody gave. No message quotes
the files' contents (a key must never reach a log).

A key with a passphrase is read with the passphrase held in a file
(``--tls-key-password-file``, its first line): a passphrase on the command line would be
visible to every user of the machine in the process list. Without one, such a key is
refused at once (OpenSSL would otherwise stop and ask on the terminal).
"""

from __future__ import annotations

import ssl
from pathlib import Path

from iceduck.errors import UserError

_CERT_MARK = b"-----BEGIN CERTIFICATE-----"
_KEY_MARK = b"PRIVATE KEY-----"


class _NoPassphrase(UserError):
    """OpenSSL asked for a passphrase and none was given."""


def configured_context(
    cert: Path | None, key: Path | None, password_file: Path | None = None
) -> ssl.SSLContext | None:
    """The context of the ``--tls-*`` options, or None when none is given (plain HTTP)."""
    if cert is None and key is None:
        if password_file is not None:
            raise UserError("--tls-key-password-file needs --tls-cert and --tls-key")
        return None
    if cert is None or key is None:
        raise UserError("TLS needs both --tls-cert FILE and --tls-key FILE (PEM)")
    return server_context(
        cert.expanduser(), key.expanduser(), password_file.expanduser() if password_file else None
    )


def server_context(cert: Path, key: Path, password_file: Path | None = None) -> ssl.SSLContext:
    """A server-side context presenting ``cert`` (PEM, the chain after the leaf) with its
    private ``key`` (PEM); ``password_file`` holds the key's passphrase, if it has one."""
    if _CERT_MARK not in _read(cert, "certificate"):
        raise UserError(f"the TLS certificate {cert} is not PEM (no '-----BEGIN CERTIFICATE-----' line)")
    if _KEY_MARK not in _read(key, "key"):
        raise UserError(f"the TLS key {key} is not a PEM private key (no '-----BEGIN ...PRIVATE KEY-----')")
    password = _password(password_file) if password_file is not None else None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key, password=password if password is not None else _ask)
    except _NoPassphrase:
        raise UserError(
            f"the TLS key {key} is protected by a passphrase: give it in a file with --tls-key-password-file"
        ) from None
    except ssl.SSLError as e:
        raise UserError(_load_failure(cert, key, e, password is not None)) from None
    return context


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"the TLS {what} file {path} does not exist") from None
    except OSError as e:
        raise UserError(f"cannot read the TLS {what} file {path}: {e.strerror or e}") from None


def _password(path: Path) -> str:
    """The first line of ``path`` (a trailing newline is not part of a passphrase)."""
    lines = _read(path, "key passphrase").decode("utf-8", "replace").splitlines()
    if not lines or not lines[0]:
        raise UserError(f"the TLS key passphrase file {path} is empty")
    return lines[0]


def _ask() -> str:
    raise _NoPassphrase


def _load_failure(cert: Path, key: Path, error: ssl.SSLError, had_password: bool) -> str:
    """What OpenSSL's refusal means, naming the files (OpenSSL's reason codes, never the
    files' bytes)."""
    reason = error.reason or ""
    if reason == "KEY_VALUES_MISMATCH":
        return f"the TLS key {key} does not belong to the certificate {cert} (key values mismatch)"
    if had_password:  # OpenSSL says only "PEM lib" for a wrong passphrase
        return (
            f"the passphrase of --tls-key-password-file does not decrypt the TLS key {key} "
            "(or the key is damaged)"
        )
    detail = f"{error.library or 'SSL'}: {reason}" if reason else str(error.strerror or error)
    return f"cannot use the TLS certificate {cert} with the key {key} ({detail})"
