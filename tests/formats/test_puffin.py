"""Puffin files: exact layout, round trips, compression, deletion vector files, corruption."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path

import lz4.frame
import pytest
import zstandard
from pyiceberg.table.deletion_vector import deletion_vectors_from_puffin_file
from pyiceberg.table.puffin import PuffinFile

from iceduck.errors import CorruptDataError, UnsupportedError, ValidationError
from iceduck.formats.deletion_vector import serialize_dv
from iceduck.formats.puffin import (
    BlobMetadata,
    PuffinWriter,
    read_blob,
    read_blob_range,
    read_deletion_vector,
    read_deletion_vectors,
    read_puffin_footer,
    write_deletion_vectors,
)
from iceduck.spec.deletion_vector import DeletionVector

MAGIC = b"PFA1"
PATH = "/warehouse/db/t/metadata/stats.puffin"
TWO_32 = 1 << 32
LONG_BLOB = (
    b"some blob \x00 binary data \xf0\x9f\xa4\xaf that is not very very very very very very long, is it?"
)


def footer_bytes(payload: bytes, flags: bytes = b"\0\0\0\0") -> bytes:
    return MAGIC + payload + struct.pack("<i", len(payload)) + flags + MAGIC


def two_blob_writer(**kwargs: object) -> PuffinWriter:
    writer = PuffinWriter(created_by="Test 1234", **kwargs)  # type: ignore[arg-type]
    writer.add_blob(b"abcdefghi", type="some-blob", fields=[1], snapshot_id=2, sequence_number=1)
    writer.add_blob(LONG_BLOB, type="some-other-blob", fields=[2], snapshot_id=2, sequence_number=1)
    return writer


class RecordingFile(io.BytesIO):
    """A seekable file that records which byte ranges were read."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.reads: list[tuple[int, int]] = []

    def read(self, size: int | None = -1) -> bytes:  # type: ignore[override]
        start = self.tell()
        data = super().read(size)
        self.reads.append((start, len(data)))
        return data


# -- exact layout ---------------------------------------------------------------------------


def test_empty_file_layout() -> None:
    data = PuffinWriter().finish()
    # Magic, then the footer: Magic, payload, payload size (LE int32), flags, Magic
    assert data == MAGIC + MAGIC + b'{"blobs":[]}' + bytes.fromhex("0c000000") + bytes(4) + MAGIC
    footer = read_puffin_footer(data, PATH)
    assert footer.blobs == ()
    assert footer.properties == {}
    assert footer.file_size == 32
    assert footer.footer_size == 28


def test_two_blob_layout_matches_iceberg_java() -> None:
    """The layout Iceberg Java's PuffinWriter produces for the same blobs, byte for byte."""
    writer = two_blob_writer()
    data = writer.finish()
    payload = (
        b'{"blobs":[{"type":"some-blob","fields":[1],"snapshot-id":2,"sequence-number":1,'
        b'"offset":4,"length":9},{"type":"some-other-blob","fields":[2],"snapshot-id":2,'
        b'"sequence-number":1,"offset":13,"length":83}],"properties":{"created-by":"Test 1234"}}'
    )
    assert data == MAGIC + b"abcdefghi" + LONG_BLOB + footer_bytes(payload)
    assert len(data) == 355
    assert writer.footer_size == len(payload) + 16
    assert [(b.offset, b.length) for b in writer.blobs] == [(4, 9), (13, 83)]


def test_footer_sizes_for_table_statistics() -> None:
    writer = two_blob_writer()
    data = writer.finish()
    footer = read_puffin_footer(data, PATH)
    assert footer.file_size == len(data)
    assert footer.footer_size == writer.footer_size
    assert data[len(data) - footer.footer_size :].startswith(MAGIC + b'{"blobs"')
    assert footer.to_json() == json.loads(data[-footer.footer_size + 4 : -12])


def test_properties_and_non_ascii_json() -> None:
    writer = PuffinWriter(created_by="iceduck 0.1.0", properties={"note": "späť ✓"})
    blob = writer.add_blob(
        b"x", type="t", fields=[], snapshot_id=7, sequence_number=3, properties={"ndv": "1", "k": "ü"}
    )
    data = writer.finish()
    assert "späť ✓".encode() in data  # UTF-8, not \u escapes
    footer = read_puffin_footer(data, PATH)
    assert footer.properties == {"created-by": "iceduck 0.1.0", "note": "späť ✓"}
    assert footer.blobs == (blob,)
    assert footer.blobs[0].properties == {"ndv": "1", "k": "ü"}
    assert footer.blobs[0].fields == ()


# -- round trips and compression ----------------------------------------------------------


@pytest.mark.parametrize("codec", [None, "lz4", "zstd"])
@pytest.mark.parametrize("compress_footer", [False, True])
def test_round_trip(codec: str | None, compress_footer: bool) -> None:
    blobs = [b"", b"abc" * 1000, bytes(range(256)) * 40, LONG_BLOB]
    writer = PuffinWriter(created_by="test", compress_footer=compress_footer)
    metas = [
        writer.add_blob(
            b, type=f"t{i}", fields=[i, 100], snapshot_id=i, sequence_number=i, compression_codec=codec
        )
        for i, b in enumerate(blobs)
    ]
    data = writer.finish()
    footer = read_puffin_footer(data, PATH)
    assert list(footer.blobs) == metas
    assert footer.properties == {"created-by": "test"}
    assert [read_blob(data, m, PATH) for m in footer.blobs] == blobs
    assert data[-8] == (1 if compress_footer else 0)
    assert data[-7:-4] == b"\0\0\0"


def test_compressed_blobs_are_single_frames_with_content_size() -> None:
    writer = PuffinWriter()
    lz4_meta = writer.add_blob(
        b"a" * 5000, type="t", fields=[1], snapshot_id=1, sequence_number=1, compression_codec="lz4"
    )
    zstd_meta = writer.add_blob(
        b"b" * 5000, type="t", fields=[1], snapshot_id=1, sequence_number=1, compression_codec="zstd"
    )
    data = writer.finish()
    lz4_raw = data[lz4_meta.offset : lz4_meta.offset + lz4_meta.length]
    zstd_raw = data[zstd_meta.offset : zstd_meta.offset + zstd_meta.length]
    assert lz4.frame.get_frame_info(lz4_raw)["content_size"] == 5000
    assert zstandard.frame_content_size(zstd_raw) == 5000
    assert lz4_meta.length < 5000 and zstd_meta.length < 5000
    assert b'"compression-codec":"lz4"' in data and b'"compression-codec":"zstd"' in data


def test_compressed_footer_is_an_lz4_frame_with_content_size() -> None:
    data = two_blob_writer(compress_footer=True).finish()
    (payload_size,) = struct.unpack_from("<i", data, len(data) - 12)
    payload = data[len(data) - 12 - payload_size : len(data) - 12]
    plain = two_blob_writer().finish()
    expected_json = plain[-12 - struct.unpack_from("<i", plain, len(plain) - 12)[0] : -12]
    assert lz4.frame.get_frame_info(payload)["content_size"] == len(expected_json)
    assert lz4.frame.decompress(payload) == expected_json
    assert data[-8:-4] == b"\x01\0\0\0"
    blob_area_end = len(data) - 12 - payload_size - 4
    assert data[blob_area_end : blob_area_end + 4] == MAGIC
    assert data[:blob_area_end] == plain[: len(plain) - read_puffin_footer(plain).footer_size]


def test_reading_foreign_zstd_blobs_and_lz4_footer() -> None:
    """Blobs compressed by another writer (zstd level 19, lz4 with checksums) read back."""
    blob1 = zstandard.ZstdCompressor(level=19).compress(b"abcdefghi")
    blob2 = lz4.frame.compress(LONG_BLOB, content_checksum=True, block_checksum=True)
    blobs = [
        {"type": "a", "fields": [1], "snapshot-id": 2, "sequence-number": 1, "offset": 4,
         "length": len(blob1), "compression-codec": "zstd"},
        {"type": "b", "fields": [2], "snapshot-id": 2, "sequence-number": 1, "offset": 4 + len(blob1),
         "length": len(blob2), "compression-codec": "lz4", "properties": {}},
    ]  # fmt: skip
    payload = lz4.frame.compress(json.dumps({"blobs": blobs}).encode())
    data = MAGIC + blob1 + blob2 + footer_bytes(payload, b"\x01\0\0\0")
    footer = read_puffin_footer(data, PATH)
    assert [read_blob(data, b) for b in footer.blobs] == [b"abcdefghi", LONG_BLOB]
    assert footer.properties == {}


# -- sources: bytes, files, paths; reading only what is needed ----------------------------


def test_sources(tmp_path: Path) -> None:
    data = two_blob_writer(compress_footer=True).finish()
    file = tmp_path / "x.puffin"
    file.write_bytes(data)
    expected = read_puffin_footer(data, PATH)
    with file.open("rb") as handle:
        sources: list[object] = [bytearray(data), memoryview(data), io.BytesIO(data), str(file), file, handle]
        for source in sources:
            footer = read_puffin_footer(source)  # type: ignore[arg-type]
            assert footer == expected
            assert read_blob(source, footer.blobs[1]) == LONG_BLOB  # type: ignore[arg-type]


def test_footer_read_touches_only_the_magic_and_the_footer() -> None:
    big = b"\xab" * 1_000_000
    writer = PuffinWriter()
    writer.add_blob(big, type="t", fields=[1], snapshot_id=1, sequence_number=1)
    source = RecordingFile(writer.finish())
    read_puffin_footer(source, PATH)
    assert sum(length for _, length in source.reads) <= 4 + writer.footer_size + 12
    assert all(start == 0 or start > len(big) for start, _ in source.reads)


def test_blob_range_read_touches_only_the_blob() -> None:
    writer = PuffinWriter()
    writer.add_blob(b"\0" * 100_000, type="t", fields=[1], snapshot_id=1, sequence_number=1)
    meta = writer.add_blob(b"wanted", type="t", fields=[1], snapshot_id=1, sequence_number=1)
    source = RecordingFile(writer.finish())
    assert read_blob_range(source, meta.offset, meta.length, PATH) == b"wanted"
    assert source.reads == [(meta.offset, meta.length)]


def test_file_size_hint_is_used(tmp_path: Path) -> None:
    data = PuffinWriter(created_by="x").finish()
    with pytest.raises(CorruptDataError, match="magic"):
        read_puffin_footer(io.BytesIO(data + b"junk"), PATH)
    assert read_puffin_footer(io.BytesIO(data + b"junk"), PATH, file_size=len(data)).properties == {
        "created-by": "x"
    }


# -- writer misuse --------------------------------------------------------------------------


def test_writer_misuse() -> None:
    writer = PuffinWriter()
    with pytest.raises(ValidationError):
        writer.footer_size  # noqa: B018
    with pytest.raises(ValidationError):
        writer.add_blob(b"", type="t", fields=["1"], snapshot_id=1, sequence_number=1)  # type: ignore[list-item]
    with pytest.raises(ValidationError):
        writer.add_blob(b"", type="t", fields=[1], snapshot_id=1, sequence_number=1, properties={"a": 1})  # type: ignore[dict-item]
    with pytest.raises(UnsupportedError, match="snappy"):
        writer.add_blob(
            b"", type="t", fields=[1], snapshot_id=1, sequence_number=1, compression_codec="snappy"
        )
    with pytest.raises(ValidationError):
        PuffinWriter(properties={"a": None})  # type: ignore[dict-item]
    writer.finish()
    with pytest.raises(ValidationError):
        writer.finish()
    with pytest.raises(ValidationError):
        writer.add_blob(b"", type="t", fields=[1], snapshot_id=1, sequence_number=1)


# -- deletion vector files ----------------------------------------------------------------


def test_deletion_vector_file_metadata() -> None:
    dv1 = DeletionVector([1, 2, 3])
    dv2 = DeletionVector([5, TWO_32 + 5])
    data, blobs = write_deletion_vectors(
        [("s3://b/t/data/a.parquet", dv1), ("s3://b/t/data/b.parquet", dv2)], created_by="iceduck 0.1.0"
    )
    len1, len2 = len(serialize_dv(dv1)), len(serialize_dv(dv2))
    payload = (
        '{"blobs":[{"type":"deletion-vector-v1","fields":[2147483645],"snapshot-id":-1,'
        f'"sequence-number":-1,"offset":4,"length":{len1},"properties":'
        '{"referenced-data-file":"s3://b/t/data/a.parquet","cardinality":"3"}},'
        '{"type":"deletion-vector-v1","fields":[2147483645],"snapshot-id":-1,'
        f'"sequence-number":-1,"offset":{4 + len1},"length":{len2},"properties":'
        '{"referenced-data-file":"s3://b/t/data/b.parquet","cardinality":"2"}}],'
        '"properties":{"created-by":"iceduck 0.1.0"}}'
    ).encode()
    assert data == MAGIC + serialize_dv(dv1) + serialize_dv(dv2) + footer_bytes(payload)
    assert [(b.offset, b.length, b.compression_codec) for b in blobs] == [
        (4, len1, None),
        (4 + len1, len2, None),
    ]
    assert read_puffin_footer(data, PATH).blobs == tuple(blobs)


def test_deletion_vectors_round_trip_by_footer_and_by_manifest_offsets(tmp_path: Path) -> None:
    dvs = [
        ("s3://b/a.parquet", DeletionVector.from_range(0, 100_000)),
        ("s3://b/b.parquet", DeletionVector([TWO_32 - 1, TWO_32, 7 * TWO_32 + 1])),
    ]
    data, blobs = write_deletion_vectors(dvs, created_by="iceduck")
    file = tmp_path / "dv.puffin"
    file.write_bytes(data)
    read = read_deletion_vectors(str(file))
    assert [(r.referenced_data_file, r.cardinality, r.vector) for r in read] == [
        (path, len(dv), dv) for path, dv in dvs
    ]
    for (_, dv), blob in zip(dvs, blobs, strict=True):
        # what a scan does with a manifest entry: content_offset, content_size_in_bytes, record_count
        got = read_deletion_vector(
            file, blob.offset, blob.length, cardinality=int(blob.properties["cardinality"])
        )
        assert got == dv


def test_pyiceberg_reads_our_deletion_vector_file() -> None:
    dvs = [
        ("s3://b/a.parquet", DeletionVector([0, 9, 10, 11, 65_536 * 3])),
        ("s3://b/b.parquet", DeletionVector([TWO_32 - 1, TWO_32, 2 * TWO_32 + 1])),
    ]
    data, _ = write_deletion_vectors(dvs, created_by="iceduck")
    theirs = deletion_vectors_from_puffin_file(PuffinFile(data))
    assert {dv.referenced_data_file: dv.to_vector().to_pylist() for dv in theirs} == {
        path: list(dv) for path, dv in dvs
    }


def test_write_deletion_vectors_rejects_duplicates_and_empty_vectors() -> None:
    with pytest.raises(ValidationError, match="more than one"):
        write_deletion_vectors([("a", DeletionVector([1])), ("a", DeletionVector([2]))], created_by="x")
    with pytest.raises(ValidationError, match="empty"):
        write_deletion_vectors([("a", DeletionVector())], created_by="x")


def dv_file(blob_overrides: dict[str, object], blob: bytes | None = None) -> bytes:
    blob = blob if blob is not None else serialize_dv(DeletionVector([1, 2]))
    meta = {
        "type": "deletion-vector-v1",
        "fields": [2147483645],
        "snapshot-id": -1,
        "sequence-number": -1,
        "offset": 4,
        "length": len(blob),
        "properties": {"referenced-data-file": "s3://b/a.parquet", "cardinality": "2"},
    }
    meta.update(blob_overrides)
    other = {"type": "other", "fields": [1], "snapshot-id": 1, "sequence-number": 1, "offset": 4, "length": 0}
    return MAGIC + blob + footer_bytes(json.dumps({"blobs": [other, meta]}).encode())


def test_read_deletion_vectors_skips_other_blob_types() -> None:
    [only] = read_deletion_vectors(dv_file({}), PATH)
    assert list(only.vector) == [1, 2]


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"properties": {"cardinality": "2"}}, "referenced-data-file"),
        ({"properties": {"referenced-data-file": "s3://b/a.parquet"}}, "cardinality"),
        ({"properties": {"referenced-data-file": "s3://b/a.parquet", "cardinality": "-2"}}, "cardinality"),
        ({"properties": {"referenced-data-file": "s3://b/a.parquet", "cardinality": "3"}}, "cardinality 3"),
        ({"compression-codec": "zstd"}, "never compressed"),
    ],
)
def test_read_deletion_vectors_checks_blob_metadata(overrides: dict[str, object], match: str) -> None:
    with pytest.raises(CorruptDataError, match=match) as info:
        read_deletion_vectors(dv_file(overrides), PATH)
    assert info.value.path == PATH


def test_read_deletion_vector_reports_the_file_of_a_corrupt_blob() -> None:
    blob = bytearray(serialize_dv(DeletionVector([1, 2])))
    blob[-1] ^= 0xFF
    with pytest.raises(CorruptDataError, match="CRC mismatch") as info:
        read_deletion_vector(dv_file({}, bytes(blob)), 4, len(blob), PATH)
    assert info.value.path == PATH


# -- corruption -----------------------------------------------------------------------------


def assert_corrupt(data: bytes, match: str) -> None:
    with pytest.raises(CorruptDataError, match=match) as info:
        read_puffin_footer(data, PATH)
    assert info.value.path == PATH
    assert str(info.value).startswith(PATH + ": ")


def with_payload(payload: bytes, flags: bytes = b"\0\0\0\0") -> bytes:
    return MAGIC + b"0123456789" + footer_bytes(payload, flags)


def blob_json(**overrides: object) -> bytes:
    blob = {"type": "t", "fields": [1], "snapshot-id": 1, "sequence-number": 1, "offset": 4, "length": 10}
    blob.update(overrides)
    return json.dumps({"blobs": [{k: v for k, v in blob.items() if v is not ...}]}).encode()


def test_too_short() -> None:
    assert_corrupt(b"PFA1PFA1", "shorter than the 20-byte minimum")


def test_bad_magics() -> None:
    good = two_blob_writer().finish()
    assert_corrupt(b"PFA2" + good[4:], "bad Puffin magic at file start")
    assert_corrupt(good[:-1] + b"2", "bad Puffin magic at file end")
    footer_start = len(good) - read_puffin_footer(good).footer_size
    broken = good[:footer_start] + b"XXXX" + good[footer_start + 4 :]
    assert_corrupt(broken, f"bad Puffin magic at footer start \\(offset {footer_start}\\)")


@pytest.mark.parametrize("size", [-1, 10_000, 2**31 - 1])
def test_footer_payload_size_out_of_range(size: int) -> None:
    good = two_blob_writer().finish()
    data = good[:-12] + struct.pack("<i", size) + good[-8:]
    assert_corrupt(data, f"payload size {size} does not fit")


def test_wrong_payload_size_is_caught_by_the_footer_magic() -> None:
    good = two_blob_writer().finish()
    (size,) = struct.unpack_from("<i", good, len(good) - 12)
    assert_corrupt(good[:-12] + struct.pack("<i", size - 1) + good[-8:], "footer start")


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        (b'{"blobs": [', "not UTF-8 JSON"),
        (b"\xff\xfe", "not UTF-8 JSON"),
        (b"[]", "object with a 'blobs' list"),
        (b'{"properties": {}}', "object with a 'blobs' list"),
        (b'{"blobs": {}}', "object with a 'blobs' list"),
        (b'{"blobs": [1]}', "not a JSON object"),
        (blob_json(**{"snapshot-id": ...}), "'snapshot-id'"),
        (blob_json(**{"sequence-number": "1"}), "'sequence-number'"),
        (blob_json(type=None), "'type'"),
        (blob_json(offset=4.0), "'offset'"),
        (blob_json(length=True), "'length'"),
        (blob_json(fields=[1, "2"]), "'fields'"),
        (blob_json(fields=None), "'fields'"),
        (blob_json(**{"compression-codec": 5}), "'compression-codec'"),
        (blob_json(properties={"a": 1}), "blob properties"),
        (blob_json(properties=[]), "blob properties"),
        (b'{"blobs": [], "properties": {"created-by": null}}', "file properties"),
        (blob_json(offset=5), "outside the blob area"),
        (blob_json(offset=0), "outside the blob area"),
        (blob_json(length=-1), "outside the blob area"),
        (blob_json(offset=4, length=11), "outside the blob area"),
    ],
)
def test_malformed_footer_payload(payload: bytes, match: str) -> None:
    assert_corrupt(with_payload(payload), match)


def test_compressed_flag_with_an_uncompressed_payload() -> None:
    assert_corrupt(with_payload(b'{"blobs":[]}', b"\x01\0\0\0"), "cannot decompress lz4 footer payload")


def test_truncated_and_padded_lz4_footer() -> None:
    frame = lz4.frame.compress(b'{"blobs":[]}')
    assert_corrupt(with_payload(frame[:-2], b"\x01\0\0\0"), "truncated")
    assert_corrupt(with_payload(frame + b"\0", b"\x01\0\0\0"), "1 bytes after its single frame")
    assert_corrupt(with_payload(frame + frame, b"\x01\0\0\0"), "after its single frame")


@pytest.mark.parametrize("flags", [b"\x02\0\0\0", b"\0\0\x01\0", b"\x81\0\0\0"])
def test_unknown_flags_are_refused(flags: bytes) -> None:
    with pytest.raises(UnsupportedError, match="unknown Puffin footer flag") as info:
        read_puffin_footer(with_payload(b'{"blobs":[]}', flags), PATH)
    assert PATH in str(info.value)


def test_unknown_codec_fails_only_the_blob_that_uses_it() -> None:
    data = with_payload(blob_json(**{"compression-codec": "snappy"}))
    footer = read_puffin_footer(data, PATH)  # other blobs stay readable
    with pytest.raises(UnsupportedError, match="snappy") as info:
        read_blob(data, footer.blobs[0], PATH)
    assert PATH in str(info.value)


@pytest.mark.parametrize("codec", ["zstd", "lz4"])
def test_corrupt_compressed_blob(codec: str) -> None:
    data = with_payload(blob_json(**{"compression-codec": codec}))
    footer = read_puffin_footer(data, PATH)
    with pytest.raises(CorruptDataError, match=f"cannot decompress {codec} blob at offset 4") as info:
        read_blob(data, footer.blobs[0], PATH)
    assert info.value.path == PATH


def test_truncated_zstd_blob() -> None:
    frame = zstandard.ZstdCompressor().compress(b"hello" * 100)
    meta = BlobMetadata("t", (1,), 1, 1, 4, len(frame) - 3, "zstd")
    data = MAGIC + frame + footer_bytes(b'{"blobs":[]}')
    with pytest.raises(CorruptDataError, match="truncated"):
        read_blob(data, meta, PATH)


def test_blob_range_past_the_end_of_the_file() -> None:
    data = two_blob_writer().finish()
    with pytest.raises(CorruptDataError, match="extends past the end") as info:
        read_blob_range(data, len(data) - 2, 5, PATH)
    assert info.value.path == PATH
    with pytest.raises(CorruptDataError, match="extends past the end"):
        read_blob(data, BlobMetadata("t", (1,), 1, 1, -1, 3), PATH)


def test_short_read_from_a_file_object() -> None:
    class Liar(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:  # type: ignore[override]
            return super().read(size)[:-1]

    data = two_blob_writer().finish()
    with pytest.raises(CorruptDataError, match="file ended early") as info:
        read_puffin_footer(Liar(data), PATH)
    assert info.value.path == PATH
