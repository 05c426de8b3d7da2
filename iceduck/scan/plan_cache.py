"""What a scan plan depends on: the key under which a session keeps it.

A plan (:func:`iceduck.scan.planner.plan_scan`) is a pure function of immutable things: the
manifests of one snapshot ("a manifest can be written once and reused"; a committed file is
never rewritten), the schema and partition specs it is read with, the row filter. So a
session keeps each plan it made in its :class:`~iceduck.scan.manifest_cache.ManifestCache`
(:meth:`~iceduck.scan.manifest_cache.ManifestCache.plan`, the same LRU and bound as the
manifests it was made from), and a statement that reads an unchanged table again, with the
same filter, gets that plan without walking the index again.

The key is everything planning reads, so that no key can name two different plans:

* the table: its ``table-uuid`` (its location for tables written without one);
* the snapshot: its id and its manifest list ("a new manifest list is written for each
  attempt to commit a snapshot"), or the manifests a v1 snapshot lists itself;
* the format version, the ids of the table's partition specs (a spec never changes once
  added: new specs get new ids) and of its schemas (likewise; the schema rows are read with
  is named by its own id, and the delete index looks fields up in the older ones);
* ``schema.name-mapping.default``, and whether footers may be read, which decide which
  column metrics may prune (:mod:`iceduck.scan.trusted_metrics`);
* the row filter, by its text (``1``, ``1.0`` and ``True`` are equal in Python but are
  different literals), and case sensitivity.

Not the metadata file's location: inside a transaction a table's pending metadata keeps the
location it was loaded from while its snapshot changes (:mod:`iceduck.txn.transaction`); the
key names the snapshot itself, so a new snapshot, committed by this session or any other
writer, is a new key. Not the projected columns either: a plan lists files, and which
columns a scan outputs is chosen when it is attached (:mod:`iceduck.engine.read`, which
remembers the SELECT it wrote per column set on the plan).
"""

from __future__ import annotations

from typing import Any

from iceduck.spec.expressions.predicates import BooleanExpression
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import Snapshot
from iceduck.spec.table_metadata import TableMetadata

#: what every plan key starts with (the manifest cache's other keys start otherwise)
KIND = "plan"


def plan_key(
    metadata: TableMetadata,
    snapshot: Snapshot,
    schema: Schema,
    row_filter: BooleanExpression,
    case_sensitive: bool,
    name_mapping: str | None,
    reads_footers: bool,
) -> tuple[Any, ...]:
    """The key of the plan of ``snapshot`` read with ``schema`` and ``row_filter`` (see the
    module docstring for why each part is there)."""
    # a v1 snapshot may list its manifests itself
    manifests = snapshot.manifest_list if snapshot.manifest_list is not None else (snapshot.manifests or ())
    return (
        KIND,
        metadata.table_uuid or metadata.location,
        snapshot.snapshot_id,
        manifests,
        metadata.format_version,
        schema.schema_id,
        tuple(s.schema_id for s in metadata.schemas),
        tuple(s.spec_id for s in metadata.partition_specs),
        name_mapping,
        reads_footers and name_mapping is not None,
        repr(row_filter),
        case_sensitive,
    )
