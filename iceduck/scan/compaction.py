"""Which data files a compaction rewrites, and in which groups: Java's bin-pack planner
(``SizeBasedFileRewritePlanner`` / ``BinPackRewriteFilePlanner``) over scan tasks.

A file is a *candidate* when it is outside the desired size range (smaller than
``min-file-size-bytes``, 75% of the target, or larger than ``max-file-size-bytes``, 180%),
has at least ``delete-file-threshold`` delete files, has at least ``delete-ratio-threshold``
of its rows deleted (known from deletion vectors and file-scoped position deletes), or --
iceduck's addition -- was written with a partition spec other than the current one, so a
compaction also moves old files into the current spec. With ``rewrite-all`` every file is.

Candidates are grouped by partition (spec id and partition tuple: Java's
``groupByPartition``), then packed in order into groups of at most
``max-file-group-size-bytes``. A group is rewritten when it has enough input files (more
than one and at least ``min-input-files``), enough content (more than one file and more
bytes than the target), too much content (more than the group maximum), a file with too
many deletes or too high a delete ratio, or ``rewrite-all`` is set. A lone small file is
therefore left alone unless it carries deletes past the thresholds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iceduck.errors import UserError
from iceduck.scan.tasks import FileScanTask
from iceduck.spec.manifest import FileContent

TARGET_FILE_SIZE = "target-file-size-bytes"
MIN_FILE_SIZE = "min-file-size-bytes"
MAX_FILE_SIZE = "max-file-size-bytes"
MIN_INPUT_FILES = "min-input-files"
REWRITE_ALL = "rewrite-all"
MAX_GROUP_SIZE = "max-file-group-size-bytes"
DELETE_FILE_THRESHOLD = "delete-file-threshold"
DELETE_RATIO_THRESHOLD = "delete-ratio-threshold"

#: Java's defaults
MIN_INPUT_FILES_DEFAULT = 5
MAX_GROUP_SIZE_DEFAULT = 100 * 1024 * 1024 * 1024
DELETE_FILE_THRESHOLD_DEFAULT = 2**31 - 1
DELETE_RATIO_THRESHOLD_DEFAULT = 0.3

PLANNER_OPTIONS = frozenset(
    {
        TARGET_FILE_SIZE, MIN_FILE_SIZE, MAX_FILE_SIZE, MIN_INPUT_FILES, REWRITE_ALL,
        MAX_GROUP_SIZE, DELETE_FILE_THRESHOLD, DELETE_RATIO_THRESHOLD,
    }
)  # fmt: skip


@dataclass(frozen=True)
class BinPackSettings:
    """The planner's options, validated."""

    target_file_size: int
    min_file_size: int
    max_file_size: int
    min_input_files: int = MIN_INPUT_FILES_DEFAULT
    rewrite_all: bool = False
    max_group_size: int = MAX_GROUP_SIZE_DEFAULT
    delete_file_threshold: int = DELETE_FILE_THRESHOLD_DEFAULT
    delete_ratio_threshold: float = DELETE_RATIO_THRESHOLD_DEFAULT

    @classmethod
    def of(cls, options: Mapping[str, str], table_target_size: int) -> BinPackSettings:
        """Settings from the procedure's options (Java's names and defaults: the target
        defaults to the table's ``write.target-file-size-bytes``, the minimum to 75% and
        the maximum to 180% of the target); UserError naming a bad value."""
        target = long_option(options, TARGET_FILE_SIZE, table_target_size)
        settings = cls(
            target_file_size=target,
            min_file_size=long_option(options, MIN_FILE_SIZE, int(target * 0.75)),
            max_file_size=long_option(options, MAX_FILE_SIZE, int(target * 1.8)),
            min_input_files=long_option(options, MIN_INPUT_FILES, MIN_INPUT_FILES_DEFAULT),
            rewrite_all=bool_option(options, REWRITE_ALL, False),
            max_group_size=long_option(options, MAX_GROUP_SIZE, MAX_GROUP_SIZE_DEFAULT),
            delete_file_threshold=long_option(options, DELETE_FILE_THRESHOLD, DELETE_FILE_THRESHOLD_DEFAULT),
            delete_ratio_threshold=_ratio(options, DELETE_RATIO_THRESHOLD, DELETE_RATIO_THRESHOLD_DEFAULT),
        )
        settings._check()
        return settings

    def _check(self) -> None:
        # Java's SizeBasedFileRewritePlanner.validateOptions
        if self.target_file_size <= 0:
            raise UserError(f"'{TARGET_FILE_SIZE}' is set to {self.target_file_size} but must be > 0")
        if self.min_file_size < 0:
            raise UserError(f"'{MIN_FILE_SIZE}' is set to {self.min_file_size} but must be >= 0")
        if self.max_file_size <= self.target_file_size:
            raise UserError(
                f"'{MAX_FILE_SIZE}' ({self.max_file_size}) must be greater than "
                f"'{TARGET_FILE_SIZE}' ({self.target_file_size})"
            )
        if self.min_file_size >= self.target_file_size:
            raise UserError(
                f"'{MIN_FILE_SIZE}' ({self.min_file_size}) must be less than "
                f"'{TARGET_FILE_SIZE}' ({self.target_file_size})"
            )
        if self.min_input_files <= 0:
            raise UserError(f"'{MIN_INPUT_FILES}' is set to {self.min_input_files} but must be > 0")
        if self.max_group_size <= 0:
            raise UserError(f"'{MAX_GROUP_SIZE}' is set to {self.max_group_size} but must be > 0")
        if self.delete_file_threshold < 0:
            raise UserError(
                f"'{DELETE_FILE_THRESHOLD}' is set to {self.delete_file_threshold} but must be >= 0"
            )


def long_option(options: Mapping[str, str], name: str, default: int) -> int:
    """A whole-number option, ``default`` when absent; UserError otherwise."""
    text = options.get(name)
    if text is None:
        return default
    try:
        return int(text.strip())
    except ValueError:
        raise UserError(f"option '{name}' must be a whole number, not {text!r}") from None


def _ratio(options: Mapping[str, str], name: str, default: float) -> float:
    text = options.get(name)
    if text is None:
        return default
    try:
        value = float(text.strip())
    except ValueError:
        raise UserError(f"option '{name}' must be a number, not {text!r}") from None
    if not 0 < value <= 1:
        raise UserError(f"'{name}' is set to {value} but must be in (0, 1]")
    return value


def bool_option(options: Mapping[str, str], name: str, default: bool) -> bool:
    """A ``true``/``false`` option (any case), ``default`` when absent; UserError otherwise."""
    text = options.get(name)
    if text is None:
        return default
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise UserError(f"option '{name}' must be true or false, not {text!r}")
    return value == "true"


def delete_count(task: FileScanTask) -> int:
    """Delete files applying to a task (a deletion vector counts as one)."""
    return (task.deletion_vector is not None) + len(task.position_deletes) + len(task.equality_deletes)


def known_deleted_rows(task: FileScanTask) -> int:
    """Rows of the file certainly deleted: its DV's cardinality, or the rows of position
    delete files scoped to it alone (partition-scoped ones and equality deletes are not
    counted: their rows may belong to other files or match nothing)."""
    if task.deletion_vector is not None:
        return task.deletion_vector.record_count
    return sum(
        d.record_count
        for d in task.position_deletes
        if d.content is FileContent.POSITION_DELETES and d.referenced_data_file == task.path
    )


@dataclass(frozen=True)
class FileGroup:
    """Files of one partition rewritten together."""

    spec_id: int
    partition: tuple[Any, ...]
    tasks: tuple[FileScanTask, ...]

    @property
    def size_bytes(self) -> int:
        return sum(t.file_size_in_bytes for t in self.tasks)


class BinPackPlanner:
    """Selects candidates and groups them (see the module docstring)."""

    def __init__(self, settings: BinPackSettings, current_spec_id: int) -> None:
        self.settings = settings
        self.current_spec_id = current_spec_id

    def _too_many_deletes(self, t: FileScanTask) -> bool:
        return delete_count(t) >= self.settings.delete_file_threshold

    def _too_high_ratio(self, t: FileScanTask) -> bool:
        return (
            t.record_count > 0
            and known_deleted_rows(t) / t.record_count >= self.settings.delete_ratio_threshold
        )

    def is_candidate(self, t: FileScanTask) -> bool:
        s = self.settings
        return (
            s.rewrite_all
            or t.file_size_in_bytes < s.min_file_size
            or t.file_size_in_bytes > s.max_file_size
            or self._too_many_deletes(t)
            or self._too_high_ratio(t)
            or t.spec_id != self.current_spec_id
        )

    def _worth_rewriting(self, group: FileGroup) -> bool:
        s = self.settings
        n = len(group.tasks)
        return (
            s.rewrite_all
            or (n > 1 and n >= s.min_input_files)
            or (n > 1 and group.size_bytes > s.target_file_size)
            or group.size_bytes > s.max_group_size
            or any(self._too_many_deletes(t) or self._too_high_ratio(t) for t in group.tasks)
            or any(t.spec_id != self.current_spec_id for t in group.tasks)
        )

    def groups(self, tasks: Sequence[FileScanTask]) -> list[FileGroup]:
        """The groups to rewrite, largest partitions first within a stable order."""
        by_partition: dict[tuple[int, tuple[Any, ...]], list[FileScanTask]] = {}
        for t in tasks:
            if self.is_candidate(t):
                by_partition.setdefault((t.spec_id, t.partition), []).append(t)
        out: list[FileGroup] = []
        for (spec_id, partition), members in by_partition.items():
            for packed in _pack(members, self.settings.max_group_size):
                group = FileGroup(spec_id, partition, tuple(packed))
                if self._worth_rewriting(group):
                    out.append(group)
        return out

    def why_none(self, tasks: Sequence[FileScanTask]) -> str:
        """Why :meth:`groups` of ``tasks`` found nothing to rewrite, and the option that would
        (a CALL that returns zeros says so: Spark's result columns cannot)."""
        if not tasks:
            return "nothing rewritten: no data file to rewrite"
        candidates = [t for t in tasks if self.is_candidate(t)]
        if not candidates:
            s = self.settings
            return (
                f"nothing rewritten: every data file is between {MIN_FILE_SIZE}={s.min_file_size} "
                f"and {MAX_FILE_SIZE}={s.max_file_size}, in the current partition spec, "
                f"without deletes past the thresholds; options => map('{REWRITE_ALL}','true') rewrites them"
            )
        return why_no_group(self.groups_of(candidates), self.settings.min_input_files)

    def groups_of(self, candidates: Sequence[FileScanTask]) -> list[int]:
        """The number of files in each group ``candidates`` pack into, rewritten or not."""
        by_partition: dict[tuple[int, tuple[Any, ...]], list[FileScanTask]] = {}
        for t in candidates:
            by_partition.setdefault((t.spec_id, t.partition), []).append(t)
        return [
            len(b) for members in by_partition.values() for b in _pack(members, self.settings.max_group_size)
        ]


def why_no_group(sizes: Sequence[int], min_input_files: int) -> str:
    """Why groups of ``sizes`` files (candidates all) were not rewritten: none reached
    ``min-input-files`` (the rule that leaves a table of many small partitions alone)."""
    largest = max(sizes, default=0)
    shown = f"{largest} file" if largest == 1 else f"{largest} files"
    if largest <= 1:
        return (
            f"nothing rewritten: no partition has more than one file to rewrite (a lone file is left "
            f"alone); options => map('{REWRITE_ALL}','true') rewrites them"
        )
    return (
        f"nothing rewritten: no file group reached {MIN_INPUT_FILES}={min_input_files} "
        f"(largest group: {shown}); options => map('{MIN_INPUT_FILES}','{largest}') or "
        f"map('{REWRITE_ALL}','true') rewrites them"
    )


def _pack(tasks: Sequence[FileScanTask], limit: int) -> list[list[FileScanTask]]:
    """Tasks in bins of at most ``limit`` bytes (a file larger than the limit is alone)."""
    bins: list[list[FileScanTask]] = []
    size = 0
    for t in sorted(tasks, key=lambda t: (-t.file_size_in_bytes, t.path)):
        if bins and size + t.file_size_in_bytes <= limit:
            bins[-1].append(t)
            size += t.file_size_in_bytes
        else:
            bins.append([t])
            size = t.file_size_in_bytes
    return bins


def dead_delete_files(tasks: Sequence[FileScanTask], rewritten: set[str]) -> list[str | tuple[str, str]]:
    """Delete files that apply to no live data file once the ``rewritten`` data files are
    replaced: every task of the full scan (``tasks``) they apply to is rewritten.

    A deletion vector is keyed by (Puffin path, data file), as one Puffin file holds the DVs
    of many files; other delete files by path. Rewritten rows no longer need them: the new
    files hold only surviving rows, and they carry the data sequence number of the snapshot
    the compaction read, which no older equality delete applies to ("an equality delete
    file must be applied to a data file when [...] the data file's data sequence number is
    strictly less than the delete's"). Files applying to no task at all (dangling) are left
    alone: this compaction did not make them so.
    """
    applies: dict[str | tuple[str, str], set[str]] = {}
    for t in tasks:
        keys: list[str | tuple[str, str]] = []
        if t.deletion_vector is not None:
            keys.append((t.deletion_vector.path, t.path))
        keys.extend(d.path for d in t.position_deletes)
        keys.extend(d.path for d in t.equality_deletes)
        for key in keys:
            applies.setdefault(key, set()).add(t.path)
    return [key for key, paths in applies.items() if paths <= rewritten]
