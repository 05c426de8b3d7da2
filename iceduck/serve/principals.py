"""``iceduck serve --principals FILE``: who may call the server, and what each may do.

The model follows Polaris where it fits: *principals* (who calls: a static token or OAuth2
client credentials) hold *roles*, and a role holds *grants*, each a list of privileges on
a securable: the catalog, a namespace (and everything below it) or a table or view.
Polaris puts two levels of roles between a principal and a privilege (principal roles,
then catalog roles) because one Polaris serves many catalogs; one ``iceduck serve`` serves
one, so one level is enough. Its privileges are coarser than Polaris's (``read`` for
``TABLE_READ_DATA``/``NAMESPACE_LIST``..., ``write`` for ``TABLE_WRITE_DATA``...), and grants
change by editing the file and reloading it, not through a management API::

    [principals.etl]
    client-id = "etl"                 # OAuth2 client credentials for /v1/oauth/tokens
    client-secret-sha256 = "9f86d0..."  # or client-secret = "..." (kept out of the file is better)
    roles = ["engineer"]

    [principals.notebook]
    token = "..."                     # a static bearer token (or token-sha256 = "...")
    roles = ["analyst"]
    expires = 2027-01-01T00:00:00Z    # optional: refused (401) from then on

    [roles.analyst]
    grants = [{ namespace = "sales", privileges = ["read"] }]

    [roles.engineer]
    grants = [{ catalog = true, privileges = ["read", "write", "create", "drop"] }]

A mistake (an unknown privilege or key, a duplicate name, a role no one defines, a grant on
a namespace that does not exist) refuses the whole file with its line and the reason: a
file half understood is never served. The secrets are kept as SHA-256 digests only.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import re
import threading
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iceduck.catalog.base import Namespace
from iceduck.errors import UserError

#: the privileges, and what each implies (``admin`` every other; ``write`` ``read``: a
#: commit is built on a loaded table)
PRIVILEGES: Mapping[str, frozenset[str]] = {
    "read": frozenset({"read"}),
    "write": frozenset({"write", "read"}),
    "create": frozenset({"create"}),
    "drop": frozenset({"drop"}),
    "admin": frozenset({"admin", "read", "write", "create", "drop"}),
}

_PRINCIPAL_KEYS = frozenset(
    {"token", "token-sha256", "client-id", "client-secret", "client-secret-sha256", "roles", "expires"}
)
_GRANT_TARGETS = ("catalog", "namespace", "table")


@dataclass(frozen=True)
class Securable:
    """What a grant is on: the catalog (``namespace == ()`` and no ``name``), a namespace,
    or a table or view (``name``; tables and views share one namespace of names)."""

    namespace: Namespace = ()
    name: str | None = None

    def covers(self, namespace: Namespace, name: str | None) -> bool:
        """Whether a grant on this applies to ``namespace`` (and the object ``name`` in it)."""
        if self.name is not None:
            return name is not None and self.namespace == namespace and self.name == name
        return namespace[: len(self.namespace)] == self.namespace

    def related(self, namespace: Namespace) -> bool:
        """Whether ``namespace`` is then seen: it holds this (a table's namespace or one of
        its parents, the path to it), or, for a namespace grant, lies below it."""
        if self.name is not None:
            return self.namespace[: len(namespace)] == namespace
        n = min(len(namespace), len(self.namespace))
        return namespace[:n] == self.namespace[:n]

    def shown(self) -> str:
        if self.name is not None:
            return f"table {'.'.join((*self.namespace, self.name))}"
        return f"namespace {'.'.join(self.namespace)}" if self.namespace else "the catalog"


@dataclass(frozen=True)
class Grant:
    on: Securable
    #: the privileges granted, implied ones included
    privileges: frozenset[str]


@dataclass(frozen=True)
class Principal:
    name: str
    roles: tuple[str, ...]
    #: SHA-256 hex digest of the static bearer token, if the principal has one
    token_sha256: str | None = None
    client_id: str | None = None
    #: SHA-256 hex digest of the OAuth2 client secret
    secret_sha256: str | None = None
    expires: datetime.datetime | None = None

    def fingerprint(self) -> str:
        """Changes whenever the principal's credentials change: tokens issued before a
        reload that changed them are revoked. (Grants need no such care: every request is
        decided on the grants in force.)"""
        return sha256(f"{self.token_sha256}|{self.client_id}|{self.secret_sha256}")


@dataclass(frozen=True)
class Policy:
    """One parsed principals file: immutable, so a reload swaps one reference and a request
    decides against one whole version, never half of each."""

    principals: Mapping[str, Principal]
    #: role name -> its grants
    roles: Mapping[str, tuple[Grant, ...]]

    def grants_of(self, principal: Principal) -> tuple[Grant, ...]:
        return tuple(g for role in principal.roles for g in self.roles.get(role, ()))

    def by_token(self, token: str) -> Principal | None:
        digest = sha256(token)
        return next((p for p in self.principals.values() if p.token_sha256 == digest), None)

    def by_client(self, client_id: str, secret: str) -> Principal | None:
        digest = sha256(secret)
        for p in self.principals.values():
            if p.client_id == client_id and p.secret_sha256 is not None:
                return p if _same(p.secret_sha256, digest) else None
        return None

    @property
    def has_clients(self) -> bool:
        return any(p.client_id is not None for p in self.principals.values())


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def parse_policy(text: str, source: str, namespace_exists: Callable[[Namespace], bool]) -> Policy:
    """The principals file ``text`` (read from ``source``); a :class:`UserError` naming the
    file, the line and the reason for anything wrong in it."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"principals file {source} is not valid TOML: {e}") from None
    where = _Locator(text, source)
    unknown = sorted(set(document) - {"principals", "roles"})
    if unknown:
        raise where.error(unknown[0], f"unknown table [{unknown[0]}]: use [principals.NAME] and [roles.NAME]")
    roles = {
        name: _grants(name, value, where, namespace_exists)
        for name, value in _tables(document, "roles", where)
    }
    principals = {
        name: _principal(name, value, where, roles) for name, value in _tables(document, "principals", where)
    }
    _check_unique_credentials(principals, where)
    return Policy(principals, roles)


def _tables(document: dict[str, Any], key: str, where: _Locator) -> list[tuple[str, dict[str, Any]]]:
    value = document.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise where.error(key, f"{key} must be tables: [{key}.NAME]")
    return list(value.items())


def _principal(name: str, entry: dict[str, Any], where: _Locator, roles: Mapping[str, Any]) -> Principal:
    section = f"principals.{name}"
    unknown = sorted(set(entry) - _PRINCIPAL_KEYS)
    if unknown:
        raise where.error(section, f"principal {name!r}: unknown key {unknown[0]!r}", unknown[0])
    for key in _PRINCIPAL_KEYS - {"roles", "expires"}:
        if key in entry and (not isinstance(entry[key], str) or not entry[key]):
            raise where.error(section, f"principal {name!r}: {key} must be a non-empty string", key)
    token = _digest(entry, "token", section, where)
    secret = _digest(entry, "client-secret", section, where)
    client_id = entry.get("client-id")
    if (client_id is None) != (secret is None):
        raise where.error(section, f"principal {name!r}: client-id and client-secret go together", "client")
    if token is None and client_id is None:
        raise where.error(
            section, f"principal {name!r} has no credentials: give token or client-id and client-secret"
        )
    held = entry.get("roles", [])
    if not isinstance(held, list) or not all(isinstance(r, str) for r in held):
        raise where.error(section, f"principal {name!r}: roles must be a list of role names", "roles")
    for role in held:
        if role not in roles:
            raise where.error(section, f"principal {name!r}: role {role!r} is not defined in [roles]", role)
    expires = entry.get("expires")
    if expires is not None:
        expires = _instant(expires, name, section, where)
    return Principal(name, tuple(held), token, client_id, secret, expires)


def _digest(entry: dict[str, Any], key: str, section: str, where: _Locator) -> str | None:
    plain, hashed = entry.get(key), entry.get(f"{key}-sha256")
    if plain is not None and hashed is not None:
        raise where.error(section, f"give {key} or {key}-sha256, not both", key)
    if hashed is not None:
        if not re.fullmatch(r"[0-9a-fA-F]{64}", hashed):
            raise where.error(section, f"{key}-sha256 must be 64 hexadecimal digits", f"{key}-sha256")
        return str(hashed).lower()
    return None if plain is None else sha256(plain)


def _instant(value: Any, name: str, section: str, where: _Locator) -> datetime.datetime:
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return datetime.datetime(value.year, value.month, value.day, tzinfo=datetime.UTC)
    raise where.error(
        section,
        f"principal {name!r}: expires must be a date or a time with its offset (2027-01-01T00:00:00Z)",
        "expires",
    )


def _grants(
    role: str, entry: dict[str, Any], where: _Locator, namespace_exists: Callable[[Namespace], bool]
) -> tuple[Grant, ...]:
    section = f"roles.{role}"
    unknown = sorted(set(entry) - {"grants"})
    if unknown:
        raise where.error(
            section, f"role {role!r}: unknown key {unknown[0]!r} (a role holds grants)", unknown[0]
        )
    grants = entry.get("grants", [])
    if not isinstance(grants, list) or not all(isinstance(g, dict) for g in grants):
        raise where.error(
            section, f"role {role!r}: grants must be a list of {{ on, privileges }} tables", "grants"
        )
    return tuple(_grant(role, g, section, where, namespace_exists) for g in grants)


def _grant(
    role: str,
    grant: dict[str, Any],
    section: str,
    where: _Locator,
    namespace_exists: Callable[[Namespace], bool],
) -> Grant:
    unknown = sorted(set(grant) - {*_GRANT_TARGETS, "privileges"})
    if unknown:
        raise where.error(section, f"role {role!r}: unknown grant key {unknown[0]!r}", unknown[0])
    targets = [t for t in _GRANT_TARGETS if t in grant]
    if len(targets) != 1:
        raise where.error(
            section,
            f"role {role!r}: a grant is on exactly one of catalog = true, namespace = ..., table = ...",
            "privileges",
        )
    on = _securable(targets[0], grant[targets[0]], role, section, where)
    privileges = grant.get("privileges")
    if not isinstance(privileges, list) or not privileges or not all(isinstance(p, str) for p in privileges):
        raise where.error(section, f"role {role!r}: privileges must be a non-empty list", "privileges")
    implied: set[str] = set()
    for privilege in privileges:
        if privilege not in PRIVILEGES:
            raise where.error(
                section,
                f"role {role!r}: unknown privilege {privilege!r} (one of {', '.join(PRIVILEGES)})",
                f'"{privilege}"',
            )
        implied |= PRIVILEGES[privilege]
    if on.namespace and not namespace_exists(on.namespace):
        raise where.error(
            section,
            f"role {role!r}: grant on namespace {'.'.join(on.namespace)}, which does not exist",
            ".".join(on.namespace),
        )
    return Grant(on, frozenset(implied))


def _securable(kind: str, value: Any, role: str, section: str, where: _Locator) -> Securable:
    if kind == "catalog":
        if value is not True:
            raise where.error(section, f"role {role!r}: a catalog grant is catalog = true", "catalog")
        return Securable()
    if isinstance(value, str):
        parts = tuple(value.split("."))
    elif isinstance(value, list) and all(isinstance(p, str) for p in value):
        parts = tuple(value)  # levels that hold dots themselves: ["a.b", "c"]
    else:
        raise where.error(section, f"role {role!r}: {kind} must be a dotted name or a list of levels", kind)
    if any(not p for p in parts) or (kind == "table" and len(parts) < 2):
        raise where.error(section, f"role {role!r}: {kind} {value!r} is not a valid {kind} name", kind)
    if kind == "table":
        return Securable(parts[:-1], parts[-1])
    return Securable(parts)


def _check_unique_credentials(principals: Mapping[str, Principal], where: _Locator) -> None:
    """Two principals may not share a token or a client id: a caller is one principal."""
    seen: dict[str, str] = {}
    for p in principals.values():
        for kind, value in (("token", p.token_sha256), ("client-id", p.client_id)):
            if value is None:
                continue
            other = seen.setdefault(f"{kind}:{value}", p.name)
            if other != p.name:
                raise where.error(
                    f"principals.{p.name}", f"principals {other!r} and {p.name!r} have the same {kind}", kind
                )


class _Locator:
    """Finds the line of a mistake: tomllib gives lines for syntax errors only."""

    def __init__(self, text: str, source: str) -> None:
        self.lines = text.splitlines()
        self.source = source

    def error(self, section: str, reason: str, needle: str | None = None) -> UserError:
        return UserError(f"principals file {self.source}, line {self.line(section, needle)}: {reason}")

    def line(self, section: str, needle: str | None) -> int:
        start = self._header(section)
        if needle is None:
            return start or 1
        for number in range(start + 1, len(self.lines) + 1):  # the keys after the header
            text = self.lines[number - 1].split("#", 1)[0]
            if start and text.lstrip().startswith("["):
                break
            if needle in text:
                return number
        return start or 1

    def _header(self, section: str) -> int:
        head, _, name = section.partition(".")
        pattern = (
            re.compile(rf"^\s*\[\s*{re.escape(head)}\s*\.\s*\"?{re.escape(name)}\"?\s*\]") if name else None
        )
        for number, text in enumerate(self.lines, start=1):
            if pattern is not None and pattern.match(text):
                return number
            if pattern is None and re.match(rf"^\s*\[\s*{re.escape(head)}\b", text):
                return number
        return 0


class PrincipalsFile:
    """The principals file a server was started with, and its current :class:`Policy`.

    Read at start (a bad file stops the server from starting) and again on
    :meth:`reload` (``SIGHUP``, or ``POST /v1/iceduck/principals/reload`` by a catalog
    admin). A reload parses the whole new file before it replaces the policy in one
    assignment; a file that does not parse leaves the old policy serving, so a reload
    never opens access while it happens, nor after a botched edit.
    """

    def __init__(self, path: Path, namespace_exists: Callable[[Namespace], bool]) -> None:
        self.path = path
        self._namespace_exists = namespace_exists
        self._lock = threading.Lock()
        self.policy = self._read()

    def _read(self) -> Policy:
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError as e:
            raise UserError(f"principals file {self.path}: {e.strerror}") from None
        return parse_policy(text, str(self.path), self._namespace_exists)

    def reload(self) -> Policy:
        """The new policy, now in force; a :class:`UserError` (the old one still serves)."""
        with self._lock:
            policy = self._read()
            self.policy = policy
            return policy
