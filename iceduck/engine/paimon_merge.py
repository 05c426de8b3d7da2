"""Merging a Paimon primary-key table's rows by key, in DuckDB, with its merge engine.

The rows to merge come from :mod:`iceduck.engine.paimon_read` as one relation with the
output columns ``c0, c1, ...`` and the merge columns: ``__split`` (the (partition, bucket)
split, as a key lives in one bucket of one partition), ``__k0, ...`` (the key columns
``_KEY_<k>``), ``__sf0, ...`` (``sequence.field`` columns), ``__seq``
(``_SEQUENCE_NUMBER``), ``__lvl`` (the file's LSM level) and ``__kind`` (``_VALUE_KIND``:
0 +I, 1 -U, 2 +U, 3 -D; 1 and 3 are Paimon's "retract" kinds).

Rows of a key are ordered as Paimon's ``SortMergeReader`` orders them: by the
``sequence.field`` columns when set (``sequence.field.sort-order``, ascending by default;
a null sorts first), then ``_SEQUENCE_NUMBER``; files Paimon writes never repeat a
sequence number within a bucket, so the level (a lower level is newer) only settles
what no Paimon writer produces. The merge engines (option ``merge-engine``):

* ``deduplicate`` (default): the newest row per key, dropped when it is a retract row
  (``DeduplicateMergeFunction`` then ``DropDeleteReader``);
* ``first-row``: the oldest row per key; retract rows are ignored (Paimon's writer refuses
  them unless ``ignore-delete``);
* ``partial-update``: per column the newest non-null value (``PartialUpdateMergeFunction``);
  a retract row is an error unless ``ignore-delete``, as in Paimon by default;
* ``aggregation``: per column ``fields.<f>.aggregate-function`` (default
  ``fields.default-aggregate-function``, else ``last_non_null_value``) over the key's rows,
  retract rows retracted where the function can (``sum``, ``last_value``,
  ``last_non_null_value``), ignored with ``fields.<f>.ignore-retract``, an error otherwise
  (``AggregateMergeFunction``).

Options these rules do not implement are refused by name, never ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from iceduck.engine.types import quote_string
from iceduck.errors import UnsupportedError
from iceduck.scan.paimon.tasks import PaimonFile
from iceduck.spec.paimon.schema import DataField, TableSchema

ENGINES = ("deduplicate", "first-row", "partial-update", "aggregation")
#: ``CoreOptions.ignoreDelete``: the option and its engine-specific fallback keys
IGNORE_DELETE_KEYS = (
    "ignore-delete",
    "first-row.ignore-delete",
    "deduplicate.ignore-delete",
    "partial-update.ignore-delete",
)
RETRACT = "__kind IN (1, 3)"
#: aggregate functions and whether a retract row can be applied to them
AGGREGATES: dict[str, bool] = {
    "sum": True,
    "product": False,
    "min": False,
    "max": False,
    "last_value": True,
    "last_non_null_value": True,
    "first_value": False,
    "first_non_null_value": False,
    "bool_and": False,
    "bool_or": False,
    "listagg": False,
    "primary_key": True,
}


@dataclass(frozen=True)
class MergeSpec:
    """How a table's rows are merged: its merge engine and the options it honours."""

    table: str
    schema: TableSchema
    engine: str
    key_count: int
    sequence_fields: tuple[DataField, ...]
    sequence_descending: bool
    ignore_delete: bool


def _true(schema: TableSchema, key: str) -> bool:
    return schema.options.get(key, "false").strip().lower() == "true"


def merge_spec(table: str, schema: TableSchema) -> MergeSpec:
    """The merge rules of a primary-key table; :class:`UnsupportedError` naming the option
    and the table for anything not implemented."""
    engine = schema.merge_engine
    if engine not in ENGINES:
        raise UnsupportedError(f"Paimon merge-engine {engine!r} is not supported (table {table})")
    options = schema.options
    by_name = {f.name: f for f in schema.fields}
    seq_names = tuple(schema.sequence_fields)
    missing = [n for n in seq_names if n not in by_name]
    if missing:
        raise UnsupportedError(f"sequence.field names unknown columns {missing} (table {table})")
    if seq_names and engine == "first-row":
        raise UnsupportedError(
            f"sequence.field with merge-engine first-row is invalid in Paimon (table {table})"
        )
    order = options.get("sequence.field.sort-order", "ascending").strip().lower()
    if order not in ("ascending", "descending"):
        raise UnsupportedError(f"sequence.field.sort-order {order!r} is not supported (table {table})")
    for key in options:
        if key.startswith("fields.") and key.endswith(".sequence-group"):
            raise UnsupportedError(
                f"Paimon option {key!r} (sequence groups) is not supported (table {table})"
            )
    if engine == "partial-update":
        for key in (
            "partial-update.remove-record-on-delete",
            "partial-update.remove-record-on-sequence-group",
        ):
            if _true(schema, key):
                raise UnsupportedError(f"Paimon option {key!r} is not supported (table {table})")
        for key in options:
            if key.startswith("fields.") and key.endswith("aggregate-function"):
                raise UnsupportedError(
                    f"Paimon option {key!r} (aggregation in a partial-update table) is not supported "
                    f"(table {table})"
                )
    if engine == "aggregation":
        if _true(schema, "aggregation.remove-record-on-delete"):
            raise UnsupportedError(
                f"Paimon option 'aggregation.remove-record-on-delete' is not supported (table {table})"
            )
        for f in schema.fields:
            if f.name in schema.primary_keys:
                continue
            name = aggregate_function(schema, f)
            if name not in AGGREGATES:
                raise UnsupportedError(
                    f"Paimon aggregate function {name!r} of column {f.name!r} is not supported "
                    f"(table {table})"
                )
            if name == "listagg" and _true(schema, f"fields.{f.name}.distinct"):
                raise UnsupportedError(
                    f"Paimon option 'fields.{f.name}.distinct' is not supported (table {table})"
                )
    return MergeSpec(
        table=table,
        schema=schema,
        engine=engine,
        key_count=len(schema.trimmed_primary_keys),
        sequence_fields=tuple(by_name[n] for n in seq_names),
        sequence_descending=order == "descending",
        ignore_delete=any(_true(schema, k) for k in IGNORE_DELETE_KEYS),
    )


def check_retractions(spec: MergeSpec, outputs: Sequence[DataField], files: Iterable[PaimonFile]) -> None:
    """Refuse, before reading, a merge that would meet a retract row it cannot apply: a
    file of the merge holding DELETE/UPDATE_BEFORE rows (``_DELETE_ROW_COUNT`` > 0) in a
    partial-update table without ``ignore-delete``, or in an aggregation table whose read
    columns include a function that cannot retract. (A file without the count is checked
    while reading: the merge SQL fails with the same message.)"""
    if spec.ignore_delete or spec.engine not in ("partial-update", "aggregation"):
        return
    with_deletes = next((f for f in files if f.delete_row_count), None)
    if with_deletes is None:
        return
    if spec.engine == "partial-update":
        raise UnsupportedError(
            f"Paimon partial-update table {spec.table} holds DELETE/UPDATE_BEFORE rows "
            f"({with_deletes.path}); Paimon's partial-update merge engine refuses them unless "
            "'ignore-delete' is set"
        )
    for f in outputs:
        name = "primary_key" if f.name in spec.schema.primary_keys else aggregate_function(spec.schema, f)
        if not AGGREGATES.get(name, False) and not _true(spec.schema, f"fields.{f.name}.ignore-retract"):
            raise UnsupportedError(
                f"Paimon aggregate function {name!r} of column {f.name!r} cannot retract the "
                f"DELETE/UPDATE_BEFORE rows of {with_deletes.path} (table {spec.table}); Paimon needs "
                f"'fields.{f.name}.ignore-retract' for that"
            )


def aggregate_function(schema: TableSchema, f: DataField) -> str:
    """``fields.<f>.aggregate-function``, else ``fields.default-aggregate-function``, else
    ``last_non_null_value`` (Paimon's default)."""
    options = schema.options
    name = options.get(f"fields.{f.name}.aggregate-function") or options.get(
        "fields.default-aggregate-function"
    )
    return (name or "last_non_null_value").strip().lower()


def _order(spec: MergeSpec, newest_first: bool) -> str:
    """ORDER BY terms from oldest to newest (or the reverse)."""
    terms: list[tuple[str, bool, bool]] = []  # (expr, ascending, nulls first)
    for i in range(len(spec.sequence_fields)):
        terms.append((f"__sf{i}", not spec.sequence_descending, not spec.sequence_descending))
    terms += [("__seq", True, True), ("__lvl", False, False)]
    parts = []
    for expr, asc, nulls_first in terms:
        if newest_first:
            asc, nulls_first = not asc, not nulls_first
        parts.append(f"{expr} {'ASC' if asc else 'DESC'} NULLS {'FIRST' if nulls_first else 'LAST'}")
    return ", ".join(parts)


def merge_sql(spec: MergeSpec, source: str, outputs: Sequence[DataField]) -> str:
    """The merged rows of ``source`` (see the module docstring) as ``c0, c1, ...``, one
    per output field in order."""
    keys = ", ".join(["__split", *(f"__k{i}" for i in range(spec.key_count))])
    columns = ", ".join(f"c{i}" for i in range(len(outputs)))
    if spec.engine in ("deduplicate", "first-row"):
        newest = spec.engine == "deduplicate"
        where = f" WHERE NOT ({RETRACT})" if spec.ignore_delete or not newest else ""
        ranked = (
            f"SELECT * FROM ({source}) AS __m{where} "
            f"QUALIFY row_number() OVER (PARTITION BY {keys} ORDER BY {_order(spec, newest)}) = 1"
        )
        return f"SELECT {columns} FROM ({ranked}) AS __d WHERE NOT ({RETRACT})"
    order = _order(spec, newest_first=False)
    if spec.engine == "partial-update":
        if spec.ignore_delete:
            where = f" WHERE NOT ({RETRACT})"
        else:
            message = (
                f"Paimon partial-update table {spec.table} holds a DELETE/UPDATE_BEFORE row; "
                "Paimon's partial-update merge engine refuses them unless 'ignore-delete' is set"
            )
            where = f" WHERE CASE WHEN {RETRACT} THEN error({quote_string(message)}) ELSE true END"
        items = [
            f"last(c{i} ORDER BY {order}) FILTER (WHERE c{i} IS NOT NULL) AS c{i}"
            for i in range(len(outputs))
        ]
        return f"SELECT {', '.join(items)} FROM ({source}) AS __m{where} GROUP BY {keys}"
    items = [f"{_aggregate(spec, f, f'c{i}', order)} AS c{i}" for i, f in enumerate(outputs)]
    where = f" WHERE NOT ({RETRACT})" if spec.ignore_delete else ""
    return f"SELECT {', '.join(items)} FROM ({source}) AS __m{where} GROUP BY {keys}"


def _aggregate(spec: MergeSpec, f: DataField, c: str, order: str) -> str:
    """One column of the ``aggregation`` engine (Paimon's ``FieldAggregator``s)."""
    schema = spec.schema
    if f.name in schema.primary_keys:
        return f"any_value({c})"
    name = aggregate_function(schema, f)
    ignore = _true(schema, f"fields.{f.name}.ignore-retract")
    value = f"CASE WHEN {RETRACT} THEN NULL ELSE {c} END"
    adds = f"NOT ({RETRACT})"
    if name == "sum":  # a retract row subtracts (FieldSumAgg.retract)
        if ignore:
            return f"sum({c}) FILTER (WHERE {adds})"
        return f"sum(CASE WHEN {RETRACT} THEN -{c} ELSE {c} END)"
    if name in ("last_value", "primary_key"):
        body = f"last({c if ignore else value} ORDER BY {order})"
        return body + (f" FILTER (WHERE {adds})" if ignore else "")
    if name == "last_non_null_value":
        cond = f"{c} IS NOT NULL" + (f" AND {adds}" if ignore else "")
        return f"last({value} ORDER BY {order}) FILTER (WHERE {cond})"
    simple = {
        "product": _product(f, c, order, adds),
        "min": f"min({c})",
        "max": f"max({c})",
        "first_value": f"first({c} ORDER BY {order})",
        "first_non_null_value": f"first({c} ORDER BY {order}) FILTER (WHERE {c} IS NOT NULL AND {adds})",
        "bool_and": f"bool_and({c})",
        "bool_or": f"bool_or({c})",
    }
    if name == "listagg":
        delimiter = schema.options.get(f"fields.{f.name}.list-agg-delimiter", ",")
        expr = f"string_agg({c}, {quote_string(delimiter)} ORDER BY {order})"
    else:
        expr = simple[name]
    if "FILTER" not in expr:
        expr += f" FILTER (WHERE {adds})"
    if ignore:
        return expr
    message = (
        f"Paimon aggregate function {name!r} of column {f.name!r} cannot retract a DELETE/UPDATE_BEFORE row "
        f"(table {spec.table}); Paimon needs 'fields.{f.name}.ignore-retract' for that"
    )
    return f"CASE WHEN bool_or({RETRACT}) THEN error({quote_string(message)}) ELSE {expr} END"


def _product(f: DataField, c: str, order: str, adds: str) -> str:
    """``product`` as ``FieldProductAgg`` multiplies: exactly for integers (DuckDB's
    ``product`` is a DOUBLE), rounding to the column's scale after each step for decimals
    (``fromBigDecimal``), in floating point for FLOAT/DOUBLE."""
    t = f.type
    if t.root in ("TINYINT", "SMALLINT", "INT", "BIGINT", "DECIMAL"):
        step = "a * b" if t.root != "DECIMAL" else f"CAST(a * b AS DECIMAL({t.precision}, {t.scale}))"
        values = f"list({c} ORDER BY {order}) FILTER (WHERE {c} IS NOT NULL AND {adds})"
        return f"list_reduce({values}, lambda a, b: {step})"
    return f"product({c})"
