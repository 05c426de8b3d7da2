"""Write-audit-publish: where a write goes when the session sets a WAP id or branch.

As Spark does with ``spark.wap.id`` / ``spark.wap.branch`` (Iceberg's ``SparkWriteConf``),
and only on a table whose property ``write.wap.enabled`` is ``true`` (elsewhere the
settings change nothing):

* with a WAP id, INSERT/DELETE/UPDATE/MERGE *stage* their snapshot: it is added to the
  table's snapshots with summary ``wap.id``, and no branch moves -- readers keep seeing
  the published state until ``CALL system.publish_changes(table, wap_id)`` (or
  ``cherrypick_snapshot``) applies it; audit it with ``VERSION AS OF <snapshot id>``;
* with a WAP branch, writes to the table go to that branch (created from main by the
  first write), and reads of the table read the branch once it exists
  (:mod:`iceduck.session.iceberg_sources`); ``fast_forward(table, 'main', branch)`` publishes it.

Both at once is refused, as is naming another branch in a write ("Cannot set both WAP ID
and branch", "Cannot write to both branch and WAP branch": Java's messages).
"""

from __future__ import annotations

from iceduck.errors import UserError, ValidationError
from iceduck.ops.context import OpContext, WapSettings, WriteTarget
from iceduck.spec.snapshot import MAIN_BRANCH
from iceduck.spec.table_metadata import TableMetadata

#: Java's ``TableProperties.WRITE_AUDIT_PUBLISH_ENABLED`` (default false)
WAP_ENABLED = "write.wap.enabled"

#: the session settings (lower case) -> the WapSettings field they set
SETTINGS = {
    "iceduck.wap_id": "wap_id",
    "spark.wap.id": "wap_id",
    "iceduck.wap_branch": "wap_branch",
    "spark.wap.branch": "wap_branch",
}


def wap_enabled(metadata: TableMetadata) -> bool:
    """``write.wap.enabled``, read as Java's ``propertyAsBoolean`` (``true`` in any case)."""
    return metadata.properties.get(WAP_ENABLED, "false").strip().lower() == "true"


def setting_value(name: str, sql: str) -> str:
    """The text a ``SET`` of a WAP setting gives: a string literal or a bare word."""
    text = sql.strip()
    if len(text) >= 2 and text[0] == text[-1] == "'":
        text = text[1:-1].replace("''", "'")
    elif not text.replace("_", "").replace("-", "").isalnum():
        raise UserError(f"SET {name}: expected a string such as SET {name} = 'nightly-1', not {sql}")
    if not text:
        raise UserError(f"SET {name}: the value is empty (RESET {name} removes it)")
    return text


def applied(wap: WapSettings, metadata: TableMetadata) -> WapSettings:
    """The settings that apply to writes of this table: none unless WAP is enabled on it."""
    if not wap_enabled(metadata) or (wap.wap_id is None and wap.wap_branch is None):
        return WapSettings()
    if wap.wap_id is not None and wap.wap_branch is not None:
        raise ValidationError(
            f"Cannot set both WAP ID and branch, but got ID [{wap.wap_id}] and branch [{wap.wap_branch}]"
        )
    return wap


def write_target(ctx: OpContext, name: tuple[str, ...]) -> WriteTarget:
    """The table (and branch) a DML statement writes: the name's, or the WAP branch."""
    target = ctx.resolve_target(name)
    branch = applied(ctx.wap, target.table.metadata).wap_branch
    if branch is None:
        return target
    if target.branch != MAIN_BRANCH and target.branch != branch:
        raise ValidationError(
            f"Cannot write to both branch and WAP branch, but got branch [{target.branch}] "
            f"and WAP branch [{branch}]"
        )
    ref = target.table.metadata.refs.get(branch)
    if ref is not None and not ref.is_branch:
        raise ValidationError(f"cannot write to WAP branch {branch}: {branch!r} is a tag")
    return WriteTarget(target.table, branch)


def staged_wap_id(ctx: OpContext, metadata: TableMetadata) -> str | None:
    """The WAP id a write of this table stages its snapshot with, if any."""
    return applied(ctx.wap, metadata).wap_id
