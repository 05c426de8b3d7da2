"""``LoadTableResult`` in, ``CreateTableRequest`` out, and the storage properties a table
response vends.

``LoadTableResult`` (spec): "metadata-location" (absent for a staged table), "metadata"
(the table metadata JSON), "config" ("table-specific configuration, overriding catalog
configuration") and "storage-credentials" (``StorageCredential``: a ``prefix`` and its
``config``; "Clients should choose the most specific prefix (by selecting the longest
prefix) if several credentials of the same type are available"). The table's storage
properties are its ``config`` for the table's location, and each credential's ``config``
over it for that credential's prefix (:func:`table_storage`); they become scopes of the
object stores (:func:`iceduck.io.object_store.configure_scope`), so each table is read
with its own credentials while other tables keep theirs, and credentials that expire are
renewed through the catalog (``loadCredentials``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iceduck.catalog.base import LoadedTable, TableIdentifier
from iceduck.errors import CorruptDataError, StorageError
from iceduck.formats.metadata_json import table_metadata_from_json
from iceduck.formats.schema_json import partition_spec_to_json, schema_to_json, sort_order_to_json
from iceduck.io.store_scopes import Refresher, ScopeOwner
from iceduck.lru import LRUCache
from iceduck.spec.table_metadata import TableMetadata

#: properties of the catalog itself, never handed to the object stores
REST_ONLY = frozenset(
    {"uri", "token", "credential", "scope", "oauth2-server-uri", "warehouse", "prefix", "rest-page-size"}
)


def metadata_of(
    body: Any, uri: str, about: str, parsed: LRUCache[str, TableMetadata] | None = None
) -> tuple[TableMetadata, str | None]:
    """The metadata of a ``LoadTableResult`` and its location (None when staged); ``parsed``
    keeps metadata by location, so a table loaded again unchanged is not decoded again (a
    metadata file never changes once written)."""
    if not isinstance(body, dict) or not isinstance(body.get("metadata"), dict):
        raise StorageError(f"the REST catalog at {uri} answered for {about} without table metadata")
    location = body.get("metadata-location")
    if location is not None and not isinstance(location, str):
        raise StorageError(
            f"the REST catalog at {uri} answered for {about} with a metadata-location that is not a string"
        )
    cached = parsed.get(location) if parsed is not None and location is not None else None
    if cached is not None:
        return cached, location
    try:
        metadata = table_metadata_from_json(body["metadata"], location)
    except CorruptDataError as e:
        raise CorruptDataError(f"the REST catalog at {uri} sent invalid metadata for {about}: {e}") from None
    if parsed is not None and location is not None:
        parsed.put(location, metadata)
    return metadata, location


def loaded_table(
    body: Any, identifier: TableIdentifier, uri: str, parsed: LRUCache[str, TableMetadata] | None = None
) -> LoadedTable:
    """A committed table's ``LoadTableResult`` as a :class:`LoadedTable`, its vended
    storage properties applied."""
    metadata, location = metadata_of(body, uri, f"table {identifier}", parsed)
    if location is None:
        raise StorageError(
            f"the REST catalog at {uri} answered for table {identifier} without its metadata-location"
        )
    return LoadedTable(identifier, location, metadata)


def table_storage(
    body: Mapping[str, Any], table_location: str, base: Mapping[str, str] | None = None
) -> dict[str, dict[str, str]]:
    """The storage properties of a ``LoadTableResult`` by location prefix: ``base`` (the
    catalog's own properties: the client's, under the server's defaults and overrides) with
    the answer's ``config`` over it for the table's location, and each
    ``storage-credentials`` entry's ``config`` (over those) for the entry's prefix.
    Catalog-only properties are left out.

    The table's location gets a scope of its own even when the answer vends nothing, so its
    files are read with this catalog's properties and never with a scope another connection
    of the process left on the same bucket (a warehouse at the same path on another
    endpoint). When a credential's prefix covers the table's location, that credential is
    the table's scope, as Java's ``S3FileIO`` picks the credential whose prefix matches."""
    config = {**storage_only(base or {}), **storage_only(_strings(body.get("config")))}
    credentials = credentials_storage(body, config)
    scoped: dict[str, dict[str, str]] = {}
    covered = any(table_location.startswith(prefix) for prefix in credentials)
    if config and not covered and _in_object_store(table_location):
        scoped[table_location] = config
    scoped.update(credentials)
    return scoped


def _in_object_store(location: str) -> bool:
    from iceduck.io.object_store import is_object_store  # pyarrow loads only for a store

    return is_object_store(location)


def credentials_storage(body: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """The ``storage-credentials`` of a ``LoadTableResult`` or ``LoadCredentialsResponse``
    by prefix, each over ``config`` (the table's)."""
    scoped: dict[str, dict[str, str]] = {}
    credentials = body.get("storage-credentials")
    for credential in credentials if isinstance(credentials, list) else []:
        if not isinstance(credential, dict):
            continue
        prefix, values = credential.get("prefix"), credential.get("config")
        if isinstance(prefix, str) and isinstance(values, dict):
            scoped[prefix] = storage_only({**config, **_strings(values)})
    return scoped


def table_config(body: Mapping[str, Any]) -> dict[str, str]:
    """A ``LoadTableResult``'s ``config``, as strings."""
    return _strings(body.get("config"))


def _strings(values: Any) -> dict[str, str]:
    if not isinstance(values, dict):
        return {}
    return {str(k): str(v) for k, v in values.items() if v is not None}


def storage_only(properties: Mapping[str, str]) -> dict[str, str]:
    """``properties`` without the catalog's own (auth, paging, headers, HTTP client): what
    the object stores may see."""
    return {
        k: v for k, v in properties.items() if k not in REST_ONLY and not k.startswith(("header.", "rest."))
    }


def apply_storage_properties(properties: Mapping[str, str]) -> None:
    """Merge the catalog's own ``properties`` into the object stores' base configuration
    when any differs (a change drops the cached filesystems, so an unchanged
    configuration costs nothing)."""
    if not properties:
        return
    from iceduck.io import object_store  # pyarrow's filesystems load only when a store is used

    current = object_store.properties()
    if any(current.get(k) != v for k, v in properties.items()):
        object_store.configure(properties)


def apply_table_storage(
    scoped: Mapping[str, Mapping[str, str]], refresh: Refresher | None, owner: ScopeOwner
) -> None:
    """Make each prefix's properties a scope of the object stores (``refresh`` renews
    them), ``owner``'s (the catalog's: released when it closes); an unchanged scope costs
    nothing."""
    if not scoped:
        return
    from iceduck.io import object_store  # pyarrow's filesystems load only when a store is used

    for prefix, values in scoped.items():
        object_store.configure_scope(prefix, values, refresh, owner)


def create_request(name: str, metadata: TableMetadata, stage: bool) -> dict[str, Any]:
    """The spec's ``CreateTableRequest`` for a table's first metadata (the format version
    as the ``format-version`` property, as Java's ``RESTSessionCatalog`` sends it)."""
    properties = dict(metadata.properties)
    properties["format-version"] = str(metadata.format_version)
    body: dict[str, Any] = {
        "name": name,
        "location": metadata.location,
        "schema": schema_to_json(metadata.schema()),
        "partition-spec": partition_spec_to_json(metadata.spec()),
        "write-order": sort_order_to_json(metadata.sort_order()),
        "properties": properties,
    }
    if stage:
        body["stage-create"] = True
    return body


def says_only_a_create(metadata: TableMetadata) -> bool:
    """Whether a plain ``CreateTableRequest`` carries all of ``metadata``: one schema, spec
    and order, no snapshot, ref, statistics or key (a CTAS table has a snapshot: it is
    created by a commit asserting ``assert-create`` instead)."""
    return (
        not metadata.snapshots
        and not metadata.refs
        and len(metadata.schemas) == 1
        and len(metadata.partition_specs) == 1
        and len(metadata.sort_orders) <= 1
        and not metadata.statistics
        and not metadata.partition_statistics
        and not metadata.encryption_keys
    )
