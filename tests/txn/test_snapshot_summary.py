"""Snapshot summaries against what Iceberg Java 1.10 (via Spark) wrote for the same changes."""

from __future__ import annotations

from iceduck.spec.manifest import DataFile, FileContent, FileFormat
from iceduck.txn.summary import snapshot_summary, totals

SPARK_KEYS = ("spark.app.id", "engine-version", "app-id", "engine-name", "iceberg-version")


def _file(content: FileContent, size: int, records: int, partition: tuple = (), **kw: object) -> DataFile:
    return DataFile(
        content,
        f"/t/{size}-{records}",
        kw.pop("fmt", FileFormat.PARQUET),
        partition,  # type: ignore[arg-type]
        records,
        size,
        **kw,
    )  # type: ignore[arg-type]


def _dv(records: int, blob: int, target: str) -> DataFile:
    return _file(
        FileContent.POSITION_DELETES,
        9999,
        records,
        fmt=FileFormat.PUFFIN,
        referenced_data_file=target,
        content_offset=4,
        content_size_in_bytes=blob,
    )


def _without_engine(summary: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in summary.items() if k not in SPARK_KEYS}


def test_v3_merge_on_read_update_matches_spark() -> None:
    # dml/mor_v3 snapshot 3 as Spark 3.5 / Iceberg 1.10.2 wrote it: one data file of 16 rows
    # (2021 bytes) and a DV of 22 positions (52-byte blob) replacing a DV of 6 (52 bytes)
    parent = {
        "operation": "delete",
        "added-delete-files": "2",
        "added-dvs": "2",
        "added-files-size": "104",
        "added-position-deletes": "12",
        "changed-partition-count": "1",
        "total-records": "60",
        "total-files-size": "3188",
        "total-data-files": "2",
        "total-delete-files": "2",
        "total-position-deletes": "12",
        "total-equality-deletes": "0",
    }
    spark = {
        "operation": "overwrite",
        "added-data-files": "1",
        "added-delete-files": "1",
        "removed-delete-files": "1",
        "added-dvs": "1",
        "removed-dvs": "1",
        "added-records": "16",
        "added-files-size": "2073",
        "removed-files-size": "52",
        "added-position-deletes": "22",
        "removed-position-deletes": "6",
        "changed-partition-count": "1",
        "total-records": "76",
        "total-files-size": "5209",
        "total-data-files": "3",
        "total-delete-files": "2",
        "total-position-deletes": "28",
        "total-equality-deletes": "0",
    }
    added = [_file(FileContent.DATA, 2021, 16), _dv(22, 52, "/t/a")]
    removed = [_dv(6, 52, "/t/a")]
    ours = snapshot_summary("overwrite", added, removed, parent, engine_version="0.1.0")
    assert ours["engine-name"] == "iceduck" and ours["engine-version"] == "0.1.0"
    assert list(_without_engine(ours).items()) == list(spark.items())


def test_v2_position_deletes_and_cow_match_spark() -> None:
    # dml/mor_v2 snapshot 2: two position delete files, 12 deletes, 2917 bytes
    parent = {
        "total-records": "60",
        "total-files-size": "3084",
        "total-data-files": "2",
        "total-delete-files": "0",
        "total-position-deletes": "0",
        "total-equality-deletes": "0",
    }
    added = [_file(FileContent.POSITION_DELETES, 1458, 6), _file(FileContent.POSITION_DELETES, 1459, 6)]
    ours = _without_engine(snapshot_summary("delete", added, [], parent))
    assert list(ours.items()) == [
        ("operation", "delete"),
        ("added-position-delete-files", "2"),
        ("added-delete-files", "2"),
        ("added-files-size", "2917"),
        ("added-position-deletes", "12"),
        ("changed-partition-count", "1"),
        ("total-records", "60"),
        ("total-files-size", "6001"),
        ("total-data-files", "2"),
        ("total-delete-files", "2"),
        ("total-position-deletes", "12"),
        ("total-equality-deletes", "0"),
    ]
    # dml/cow_v2 snapshot 2: three files of 20 rows replaced by three of 16, one per partition
    removed = [_file(FileContent.DATA, 1453, 20, (p,)) for p in ("a", "b")] + [
        _file(FileContent.DATA, 1453, 20, ("c",))
    ]
    added = [_file(FileContent.DATA, s, 16, (p,)) for s, p in ((1418, "a"), (1418, "b"), (1419, "c"))]
    parent = {
        "total-records": "60",
        "total-files-size": "4359",
        "total-data-files": "3",
        "total-delete-files": "0",
        "total-position-deletes": "0",
        "total-equality-deletes": "0",
    }
    ours = _without_engine(snapshot_summary("overwrite", added, removed, parent))
    assert ours == {
        "operation": "overwrite",
        "added-data-files": "3",
        "deleted-data-files": "3",
        "added-records": "48",
        "deleted-records": "60",
        "added-files-size": "4255",
        "removed-files-size": "4359",
        "changed-partition-count": "3",
        "total-records": "48",
        "total-files-size": "4255",
        "total-data-files": "3",
        "total-delete-files": "0",
        "total-position-deletes": "0",
        "total-equality-deletes": "0",
    }


def test_equality_deletes_and_extras_first() -> None:
    eq = _file(FileContent.EQUALITY_DELETES, 598, 3, equality_ids=[1])
    ours = snapshot_summary("delete", [eq], [], None, {"spark.app.id": "x"})
    assert list(ours)[:6] == [
        "operation",
        "spark.app.id",
        "added-equality-delete-files",
        "added-delete-files",
        "added-files-size",
        "added-equality-deletes",
    ]
    assert ours["total-equality-deletes"] == "3" and ours["total-delete-files"] == "1"


def test_totals_follow_java_update_total() -> None:
    # no parent: start from zeros; a parent without a total drops it; negatives are left out
    assert totals({"added-records": "5"}, None)["total-records"] == "5"
    assert "total-records" not in totals({"added-records": "5"}, {"total-files-size": "10"})
    assert "total-records" not in totals({"deleted-records": "5"}, {"total-records": "2"})
    assert totals({}, {"total-records": "7"}) == {"total-records": "7"}
    assert "total-records" not in totals({}, {"total-records": "many"})
