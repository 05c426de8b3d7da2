"""Table statistics files (spec, "Table Statistics"): a Puffin file of theta sketches, one
blob per column, and the ``statistics`` entry of table metadata describing it.

    Table statistics files are valid Puffin files. Statistics are informational. A reader
    can choose to ignore statistics information. [...] ``snapshot-id``: ID of the Iceberg
    table's snapshot the statistics file is associated with. ``statistics-path``: Path of
    the statistics file. ``file-size-in-bytes``: Size of the statistics file.
    ``file-footer-size-in-bytes``: Total size of the statistics file's footer (not the
    footer payload size). ``blob-metadata``: A list of the blob metadata for statistics
    contained in the file with structure described below.

Blobs are written as Java's ``ComputeTableStatsSparkAction`` writes them: type
``apache-datasketches-theta-v1``, ``fields`` the column's field id, the snapshot's id and
sequence number, the property ``ndv`` (the estimate, truncated to a whole number), and the
sketch compressed with zstd (Iceberg 1.10's ``NDVSketchUtil``; Java reads zstd blobs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iceduck.spec.snapshot import StatisticsBlobMetadata, StatisticsFile
from iceduck.spec.table_metadata import TableMetadata

#: the codec Java's Spark action compresses theta blobs with
THETA_BLOB_CODEC = "zstd"


@dataclass(frozen=True)
class ColumnSketch:
    """One column's serialized compact theta sketch and its estimate."""

    field_id: int
    sketch: bytes
    estimate: float


def write_theta_statistics(
    sketches: Sequence[ColumnSketch], *, snapshot_id: int, sequence_number: int, created_by: str
) -> tuple[bytes, int, tuple[StatisticsBlobMetadata, ...]]:
    """The Puffin file's bytes, its footer size and the blob metadata for table metadata."""
    # imported here: theta_sketch needs pyarrow, which reading table metadata does not
    from iceduck.formats.puffin import PuffinWriter
    from iceduck.formats.theta_sketch import NDV_PROPERTY, THETA_BLOB_TYPE

    writer = PuffinWriter(created_by=created_by)
    for column in sketches:
        writer.add_blob(
            column.sketch,
            type=THETA_BLOB_TYPE,
            fields=(column.field_id,),
            snapshot_id=snapshot_id,
            sequence_number=sequence_number,
            properties={NDV_PROPERTY: str(int(column.estimate))},
            compression_codec=THETA_BLOB_CODEC,
        )
    data = writer.finish()
    blobs = tuple(
        StatisticsBlobMetadata(
            type=b.type,
            snapshot_id=b.snapshot_id,
            sequence_number=b.sequence_number,
            fields=b.fields,
            properties=dict(b.properties),
        )
        for b in writer.blobs
    )
    return data, writer.footer_size, blobs


def statistics_for(metadata: TableMetadata, snapshot_id: int | None) -> StatisticsFile | None:
    """The statistics file registered for ``snapshot_id``, if any."""
    if snapshot_id is None:
        return None
    for entry in metadata.statistics:
        if entry.snapshot_id == snapshot_id:
            return entry
    return None


def ndv_by_field(statistics: StatisticsFile) -> Mapping[int, int]:
    """Field id -> the ``ndv`` property of its single-field theta blob (blobs with a missing
    or unreadable property are skipped: statistics are informational)."""
    from iceduck.formats.theta_sketch import NDV_PROPERTY, THETA_BLOB_TYPE

    found: dict[int, int] = {}
    for blob in statistics.blob_metadata:
        if blob.type != THETA_BLOB_TYPE or len(blob.fields) != 1:
            continue
        text = (blob.properties or {}).get(NDV_PROPERTY)
        if text is not None and text.isascii() and text.isdigit():
            found[blob.fields[0]] = int(text)
    return found
