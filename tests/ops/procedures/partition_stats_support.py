"""Reading a partition statistics file the way the spec names it: by field id, with
pyarrow alone (never through the code under test), for iceduck's and Spark's files."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from iceduck.io.fileio import to_local_path

#: field id -> name, as the spec's "Partition Statistics File" table gives them
SPEC_IDS = {
    1: "partition", 2: "spec_id", 3: "data_record_count", 4: "data_file_count",
    5: "total_data_file_size_in_bytes", 6: "position_delete_record_count",
    7: "position_delete_file_count", 8: "equality_delete_record_count",
    9: "equality_delete_file_count", 10: "total_record_count", 11: "last_updated_at",
    12: "last_updated_snapshot_id", 13: "dv_count",
}  # fmt: skip


def read_by_field_id(path: str) -> tuple[pa.Schema, list[dict[str, Any]]]:
    """The file's schema and rows, columns named by the spec's names for their field ids."""
    table = pq.read_table(to_local_path(path))
    ids = [int(f.metadata[b"PARQUET:field_id"]) for f in table.schema]
    return table.schema, table.rename_columns([SPEC_IDS[i] for i in ids]).to_pylist()
