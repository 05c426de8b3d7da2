"""Planning the rewrite of position delete files, as Java's ``RewritePositionDeleteFiles``.

Many small position delete files (one per DELETE, UPDATE or MERGE on merge-on-read
tables) make every read open and decode each of them, and deletes of data files that a
compaction has since removed ("dangling" deletes) are read for nothing. The rewrite reads
the position delete files of a partition, drops the deletes whose data file is no longer
live, and writes the rest into fewer files of about the target size.

Which files, Java 1.10's size-based planner (``SizeBasedFileRewritePlanner``), per
partition (spec id and partition tuple of the delete file), with the procedure's options:

* ``rewrite-all`` (false): every position delete file; otherwise only the files outside
  the desired size range, smaller than ``min-file-size-bytes`` (75% of the target) or
  larger than ``max-file-size-bytes`` (180% of the target); the target is
  ``target-file-size-bytes``, default the table's ``write.delete.target-file-size-bytes``
  (64 MiB);
* the candidates of a partition are packed into groups of at most
  ``max-file-group-size-bytes`` (100 GiB); a group is rewritten when ``rewrite-all`` is
  set, or it has more than one file and at least ``min-input-files`` (5) files, or more
  than one file holding more than the target, or more than ``max-file-size-bytes`` in all.

``where`` narrows the candidates to the delete files of the partitions that may hold rows
the filter matches (its inclusive projection onto each file's partition spec), as Java's
action filters the position-deletes table by the base table's filter: a filter on other
columns projects to "every partition".

Deletion vectors are never rewritten: a data file has at most one, kept exact by every
delete ("A deletion vector [...] must be merged with the existing one"), so there is
nothing to compact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iceduck.errors import CorruptDataError, UserError
from iceduck.scan.compaction import why_no_group
from iceduck.scan.planner import SpecFilter
from iceduck.scan.tasks import DeleteFile
from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.predicates import BooleanExpression
from iceduck.spec.manifest import FileContent
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.properties import int_property
from iceduck.spec.schema import Schema

_WHO = "rewrite_position_delete_files"

#: Java's ``TableProperties.DELETE_TARGET_FILE_SIZE_BYTES`` and its default
DELETE_TARGET_FILE_SIZE = "write.delete.target-file-size-bytes"
DELETE_TARGET_FILE_SIZE_DEFAULT = 64 * 1024 * 1024
MAX_FILE_GROUP_SIZE_DEFAULT = 100 * 1024 * 1024 * 1024

#: options Java's action takes that change how it runs (parallelism, commits per group,
#: job order), not what it writes: accepted, checked, and of no effect on one commit
_RUN_OPTIONS = frozenset(
    {
        "partial-progress.enabled",
        "partial-progress.max-commits",
        "partial-progress.max-failed-commits",
        "max-concurrent-file-group-rewrites",
        "rewrite-job-order",
    }
)
_SIZE_OPTIONS = (
    "target-file-size-bytes",
    "min-file-size-bytes",
    "max-file-size-bytes",
    "max-file-group-size-bytes",
    "min-input-files",
)
KNOWN_OPTIONS = frozenset({"rewrite-all", *_SIZE_OPTIONS, *_RUN_OPTIONS})


@dataclass(frozen=True)
class RewriteOptions:
    rewrite_all: bool = False
    min_input_files: int = 5
    target_file_size: int = DELETE_TARGET_FILE_SIZE_DEFAULT
    min_file_size: int = int(DELETE_TARGET_FILE_SIZE_DEFAULT * 0.75)
    max_file_size: int = int(DELETE_TARGET_FILE_SIZE_DEFAULT * 1.8)
    max_group_size: int = MAX_FILE_GROUP_SIZE_DEFAULT

    @classmethod
    def of(cls, options: Mapping[str, str], table_properties: Mapping[str, str]) -> RewriteOptions:
        """The options as given to the procedure; unknown ones and bad numbers refused."""
        unknown = sorted(set(options) - KNOWN_OPTIONS)
        if unknown:
            known = ", ".join(sorted(KNOWN_OPTIONS))
            raise UserError(f"{_WHO}: unknown options {', '.join(unknown)} (known: {known})")

        def number(name: str, default: int) -> int:
            text = options.get(name)
            if text is None:
                return default
            try:
                value = int(text)
            except ValueError:
                raise UserError(f"{_WHO}: option {name} takes a number, not {text!r}") from None
            if value < (1 if name == "min-input-files" else 0):
                raise UserError(f"{_WHO}: option {name} must be positive, not {value}")
            return value

        table_target = int_property(
            table_properties, DELETE_TARGET_FILE_SIZE, DELETE_TARGET_FILE_SIZE_DEFAULT
        )
        target = number("target-file-size-bytes", table_target)
        min_size = number("min-file-size-bytes", int(target * 0.75))
        max_size = number("max-file-size-bytes", int(target * 1.8))
        if not min_size <= target <= max_size:
            raise UserError(
                f"{_WHO}: min-file-size-bytes <= target-file-size-bytes <= "
                f"max-file-size-bytes must hold ({min_size}, {target}, {max_size})"
            )
        rewrite_all = options.get("rewrite-all", "false").strip().lower()
        if rewrite_all not in ("true", "false"):
            raise UserError(f"{_WHO}: option rewrite-all takes true or false, not {rewrite_all!r}")
        return cls(
            rewrite_all=rewrite_all == "true",
            min_input_files=number("min-input-files", 5),
            target_file_size=target,
            min_file_size=min_size,
            max_file_size=max_size,
            max_group_size=number("max-file-group-size-bytes", MAX_FILE_GROUP_SIZE_DEFAULT),
        )


PartitionKey = tuple[int, tuple[object, ...]]


def in_matching_partitions(
    files: Sequence[DeleteFile],
    specs: Mapping[int, PartitionSpec],
    schema: Schema,
    row_filter: BooleanExpression,
) -> list[DeleteFile]:
    """The delete files whose partition may hold rows ``row_filter`` (over ``schema``)
    matches."""
    bound = bind(schema, row_filter)
    filters: dict[int, SpecFilter] = {}
    out = []
    for f in files:
        found = filters.get(f.spec_id)
        if found is None:
            spec = specs.get(f.spec_id)
            if spec is None:
                raise CorruptDataError(
                    f"written with partition spec {f.spec_id}, which the table does not have", f.path
                )
            found = filters[f.spec_id] = SpecFilter(spec, schema, bound, True)
        if found.residual(tuple(f.partition)) is not None:
            out.append(f)
    return out


def plan_groups(files: Sequence[DeleteFile], options: RewriteOptions) -> list[list[DeleteFile]]:
    """The groups of position delete files to rewrite (module docstring); DVs and equality
    delete files are left out."""
    by_partition: dict[PartitionKey, list[DeleteFile]] = {}
    for f in files:
        if f.is_deletion_vector or f.content is not FileContent.POSITION_DELETES:
            continue
        by_partition.setdefault((f.spec_id, tuple(f.partition)), []).append(f)
    groups: list[list[DeleteFile]] = []
    for candidates in by_partition.values():
        if not options.rewrite_all:
            candidates = [
                f
                for f in candidates
                if f.file_size_in_bytes < options.min_file_size
                or f.file_size_in_bytes > options.max_file_size
            ]
        for group in _pack(candidates, options.max_group_size):
            if options.rewrite_all or _worth_it(group, options):
                groups.append(group)
    return groups


def why_no_groups(files: Sequence[DeleteFile], options: RewriteOptions) -> str:
    """Why :func:`plan_groups` of ``files`` found nothing to rewrite, and the option that
    would (the procedure's zeros cannot say)."""
    by_partition: dict[PartitionKey, list[DeleteFile]] = {}
    for f in files:
        if not f.is_deletion_vector and f.content is FileContent.POSITION_DELETES:
            by_partition.setdefault((f.spec_id, tuple(f.partition)), []).append(f)
    if not by_partition:
        return "nothing rewritten: no position delete file to rewrite (deletion vectors are not rewritten)"
    sizes = [
        len(group)
        for members in by_partition.values()
        for group in _pack(
            [
                f
                for f in members
                if not options.min_file_size <= f.file_size_in_bytes <= options.max_file_size
            ],
            options.max_group_size,
        )
    ]
    if not sizes:
        return (
            f"nothing rewritten: every position delete file is between min-file-size-bytes="
            f"{options.min_file_size} and max-file-size-bytes={options.max_file_size}; "
            "options => map('rewrite-all','true') rewrites them"
        )
    return why_no_group(sizes, options.min_input_files)


def _pack(files: list[DeleteFile], limit: int) -> list[list[DeleteFile]]:
    groups: list[list[DeleteFile]] = []
    current: list[DeleteFile] = []
    size = 0
    for f in files:
        if current and size + f.file_size_in_bytes > limit:
            groups.append(current)
            current, size = [], 0
        current.append(f)
        size += f.file_size_in_bytes
    if current:
        groups.append(current)
    return groups


def _worth_it(group: list[DeleteFile], options: RewriteOptions) -> bool:
    size = sum(f.file_size_in_bytes for f in group)
    enough_files = len(group) > 1 and len(group) >= options.min_input_files
    enough_content = len(group) > 1 and size > options.target_file_size
    return enough_files or enough_content or size > options.max_file_size
