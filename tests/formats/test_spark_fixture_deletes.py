"""Delete files written by Spark 3.5 + Iceberg 1.10.2 (tests/fixtures/spark): a Puffin
deletion vector decoded by iceduck, a position-delete file and equality-delete files,
each checked against the rows of the data file it deletes from."""

from __future__ import annotations

import pyarrow.parquet as pq

from iceduck.formats.puffin import read_deletion_vector, read_deletion_vectors, read_puffin_footer
from iceduck.spec.manifest import DataFile, EntryStatus, FileContent
from tests.fixtures.spark.parsed import entries
from tests.fixtures.spark.tables import expected, local

FILE_PATH_ID, POS_ID = 2147483546, 2147483545


def data_ids(identifier: str) -> tuple[str, list[int]]:
    """The table's one data file (its recorded path) and its ids, by row position."""
    (data,) = [e.data_file for e in entries(identifier) if e.data_file.content is FileContent.DATA]
    return data.file_path, pq.read_table(local(data.file_path)).column("id").to_pylist()


def deleted_positions(identifier: str, ids: list[int]) -> list[int]:
    """The positions whose ids Spark no longer reads."""
    kept = {r["id"] for r in expected()[identifier]["rows"]}
    return [pos for pos, i in enumerate(ids) if i not in kept]


def deletion_vector(status: EntryStatus) -> DataFile:
    """The v3 table's deletion vector entry of that status: the merged vector is ADDED,
    the one it replaced DELETED, both in the current snapshot's manifests."""
    (found,) = [
        e.data_file
        for e in entries("deletes.dv_v3")
        if e.status is status and e.data_file.content is FileContent.POSITION_DELETES
    ]
    return found


def test_deletion_vector_blob_positions() -> None:
    path, ids = data_ids("deletes.dv_v3")
    current = deletion_vector(EntryStatus.ADDED)
    puffin = local(current.file_path)
    (blob,) = read_deletion_vectors(puffin.read_bytes(), str(puffin))
    assert blob.referenced_data_file == path
    assert (blob.offset, blob.length, blob.cardinality) == (
        current.content_offset,
        current.content_size_in_bytes,
        7,
    )
    assert list(blob.vector) == deleted_positions("deletes.dv_v3", ids) == [0, 1, 2, 4, 8, 12, 16]
    assert [ids[p] for p in blob.vector] == [0, 1, 2, 4, 8, 12, 16]


def test_replaced_deletion_vector_holds_the_first_delete() -> None:
    old = deletion_vector(EntryStatus.DELETED)
    puffin = local(old.file_path)
    assert old.content_offset is not None and old.content_size_in_bytes is not None
    vector = read_deletion_vector(
        puffin.read_bytes(),
        old.content_offset,
        old.content_size_in_bytes,
        str(puffin),
        cardinality=old.record_count,
    )
    assert list(vector) == [0, 4, 8, 12, 16]  # id % 4 = 0


def test_puffin_footer_of_spark() -> None:
    current = deletion_vector(EntryStatus.ADDED)
    puffin = local(current.file_path)
    footer = read_puffin_footer(puffin.read_bytes(), str(puffin))
    (blob,) = footer.blobs
    assert blob.type == "deletion-vector-v1"
    assert blob.fields == (2147483645,)  # the reserved _pos field id
    assert blob.properties["cardinality"] == "7"
    assert footer.properties["created-by"].startswith("Apache Iceberg 1.10.2")
    assert puffin.stat().st_size == current.file_size_in_bytes


def test_position_delete_file_contents() -> None:
    path, ids = data_ids("deletes.position_v2")
    (delete,) = [
        e.data_file
        for e in entries("deletes.position_v2")
        if e.data_file.content is FileContent.POSITION_DELETES
    ]
    table = pq.read_table(local(delete.file_path))
    schema_ids = [int(f.metadata[b"PARQUET:field_id"]) for f in table.schema]
    assert table.column_names[:2] == ["file_path", "pos"]
    assert schema_ids[:2] == [FILE_PATH_ID, POS_ID]
    assert set(table.column("file_path").to_pylist()) == {path}
    positions = table.column("pos").to_pylist()
    assert positions == deleted_positions("deletes.position_v2", ids) == [0, 4, 8, 12, 16]
    assert delete.record_count == len(positions)
    assert delete.lower_bounds is not None and delete.lower_bounds[FILE_PATH_ID] == path.encode()


def test_equality_delete_file_contents() -> None:
    """The three keys the builder committed, read by field id as the spec requires."""
    found = {}
    for e in entries("dml.eq_delete_v2"):
        f = e.data_file
        if f.content is FileContent.EQUALITY_DELETES:
            table = pq.read_table(local(f.file_path))
            assert [int(c.metadata[b"PARQUET:field_id"]) for c in table.schema] == f.equality_ids
            found[tuple(table.column_names)] = [tuple(r.values()) for r in table.to_pylist()]
    assert found == {
        ("id",): [(3,), (7,), (11,)],
        ("name",): [(None,), ("n13",)],
        ("id", "cat"): [(22, "b"), (23, None), (24, "b")],
    }
