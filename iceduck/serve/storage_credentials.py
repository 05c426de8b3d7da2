"""``iceduck serve --storage-credentials FILE``: the credentials the server vends, per prefix.

A catalog that vends credentials hands each table the ones for where it lies, as Polaris,
Unity Catalog and S3 Tables do: a reader of one bucket is not given the keys of another.
The operator writes them in the shape the REST spec sends them (``StorageCredential``: a
``prefix`` and its ``config``), as TOML::

    [[storage-credentials]]
    prefix = "s3://sales-bucket/"
    config = { "s3.access-key-id" = "...", "s3.secret-access-key" = "...",
               "s3.session-token" = "...", "s3.session-token-expires-at-ms" = "1767225600000" }

A table is vended the entry with the longest prefix its location starts with (spec:
"Clients should choose the most specific prefix"; the server gives only that one). The
file is read again when it changes, so rotated keys reach clients through
``loadCredentials`` (``GET .../tables/{table}/credentials``) without a restart.
"""

from __future__ import annotations

import os
import threading
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from iceduck.errors import UserError

KEY = "storage-credentials"


@dataclass(frozen=True)
class Credential:
    prefix: str
    config: dict[str, str]

    def json(self) -> dict[str, object]:
        return {"prefix": self.prefix, "config": dict(self.config)}


@dataclass
class CredentialsFile:
    """The file, read again whenever its modification time or size changes."""

    path: Path
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _stamp: tuple[int, int] | None = field(default=None, repr=False)
    _entries: list[Credential] = field(default_factory=list, repr=False)

    def entries(self) -> list[Credential]:
        try:
            stat = os.stat(self.path)
        except OSError as e:
            raise UserError(f"storage credentials file {self.path}: {e.strerror}") from None
        stamp = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            if stamp != self._stamp:
                self._entries = parse_credentials(self.path.read_text(encoding="utf-8"), str(self.path))
                self._stamp = stamp
            return list(self._entries)

    def for_location(self, location: str) -> Credential | None:
        """The entry with the longest prefix ``location`` starts with, or None."""
        matching = [c for c in self.entries() if location.startswith(c.prefix)]
        return max(matching, key=lambda c: len(c.prefix)) if matching else None


def parse_credentials(text: str, source: str) -> list[Credential]:
    """The entries of a credentials file; a :class:`UserError` naming what is wrong."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"storage credentials file {source} is not valid TOML: {e}") from None
    entries = document.get(KEY, [])
    if not isinstance(entries, list):
        raise UserError(f"storage credentials file {source}: [[{KEY}]] must be a list of tables")
    found: list[Credential] = []
    for number, entry in enumerate(entries, start=1):
        where = f"storage credentials file {source}, entry {number}"
        if not isinstance(entry, dict) or not isinstance(entry.get("prefix"), str) or not entry["prefix"]:
            raise UserError(f"{where}: needs a prefix (a location such as s3://bucket/path/)")
        config = entry.get("config")
        if not isinstance(config, dict) or not config:
            raise UserError(f"{where} ({entry['prefix']}): needs a config table of storage properties")
        found.append(Credential(entry["prefix"], {str(k): str(v) for k, v in config.items()}))
    return found
