"""The delete files of a snapshot, indexed once per scan, and the scope rules that pick them.

Spec, "Scan Planning" -- delete files "must be applied to data files at read time, limited
by the following scope rules":

* "A deletion vector must be applied to a data file when [...] the data file's
  ``file_path`` is equal to the deletion vector's ``referenced_data_file``" and "the data
  file's data sequence number is *less than or equal to* the deletion vector's". At most
  one DV per data file; a DV "must replace all previously written position delete files
  so that when a DV is present, readers can safely ignore matching position delete files".
* "A *position* delete file must be applied to a data file when [...] the data file's
  ``file_path`` is equal to the delete file's ``referenced_data_file`` if it is non-null,
  the data file's data sequence number is *less than or equal to* the delete file's data
  sequence number, the data file's partition (both spec and partition values) is equal to
  the delete file's partition [and] there is no deletion vector that must be applied".
  "Position deletes (vectors and files) must be applied to data files from the same
  commit, when the data and delete file data sequence numbers are equal."
* "An *equality* delete file must be applied to a data file when [...] the data file's
  data sequence number is *strictly less than* the delete's data sequence number [and]
  the data file's partition (both spec id and partition values) is equal to the delete
  file's partition *or* the delete file's partition spec is unpartitioned" ("Equality
  delete files stored with an unpartitioned spec are applied as global deletes").

The structure is Iceberg Java 1.10's ``DeleteFileIndex``: DVs by referenced data file;
position deletes by referenced data file when known (``referenced_data_file``, or equal
``file_path`` bounds) and otherwise by (spec id, partition); equality deletes by (spec id,
partition) or global; each group sorted by sequence number so a data file's deletes are
a binary search away. As in Java, delete metrics prune further: a partition-scoped
position delete file whose ``file_path`` bounds exclude the data file's path cannot hold
its rows, and an equality delete file whose key columns' counts or bounds cannot overlap
the data file's (``canContainEqDeletesForFile``) is left out.

Partition equality follows note 3: floats are equal when their bits are ("NaNs
normalized"), so ``-0.0`` and ``0.0`` are different partitions and NaN equals NaN.
"""

from __future__ import annotations

import math
import struct
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from iceduck.errors import CorruptDataError
from iceduck.scan.tasks import DeleteFile
from iceduck.spec.expressions.bounds import domains
from iceduck.spec.manifest import DataFile, FileContent
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.types import NestedField, PrimitiveType

#: reserved field id of ``file_path`` in position delete files
DELETE_FILE_PATH_ID = 2147483546
_NO_DELETES: tuple[DeleteFile, ...] = ()
_CANONICAL_NAN = struct.pack(">d", math.nan)

Lookup = tuple[DeleteFile | None, tuple[DeleteFile, ...], tuple[DeleteFile, ...]]


def _float_key(v: float) -> tuple[str, bytes]:
    """Java's ``Double.doubleToLongBits``: the bits, with every NaN the same."""
    return ("float", _CANONICAL_NAN if v != v else struct.pack(">d", v))


def _normalize(partition: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(_float_key(v) if type(v) is float else v for v in partition)


@dataclass
class _Group:
    """Delete files of one scope, sorted by data sequence number once all are added."""

    items: list[Any] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)

    def add(self, seq: int, item: Any) -> None:
        self.items.append((seq, item))

    def freeze(self) -> None:
        self.items.sort(key=lambda pair: pair[0])
        self.seqs = [seq for seq, _ in self.items]
        self.items = [item for _, item in self.items]

    def at_or_after(self, seq: int) -> list[Any]:
        """Items whose sequence number is >= ``seq`` (position deletes)."""
        return self.items[bisect_left(self.seqs, seq) :]

    def after(self, seq: int) -> list[Any]:
        """Items whose sequence number is > ``seq`` (equality deletes)."""
        return self.items[bisect_right(self.seqs, seq) :]


@dataclass(frozen=True)
class _PositionFile:
    delete: DeleteFile
    #: ``file_path`` column bounds as UTF-8 bytes (None: unknown)
    lower: bytes | None
    upper: bytes | None

    def may_reference(self, path: bytes) -> bool:
        return (self.lower is None or path >= self.lower) and (self.upper is None or path <= self.upper)


@dataclass(frozen=True)
class _EqualityFile:
    delete: DeleteFile
    file: DataFile
    #: the key columns, as the newest schema that has them knows them (None: dropped everywhere)
    fields: tuple[NestedField | None, ...]


def _contains_null(counts: dict[int, int] | None, f: NestedField) -> bool:
    if f.required:
        return False
    if counts is None:
        return True
    n = counts.get(f.field_id)
    return n is None or n > 0


def _all_null(nulls: dict[int, int] | None, values: dict[int, int] | None, f: NestedField) -> bool:
    if f.required or nulls is None or values is None:
        return False
    n, v = nulls.get(f.field_id), values.get(f.field_id)
    return n is not None and v is not None and n == v


def _all_non_null(nulls: dict[int, int] | None, f: NestedField) -> bool:
    if f.required:
        return True
    if nulls is None:
        return False
    n = nulls.get(f.field_id)
    return n is not None and n <= 0


def _ranges_overlap(f: NestedField, data: DataFile, delete: DataFile) -> bool:
    fid = f.field_id
    bounds = (
        (data.lower_bounds or {}).get(fid),
        (data.upper_bounds or {}).get(fid),
        (delete.lower_bounds or {}).get(fid),
        (delete.upper_bounds or {}).get(fid),
    )
    if any(b is None for b in bounds):
        return True
    for dom in domains(f.field_type, fid):  # kept if any order keeps it (uuid has two)
        data_lower, data_upper, del_lower, del_upper = (dom.decode(b) for b in bounds)  # type: ignore[arg-type]
        if dom.floating and any(k != k for k in (data_lower, data_upper, del_lower, del_upper)):
            return True
        if not (data_lower > del_upper or del_lower > data_upper):
            return True
    return False


def can_contain_equality_deletes(data: DataFile, eq: _EqualityFile) -> bool:
    """Java ``DeleteFileIndex.canContainEqDeletesForFile``: False only when the metrics of
    the data file and of the delete file prove no key of the delete matches a row."""
    delete = eq.file
    check_ranges = (
        data.lower_bounds is not None
        and data.upper_bounds is not None
        and delete.lower_bounds is not None
        and delete.upper_bounds is not None
    )
    for f in eq.fields:
        if f is None or not isinstance(f.field_type, PrimitiveType):
            continue  # no stats for nested types (or a column no schema knows): may match
        if _contains_null(data.null_value_counts, f) and _contains_null(delete.null_value_counts, f):
            continue  # null rows and null keys: the deletes must be applied
        if _all_null(data.null_value_counts, data.value_counts, f) and _all_non_null(
            delete.null_value_counts, f
        ):
            return False
        if _all_null(delete.null_value_counts, delete.value_counts, f) and _all_non_null(
            data.null_value_counts, f
        ):
            return False
        if check_ranges and not _ranges_overlap(f, data, delete):
            return False
    return True


def _field_finder(schemas: Sequence[Schema]) -> Callable[[int], NestedField | None]:
    """Find a field in the first schema that has it ("If a delete column in an equality
    delete file is later dropped from the table, it must still be used")."""
    cache: dict[int, NestedField | None] = {}

    def find(field_id: int) -> NestedField | None:
        if field_id not in cache:
            cache[field_id] = next(
                (f for s in schemas if (f := s.find_field_or_none(field_id)) is not None), None
            )
        return cache[field_id]

    return find


class DeleteIndex:
    """Delete files of one scan by scope; :meth:`for_data_file` applies the rules above.

    ``schemas``: where equality key columns are looked up, in order of preference (the scan
    schema first, then the table's other schemas, newest first).
    """

    def __init__(self, specs_by_id: dict[int, PartitionSpec], schemas: Sequence[Schema] = ()) -> None:
        self._specs = specs_by_id
        self._find_field = _field_finder(schemas)
        #: specs whose partition tuples may hold floats (identity or unknown transforms)
        self._float_specs = {
            sid
            for sid, spec in specs_by_id.items()
            if any(pf.transform.is_identity or pf.transform.is_unknown for pf in spec.fields)
        }
        self._dvs: dict[str, DeleteFile] = {}
        self._pos_by_path: dict[str, _Group] = {}
        self._pos_by_partition: dict[tuple[int, tuple[Any, ...]], _Group] = {}
        self._eq_global = _Group()
        self._eq_by_partition: dict[tuple[int, tuple[Any, ...]], _Group] = {}
        self._frozen = False
        self.files: list[DeleteFile] = []

    def _key(self, spec_id: int, partition: tuple[Any, ...]) -> tuple[int, tuple[Any, ...]]:
        if spec_id in self._float_specs:
            return spec_id, _normalize(partition)
        return spec_id, partition

    def _spec(self, delete: DeleteFile) -> PartitionSpec:
        spec = self._specs.get(delete.spec_id)
        if spec is None:
            raise CorruptDataError(
                f"delete file written with unknown partition spec {delete.spec_id}", delete.path
            )
        return spec

    # -- building ---------------------------------------------------------------------------

    def add(self, delete: DeleteFile, file: DataFile) -> None:
        """Index one live delete file (``file`` is its manifest entry's data_file, for metrics)."""
        if self._frozen:
            raise RuntimeError("delete index already frozen")
        self.files.append(delete)
        seq = delete.sequence_number
        if delete.content is FileContent.POSITION_DELETES:
            target = delete.referenced_data_file
            if delete.is_deletion_vector:
                if target is None:
                    raise CorruptDataError("deletion vector without referenced_data_file", delete.path)
                other = self._dvs.get(target)
                if other is not None:
                    raise CorruptDataError(
                        f"two deletion vectors for data file {target} (at offsets {other.content_offset} "
                        f"of {other.path} and {delete.content_offset} of {delete.path})",
                        delete.path,
                    )
                self._dvs[target] = delete
            elif target is not None:
                self._pos_by_path.setdefault(target, _Group()).add(seq, delete)
            else:
                lower = (file.lower_bounds or {}).get(DELETE_FILE_PATH_ID)
                upper = (file.upper_bounds or {}).get(DELETE_FILE_PATH_ID)
                entry = _PositionFile(
                    delete, None if lower is None else bytes(lower), None if upper is None else bytes(upper)
                )
                key = self._key(delete.spec_id, delete.partition)
                self._pos_by_partition.setdefault(key, _Group()).add(seq, entry)
        elif delete.content is FileContent.EQUALITY_DELETES:
            if not delete.equality_ids:
                raise CorruptDataError("equality delete file without equality_ids", delete.path)
            eq = _EqualityFile(delete, file, tuple(self._find_field(fid) for fid in delete.equality_ids))
            if self._spec(delete).is_unpartitioned:
                self._eq_global.add(seq, eq)
            else:
                key = self._key(delete.spec_id, delete.partition)
                self._eq_by_partition.setdefault(key, _Group()).add(seq, eq)
        else:
            raise CorruptDataError(f"a {delete.content.name} file is not a delete file", delete.path)

    def freeze(self) -> DeleteIndex:
        for group in (
            *self._pos_by_path.values(),
            *self._pos_by_partition.values(),
            self._eq_global,
            *self._eq_by_partition.values(),
        ):
            group.freeze()
        self._frozen = True
        return self

    @classmethod
    def build(
        cls,
        deletes: Iterable[tuple[DeleteFile, DataFile]],
        specs_by_id: dict[int, PartitionSpec],
        schemas: Sequence[Schema] = (),
    ) -> DeleteIndex:
        index = cls(specs_by_id, schemas)
        for delete, file in deletes:
            index.add(delete, file)
        return index.freeze()

    @property
    def is_empty(self) -> bool:
        return not self.files

    # -- lookup -----------------------------------------------------------------------------

    def for_data_file(
        self,
        path: str,
        data_sequence_number: int,
        spec_id: int,
        partition: tuple[Any, ...],
        data_file: DataFile | None = None,
    ) -> Lookup:
        """(deletion vector, position delete files, equality delete files) for one data file.

        ``data_file`` (the entry's metrics) lets equality deletes be pruned by metrics.
        """
        if not self._frozen:
            self.freeze()
        seq = data_sequence_number
        key = self._key(spec_id, partition) if (self._pos_by_partition or self._eq_by_partition) else None
        equality = self._equality(seq, key, data_file)
        dv = self._dvs.get(path) if self._dvs else None
        if dv is not None:
            if dv.sequence_number < seq:
                raise CorruptDataError(
                    f"deletion vector for {path} has data sequence number {dv.sequence_number}, "
                    f"older than the data file's {seq}",
                    dv.path,
                )
            return dv, _NO_DELETES, equality
        return None, self._positions(path, seq, key), equality

    def _positions(
        self, path: str, seq: int, key: tuple[int, tuple[Any, ...]] | None
    ) -> tuple[DeleteFile, ...]:
        found: list[DeleteFile] = []
        if self._pos_by_path:
            group = self._pos_by_path.get(path)
            if group is not None:
                found.extend(group.at_or_after(seq))
        if key is not None and self._pos_by_partition:
            group = self._pos_by_partition.get(key)
            if group is not None:
                candidates = group.at_or_after(seq)
                if candidates:
                    raw = path.encode("utf-8")
                    found.extend(p.delete for p in candidates if p.may_reference(raw))
        return tuple(found) if found else _NO_DELETES

    def _equality(
        self, seq: int, key: tuple[int, tuple[Any, ...]] | None, data_file: DataFile | None
    ) -> tuple[DeleteFile, ...]:
        candidates: list[_EqualityFile] = []
        if self._eq_global.items:
            candidates.extend(self._eq_global.after(seq))
        if key is not None and self._eq_by_partition:
            group = self._eq_by_partition.get(key)
            if group is not None:
                candidates.extend(group.after(seq))
        if not candidates:
            return _NO_DELETES
        if data_file is None:
            return tuple(eq.delete for eq in candidates)
        return tuple(eq.delete for eq in candidates if can_contain_equality_deletes(data_file, eq))
