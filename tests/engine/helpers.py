"""Hand-built Parquet files and scan plans for the engine's unit tests.

Files are written by DuckDB's ``COPY ... (FIELD_IDS {...})``, which stores Iceberg field
ids in the Parquet schema as Iceberg writers do; plans are built directly, without
manifests, so each test says exactly which deletes apply to which file.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from iceduck.engine.read import scan_to_arrow
from iceduck.formats.puffin import write_deletion_vectors
from iceduck.scan.tasks import DeleteFile, FileScanTask, ScanPlan
from iceduck.spec.deletion_vector import DeletionVector
from iceduck.spec.manifest import FileContent, FileFormat
from iceduck.spec.schema import Schema


def field_ids_option(ids: dict[str, Any]) -> str:
    """DuckDB's FIELD_IDS struct: ``{a: 1, s: {__duckdb_field_id: 2, x: 3}}``."""

    def render(value: Any) -> str:
        if isinstance(value, dict):
            return "{" + ", ".join(f'"{k}": {render(v)}' for k, v in value.items()) + "}"
        return str(value)

    return render(ids)


def write_parquet(con: Any, path: Path, select: str, field_ids: dict[str, Any] | None) -> Path:
    """Write ``select``'s rows to ``path``; ``field_ids=None`` writes no field ids."""
    options = "FORMAT parquet" + (f", FIELD_IDS {field_ids_option(field_ids)}" if field_ids else "")
    con.execute(f"COPY ({select}) TO '{path}' ({options})")
    return path


def row_count(con: Any, path: Path) -> int:
    return con.execute(f"SELECT count(*) FROM read_parquet('{path}')").fetchall()[0][0]


def data_task(
    con: Any,
    path: Path,
    *,
    sequence_number: int = 1,
    spec_id: int = 0,
    partition: tuple[Any, ...] = (),
    identity_values: dict[int, Any] | None = None,
    first_row_id: int | None = None,
    deletion_vector: DeleteFile | None = None,
    position_deletes: Sequence[DeleteFile] = (),
    equality_deletes: Sequence[DeleteFile] = (),
) -> FileScanTask:
    return FileScanTask(
        path=str(path),
        file_format=FileFormat.PARQUET,
        record_count=row_count(con, path),
        file_size_in_bytes=path.stat().st_size,
        spec_id=spec_id,
        partition=partition,
        data_sequence_number=sequence_number,
        first_row_id=first_row_id,
        identity_values=identity_values or {},
        deletion_vector=deletion_vector,
        position_deletes=tuple(position_deletes),
        equality_deletes=tuple(equality_deletes),
    )


def position_delete_file(
    con: Any, path: Path, rows: Iterable[tuple[str, int]], sequence_number: int = 2
) -> DeleteFile:
    """A v2 position delete file (``file_path`` 2147483546, ``pos`` 2147483545), sorted."""
    rows = sorted(rows)
    values = ", ".join(f"('{p}', {pos})" for p, pos in rows)
    select = f"SELECT file_path, pos::BIGINT AS pos FROM (VALUES {values}) AS t(file_path, pos) ORDER BY ALL"
    write_parquet(con, path, select, {"file_path": 2147483546, "pos": 2147483545})
    return DeleteFile(
        path=str(path),
        content=FileContent.POSITION_DELETES,
        file_format=FileFormat.PARQUET,
        sequence_number=sequence_number,
        record_count=len(rows),
        file_size_in_bytes=path.stat().st_size,
    )


def deletion_vectors(
    path: Path, vectors: dict[str, Iterable[int]], sequence_number: int = 2
) -> dict[str, DeleteFile]:
    """A Puffin file of deletion vectors; the DeleteFile of each referenced data file."""
    data, blobs = write_deletion_vectors(
        ((p, DeletionVector(list(v))) for p, v in vectors.items()), created_by="iceduck tests"
    )
    path.write_bytes(data)
    return {
        blob.properties["referenced-data-file"]: DeleteFile(
            path=str(path),
            content=FileContent.POSITION_DELETES,
            file_format=FileFormat.PUFFIN,
            sequence_number=sequence_number,
            record_count=int(blob.properties["cardinality"]),
            file_size_in_bytes=len(data),
            referenced_data_file=blob.properties["referenced-data-file"],
            content_offset=blob.offset,
            content_size_in_bytes=blob.length,
        )
        for blob in blobs
    }


def equality_delete_file(
    con: Any,
    path: Path,
    select: str,
    field_ids: dict[str, Any],
    equality_ids: Sequence[int],
    sequence_number: int = 2,
) -> DeleteFile:
    write_parquet(con, path, select, field_ids)
    return DeleteFile(
        path=str(path),
        content=FileContent.EQUALITY_DELETES,
        file_format=FileFormat.PARQUET,
        sequence_number=sequence_number,
        record_count=row_count(con, path),
        file_size_in_bytes=path.stat().st_size,
        equality_ids=tuple(equality_ids),
    )


def read_rows(con: Any, schema: Schema, tasks: Sequence[FileScanTask], **kwargs: Any) -> list[dict[str, Any]]:
    """All rows of the scan, sorted by their repr (scan order is not defined)."""
    table = scan_to_arrow(con, ScanPlan(schema, 1, tuple(tasks), **kwargs))
    return sorted(table.to_pylist(), key=repr)


def same_rows(actual: Sequence[dict[str, Any]], expected: Sequence[dict[str, Any]]) -> bool:
    """Equal as multisets, NaN equal to NaN."""
    return sorted(map(_normal, actual), key=repr) == sorted(map(_normal, expected), key=repr)


def _normal(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normal(v) for v in value]
    return value
