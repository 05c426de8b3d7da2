"""The table bodies: ``CreateTableRequest`` in, ``LoadTableResult`` out.

``LoadTableResult``: "metadata-location" (absent for a staged table: "May be null if the
table is staged as part of a transaction"), "metadata" (the table metadata JSON), and
"config" (table-specific configuration: empty here; vended credentials are added by
:mod:`iceduck.serve.table_response`).
With ``snapshots=refs`` the spec asks for "only the snapshots referenced by branches or
tags", so the others are left out of the response (the file on disk keeps them).

A client's schema, partition spec and sort order are parsed with the metadata codecs;
what those call corrupt (a file breaking the spec) is, in a request, a bad request.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from iceduck.errors import CorruptDataError, UserError
from iceduck.formats.metadata_json import table_metadata_to_json
from iceduck.formats.schema_json import (
    partition_fields_from_json,
    schema_from_json,
    sort_order_from_json,
)
from iceduck.serve.names import check_name
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.sort import SortOrder
from iceduck.spec.table_metadata import TableMetadata


@contextmanager
def request_part(where: str) -> Iterator[None]:
    """Turn a codec's :class:`CorruptDataError` on request JSON into a 400."""
    try:
        yield
    except CorruptDataError as e:
        raise UserError(f"invalid {where}: {e}") from None


@dataclass(frozen=True)
class CreateTable:
    name: str
    location: str | None
    schema: Schema
    spec: PartitionSpec
    sort_order: SortOrder
    properties: dict[str, str]
    stage_create: bool


def create_table_request(body: dict[str, Any]) -> CreateTable:
    """Parse the spec's ``CreateTableRequest`` (``name`` and ``schema`` required)."""
    name = body.get("name")
    if not isinstance(name, str):
        raise UserError("CreateTableRequest: name must be a string")
    location = body.get("location")
    if location is not None and (not isinstance(location, str) or not location.strip()):
        raise UserError("CreateTableRequest: location must be a non-empty string")
    if "schema" not in body:
        raise UserError("CreateTableRequest: schema is required")
    with request_part("schema"):
        schema = schema_from_json(body["schema"], "schema")
    spec = PartitionSpec(0, ())
    if body.get("partition-spec") is not None:
        raw = body["partition-spec"]
        if not isinstance(raw, dict):
            raise UserError("CreateTableRequest: partition-spec must be an object")
        with request_part("partition-spec"):
            spec = partition_fields_from_json(raw.get("fields", []), 0, "partition-spec.fields")
    order = SortOrder()
    if body.get("write-order") is not None:
        with request_part("write-order"):
            order = sort_order_from_json(body["write-order"], "write-order")
    properties = body.get("properties") or {}
    if not isinstance(properties, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in properties.items()
    ):
        raise UserError("CreateTableRequest: properties must be an object of string values")
    stage = body.get("stage-create", False)
    if not isinstance(stage, bool):
        raise UserError("CreateTableRequest: stage-create must be true or false")
    return CreateTable(check_name(name, "table"), location, schema, spec, order, dict(properties), stage)


def load_table_result(
    metadata: TableMetadata, metadata_location: str | None, snapshots: str = "all"
) -> dict[str, Any]:
    """The spec's ``LoadTableResult`` for ``metadata``."""
    if snapshots == "refs":
        referenced = {ref.snapshot_id for ref in metadata.refs.values()}
        metadata = dataclasses.replace(
            metadata, snapshots=tuple(s for s in metadata.snapshots if s.snapshot_id in referenced)
        )
    out: dict[str, Any] = {}
    if metadata_location is not None:
        out["metadata-location"] = metadata_location
    out["metadata"] = table_metadata_to_json(metadata)
    out["config"] = {}
    return out
