"""Procedure name -> the module defining it (imported on first use, so a session that never
CALLs loads none of them). Each module defines ``PROCEDURE``
(:class:`~iceduck.ops.procedures.base.Procedure`)."""

from __future__ import annotations

import importlib

from iceduck.errors import NotFoundError, UnsupportedError
from iceduck.ops.procedures.base import Procedure

#: Spark's procedure name -> module under iceduck.ops.procedures
MODULES: dict[str, str] = {
    "add_files": "add_files",
    "ancestors_of": "ancestors",
    "cherrypick_snapshot": "cherrypick_snapshot",
    "compute_partition_stats": "partition_stats",
    "compute_table_stats": "table_stats",
    "create_changelog_view": "changelog_view",
    "expire_snapshots": "expire",
    "fast_forward": "fast_forward",
    "publish_changes": "publish_changes",
    "register_table": "register",
    "remove_orphan_files": "orphans",
    "rewrite_data_files": "rewrite_data",
    "rewrite_manifests": "manifests",
    "rewrite_position_delete_files": "position_deletes",
    "rollback_to_snapshot": "rollback_to_snapshot",
    "rollback_to_timestamp": "rollback_to_timestamp",
    "set_current_snapshot": "set_current_snapshot",
}


#: the procedures Iceberg's Spark extensions (1.10) have: one iceduck does not run yet is
#: unsupported, any other name unknown
SPARK_PROCEDURES = frozenset(
    {
        "add_files", "ancestors_of", "cherrypick_snapshot", "compute_partition_stats",
        "compute_table_stats", "create_changelog_view", "expire_snapshots", "fast_forward", "migrate",
        "publish_changes", "register_table", "remove_orphan_files", "rewrite_data_files",
        "rewrite_manifests", "rewrite_position_delete_files", "rewrite_table_path",
        "rollback_to_snapshot", "rollback_to_timestamp", "set_current_snapshot", "snapshot",
    }
)  # fmt: skip


def find(name: str) -> Procedure:
    """The procedure called ``name`` (lower case); UnsupportedError for one of Spark's that
    iceduck does not run, NotFoundError listing the known ones for any other name."""
    module = MODULES.get(name)
    if module is None and name in SPARK_PROCEDURES:
        runs = ", ".join(sorted(MODULES))
        raise UnsupportedError(f"CALL system.{name} is not supported yet (iceduck runs: {runs})")
    if module is None:
        known = ", ".join(sorted(MODULES))
        raise NotFoundError(f"procedure system.{name} does not exist (iceduck runs: {known})")
    procedure = importlib.import_module(f"iceduck.ops.procedures.{module}").PROCEDURE
    assert isinstance(procedure, Procedure)
    return procedure
