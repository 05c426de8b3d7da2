"""Which column metrics of a data file describe the values a scan reads.

Metrics are kept "by field id in manifests" (spec, "Scan Planning"): ``value_counts``,
``null_value_counts``, ``nan_value_counts``, ``lower_bounds`` and ``upper_bounds`` are each a
"Map from column id to" a count or bound of "the column". A reader, though, does not read a
column id, it resolves a field id (spec, "Column Projection": "Columns in Iceberg data
files are selected by field id"), and for a field id the file does not hold:

    - Return the value from partition metadata if an Identity Transform exists for the
      field and the partition value is present in the ``partition`` struct [...]
    - Use ``schema.name-mapping.default`` metadata to map field id to columns without
      field id as described below and use the column if it is present.
    - Return the default value if it has a defined ``initial-default`` [...]
    - Return ``null`` in all other cases.

A file written with field ids has metrics for the ids its columns carry, so its metrics
describe what is read. A file *without* field ids (imported by ``add_files``, migrated from
Hive) has no column ids at all: the ids in its metrics are those a name mapping gave its
columns when they were computed. The mapping "provide[s] fallback field ids to be used when
a data file does not contain field id information", and the table's *current* mapping is
the one a reader uses. When it no longer maps any column of the file to a field id (the id
dropped from the mapping, or mapped to names the file does not have), the reader returns
the identity partition value, the ``initial-default`` or ``null`` for every row, and the
metrics stored under that id describe a column that is no longer read.

The rule: **a metric of a file without field ids is trusted only for the field ids the
table's current name mapping gives the file's own columns**; others are dropped before the
file is tested, and a missing metric never prunes (nor proves a match). Files with field ids
keep all their metrics. Telling the two apart takes each file's schema (its footer), so
planning asks :data:`FieldIdsOf` -- and only on a table with a name mapping, only for the
files whose metrics would decide something (skip them, or prove every row matches); without
a way to read footers, no metric of such a table is trusted.

The mapping is assumed not to move a name from one column to another: a field id it still
maps to a column of the file is taken to be the column its metrics were computed from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from iceduck.spec.manifest import DataFile, FileFormat

#: paths of Parquet data files -> for each, None when the file carries Iceberg field ids,
#: else the field ids (at every level) the table's name mapping gives the file's columns
FieldIdsOf = Callable[[Sequence[str]], Mapping[str, frozenset[int] | None]]


def trusted_only(file: DataFile, provided: frozenset[int]) -> DataFile:
    """``file`` with the metrics of field ids outside ``provided`` dropped (the same object
    when none is)."""
    maps = {
        "column_sizes": file.column_sizes,
        "value_counts": file.value_counts,
        "null_value_counts": file.null_value_counts,
        "nan_value_counts": file.nan_value_counts,
        "lower_bounds": file.lower_bounds,
        "upper_bounds": file.upper_bounds,
    }
    if all(m is None or m.keys() <= provided for m in maps.values()):
        return file
    kept = {
        name: None if m is None else {fid: v for fid, v in m.items() if fid in provided}
        for name, m in maps.items()
    }
    return replace(file, **kept)  # type: ignore[arg-type]


@dataclass(frozen=True)
class MetricsTrust:
    """How far the metrics of one table's data files can be trusted (module docstring).

    ``name_mapped``: the table has ``schema.name-mapping.default`` (else every file carries
    field ids, which a reader requires, and every metric is trusted); ``field_ids_of`` reads
    the files' schemas (None: they cannot be read, and no metric of a name-mapped table is
    trusted)."""

    name_mapped: bool
    field_ids_of: FieldIdsOf | None = None

    def trusted(self, files: Sequence[DataFile]) -> list[DataFile]:
        """``files`` with only the metrics that describe what a scan reads, in order."""
        if not self.name_mapped or not files:
            return list(files)
        parquet = [f.file_path for f in files if f.file_format is FileFormat.PARQUET]
        ids: Mapping[str, frozenset[int] | None] = {}
        if self.field_ids_of is not None and parquet:
            ids = self.field_ids_of(parquet)
        out = []
        for f in files:
            found = ids.get(f.file_path, frozenset())
            out.append(f if found is None else trusted_only(f, found))
        return out
