"""Small, valid table metadata files for catalog tests that need no engine."""

from __future__ import annotations

import gzip
import json
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any


def metadata_json(location: str, version_tag: int) -> dict[str, Any]:
    """A valid v2 metadata document with no snapshots; ``version_tag`` is stored as
    ``last-updated-ms`` so a test can tell which file a catalog loaded."""
    return {
        "format-version": 2,
        "table-uuid": str(uuid.UUID(int=version_tag)),
        "location": location,
        "last-sequence-number": 0,
        "last-updated-ms": version_tag,
        "last-column-id": 1,
        "current-schema-id": 0,
        "schemas": [
            {
                "type": "struct",
                "schema-id": 0,
                "fields": [{"id": 1, "name": "id", "required": True, "type": "long"}],
            }
        ],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": []}],
        "last-partition-id": 999,
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": {},
        "current-snapshot-id": -1,
        "refs": {},
        "snapshots": [],
        "snapshot-log": [],
        "metadata-log": [],
    }


def write_metadata(table_dir: Path, file_name: str, version_tag: int) -> Path:
    """Write ``table_dir/metadata/<file_name>`` (GZIP when the name says so)."""
    path = table_dir / "metadata" / file_name
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(metadata_json(str(table_dir), version_tag)).encode()
    path.write_bytes(gzip.compress(data) if ".gz" in file_name else data)
    return path


def open_at_once(open_catalog: Callable[[], Any], count: int = 6) -> list[Exception]:
    """Open (and close) a catalog from ``count`` threads released at the same instant, as
    processes opening a new database at once would; the errors they met."""
    barrier, errors = threading.Barrier(count), []

    def one() -> None:
        barrier.wait()
        try:
            open_catalog().close()
        except Exception as e:  # pragma: no cover - the failure being tested for
            errors.append(e)

    threads = [threading.Thread(target=one) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors
