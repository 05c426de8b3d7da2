"""Table property values a statement may set (iceduck.spec.properties.validate_properties)."""

from __future__ import annotations

import pytest

from iceduck.errors import ValidationError
from iceduck.spec import properties as tp
from iceduck.spec.schema import Schema
from iceduck.spec.types import IntegerType, NestedField, StringType, StructType

SCHEMA = Schema(
    (
        NestedField(1, "id", IntegerType()),
        NestedField(2, "point", StructType((NestedField(3, "x", IntegerType()),))),
        NestedField(4, "Name", StringType()),
    )
)


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("write.target-file-size-bytes", "-5", "a positive integer"),
        ("write.target-file-size-bytes", "0", "a positive integer"),
        ("write.target-file-size-bytes", "1_000", "a positive integer"),  # Python's int() reads it
        ("write.target-file-size-bytes", "9223372036854775808", "at most 9223372036854775807"),
        ("write.parquet.row-group-size-bytes", "0", "a positive integer"),
        ("write.parquet.row-group-size-bytes", "2147483648", "at most 2147483647"),  # Java int
        ("write.parquet.compression-codec", "lzo", "one of 'zstd'"),
        ("write.parquet.compression-codec", "none", "'uncompressed'"),  # Java refuses 'none'
        ("write.parquet.compression-level", "23", "from -131072 to 22 for zstd"),
        ("write.parquet.compression-level", "high", "an integer"),
        ("write.metadata.metrics.default", "truncate(0)", "truncate"),
        ("write.metadata.metrics.default", "bounds", "'none', 'counts', 'full'"),
        ("write.metadata.metrics.column.id", "truncate(-1)", "truncate"),
        ("write.metadata.metrics.max-inferred-column-defaults", "-1", "a non-negative integer"),
        ("write.delete.mode", "mor", "'copy-on-write' or 'merge-on-read'"),
        ("write.update.mode", "cow", "'copy-on-write' or 'merge-on-read'"),
        ("write.merge.mode", "", "'copy-on-write' or 'merge-on-read'"),
        ("write.delete.isolation-level", "read-committed", "'serializable' or 'snapshot'"),
        ("write.merge.isolation-level", "snapshots", "'serializable' or 'snapshot'"),
        ("write.distribution-mode", "sorted", "one of 'none', 'hash', 'range'"),
        ("commit.retry.num-retries", "-1", "a non-negative integer"),
        ("commit.retry.min-wait-ms", "1.5", "a non-negative integer"),
        ("commit.retry.max-wait-ms", "many", "a non-negative integer"),
        ("commit.retry.total-timeout-ms", "2147483648", "a non-negative integer"),
        ("commit.manifest-merge.enabled", "yes", "'true' or 'false'"),
        ("commit.manifest.min-count-to-merge", "-3", "a non-negative integer"),
        ("commit.manifest.target-size-bytes", "0", "a positive integer"),
        ("write.metadata.previous-versions-max", "0", "a positive integer"),
        ("write.metadata.delete-after-commit.enabled", "1", "'true' or 'false'"),
        ("write.metadata.compression-codec", "zstd", "'none' or 'gzip'"),
        ("schema.name-mapping.default", "{not json", "a JSON list"),
        ("schema.name-mapping.default", '{"names": ["id"]}', "a JSON list"),
    ],
)
def test_refused_values_name_the_property_the_value_and_what_is_allowed(
    name: str, value: str, allowed: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        tp.validate_properties({name: value}, SCHEMA)
    message = str(raised.value)
    assert repr(name) in message and repr(value) in message and allowed in message


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("write.target-file-size-bytes", "1"),
        ("write.target-file-size-bytes", "9223372036854775807"),
        ("write.parquet.row-group-size-bytes", "+1048576"),  # Java's parseInt takes the sign
        ("write.parquet.compression-codec", "ZSTD"),  # Java upper-cases
        ("write.parquet.compression-codec", "lz4_raw"),
        ("write.parquet.compression-level", "-7"),
        ("write.metadata.metrics.default", "Truncate(8)"),
        ("write.metadata.metrics.column.point.x", "full"),  # nested: dotted name
        ("write.metadata.metrics.max-inferred-column-defaults", "0"),
        ("write.delete.mode", "Merge-On-Read"),
        ("write.update.isolation-level", "SNAPSHOT"),
        ("write.distribution-mode", "range"),
        ("commit.retry.num-retries", "0"),
        ("commit.manifest-merge.enabled", "FALSE"),
        ("write.metadata.compression-codec", "GZIP"),
        ("write.data.path", " /odd but allowed "),
        ("schema.name-mapping.default", ' [ {"field-id": 1, "names": ["id"]} ] '),
        ("format-version", "3"),  # checked where it is consumed
        ("owner", " anything at all "),  # unknown properties stay free, as in Spark
        ("write.spark.fanout.enabled", "maybe"),
    ],
)
def test_accepted_values(name: str, value: str) -> None:
    tp.validate_properties({name: value}, SCHEMA)


@pytest.mark.parametrize("value", [" 100", "100 ", "\tzstd"])
def test_spaces_around_a_value_are_refused(value: str) -> None:
    """Java's parsers do not trim: ``Integer.parseInt(" 100")`` throws and
    ``Boolean.parseBoolean(" true")`` is false."""
    name = "write.parquet.compression-codec" if "zstd" in value else "commit.retry.num-retries"
    with pytest.raises(ValidationError, match="spaces around"):
        tp.validate_properties({name: value})


def test_metrics_column_must_exist_in_the_schema() -> None:
    """Java's ``MetricsConfig.validateReferencedColumns``: ``Schema.findField`` by full name,
    with case."""
    for column in ("missing", "name", "point.y", "x"):
        with pytest.raises(ValidationError, match=f"names column '{column}'"):
            tp.validate_properties({f"write.metadata.metrics.column.{column}": "full"}, SCHEMA)
    tp.validate_properties({"write.metadata.metrics.column.Name": "counts"}, SCHEMA)
    tp.validate_properties({"write.metadata.metrics.column.anything": "counts"})  # no schema: no check


def test_compression_level_is_checked_against_the_codec_the_table_will_have() -> None:
    level = {"write.parquet.compression-level": "30"}
    with pytest.raises(ValidationError, match="for zstd"):
        tp.validate_properties(level)  # zstd by default
    tp.validate_properties(level, current={"write.parquet.compression-codec": "gzip"})
    with pytest.raises(ValidationError, match="compression-level"):  # the codec changes under it
        tp.validate_properties({"write.parquet.compression-codec": "zstd"}, current=level)
    tp.validate_properties({"write.parquet.compression-codec": "snappy"}, current=level)


def test_only_the_values_being_set_are_checked() -> None:
    """A value already in a table (written by Spark, say) does not block other changes."""
    current = {"write.target-file-size-bytes": "-5", "write.delete.mode": "odd"}
    tp.validate_properties({"write.update.mode": "merge-on-read"}, SCHEMA, current)


def test_every_checked_codec_is_one_the_writer_knows() -> None:
    from iceduck.engine.write import parquet_codec

    for codec in tp.PARQUET_COMPRESSION_CODECS:
        assert parquet_codec({tp.PARQUET_COMPRESSION: codec})


@pytest.mark.parametrize(
    ("text", "mode"),
    [
        ("none", ("none", 0)),
        ("COUNTS", ("counts", 0)),
        ("full", ("full", 0)),
        ("truncate(16)", ("truncate", 16)),
        (" truncate(3) ", ("truncate", 3)),  # readers forgive spaces
        ("truncate(0)", None),
        ("truncate( 3)", None),
        ("truncate", None),
    ],
)
def test_metrics_mode(text: str, mode: tuple[str, int] | None) -> None:
    assert tp.metrics_mode(text) == mode
