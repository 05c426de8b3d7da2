"""``CALL system.create_changelog_view(table, changelog_view, options, compute_updates,
identifier_columns, net_changes)``: a connection view of a table's changes, as Spark's.

Spark's procedure (Iceberg's ``CreateChangelogViewProcedure``) makes a temporary view over
the table's changelog and returns its name: ``changelog_view`` when given, else
`` `<table>_changes` `` (with Spark's backquotes). The view's rows are those of
``table_changes`` (:mod:`iceduck.engine.changes`): the table's columns, then
``_change_type`` (INSERT, DELETE, UPDATE_BEFORE, UPDATE_AFTER), ``_change_ordinal`` and
``_commit_snapshot_id``. Like Spark's, the view is computed when it is read, so without an
end it shows the changes up to the table's current snapshot at that time.

``options`` are Spark's changelog read options: ``start-snapshot-id`` (exclusive),
``end-snapshot-id`` (inclusive), ``start-timestamp``, ``end-timestamp`` (epoch millis);
others are refused, naming them. ``compute_updates`` defaults to whether
``identifier_columns`` is given; without ``identifier_columns``, updates are computed by
the table's identifier fields. ``compute_updates`` with ``net_changes`` is Spark's error
"Not support net changes with update images".

Unlike Spark 1.10, whose changelog scan refuses snapshots with delete files, iceduck
computes the changes of merge-on-read deletes, deletion vectors and equality deletes too.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa

from iceduck.engine.types import quote_string
from iceduck.errors import UserError
from iceduck.ops.context import OpContext
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows, table_argument

_IDS = ("start-snapshot-id", "end-snapshot-id")
_TIMES = ("start-timestamp", "end-timestamp")


def _long(options: dict[str, str], name: str) -> int | None:
    text = options.get(name)
    if text is None:
        return None
    try:
        return int(text.strip())
    except ValueError:
        raise UserError(f"changelog option {name} must be a number, not {text!r}") from None


def _bound(options: dict[str, str], side: str) -> str:
    """SQL of one end of ``table_changes`` from Spark's options."""
    snapshot_id, millis = _long(options, f"{side}-snapshot-id"), _long(options, f"{side}-timestamp")
    if snapshot_id is not None and millis is not None:
        raise UserError(f"Cannot set both {side}-snapshot-id and {side}-timestamp for changelogs")
    if snapshot_id is not None:
        return str(snapshot_id)
    if millis is not None:
        moment = datetime.fromtimestamp(millis / 1000, tz=UTC).isoformat(sep=" ")
        return f"TIMESTAMPTZ {quote_string(moment)}"
    return "NULL"


def create_changelog_view(ctx: OpContext, args: Arguments) -> Rows:
    table = table_argument(ctx, args)
    options = {k.lower(): v for k, v in (args.get("options") or {}).items()}
    unknown = sorted(set(options) - {*_IDS, *_TIMES})
    if unknown:
        raise UserError(
            f"create_changelog_view: unknown option {unknown[0]!r} "
            f"(the changelog options are {', '.join((*_IDS, *_TIMES))})"
        )
    columns = args.get("identifier_columns")
    net = bool(args.get("net_changes", False))
    compute = args.get("compute_updates", columns is not None)
    if compute and net:
        raise UserError("Not support net changes with update images")
    schema = table.metadata.schema()
    if compute and not columns and not schema.identifier_field_ids:
        raise UserError("Cannot compute the update images because identifier columns are not set")
    name = ".".join((*table.identifier.namespace, table.identifier.name))
    items = [quote_string(name), _bound(options, "start"), _bound(options, "end")]
    if columns is not None:
        items.append(f"identifier_columns := [{', '.join(quote_string(c) for c in columns)}]")
    items.append(f"compute_updates := {'true' if compute else 'false'}")
    items.append(f"net_changes := {'true' if net else 'false'}")
    view = args.get("changelog_view") or f"`{table.identifier.name}_changes`"
    plain = view[1:-1].replace("``", "`") if len(view) > 1 and view[0] == view[-1] == "`" else view
    if not plain.strip():
        raise UserError("create_changelog_view: changelog_view must name a view")
    ctx.session_views.append((plain, f"SELECT * FROM table_changes({', '.join(items)})"))
    return [(view,)]


PROCEDURE = Procedure(
    name="create_changelog_view",
    parameters=(
        Parameter("table", Kind.STRING, required=True),
        Parameter("changelog_view", Kind.STRING),
        Parameter("options", Kind.STRING_MAP),
        Parameter("compute_updates", Kind.BOOLEAN),
        Parameter("identifier_columns", Kind.STRING_ARRAY),
        Parameter("net_changes", Kind.BOOLEAN),
    ),
    output=pa.schema([pa.field("changelog_view", pa.string(), nullable=False)]),
    run=create_changelog_view,
    summary="a connection view of the table's changes between snapshots",
)
