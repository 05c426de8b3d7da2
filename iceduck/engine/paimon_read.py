"""Execute a :class:`~iceduck.scan.paimon.tasks.PaimonScanPlan` in DuckDB.

:func:`paimon_scan_sql` returns one SELECT, for splicing into a statement as a derived
table, whose columns are the read schema's columns (current names, DuckDB types of the
Paimon types), reading exactly the planned files::

    SELECT CAST(c0 AS BIGINT) AS "id", ... FROM (
        SELECT "id" AS c0, "name" AS c1 FROM read_parquet(getvariable('<name>__f0'))
      UNION ALL                                           -- raw splits, per schema version
        SELECT ... FROM read_parquet(...) WHERE NOT (file_row_number BETWEEN 3 AND 5)
      UNION ALL                                           -- deletion vectors applied
        <merge of the rows of the splits that need one>   -- :mod:`.paimon_merge`
    ) AS __s

Each data file's columns are read by name in the schema version it was written with
(``_SCHEMA_ID``) and mapped to the read schema by field id: a renamed column is read by
its old name, a column added since is a typed NULL, a widened one is cast. Files that
share a schema version and a role (raw, or merged) are one ``read_parquet`` over a list
passed as a DuckDB variable ``<name>__f<n>`` (so a failure can name the broken file,
:func:`iceduck.engine.file_errors.scan_files`). Deleted positions of a deletion vector
are dropped by ``file_row_number`` (few runs: ranges; else bitmaps), the helpers of the
Iceberg reader (:mod:`iceduck.engine.deletes`, :mod:`iceduck.engine.bitmaps`). Rows to
merge are first filtered by the scan filter's key conditions (:mod:`.paimon_filter`), so
DuckDB pushes them into the Parquet scans before the merge sorts anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from iceduck.engine import queries
from iceduck.engine.bitmaps import bitmap_scans
from iceduck.engine.deletes import PositionCache, range_predicate
from iceduck.engine.object_stores import duck_paths
from iceduck.engine.paimon_files import ARROW_FORMATS, files_table
from iceduck.engine.paimon_filter import filter_sql
from iceduck.engine.paimon_merge import MergeSpec, check_retractions, merge_spec, merge_sql
from iceduck.engine.projection import per_file
from iceduck.engine.types import duckdb_type, quote_identifier, quote_string
from iceduck.errors import UnsupportedError, UserError
from iceduck.formats.paimon.deletion_vectors import read_deletion_vector
from iceduck.scan.paimon.filters import restrict_filter
from iceduck.scan.paimon.tasks import DeletionVector, PaimonFile, PaimonScanPlan
from iceduck.scan.tasks import FileScanTask
from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.predicates import AlwaysTrue, BooleanExpression, rewrite_not
from iceduck.spec.manifest import FileFormat
from iceduck.spec.paimon.iceberg_bridge import iceberg_schema, iceberg_type
from iceduck.spec.paimon.schema import DataField, TableSchema
from iceduck.spec.paimon.types import PaimonType

# numpy is imported where deletion vectors are applied
if TYPE_CHECKING:
    import numpy as np

    from iceduck.engine.connection import Duck

#: what the names of a scan's variables start with, after its name
AUX = "__"
#: Paimon's system columns of primary-key data files
SEQUENCE_COLUMN = "_SEQUENCE_NUMBER"
KIND_COLUMN = "_VALUE_KIND"
KEY_PREFIX = "_KEY_"


def paimon_type_sql(t: PaimonType) -> str:
    """The DuckDB type a Paimon type is read as: that of its Iceberg counterpart
    (:func:`~iceduck.spec.paimon.iceberg_bridge.iceberg_type`), so both formats agree."""
    return duckdb_type(iceberg_type(t))


def paimon_scan_sql(
    duck: Duck,
    plan: PaimonScanPlan,
    name: str,
    columns: Sequence[str] | None = None,
    *,
    positions: PositionCache | None = None,
) -> str:
    """Set on ``duck`` the variables the scan's SELECT names (``<name>__...``) and return
    the SELECT (see the module docstring). ``columns`` picks read-schema columns by name
    (all by default), in that order; ``positions`` is the session's cache of decoded
    deletion vectors."""
    scan = _Scan(duck, plan, name, _outputs(plan.schema, columns), positions or PositionCache())
    sql = scan.sql()
    for variable, value in scan.variables.items():
        duck.execute(f"SET VARIABLE {quote_identifier(variable)} = ?", [value])
    return sql


def _outputs(schema: TableSchema, columns: Sequence[str] | None) -> list[DataField]:
    if columns is None:
        outputs = list(schema.fields)
    else:
        by_name = {f.name: f for f in schema.fields}
        unknown = [c for c in columns if c not in by_name]
        if unknown:
            raise UserError(f"Paimon table has no column {unknown[0]!r}")
        outputs = [by_name[c] for c in columns]
    if not outputs:
        raise UserError("a scan must read at least one column")
    return outputs


@dataclass
class _Read:
    """Files read by one ``read_parquet`` (or one Arrow table: ORC, Avro): one schema
    version, one role, one format."""

    schema_id: int
    merged: bool
    file_format: str
    files: list[PaimonFile] = field(default_factory=list)
    splits: list[int] = field(default_factory=list)


@dataclass
class _Scan:
    duck: Duck
    plan: PaimonScanPlan
    name: str
    outputs: list[DataField]
    positions: PositionCache
    variables: dict[str, Any] = field(default_factory=dict)
    #: file lists named so far (``<name>__f<n>``)
    lists: int = 0

    def sql(self) -> str:
        plan = self.plan
        table = plan.table
        for f in plan.files:
            if f.file_format != "parquet" and f.file_format not in ARROW_FORMATS:
                raise UnsupportedError(
                    f"reading Paimon {f.file_format} data files is not supported: {f.path}"
                )
        spec = merge_spec(table, plan.schema) if plan.schema.primary_keys else None
        deleted = self._deleted()
        reads: dict[tuple[int, bool, str], _Read] = {}
        for n, split in enumerate(plan.splits):
            merged = not split.raw
            for f in split.files:
                if _all_deleted(f, deleted.get(f.path)):
                    continue
                group = (f.schema_id, merged, f.file_format)
                r = reads.setdefault(group, _Read(f.schema_id, merged, f.file_format))
                r.files.append(f)
                r.splits.append(n)
        raw = [self._select(r, deleted, None) for r in reads.values() if not r.merged]
        merging = [r for r in reads.values() if r.merged]
        parts = list(raw)
        if merging:
            assert spec is not None  # append-only splits are always raw
            check_retractions(spec, self.outputs, (f for r in merging for f in r.files))
            source = " UNION ALL ".join(self._select(r, deleted, spec) for r in merging)
            parts.append(merge_sql(spec, source, self.outputs))
        types = [paimon_type_sql(f.type) for f in self.outputs]
        if not parts:
            items = ", ".join(
                f"CAST(NULL AS {t}) AS {quote_identifier(f.name)}"
                for f, t in zip(self.outputs, types, strict=True)
            )
            return f"SELECT {items} WHERE false"
        items = ", ".join(
            f"CAST(c{i} AS {t}) AS {quote_identifier(f.name)}"
            for i, (f, t) in enumerate(zip(self.outputs, types, strict=True))
        )
        union = " UNION ALL ".join(f"({p})" for p in parts)
        return f"SELECT {items} FROM ({union}) AS __s"

    # -- deletion vectors --------------------------------------------------------------------

    def _deleted(self) -> dict[str, np.ndarray]:
        """Deleted positions of each file with a deletion vector (sorted, unique)."""
        out: dict[str, np.ndarray] = {}
        for f in self.plan.files:
            if f.deletion_vector is not None:
                found = self._vector(f.deletion_vector)
                if len(found):
                    out[f.path] = found
        return out

    def _vector(self, dv: DeletionVector) -> np.ndarray:
        import numpy as np

        key = ("paimon-dv", dv.index_path, dv.range.offset, dv.range.length)
        found = self.positions.get(key)
        if found is None:
            found = np.asarray(read_deletion_vector(dv.index_path, dv.range), dtype=np.int64)
            self.positions.put(key, found, max(len(found), 1))
        return found

    # -- one read_parquet per group ---------------------------------------------------------

    def _select(self, r: _Read, deleted: dict[str, np.ndarray], spec: MergeSpec | None) -> str:
        """The SELECTs of one group of files (several when deletion bitmaps split it)."""
        tasks = [_task(f) for f in r.files]
        split_of = {f.path: s for f, s in zip(r.files, r.splits, strict=True)}
        level_of = {f.path: f.level for f in r.files}
        with_deletes = [t for t in tasks if t.path in deleted]
        plain = [t for t in tasks if t.path not in deleted]
        selects = []
        if plain:
            selects.append(self._one(r, plain, "", split_of, level_of, spec))
        if with_deletes:
            ranges = range_predicate(with_deletes, deleted)
            if ranges is not None:
                selects.append(self._one(r, with_deletes, ranges, split_of, level_of, spec))
            else:
                for b in bitmap_scans(with_deletes, deleted):
                    predicate, blobs = b.predicate(f"{self.name}{AUX}b{self.lists}_")
                    self.variables.update(blobs)
                    selects.append(self._one(r, b.tasks, predicate, split_of, level_of, spec))
        return " UNION ALL ".join(selects)

    def _one(
        self,
        r: _Read,
        tasks: Sequence[FileScanTask],
        where: str,
        split_of: dict[str, int],
        level_of: dict[str, int],
        spec: MergeSpec | None,
    ) -> str:
        files = f"{self.name}{AUX}f{self.lists}"
        self.lists += 1
        if r.file_format == "parquet":
            self.variables[files] = duck_paths(self.duck, [t.path for t in tasks])
        file_schema = self.plan.file_schemas.get(r.schema_id)
        if file_schema is None:
            raise UserError(f"the scan plan lacks schema {r.schema_id} of {tasks[0].path}")
        by_id = {f.id: f for f in file_schema.fields}
        items = [f"{_column(by_id.get(f.id), f)} AS c{i}" for i, f in enumerate(self.outputs)]
        if spec is not None:
            current = {f.name: f for f in self.plan.schema.fields}
            for i, k in enumerate(self.plan.schema.trimmed_primary_keys):
                old = by_id.get(current[k].id)
                column = KEY_PREFIX + (old.name if old is not None else k)
                items.append(f"{quote_identifier(column)} AS __k{i}")
            for i, sf in enumerate(spec.sequence_fields):
                items.append(f"{_column(by_id.get(sf.id), sf)} AS __sf{i}")
            items.append(f"{quote_identifier(SEQUENCE_COLUMN)} AS __seq")
            items.append(f"{quote_identifier(KIND_COLUMN)} AS __kind")
            items.append(f"{per_file([str(split_of[t.path]) for t in tasks])} AS __split")
            items.append(f"{per_file([str(level_of[t.path]) for t in tasks])} AS __lvl")
        conditions = [where] if where and where != "true" else []
        if spec is not None and (keys := self._key_filter(file_schema)) is not None:
            conditions.append(keys)
        condition = " WHERE " + " AND ".join(f"({c})" for c in conditions) if conditions else ""
        # hive_partitioning off: Paimon's partition folders (``dt=2024-01-01/``, ``p=__DEFAULT_PARTITION__``)
        # are not columns: the files hold the partition columns themselves
        source = f"read_parquet(getvariable({quote_string(files)}), hive_partitioning = false)"
        if r.file_format != "parquet":  # ORC, Avro: read through Arrow, the same columns
            source = quote_identifier(files)
            queries.register_arrow(self.duck, files, files_table([t.path for t in tasks], r.file_format))
        return f"SELECT {', '.join(items)} FROM {source}{condition}"

    @cached_property
    def _key_conditions(self) -> BooleanExpression:
        """The conjuncts of the filter on key and partition columns, bound."""
        schema = self.plan.schema
        bound = rewrite_not(bind(iceberg_schema(schema), self.plan.row_filter))
        ids = {f.id for f in schema.trimmed_primary_key_fields} | {f.id for f in schema.partition_fields}
        return restrict_filter(bound, ids)

    def _key_filter(self, file_schema: TableSchema) -> str | None:
        """The filter's conditions on key and partition columns as SQL over a file of
        ``file_schema`` (:mod:`iceduck.engine.paimon_filter`)."""
        schema = self.plan.schema
        restricted = self._key_conditions
        if isinstance(restricted, AlwaysTrue):
            return None
        keys = {f.id for f in schema.trimmed_primary_key_fields}
        partitions = {f.id for f in schema.partition_fields}
        by_id = {f.id: f for f in file_schema.fields}
        columns = {}
        for f in schema.fields:
            old = by_id.get(f.id)
            if f.id in keys and old is not None:
                columns[f.id] = quote_identifier(KEY_PREFIX + old.name)
            elif f.id in partitions:
                columns[f.id] = _column(old, f)
        return filter_sql(restricted, columns)


def _column(old: DataField | None, new: DataField) -> str:
    """A read-schema column from a file written with another schema version: its name
    there, or a typed NULL when the file predates the column."""
    if old is None:
        return f"CAST(NULL AS {paimon_type_sql(new.type)})"
    expr = quote_identifier(old.name)
    if iceberg_type(old.type) != iceberg_type(new.type):
        expr = f"CAST({expr} AS {paimon_type_sql(new.type)})"
    return expr


def _task(f: PaimonFile) -> FileScanTask:
    """A data file as the Iceberg reader's delete helpers take it (path and row count)."""
    return FileScanTask(f.path, FileFormat.PARQUET, f.row_count, f.file_size, 0, (), 0)


def _all_deleted(f: PaimonFile, positions: np.ndarray | None) -> bool:
    if positions is None or f.row_count <= 0:
        return False
    import numpy as np

    return int(np.searchsorted(positions, f.row_count)) >= f.row_count
