"""Spark reads a table whose metadata iceduck wrote entirely, and sees what it sees in the original.

For every table of the Spark fixture warehouse, ``tests/support/rewrite.py`` writes a copy
whose metadata JSON, manifest lists and manifests all come out of iceduck's writers (read
into the model, written from it), pointing at the original's data, delete and
deletion-vector files. The copy is registered in Spark's catalog as
``iceduck.rewritten.<namespace>_<table>`` and Spark must then return the same results
from both: rows of the current snapshot, of every branch and tag, of every snapshot, and
the metadata tables that Spark computes by parsing manifest lists and manifests
(``entries``, ``files``, ``manifests``, ``partitions``, ...). Any difference is a byte
iceduck wrote that Iceberg Java reads differently from what Java itself wrote.

The registered copies are dropped (without purge: their files live in pytest's temporary
folder) when this module finishes, so the fixture catalog is left as it was. The fixture
tables themselves are only read.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import fastavro
import pytest

from iceduck.formats.manifest_list import open_manifest_list
from iceduck.formats.manifests import UNASSIGNED_SEQ, read_manifest
from iceduck.formats.metadata_json import read_table_metadata
from iceduck.io import fileio
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.types import UUIDType
from tests.support.rewrite import RewrittenTable, rewrite_table
from tests.support.spark_session import CATALOG, CATALOG_DB
from tests.support.spark_warehouse import SparkWarehouse, TableInfo

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

NAMESPACE = "rewritten"

#: Avro key-value metadata holding JSON, compared parsed
JSON_KEYS = ("schema", "partition-spec", "avro.schema", "iceberg.schema")

#: metadata tables Spark builds from manifest lists and manifests, and the columns that
#: differ by construction between original and copy (the rewritten files' own paths/sizes)
METADATA_TABLES: dict[str, tuple[str, ...]] = {
    "files": (),
    "all_manifests": ("path", "length"),
    "partitions": (),
    "snapshots": ("manifest_list",),
    "refs": (),
    "history": (),
}


@dataclass(frozen=True)
class Pair:
    """A fixture table and its iceduck-written copy."""

    info: TableInfo
    copy: str  # fully qualified name of the registered copy
    rewrite: RewrittenTable

    @property
    def original(self) -> str:
        return self.info.name

    @property
    def metadata(self) -> TableMetadata:
        return self.rewrite.metadata


def _current_metadata_locations(warehouse: Path) -> dict[str, str]:
    """identifier -> current metadata file, from the JDBC catalog (opened read-only)."""
    with sqlite3.connect(f"file:{warehouse / CATALOG_DB}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT table_namespace, table_name, metadata_location FROM iceberg_tables"
            " WHERE catalog_name = ?",
            (CATALOG,),
        ).fetchall()
    return {f"{ns}.{name}": location for ns, name, location in rows}


@pytest.fixture(scope="module")
def pairs(
    spark: SparkSession, spark_warehouse: SparkWarehouse, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[Pair]]:
    """Every fixture table rewritten by iceduck and registered in Spark; dropped afterwards."""
    root = tmp_path_factory.mktemp("rewritten")
    locations = _current_metadata_locations(spark_warehouse.path)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.{NAMESPACE}")
    out: list[Pair] = []
    try:
        for identifier, info in sorted(spark_warehouse.tables.items()):
            name = identifier.replace(".", "_")
            rewrite = rewrite_table(locations[identifier], str(root / name))
            copy = f"{CATALOG}.{NAMESPACE}.{name}"
            spark.sql(f"DROP TABLE IF EXISTS {copy}")  # a leftover of an interrupted run
            spark.sql(
                f"CALL {CATALOG}.system.register_table(table => '{NAMESPACE}.{name}', "
                f"metadata_file => '{rewrite.metadata_location}')"
            )
            out.append(Pair(info, copy, rewrite))
        yield out
    finally:
        for (table,) in spark.sql(f"SHOW TABLES IN {CATALOG}.{NAMESPACE}").select("tableName").collect():
            spark.sql(f"DROP TABLE {CATALOG}.{NAMESPACE}.{table}")  # no PURGE: files stay in tmp
        spark.sql(f"DROP NAMESPACE IF EXISTS {CATALOG}.{NAMESPACE}")


# -- comparing -----------------------------------------------------------------------------

#: ``to_json`` settings that keep every value exact: microsecond timestamps (the default
#: format stops at milliseconds), explicit nulls. Floats print as Java's shortest exact
#: form (-0.0 and NaN included), binary as base64. Rows are compared as this JSON because
#: PySpark cannot turn every value into a Python object (year 1 timestamps fail).
JSON_OPTIONS = {
    "timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX",
    "timestampNTZFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSS",
    "ignoreNullFields": "false",
}

Result = tuple[str, Any]  # ("rows", (schema, sorted JSON rows)) or ("error", exception class name)


def _json_rows(df: DataFrame, side: str = "") -> DataFrame:
    """``df`` as rows ``(side, json)``: each row one exact JSON text, tagged with ``side``."""
    from pyspark.sql import functions as F

    row = F.to_json(F.struct(*[F.col(f"`{c}`") for c in df.columns]), JSON_OPTIONS)
    return df.select(F.lit(side).alias("side"), row.alias("row"))


def _result(make: Callable[[], DataFrame]) -> Result:
    try:
        df = make()
        return "rows", (df.schema.simpleString(), sorted(r[1] for r in _json_rows(df).collect()))
    except Exception as e:  # py4j/pyspark errors of every kind
        return "error", type(e).__name__


def _results(pair: Pair, make: Callable[[str], DataFrame]) -> tuple[Result, Result]:
    """The original's and the copy's result; one Spark job for both when it can (a union
    of rows tagged by side), one each when that fails, so an error shows on its side.
    A query Spark refuses on the original must be refused on the copy too."""
    try:
        original, copy = make(pair.original), make(pair.copy)
        if original.schema == copy.schema:
            rows = _json_rows(original, "o").union(_json_rows(copy, "c")).collect()
            schema = original.schema.simpleString()
            by_side = {side: ("rows", (schema, sorted(r[1] for r in rows if r[0] == side))) for side in "oc"}
            return by_side["o"], by_side["c"]
    except Exception:
        pass
    return _result(lambda: make(pair.original)), _result(lambda: make(pair.copy))


def _differences(what: str, pair: Pair, original: Result, copy: Result) -> list[str]:
    if original == copy and original[0] == "rows":
        return []
    if original[0] == copy[0] == "rows":
        (schema, theirs), (schema2, ours) = original[1], copy[1]
        if schema != schema2:
            return [f"{pair.original} {what}: schema {schema} != copy's {schema2}"]
        return [
            f"{pair.original} {what}: {len(theirs)} rows, copy {len(ours)};\n"
            f"  only in the original: {sorted(set(theirs) - set(ours))}\n"
            f"  only in the copy: {sorted(set(ours) - set(theirs))}"
        ]
    # an error on both sides would make the comparison vacuous: report it too
    return [f"{pair.original} {what}: original {_summary(original)}, copy {_summary(copy)}"]


def _summary(result: Result) -> str:
    kind, value = result
    return f"raised {value}" if kind == "error" else f"{len(value[1])} rows"


def _compare(
    pair: Pair, what: str, make: Callable[[str], DataFrame], expected_rows: int | None = None
) -> list[str]:
    """Differences between Spark's results on the original and on the copy, and between
    the copy's row count and ``expected_rows`` (worked out independently of Spark)."""
    original, copy = _results(pair, make)
    problems = _differences(what, pair, original, copy)
    if expected_rows is not None:
        if copy[0] != "rows":
            problems.append(f"{pair.copy} {what}: raised {copy[1]}")
        elif len(copy[1][1]) != expected_rows:
            problems.append(f"{pair.copy} {what}: {len(copy[1][1])} rows, expected {expected_rows}")
    return problems


def _version(ref_or_id: str | int) -> str:
    return f"VERSION AS OF {ref_or_id}" if isinstance(ref_or_id, int) else f"VERSION AS OF '{ref_or_id}'"


def _query(spark: SparkSession, template: str) -> Callable[[str], DataFrame]:
    """``template`` with ``{t}`` standing for the table name, as a DataFrame factory."""
    return lambda table: spark.sql(template.format(t=table))


def _uuid_columns(md: TableMetadata) -> set[str]:
    return {
        name
        for schema in md.schemas
        for field_id in schema.field_ids()
        if isinstance(schema.find_type(field_id), UUIDType) and (name := schema.column_name(field_id))
    }


def _without_uuid_metrics(df: DataFrame, pair: Pair) -> DataFrame:
    """Drop ``readable_metrics`` of uuid columns: Iceberg 1.10's Spark metadata tables fail
    on them (``ClassCastException: Cannot cast java.util.UUID to java.lang.CharSequence``),
    on Spark's own tables too. The raw ``lower_bounds``/``upper_bounds`` are still compared."""
    from pyspark.sql import functions as F

    names = _uuid_columns(pair.metadata)
    if not names or "readable_metrics" not in df.columns:
        return df
    fields = [f"`{name}`" for name in sorted(names)]
    return df.withColumn("readable_metrics", F.col("readable_metrics").dropFields(*fields))


# -- iceduck's own view of what it wrote -----------------------------------------------------


def test_copies_cover_every_table_and_snapshot(pairs: list[Pair], spark_warehouse: SparkWarehouse) -> None:
    assert {p.info.identifier for p in pairs} == set(spark_warehouse.tables)
    assert sum(len(p.metadata.snapshots) for p in pairs) > len(pairs)
    assert any(not p.metadata.snapshots for p in pairs), "the empty table is copied too"
    for p in pairs:
        location = p.rewrite.metadata_location
        written = read_table_metadata(fileio.read_bytes(location), location)
        assert written == p.metadata
        assert written.metadata_log == ()
        assert all(s.manifest_list in p.rewrite.manifest_lists.values() for s in written.snapshots)


def test_manifest_rows_iceduck_computes_match_java(pairs: list[Pair]) -> None:
    """The list row ``write_manifest`` computes for each rewritten manifest (counts, partition
    summaries, minimum sequence number) is the row Java wrote for the original."""
    counted = ("added", "existing", "deleted")
    checked = 0
    for p in pairs:
        for path, m in p.rewrite.manifests.items():
            for kind in counted:
                for unit in ("files", "rows"):
                    key = f"{kind}_{unit}_count"
                    assert getattr(m.written, key) == getattr(m.original, key), (path, key)
            assert m.written.partitions == m.original.partitions, path
            assert (m.written.partition_spec_id, m.written.content) == (
                m.original.partition_spec_id,
                m.original.content,
            ), path
            if m.written.min_sequence_number != UNASSIGNED_SEQ:  # else inherited from the list
                assert m.written.min_sequence_number == m.original.min_sequence_number, path
            checked += 1
    assert checked > 0


def test_rewritten_files_read_back_as_the_originals(pairs: list[Pair]) -> None:
    """Through iceduck's readers the copy's lists and manifests hold what the originals
    hold, paths of the rewritten manifests aside."""
    for p in pairs:
        specs = p.metadata.specs_by_id()
        for old_list, new_list in p.rewrite.manifest_lists.items():
            old = open_manifest_list(fileio.read_bytes(old_list), old_list, p.metadata.format_version)
            new = open_manifest_list(fileio.read_bytes(new_list), new_list, p.metadata.format_version)
            assert (new.format_version, new.snapshot_id, new.parent_snapshot_id) == (
                old.format_version,
                old.snapshot_id,
                old.parent_snapshot_id,
            ), new_list
            assert (new.sequence_number, new.first_row_id) == (old.sequence_number, old.first_row_id), (
                new_list
            )
            assert len(new.manifests) == len(old.manifests), new_list
            for o, n in zip(old.manifests, new.manifests, strict=True):
                rewritten = p.rewrite.manifests[o.manifest_path].written
                assert n.manifest_path == rewritten.manifest_path
                assert n.manifest_length == rewritten.manifest_length == fileio.file_size(n.manifest_path)
                fields = [f for f in vars(o) if f not in ("manifest_path", "manifest_length")]
                assert [getattr(n, f) for f in fields] == [getattr(o, f) for f in fields], new_list
                o_entries = read_manifest(
                    fileio.read_bytes(o.manifest_path), o.manifest_path, o, specs
                ).entries
                n_entries = read_manifest(
                    fileio.read_bytes(n.manifest_path), n.manifest_path, n, specs
                ).entries
                assert repr(n_entries) == repr(o_entries), n.manifest_path  # repr: NaN bounds/partitions


def test_manifest_metadata_written_from_the_model_is_javas(pairs: list[Pair]) -> None:
    """The copy's manifests carry the ``schema`` and ``partition-spec`` JSON iceduck made
    from its model; parsed, it must equal the JSON Java wrote (every other key too)."""
    checked = 0
    for p in pairs:
        for path, m in p.rewrite.manifests.items():
            ours = _avro_metadata(m.written.manifest_path)
            theirs = _avro_metadata(path)
            assert ours == theirs, path
            checked += 1
    assert checked > 0


def _avro_metadata(location: str) -> dict[str, Any]:
    """An Avro file's key-value metadata, JSON values parsed."""
    with fileio.open_input(location) as f:
        metadata = dict(fastavro.reader(f).metadata)
    return {k: json.loads(v) if k in JSON_KEYS else v for k, v in metadata.items()}


# -- what Spark reads ----------------------------------------------------------------------------


def test_spark_reads_the_same_current_rows(spark: SparkSession, pairs: list[Pair]) -> None:
    problems = []
    for p in pairs:
        problems += _compare(p, "SELECT *", spark.table, p.info.row_count)
    assert not problems, "\n".join(problems)


def test_spark_reads_the_same_rows_for_every_ref(spark: SparkSession, pairs: list[Pair]) -> None:
    problems = []
    refs_seen = 0
    for p in pairs:
        for ref in p.metadata.refs:
            expected = p.info.ref_row_counts.get(ref, p.info.row_count if ref == "main" else None)
            version = _version(ref)
            problems += _compare(p, version, _query(spark, f"SELECT * FROM {{t}} {version}"), expected)
            refs_seen += 1
        missing = set(p.info.ref_row_counts) - set(p.metadata.refs)
        if missing:
            problems.append(f"{p.copy} lacks refs {sorted(missing)}")
    assert refs_seen > len(pairs), "some fixture table has tags and branches"
    assert not problems, "\n".join(problems)


def test_spark_reads_the_same_rows_for_every_snapshot(spark: SparkSession, pairs: list[Pair]) -> None:
    problems = []
    for p in pairs:
        for snapshot in p.metadata.snapshots:
            version = _version(snapshot.snapshot_id)
            problems += _compare(p, version, _query(spark, f"SELECT * FROM {{t}} {version}"))
    assert not problems, "\n".join(problems)


def test_spark_reads_the_same_entries_for_every_snapshot(spark: SparkSession, pairs: list[Pair]) -> None:
    """``<table>.entries`` as of each snapshot: every field of every manifest entry
    (status, snapshot id, both sequence numbers, the whole ``data_file``, inherited values
    resolved by Java) reachable from that snapshot's manifest list.

    Per snapshot rather than ``all_entries``: a manifest listed by several snapshots is
    read once there, through whichever list row Java's parallel listing returns first,
    and a v2 manifest listed again after an upgrade to v3 inherits ``first_row_id`` only
    through the v3 row -- so ``all_entries`` is not deterministic even on the original.
    """
    problems = []
    for p in pairs:
        for snapshot in p.metadata.snapshots:
            version = _version(snapshot.snapshot_id)
            query = _query(spark, f"SELECT * FROM {{t}}.entries {version}")
            problems += _compare(
                p, f"entries {version}", lambda t, q=query, p=p: _without_uuid_metrics(q(t), p)
            )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("metadata_table", sorted(METADATA_TABLES))
def test_spark_parses_our_metadata_as_its_own(
    spark: SparkSession, pairs: list[Pair], metadata_table: str
) -> None:
    """Spark's metadata tables over the copy equal those over the original, as Iceberg
    Java parses them from the manifest lists, manifests and metadata JSON."""
    dropped = METADATA_TABLES[metadata_table]

    problems = []
    for p in pairs:

        def query(table: str, p: Pair = p) -> DataFrame:
            return _without_uuid_metrics(spark.table(f"{table}.{metadata_table}").drop(*dropped), p)

        problems += _compare(p, metadata_table, query)
    assert not problems, "\n".join(problems)


def test_spark_describes_the_copy_as_the_original(spark: SparkSession, pairs: list[Pair]) -> None:
    """Schema, partitioning, properties (format version, sort order, current snapshot) as
    ``DESCRIBE TABLE EXTENDED`` shows them; only the name and the location differ."""
    problems = []
    for p in pairs:
        described = {}
        for side, table in (("original", p.original), ("copy", p.copy)):
            rows = spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()
            described[side] = {tuple(r) for r in rows if r[0] not in ("Name", "Location")}
            location = [r[1] for r in rows if r[0] == "Location"]
            if side == "copy" and [re.sub("^file:", "", x) for x in location] != [p.metadata.location]:
                problems.append(f"{p.copy} is located at {location}, not {p.metadata.location}")
        if described["original"] != described["copy"]:
            only_original = sorted(described["original"] - described["copy"])
            only_copy = sorted(described["copy"] - described["original"])
            problems.append(f"{p.original} DESCRIBE: original has {only_original}, copy {only_copy}")
    assert not problems, "\n".join(problems)
