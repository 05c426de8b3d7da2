"""What a table operation gets from the session that runs it.

Table operations (:mod:`iceduck.ops`) execute one parsed write statement
(:mod:`iceduck.sql.statements`): they load tables from the catalog, run queries in DuckDB
(through the session, so Iceberg tables named in a query are planned and attached like
any SELECT), write files (:mod:`iceduck.engine.write`) and commit snapshots
(:mod:`iceduck.txn`). The session hands them an :class:`OpContext` instead of itself, so
operations depend on a small, explicit surface and never on the session's internals.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iceduck.catalog.base import Catalog, LoadedTable, Namespace, TableIdentifier
from iceduck.engine.deletes import PositionCache
from iceduck.engine.layout import LayoutCache
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.spec.snapshot import MAIN_BRANCH

if TYPE_CHECKING:
    from iceduck.engine.connection import Duck


@dataclass(frozen=True)
class WriteTarget:
    """The table (and branch) a write statement changes, as resolved by the session.

    ``branch`` is ``main`` unless the name ended in ``branch_<name>``; writing to a tag,
    a snapshot or a metadata table is refused before an operation sees the target.
    """

    table: LoadedTable
    branch: str = MAIN_BRANCH

    @property
    def identifier(self) -> TableIdentifier:
        return self.table.identifier


@dataclass(frozen=True)
class OpResult:
    """What a write statement reports: rows changed (DB-API ``rowcount``; -1 for DDL)."""

    rowcount: int = -1
    #: a short human line for the shell ("created table db.t"), or None
    message: str | None = None


def rows(count: int) -> str:
    """``1 row``, ``3 rows``: the count in a write statement's message."""
    return f"{count:,} row" if count == 1 else f"{count:,} rows"


@dataclass(frozen=True)
class WapSettings:
    """The session's write-audit-publish settings (``SET iceduck.wap_id`` /
    ``iceduck.wap_branch``, Spark's ``spark.wap.id`` / ``spark.wap.branch``): plain values,
    applied by :mod:`iceduck.ops.wap` to tables with ``write.wap.enabled=true``."""

    #: writes stage their snapshot with summary ``wap.id`` instead of moving the branch
    wap_id: str | None = None
    #: writes to the table go to this branch (created from main on the first write)
    wap_branch: str | None = None


@dataclass
class OpContext:
    catalog: Catalog
    manifests: ManifestCache
    #: the session's caches of Parquet schemas and decoded deletes (scans of writes use them)
    layouts: LayoutCache
    positions: PositionCache
    #: a DuckDB object name no other statement of the session uses, ``kind`` saying what for
    unique_name: Callable[[str], str]
    #: the DuckDB cursor this statement runs on (scans attached by ``prepare_query`` live
    #: here); operations hand it to the engine's functions and never call it themselves
    duck: Duck
    #: the statement's parameters, as DuckDB takes them (``$1``/``$name`` in SQL text)
    params: Any
    #: the session's time zone (for timestamp literals)
    timezone: str
    #: DuckDB SQL text that may name Iceberg tables -> text runnable on ``duck`` with the same
    #: parameters (every Iceberg reference replaced by its planned, attached scan)
    prepare_query: Callable[[str], str]
    #: a written name -> the existing table (and branch) it names; NotFoundError otherwise;
    #: refuses tags, snapshots and metadata tables
    resolve_target: Callable[[tuple[str, ...]], WriteTarget]
    #: a written name -> the identifier a new table would get (catalog prefix dropped)
    new_identifier: Callable[[tuple[str, ...]], TableIdentifier]
    #: write-audit-publish: where the session's writes go (:mod:`iceduck.ops.wap`)
    wap: WapSettings = WapSettings()
    #: ``SET iceduck.pruning = false`` (:mod:`iceduck.session.own_objects`): a condition prunes
    #: no file and settles none from metadata; every row is tested by DuckDB
    pruning: bool = True

    #: ``prepare_query`` of the query of catalog view ``view`` (being made): a use of
    #: ``view`` inside, through other views, is a cycle (:mod:`iceduck.ops.views`)
    prepare_view: Callable[[str, TableIdentifier], str] | None = None
    #: the session's current namespace (``USE``): a view's ``default-namespace``
    namespace: Namespace = ()
    #: a one-part name -> what of the session's own objects it names ("view", "temporary
    #: table"), or None: a catalog view may read none of them (:mod:`iceduck.ops.views`)
    session_object: Callable[[str], str | None] = lambda name: None

    #: how far a long operation (a ``CALL`` procedure) is, in percent: the session's
    #: :meth:`~iceduck.session.session.Session.progress`, which the shell shows as a progress bar
    report_progress: Callable[[float], None] = lambda percent: None
    #: lines for the user besides the rows (why a ``CALL`` did nothing): the statement's
    #: :attr:`~iceduck.session.result.Result.notice`, which the shell prints under the rows
    notices: list[str] = field(default_factory=list)
    #: connection views a ``CALL`` asks for (name, SQL of its query): the session creates
    #: them once the procedure returns (``create_changelog_view``)
    session_views: list[tuple[str, str]] = field(default_factory=list)

    def now_ms(self) -> int:
        return int(time.time() * 1000)
