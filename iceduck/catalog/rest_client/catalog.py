"""A :class:`~iceduck.catalog.base.Catalog` that speaks the Iceberg REST protocol.

The server owns the catalog: locations, metadata files and the compare-and-swap are its;
this client sends what the OpenAPI spec (``open-api/rest-catalog-open-api.yaml``) says and
reads the answers. Opening one negotiates the configuration (:mod:`.config`) with the
credentials of :mod:`.auth`; every request then carries ``Authorization`` (when there is
one), ``X-Iceberg-Access-Delegation: vended-credentials`` (spec: the client asks the
server for storage credentials) and the ``header.<Name>`` properties as headers; with
``rest.sigv4-enabled`` each request is then signed (:mod:`.sigv4`), and a 403 refusing the
signature is one error naming the properties to check.

A commit sends the updates iceduck's metadata builder recorded while it built the new
metadata, and the requirements derived from them
(:func:`iceduck.table_updates.commit_request.commit_request`): the server checks the
requirements against its current metadata and replays the updates, so the metadata the
server writes is the one iceduck built. A 409 is a
:class:`~iceduck.errors.CommitConflictError`, and iceduck's commit loop
(:mod:`iceduck.txn.commit`) reloads the table and builds the statement again; an unknown
outcome (5xx, a lost answer) keeps every file (:mod:`.error_model`, :mod:`.http`).

A table created with more than a ``CreateTableRequest`` says (a snapshot: ``CREATE TABLE
... AS SELECT``) is created as Java's create transactions are: ``stage-create`` (which
checks the name and the namespace, and creates nothing), then a commit with
``assert-create`` and every update of the new metadata.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from iceduck.catalog.base import LoadedTable, Namespace, TableIdentifier
from iceduck.catalog.rest_client.auth import Auth
from iceduck.catalog.rest_client.config import RestConfig, config_query, negotiated, page_size
from iceduck.catalog.rest_client.error_model import error_for, error_parts
from iceduck.catalog.rest_client.http import Reply, Transport, uuid7
from iceduck.catalog.rest_client.sigv4 import SigV4Signer, refused_signature, sigv4_enabled
from iceduck.catalog.rest_client.table_result import (
    apply_storage_properties,
    apply_table_storage,
    create_request,
    credentials_storage,
    loaded_table,
    metadata_of,
    says_only_a_create,
    storage_only,
    table_storage,
)
from iceduck.catalog.rest_client.views import RestViews
from iceduck.errors import (
    AlreadyExistsError,
    CommitConflictError,
    CommitStateUnknownError,
    StorageError,
    UserError,
)
from iceduck.io.store_scopes import Refresher, ScopeOwner
from iceduck.lru import LRUCache
from iceduck.spec.table_metadata import TableMetadata
from iceduck.table_updates.commit_request import commit_request
from iceduck.table_updates.requirements import requirement_json
from iceduck.table_updates.updates import update_json

UNIT_SEPARATOR = "\x1f"
NS = "namespaces/{namespace}"
TABLE = f"{NS}/tables/{{table}}"
CREDENTIALS = f"{TABLE}/credentials"
HEADER_PREFIX = "header."
IDEMPOTENCY_KEY = "Idempotency-Key"
#: how many parsed metadata versions a catalog keeps
PARSED_METADATA = 128
#: what the page loop gives up after: a server repeating its tokens would never end
MAX_PAGES = 100_000


def _namespace_segment(namespace: Namespace) -> str:
    """Spec: "Multipart namespace parts should be separated by the unit separator (0x1F)"."""
    return quote(UNIT_SEPARATOR.join(namespace), safe="")


def _ns_about(namespace: Namespace) -> str:
    """A namespace as errors name it, as the local catalogs do: ``namespace 'a.b'``."""
    return f"namespace '{'.'.join(namespace)}'"


def _table_about(identifier: TableIdentifier) -> str:
    return f"table '{identifier}'"


def _identifier_json(identifier: TableIdentifier) -> dict[str, Any]:
    return {"namespace": list(identifier.namespace), "name": identifier.name}


class RestCatalog(RestViews):
    """The REST catalog at ``uri`` (``http(s)://host:port[/path]``), as catalog ``name``;
    its views in :class:`~iceduck.catalog.rest_client.views.RestViews`."""

    def __init__(
        self, uri: str, name: str, properties: Mapping[str, str] | None = None, read_only: bool = False
    ) -> None:
        user = dict(properties or {})
        apply_storage_properties(storage_only(user))  # the user's store properties, as for any lake
        self.name = name
        self.read_only = read_only
        self.signer = SigV4Signer(user) if sigv4_enabled(user) else None
        sign = self.signer.sign if self.signer is not None else None
        self.transport = Transport(uri, user, sign)
        self.uri = self.transport.uri
        self.auth = Auth(self.uri, user, signer=sign)
        #: parsed table metadata by metadata location (what a load answers again and again)
        self._parsed: LRUCache[str, TableMetadata] = LRUCache(PARSED_METADATA)
        #: the ETag, table and vended storage properties (by prefix) of each table's last load
        self._etags: LRUCache[TableIdentifier, tuple[str, LoadedTable, dict[str, dict[str, str]]]] = LRUCache(
            PARSED_METADATA
        )
        #: owns the scopes of the storage properties vended to this catalog: released on close
        self.scope_owner = ScopeOwner()
        self._headers = {"X-Iceberg-Access-Delegation": "vended-credentials"}
        self._headers.update(
            {k[len(HEADER_PREFIX) :]: v for k, v in user.items() if k.startswith(HEADER_PREFIX)}
        )
        reply = self._send("GET", "/v1/config", query=config_query(user))
        if reply.status != 200:
            raise error_for(reply.status, reply.body, self.uri, "the catalog configuration")
        self.config: RestConfig = negotiated(reply.body, user, self.uri)
        self.page_size = page_size(self.config.properties)
        apply_storage_properties(storage_only(self.config.properties))

    def __repr__(self) -> str:
        return f"RestCatalog({self.name!r}, {self.uri!r})"

    def close(self) -> None:
        """Forget the storage properties vended to this catalog (its connection closed), as
        Java closes each table's ``FileIO`` with its catalog: a later connection on the same
        locations, with settings of its own, must not be served by them; another open
        catalog's scopes on the same prefixes stay. Then close this thread's HTTP connection."""
        from iceduck.io import object_store  # pyarrow's filesystems load only when a store is used

        object_store.release(self.scope_owner)
        self.transport.close()

    # -- requests ------------------------------------------------------------------------------

    def _send(self, method: str, path: str, extra: Mapping[str, str] | None = None, **kwargs: Any) -> Reply:
        """One request, authorised (``extra`` headers added); sent once more with a fresh
        token after a 401 when the credential can fetch one (a 401 means the server did
        nothing).

        A commit to a server that honours ``Idempotency-Key`` (it advertises
        ``idempotency-key-lifetime``) carries a new key, and when its answer is lost it is
        sent once more with the same key: the server then answers what the first attempt
        did, or runs it if it never arrived, so the outcome is known instead of
        :class:`~iceduck.errors.CommitStateUnknownError` (but see :meth:`_ask_again`)."""
        extra = dict(extra or {})
        retry_lost = bool(kwargs.get("commit")) and self.config.idempotent  # commits follow /v1/config
        if retry_lost:
            extra[IDEMPOTENCY_KEY] = uuid7()
        headers = {**self._headers, **extra, **self.auth.headers()}
        try:
            reply = self.transport.request(method, path, headers=headers, **kwargs)
        except CommitStateUnknownError as lost:
            if not retry_lost:
                raise
            reply = self._ask_again(lost, method, path, headers, kwargs)
        if reply.status == 401 and self.auth.refresh(headers):
            headers = {**self._headers, **extra, **self.auth.headers()}
            reply = self.transport.request(method, path, headers=headers, **kwargs)
        refused = refused_signature(
            f"the REST catalog at {self.uri}", reply.status, reply.body, reply.headers
        )
        if refused is not None and self.signer is not None:
            raise refused
        return reply

    def _ask_again(
        self, lost: CommitStateUnknownError, method: str, path: str, headers: dict[str, str], kwargs: Any
    ) -> Reply:
        """The answer to a commit sent once more, with its ``Idempotency-Key``, after the
        answer to the first attempt was ``lost``. Two answers say nothing about that first
        attempt, so the state stays unknown (files kept, nothing re-applied):

        * no connection at all: the server went away after the first attempt arrived;
        * 409: a server that no longer holds the key (restarted: keys live in its memory)
          ran the retry, whose requirements can fail *because* the first attempt landed --
          taken as a conflict, the statement would be re-applied and land twice, and the
          first attempt's files, which the table references, deleted as a loser's.
        """
        try:
            reply = self.transport.request(method, path, headers=headers, **kwargs)
        except StorageError as e:
            raise CommitStateUnknownError(f"{lost} (asked again: {e})") from None
        if reply.status == 409:
            _, said = error_parts(reply.body)
            raise CommitStateUnknownError(
                f"{lost} (asked again with its Idempotency-Key, the catalog answered HTTP 409: "
                f"{said or 'a requirement failed'}, which the first attempt may itself have caused)"
            )
        return reply

    def _call(
        self,
        method: str,
        route: str,
        about: str,
        values: Mapping[str, str] | None = None,
        *,
        ok: tuple[int, ...] = (200,),
        missing_ok: bool = False,
        commit: bool = False,
        namespace: Namespace | None = None,
        query: Mapping[str, str] | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """``method /v1/{prefix}/route`` (its ``{name}`` segments from ``values``, already
        encoded); raises the iceduck error of any status outside ``ok`` (a 404 returned
        as it is with ``missing_ok``), a missing namespace named as ``namespace``."""
        self.config.require(method, route, self.uri)
        path = route
        for key, value in (values or {}).items():
            path = path.replace(f"{{{key}}}", value)
        prefix = f"{quote(self.config.prefix, safe='')}/" if self.config.prefix else ""
        reply = self._send(method, f"/v1/{prefix}{path}", headers, query=query, body=body, commit=commit)
        if reply.status in ok or (missing_ok and reply.status == 404):
            return reply
        in_namespace = None if namespace is None else _ns_about(namespace)
        raise error_for(reply.status, reply.body, self.uri, about, namespace=in_namespace, commit=commit)

    def _pages(
        self, route: str, about: str, values: Mapping[str, str], query: Mapping[str, str], key: str
    ) -> Iterator[Any]:
        """The items under ``key`` of every page of a list (``next-page-token``)."""
        query = dict(query)
        if self.page_size is not None:
            query["pageSize"] = str(self.page_size)
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            body = self._call("GET", route, about, values, query=query).body
            items = body.get(key) if isinstance(body, dict) else None
            if not isinstance(items, list):
                raise StorageError(f"the REST catalog at {self.uri} listed {about} without {key}")
            yield from items
            token = body.get("next-page-token")
            if not token:
                return
            if token in seen:
                raise StorageError(f"the REST catalog at {self.uri} repeated a page token listing {about}")
            seen.add(token)
            query["pageToken"] = str(token)
        raise StorageError(f"the REST catalog at {self.uri} kept paging while listing {about}")

    def _writable(self) -> None:
        if self.read_only:
            raise UserError("the catalog is read-only")

    @staticmethod
    def _ns(namespace: Namespace) -> dict[str, str]:
        return {"namespace": _namespace_segment(namespace)}

    @staticmethod
    def _table(identifier: TableIdentifier) -> dict[str, str]:
        return {
            "namespace": _namespace_segment(identifier.namespace),
            "table": quote(identifier.name, safe=""),
        }

    def _on_table(self, method: str, route: str, identifier: TableIdentifier, **kwargs: Any) -> Reply:
        """``_call`` on a route under the table's namespace (``{namespace}``, and ``{table}``
        when the route has it), its errors naming the table and its namespace."""
        values = self._table(identifier) if "{table}" in route else self._ns(identifier.namespace)
        about = _table_about(identifier)
        return self._call(method, route, about, values, namespace=identifier.namespace, **kwargs)

    # -- namespaces ------------------------------------------------------------------------------

    def list_namespaces(self, parent: Namespace = ()) -> list[Namespace]:
        query = {"parent": UNIT_SEPARATOR.join(parent)} if parent else {}
        about = _ns_about(parent) if parent else "the namespaces"
        out: list[Namespace] = []
        for item in self._pages("namespaces", about, {}, query, "namespaces"):
            if not isinstance(item, list) or not all(isinstance(level, str) for level in item):
                raise StorageError(
                    f"the REST catalog at {self.uri} listed a namespace that is not an array of strings"
                )
            out.append(tuple(item))
        return out

    def namespace_exists(self, namespace: Namespace) -> bool:
        if not namespace:
            return False
        about = _ns_about(namespace)
        method = "HEAD" if self.config.supports("HEAD", NS) else "GET"
        reply = self._call(method, NS, about, self._ns(namespace), ok=(200, 204), missing_ok=True)
        return reply.status != 404

    def load_namespace_properties(self, namespace: Namespace) -> dict[str, str]:
        about = _ns_about(namespace)
        body = self._call("GET", NS, about, self._ns(namespace)).body
        properties = body.get("properties") if isinstance(body, dict) else None
        return {str(k): str(v) for k, v in (properties or {}).items()}

    def create_namespace(self, namespace: Namespace, properties: dict[str, str] | None = None) -> None:
        self._writable()
        body = {"namespace": list(namespace), "properties": dict(properties or {})}
        self._call("POST", "namespaces", _ns_about(namespace), body=body)

    def update_namespace_properties(
        self, namespace: Namespace, updates: dict[str, str], removals: list[str]
    ) -> tuple[list[str], list[str], list[str]]:
        self._writable()
        about = _ns_about(namespace)
        request = {"updates": dict(updates), "removals": list(removals)}
        body = self._call("POST", f"{NS}/properties", about, self._ns(namespace), body=request).body
        body = body if isinstance(body, dict) else {}
        return (
            [str(k) for k in body.get("updated") or []],
            [str(k) for k in body.get("removed") or []],
            [str(k) for k in body.get("missing") or []],
        )

    def drop_namespace(self, namespace: Namespace) -> None:
        self._writable()
        self._call("DELETE", NS, _ns_about(namespace), self._ns(namespace), ok=(200, 204))

    # -- tables: reads ---------------------------------------------------------------------------

    def list_tables(self, namespace: Namespace) -> list[TableIdentifier]:
        about = _ns_about(namespace)
        out: list[TableIdentifier] = []
        for item in self._pages(f"{NS}/tables", about, self._ns(namespace), {}, "identifiers"):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise StorageError(f"the REST catalog at {self.uri} listed a table identifier without a name")
            out.append(TableIdentifier(tuple(item.get("namespace") or namespace), item["name"]))
        return out

    def table_exists(self, identifier: TableIdentifier) -> bool:
        method = "HEAD" if self.config.supports("HEAD", TABLE) else "GET"
        reply = self._on_table(method, TABLE, identifier, ok=(200, 204), missing_ok=True)
        return reply.status != 404

    def load_table(self, identifier: TableIdentifier) -> LoadedTable:
        """``GET`` the table; with the ``ETag`` of its last load as ``If-None-Match``, a 304
        (spec: "the table metadata has not changed") answers from what that load gave."""
        known = self._etags.get(identifier)
        headers = {"If-None-Match": known[0]} if known is not None else None
        reply = self._on_table(
            "GET", TABLE, identifier, ok=(200, 304), query={"snapshots": "all"}, headers=headers
        )
        if reply.status == 304 and known is not None:
            apply_table_storage(known[2], self._refresher(identifier, known[2]), self.scope_owner)
            return known[1]
        table = self._loaded(reply.body, identifier)
        tag = reply.headers.get("etag")
        if tag:
            vended = table_storage(reply.body, table.metadata.location, self.config.properties)
            self._etags.put(identifier, (tag, table, vended))
        return table

    def _loaded(self, body: Any, identifier: TableIdentifier) -> LoadedTable:
        """A ``LoadTableResult`` as a table, its storage properties put in place for its
        locations (renewed through :meth:`load_credentials` when they expire)."""
        table = loaded_table(body, identifier, self.uri, self._parsed)
        scoped = table_storage(body, table.metadata.location, self.config.properties)
        apply_table_storage(scoped, self._refresher(identifier, scoped), self.scope_owner)
        return table

    def _refresher(
        self, identifier: TableIdentifier, scoped: Mapping[str, Mapping[str, str]]
    ) -> Refresher | None:
        """What renews the table's vended credentials: none when nothing was vended."""
        if not scoped:
            return None
        return lambda: self.load_credentials(identifier)

    def load_credentials(self, identifier: TableIdentifier) -> dict[str, dict[str, str]]:
        """The table's current storage properties by prefix: the spec's ``loadCredentials``
        (``GET .../tables/{table}/credentials``, "Load vended credentials for a table from
        the catalog") when the server offers it, else the table loaded again, which vends
        them too."""
        known = self._etags.get(identifier)
        fresh: dict[str, dict[str, str]] | None = None
        if self.config.supports("GET", CREDENTIALS):
            reply = self._on_table("GET", CREDENTIALS, identifier, missing_ok=True)
            if reply.status == 200 and isinstance(reply.body, dict):
                fresh = credentials_storage(reply.body, self._table_config(known))
        if fresh is None:
            reply = self._on_table("GET", TABLE, identifier, query={"snapshots": "refs"})
            table = loaded_table(reply.body, identifier, self.uri, self._parsed)
            fresh = table_storage(reply.body, table.metadata.location, self.config.properties)
        if known is not None:  # a load answered 304 later puts these back, not the expired ones
            self._etags.put(identifier, (known[0], known[1], {**known[2], **fresh}))
        return fresh

    def _table_config(
        self, known: tuple[str, LoadedTable, dict[str, dict[str, str]]] | None
    ) -> dict[str, str]:
        """The storage properties new credentials go over: the table's scope of its last
        load (the longest prefix covering its location), else the catalog's own."""
        if known is not None:
            location = known[1].metadata.location
            covering = [p for p in known[2] if location.startswith(p)]
            if covering:
                return dict(known[2][max(covering, key=len)])
        return storage_only(self.config.properties)

    # -- tables: writes --------------------------------------------------------------------------

    def default_table_location(self, identifier: TableIdentifier) -> str:
        """The server's own choice, asked with a ``stage-create`` of an empty table: it
        creates nothing (spec: "the table is created when the transaction is committed");
        the storage it vends is put in place by :meth:`stage_create` of the table itself."""
        request = {
            "name": identifier.name,
            "schema": {"type": "struct", "schema-id": 0, "fields": []},
            "stage-create": True,
        }
        body = self._on_table("POST", f"{NS}/tables", identifier, body=request).body
        return metadata_of(body, self.uri, _table_about(identifier))[0].location

    def stage_create(self, identifier: TableIdentifier, metadata: TableMetadata) -> None:
        """Stage the new table (``stage-create``: checks the name and namespace, creates
        nothing) and put in place the storage properties the answer vends for its location:
        its data files are written before the commit that creates it, as Java's create
        transaction writes them through the staged table's ``FileIO``. ``CREATE TABLE ...
        AS SELECT`` calls it before writing (an explicit ``LOCATION`` too)."""
        self._writable()
        request = create_request(identifier.name, metadata, stage=True)
        staged = self._on_table("POST", f"{NS}/tables", identifier, body=request)
        self._stage_storage(staged.body, metadata.location)

    def _stage_storage(self, body: Any, location: str) -> None:
        """Put in place the storage properties a ``stage-create`` answer vends for a table
        not created yet (not renewable: ``loadCredentials`` needs the table to exist)."""
        if isinstance(body, dict):
            scoped = table_storage(body, location, self.config.properties)
            apply_table_storage(scoped, None, self.scope_owner)

    def create_table(self, identifier: TableIdentifier, metadata: TableMetadata) -> LoadedTable:
        self._writable()
        if says_only_a_create(metadata):
            request = create_request(identifier.name, metadata, stage=False)
            reply = self._on_table("POST", f"{NS}/tables", identifier, body=request)
            return self._loaded(reply.body, identifier)
        self.stage_create(identifier, metadata)
        try:
            return self._commit(identifier, None, metadata)
        except CommitConflictError as e:  # assert-create failed: created meanwhile
            raise AlreadyExistsError(f"table {identifier} already exists ({e})") from None

    def _commit(
        self, identifier: TableIdentifier, base: TableMetadata | None, new: TableMetadata
    ) -> LoadedTable:
        body = self._change(identifier, base, new)
        reply = self._on_table("POST", TABLE, identifier, commit=True, body=body)
        return self._loaded(reply.body, identifier)

    @staticmethod
    def _change(
        identifier: TableIdentifier, base: TableMetadata | None, new: TableMetadata
    ) -> dict[str, Any]:
        """The spec's ``CommitTableRequest``: identifier, requirements, updates."""
        requirements, updates = commit_request(base, new)
        return {
            "identifier": _identifier_json(identifier),
            "requirements": [requirement_json(r) for r in requirements],
            "updates": [update_json(u) for u in updates],
        }

    def commit_table(self, base: LoadedTable, metadata: TableMetadata) -> LoadedTable:
        self._writable()
        return self._commit(base.identifier, base.metadata, metadata)

    def commit_tables(self, changes: Sequence[tuple[LoadedTable, TableMetadata]]) -> list[LoadedTable]:
        """``POST /v1/{prefix}/transactions/commit`` (204, no body): the tables are loaded
        again afterwards, so a commit landing in between would show in what is returned."""
        self._writable()
        if not changes:
            return []
        if len(changes) == 1:
            return [self.commit_table(*changes[0])]
        body = {"table-changes": [self._change(b.identifier, b.metadata, new) for b, new in changes]}
        names = ", ".join(str(b.identifier) for b, _ in changes)
        self._call("POST", "transactions/commit", f"tables {names}", ok=(200, 204), commit=True, body=body)
        return [self.load_table(b.identifier) for b, _ in changes]

    def register_table(self, identifier: TableIdentifier, metadata_location: str) -> LoadedTable:
        self._writable()
        body = {"name": identifier.name, "metadata-location": metadata_location}
        reply = self._on_table("POST", f"{NS}/register", identifier, body=body)
        return self._loaded(reply.body, identifier)

    def drop_table(self, identifier: TableIdentifier, purge: bool = False) -> None:
        self._writable()
        query = {"purgeRequested": "true"} if purge else {}
        self._on_table("DELETE", TABLE, identifier, ok=(200, 204), query=query)

    def rename_table(self, source: TableIdentifier, target: TableIdentifier) -> None:
        self._writable()
        body = {"source": _identifier_json(source), "destination": _identifier_json(target)}
        self._call(
            "POST",
            "tables/rename",
            _table_about(source),
            ok=(200, 204),
            body=body,
            namespace=target.namespace,
        )
