"""What is particular to the Glue catalog, on moto's Glue (the run's moto server): the
Glue tables and databases as Java's ``GlueTableOperations`` stores them, tables that are not
Iceberg's, the optimistic ``VersionId``, lost answers, and errors of credentials and
reachability that name what to check and never a secret. The catalog contract itself runs
on Glue in tests/catalog/test_catalog_writes.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from iceduck.catalog.base import LoadedTable, TableIdentifier
from iceduck.catalog.glue import GlueCatalog
from iceduck.catalog.glue_client import translate
from iceduck.catalog.open import open_catalog
from iceduck.errors import (
    AlreadyExistsError,
    CommitConflictError,
    CommitStateUnknownError,
    NotFoundError,
    StorageError,
    UnsupportedError,
    UserError,
    ValidationError,
)
from iceduck.spec.partition import UNPARTITIONED
from iceduck.spec.schema import Schema
from iceduck.spec.sort import UNSORTED
from iceduck.spec.types import DecimalType, ListType, LongType, MapType, NestedField, StringType, StructType
from iceduck.txn.builder import MetadataBuilder, new_table_metadata
from tests.support.glue import glue_catalog, glue_properties, glue_table, new_account, route_to_account
from tests.support.lost_answers import AnswerLosingProxy
from tests.support.s3 import S3Server, auth_server, free_port, moto_missing

SCHEMA = Schema(
    (
        NestedField(1, "id", LongType(), True, doc="the key"),
        NestedField(2, "tags", ListType(3, StringType())),
        NestedField(4, "attrs", MapType(5, StringType(), 6, DecimalType(9, 2))),
        NestedField(7, "point", StructType((NestedField(8, "x", LongType()),))),
    )
)
T = TableIdentifier(("db",), "t")


@pytest.fixture
def account() -> str:
    return new_account()


@pytest.fixture
def catalog(s3_server: S3Server, account: str, tmp_path: Path) -> GlueCatalog:
    return glue_catalog(s3_server, account, str(tmp_path / "wh"))


def _create(catalog: GlueCatalog, ident: TableIdentifier = T) -> LoadedTable:
    if not catalog.namespace_exists(ident.namespace):
        catalog.create_namespace(ident.namespace)
    location = catalog.default_table_location(ident)
    return catalog.create_table(ident, new_table_metadata(SCHEMA, UNPARTITIONED, UNSORTED, location, {}))


def _set(base: LoadedTable, **updates: str) -> Any:
    builder = MetadataBuilder(base.metadata)
    builder.set_properties(dict(updates))
    return builder.build()


def _hive_table(catalog: GlueCatalog, name: str, parameters: dict[str, str]) -> None:
    """A Glue table another tool made (Hive's layout), written with boto3 directly."""
    catalog._write.create_table(
        DatabaseName="db",
        TableInput={
            "Name": name,
            "TableType": "EXTERNAL_TABLE",
            "Parameters": parameters,
            "StorageDescriptor": {
                "Location": "s3://elsewhere/hive",
                "Columns": [{"Name": "c", "Type": "int"}],
            },
        },
    )


# -- what Glue holds -----------------------------------------------------------------------------


def test_the_glue_table_is_javas(catalog: GlueCatalog) -> None:
    """TableType, Parameters and StorageDescriptor as Java's GlueTableOperations and
    IcebergToGlueConverter write them (the table's own field ids: a new table's are
    assigned afresh); a dropped column stays listed as not current."""
    created = _create(catalog)
    stored = glue_table(catalog, T)
    assert stored["TableType"] == "EXTERNAL_TABLE"
    assert stored["Parameters"] == {"table_type": "ICEBERG", "metadata_location": created.metadata_location}
    assert stored["StorageDescriptor"]["Location"] == f"{catalog.warehouse}/db.db/t"
    assert stored["StorageDescriptor"]["Columns"] == [
        {
            "Name": "id",
            "Type": "bigint",
            "Comment": "the key",
            "Parameters": {
                "iceberg.field.id": "1",
                "iceberg.field.optional": "false",
                "iceberg.field.current": "true",
            },
        },
        {
            "Name": "tags",
            "Type": "array<string>",
            "Parameters": {
                "iceberg.field.id": "2",
                "iceberg.field.optional": "true",
                "iceberg.field.current": "true",
            },
        },
        {
            "Name": "attrs",
            "Type": "map<string,decimal(9,2)>",
            "Parameters": {
                "iceberg.field.id": "3",
                "iceberg.field.optional": "true",
                "iceberg.field.current": "true",
            },
        },
        {
            "Name": "point",
            "Type": "struct<x:bigint>",
            "Parameters": {
                "iceberg.field.id": "4",
                "iceberg.field.optional": "true",
                "iceberg.field.current": "true",
            },
        },
    ]
    builder = MetadataBuilder(created.metadata)
    kept = Schema(created.metadata.schema().fields[:1])
    builder.set_current_schema(builder.add_schema(kept, last_column_id=created.metadata.last_column_id))
    committed = catalog.commit_table(created, builder.build())
    stored = glue_table(catalog, T)
    assert stored["Parameters"]["previous_metadata_location"] == created.metadata_location
    assert stored["Parameters"]["metadata_location"] == committed.metadata_location
    columns = stored["StorageDescriptor"]["Columns"]
    assert [(c["Name"], c["Parameters"]["iceberg.field.current"]) for c in columns] == [
        ("id", "true"),
        ("tags", "false"),
        ("attrs", "false"),
        ("point", "false"),
    ]


def test_parameters_others_set_are_kept_by_a_commit(catalog: GlueCatalog) -> None:
    """Java's prepareProperties starts from the Glue table's parameters: a tag Athena or a
    person set survives iceduck's commit."""
    created = _create(catalog)
    stored = glue_table(catalog, T)
    catalog._write.update_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "TableType": "EXTERNAL_TABLE",
            "Parameters": {**stored["Parameters"], "owner_team": "data"},
        },
    )
    catalog.commit_table(created, _set(created, k="v"))
    assert glue_table(catalog, T)["Parameters"]["owner_team"] == "data"


def test_namespace_properties_are_the_database(catalog: GlueCatalog) -> None:
    """location <-> LocationUri, comment <-> Description, the rest <-> Parameters (Java's
    toDatabaseInput); a database location is where its tables go."""
    catalog.create_namespace(("db",), {"location": "s3://b/dbs/db", "comment": "sales", "owner": "ann"})
    database = catalog._read.get_database(Name="db")["Database"]
    assert (database["LocationUri"], database["Description"], database["Parameters"]) == (
        "s3://b/dbs/db",
        "sales",
        {"owner": "ann"},
    )
    assert catalog.load_namespace_properties(("db",)) == {
        "location": "s3://b/dbs/db",
        "comment": "sales",
        "owner": "ann",
    }
    assert catalog.default_table_location(T) == "s3://b/dbs/db/t"
    assert catalog.update_namespace_properties(
        ("db",), {"comment": "all sales", "k": "v"}, ["owner", "nope"]
    ) == (
        ["comment", "k"],
        ["owner"],
        ["nope"],
    )
    assert catalog.load_namespace_properties(("db",)) == {
        "location": "s3://b/dbs/db",
        "comment": "all sales",
        "k": "v",
    }
    catalog.create_namespace(("plain",))
    assert catalog.load_namespace_properties(("plain",)) == {"location": f"{catalog.warehouse}/plain.db"}


def test_glue_names_are_checked_unless_told_not_to(s3_server: S3Server, account: str, tmp_path: Path) -> None:
    """Java's GLUE_DB_PATTERN / GLUE_TABLE_PATTERN, and glue.skip-name-validation."""
    catalog = glue_catalog(s3_server, account, str(tmp_path))
    with pytest.raises(ValidationError, match=r"'Sales' as a Glue database name.*skip-name-validation"):
        catalog.create_namespace(("Sales",))
    catalog.create_namespace(("db",))
    metadata = new_table_metadata(SCHEMA, UNPARTITIONED, UNSORTED, str(tmp_path / "x"), {})
    with pytest.raises(ValidationError, match="'T-1' as a Glue table name"):
        catalog.create_table(TableIdentifier(("db",), "T-1"), metadata)
    lenient = glue_catalog(s3_server, account, str(tmp_path), **{"glue.skip-name-validation": "true"})
    lenient.create_namespace(("Sales",))
    assert lenient.namespace_exists(("Sales",))


# -- tables that are not Iceberg's ---------------------------------------------------------------


def test_a_glue_table_that_is_not_iceberg(catalog: GlueCatalog) -> None:
    _create(catalog)
    _hive_table(catalog, "hive", {"table_type": "HIVE"})
    _hive_table(catalog, "bare", {})
    hive = TableIdentifier(("db",), "hive")
    with pytest.raises(
        UnsupportedError, match=r"'db\.hive'.*not an Iceberg table: its table_type parameter is 'HIVE'"
    ):
        catalog.load_table(hive)
    with pytest.raises(UnsupportedError, match=r"'db\.bare'.*table_type parameter is None"):
        catalog.load_table(TableIdentifier(("db",), "bare"))
    assert catalog.list_tables(("db",)) == [T]
    assert not catalog.table_exists(hive)
    with pytest.raises(UnsupportedError, match="not an Iceberg table"):
        catalog.drop_table(hive)
    with pytest.raises(UnsupportedError, match="not an Iceberg table"):
        catalog.rename_table(hive, TableIdentifier(("db",), "h2"))
    with pytest.raises(AlreadyExistsError, match=r"'db\.hive' already exists"):
        _create(catalog, hive)
    assert glue_table(catalog, hive)["Parameters"] == {"table_type": "HIVE"}  # untouched
    catalog.drop_table(T)
    with pytest.raises(ValidationError, match=r"namespace 'db' is not empty: it holds table '(hive|bare)'"):
        catalog.drop_namespace(("db",))


# -- commits -------------------------------------------------------------------------------------


def test_update_table_sends_the_version_read(catalog: GlueCatalog) -> None:
    """Glue's optimistic check: UpdateTable carries the VersionId of the Glue table version
    the commit read (and SkipArchive, true by default as in Java). moto answers with the
    version but does not refuse a stale one, so the conflict Glue would report is asserted
    through the error it becomes (test_glue_s_concurrent_modification_is_a_conflict)."""
    sent: list[dict[str, Any]] = []
    catalog._write.meta.events.register(
        "provide-client-params.glue.UpdateTable", lambda params, **_: sent.append(dict(params))
    )
    table = _create(catalog)
    version = glue_table(catalog, T)["VersionId"]
    table = catalog.commit_table(table, _set(table, a="1"))
    assert sent[-1]["VersionId"] == version and sent[-1]["SkipArchive"] is True
    second = glue_table(catalog, T)["VersionId"]
    catalog.commit_table(table, _set(table, b="2"))
    assert sent[-1]["VersionId"] == second != version


def test_skip_archive_is_a_property(s3_server: S3Server, account: str, tmp_path: Path) -> None:
    archiving = glue_catalog(s3_server, account, str(tmp_path), **{"glue.skip-archive": "false"})
    sent: list[dict[str, Any]] = []
    archiving._write.meta.events.register(
        "provide-client-params.glue.UpdateTable", lambda params, **_: sent.append(dict(params))
    )
    table = _create(archiving)
    archiving.commit_table(table, _set(table, a="1"))
    assert sent[-1]["SkipArchive"] is False
    with pytest.raises(UserError, match=r"glue\.skip-archive must be true or false, not 'maybe'"):
        glue_catalog(s3_server, account, str(tmp_path), **{"glue.skip-archive": "maybe"})


def test_glue_s_concurrent_modification_is_a_conflict() -> None:
    """The answer Glue gives a stale VersionId is a CommitConflictError (retried on fresh
    metadata by the caller), as Java's handleAWSExceptions makes it a CommitFailedException."""
    from botocore.exceptions import ClientError

    refusal = ClientError(
        {
            "Error": {
                "Code": "ConcurrentModificationException",
                "Message": "Update table failed due to concurrent modifications.",
            }
        },
        "UpdateTable",
    )
    error = translate(refusal, "Glue catalog 'c'", "table 'db.t'", [], "http://glue")
    assert isinstance(error, CommitConflictError) and "concurrent update" in str(error)


def test_a_commit_on_a_stale_base_writes_nothing(catalog: GlueCatalog, tmp_path: Path) -> None:
    """The metadata_location check before UpdateTable (Java's checkMetadataLocation): a stale
    base is a conflict before any file is written."""
    base = _create(catalog)
    catalog.commit_table(base, _set(base, a="1"))
    folder = Path(base.metadata.location) / "metadata"
    before = sorted(folder.iterdir())
    with pytest.raises(CommitConflictError, match=r"'db\.t' changed since it was loaded"):
        catalog.commit_table(base, _set(base, b="2"))
    assert sorted(folder.iterdir()) == before


def _before_first(catalog: GlueCatalog, operation: str, action: Any) -> None:
    """Run ``action`` (another writer's change) just before the catalog's first ``operation``
    request is sent: after every check the catalog makes, before Glue sees its write."""
    done: list[bool] = []

    def once(**_: Any) -> None:
        if not done:
            done.append(True)
            action()

    catalog._write.meta.events.register(f"before-call.glue.{operation}", once)


def test_a_create_glue_refuses_is_already_exists_and_leaves_no_file(
    s3_server: S3Server, account: str, tmp_path: Path
) -> None:
    """Another writer creates the table between the catalog's check and its CreateTable:
    Glue refuses (AlreadyExistsException), the loser's metadata file is deleted, the
    winner's table is untouched."""
    first = glue_catalog(s3_server, account, str(tmp_path))
    first.create_namespace(("db",))
    second = glue_catalog(s3_server, account, str(tmp_path))
    winner: list[LoadedTable] = []
    _before_first(first, "CreateTable", lambda: winner.append(_create(second)))
    with pytest.raises(AlreadyExistsError, match=r"'db\.t' already exists"):
        _create(first)
    folder = Path(winner[0].metadata_location).parent
    assert sorted(p.name for p in folder.iterdir()) == [Path(winner[0].metadata_location).name]
    assert first.load_table(T).metadata_location == winner[0].metadata_location


@pytest.mark.xfail(
    strict=True,
    reason="moto's Glue ignores UpdateTable's VersionId (moto 5.2.5), so the later update "
    "overwrites the earlier one; AWS Glue refuses it with ConcurrentModificationException",
)
def test_a_commit_between_the_check_and_the_update_is_a_conflict(
    s3_server: S3Server, account: str, tmp_path: Path
) -> None:
    """The window the metadata_location check leaves: another writer commits after the
    catalog read the Glue table and before its UpdateTable. Glue's VersionId closes it."""
    first = glue_catalog(s3_server, account, str(tmp_path))
    base = _create(first)
    second = glue_catalog(s3_server, account, str(tmp_path))
    _before_first(first, "UpdateTable", lambda: second.commit_table(base, _set(base, who="second")))
    with pytest.raises(CommitConflictError):
        first.commit_table(base, _set(base, who="first"))


def test_commit_tables_takes_one_table(catalog: GlueCatalog) -> None:
    one = _create(catalog)
    two = _create(catalog, TableIdentifier(("db",), "u"))
    with pytest.raises(UnsupportedError, match="several tables"):
        catalog.commit_tables([(one, _set(one, a="1")), (two, _set(two, a="1"))])
    [committed] = catalog.commit_tables([(one, _set(one, a="1"))])
    assert catalog.load_table(T).metadata_location == committed.metadata_location


def _lose_answers_of(catalog: GlueCatalog, proxy: AnswerLosingProxy, *operations: str) -> None:
    """Lose the answer of every request of ``operations`` the catalog sends from now on."""
    for client in (catalog._read, catalog._write):
        for operation in operations:
            client.meta.events.register(f"before-send.glue.{operation}", lambda **_: proxy.lose_next_answer())


def test_a_lost_answer_to_a_commit_that_landed(s3_server: S3Server, account: str, tmp_path: Path) -> None:
    """UpdateTable reached Glue and its answer was lost: the catalog reads the table again,
    finds the new file current, and the commit is a success (no file deleted)."""
    host, port = s3_server.endpoint_url.removeprefix("http://").split(":")
    with AnswerLosingProxy(host, int(port)) as proxy:
        catalog = glue_catalog(s3_server, account, str(tmp_path), **{"glue.endpoint": proxy.url})
        base = _create(catalog)
        _lose_answers_of(catalog, proxy, "UpdateTable", "CreateTable")
        committed = catalog.commit_table(base, _set(base, a="1"))
        assert proxy.lost.is_set()
        assert catalog.load_table(T).metadata_location == committed.metadata_location
        assert Path(committed.metadata_location).exists()
        other = TableIdentifier(("db",), "u")
        created = _create(catalog, other)
        assert catalog.load_table(other).metadata_location == created.metadata_location


def test_a_lost_answer_that_cannot_be_checked(s3_server: S3Server, account: str, tmp_path: Path) -> None:
    """UpdateTable's answer lost, and every GetTable's after it too: the outcome is unknown,
    CommitStateUnknownError, and the new metadata file stays (the table may point at it)."""
    host, port = s3_server.endpoint_url.removeprefix("http://").split(":")
    with AnswerLosingProxy(host, int(port)) as proxy:
        catalog = glue_catalog(s3_server, account, str(tmp_path), **{"glue.endpoint": proxy.url})
        base = _create(catalog)
        folder = Path(base.metadata.location) / "metadata"
        catalog._write.meta.events.register(
            "before-send.glue.UpdateTable", lambda **_: _lose_answers_of(catalog, proxy, "GetTable")
        )
        _lose_answers_of(catalog, proxy, "UpdateTable")
        with pytest.raises(CommitStateUnknownError, match=r"'db\.t' may or may not have landed"):
            catalog.commit_table(base, _set(base, a="1"))
        assert len(list(folder.glob("00001-*.metadata.json"))) == 1
    assert glue_catalog(s3_server, account, str(tmp_path)).load_table(T).metadata.properties["a"] == "1"


# -- drop, rename, register ----------------------------------------------------------------------


def test_rename_copies_the_glue_table_and_deletes_the_old(catalog: GlueCatalog) -> None:
    table = _create(catalog)
    catalog.create_namespace(("other",))
    target = TableIdentifier(("other",), "u")
    catalog.rename_table(T, target)
    assert not catalog.table_exists(T)
    assert catalog.load_table(target).metadata_location == table.metadata_location
    assert glue_table(catalog, target)["Parameters"]["metadata_location"] == table.metadata_location
    with pytest.raises(NotFoundError, match=r"'db\.t' not found"):
        catalog.rename_table(T, target)
    _create(catalog)
    with pytest.raises(AlreadyExistsError, match=r"'other\.u' already exists"):
        catalog.rename_table(T, target)
    with pytest.raises(NotFoundError, match="namespace 'nope' not found"):
        catalog.rename_table(T, TableIdentifier(("nope",), "t"))
    assert catalog.table_exists(T)


def test_register_and_drop_without_purge(catalog: GlueCatalog) -> None:
    table = _create(catalog)
    again = TableIdentifier(("db",), "again")
    registered = catalog.register_table(again, table.metadata_location)
    assert registered.metadata == table.metadata
    assert glue_table(catalog, again)["Parameters"] == {
        "table_type": "ICEBERG",
        "metadata_location": table.metadata_location,
    }
    catalog.drop_table(T)
    assert not catalog.table_exists(T) and Path(table.metadata_location).exists()
    assert catalog.load_table(again).metadata_location == table.metadata_location
    with pytest.raises(NotFoundError, match=r"'db\.t' not found"):
        catalog.drop_table(T)


def test_read_only_refuses_every_write(s3_server: S3Server, account: str, tmp_path: Path) -> None:
    table = _create(glue_catalog(s3_server, account, str(tmp_path)))
    reader = GlueCatalog("iceduck", str(tmp_path), glue_properties(s3_server, account), read_only=True)
    for client in (reader._read, reader._write):
        route_to_account(client, account)
    for call in (
        lambda: reader.create_namespace(("n",)),
        lambda: reader.drop_namespace(("db",)),
        lambda: reader.commit_table(table, _set(table, a="1")),
        lambda: reader.drop_table(T, purge=True),
        lambda: reader.rename_table(T, TableIdentifier(("db",), "u")),
    ):
        with pytest.raises(UserError, match="read-only"):
            call()
    assert reader.load_table(T).metadata_location == table.metadata_location


# -- opening, credentials, reachability ----------------------------------------------------------


def test_glue_uris_and_type_open_the_glue_catalog(s3_server: S3Server, tmp_path: Path) -> None:
    props = glue_properties(s3_server, "")
    props.pop("glue.id")
    by_uri = open_catalog(str(tmp_path), "lake", catalog_uri="glue://123456789012", properties=props)
    assert isinstance(by_uri, GlueCatalog) and by_uri.catalog_id == "123456789012"
    assert isinstance(
        open_catalog(str(tmp_path), "lake", catalog_uri="glue://", properties=props), GlueCatalog
    )
    assert isinstance(open_catalog(str(tmp_path), "lake", "glue", properties=props), GlueCatalog)
    by_type = open_catalog(str(tmp_path), "lake", properties={**props, "type": "glue"})
    assert isinstance(by_type, GlueCatalog) and by_type.catalog_id is None


def test_wrong_credentials_are_one_error_without_the_secret(tmp_path: Path) -> None:
    """moto checking signatures (a server of its own): a wrong secret key is refused, and
    the error names the catalog, the table and what to check, never the secret."""
    if moto_missing():
        pytest.skip(moto_missing() or "")
    with auth_server() as server:
        good = GlueCatalog("lake", str(tmp_path), {**server.properties, "glue.endpoint": server.endpoint_url})
        good.create_namespace(("db",))
        secret = "wRoNgSeCrEt0123456789abcdefghijklmnopqrst"
        bad_props = {
            **server.properties,
            "glue.endpoint": server.endpoint_url,
            "glue.access-key-id": server.properties["s3.access-key-id"],
            "glue.secret-access-key": secret,
        }
        bad = GlueCatalog("lake", str(tmp_path), bad_props)
        with pytest.raises(UserError) as caught:
            bad.load_table(T)
        message = str(caught.value)
        assert "Glue catalog 'lake'" in message and "table 'db.t'" in message
        assert "check the credentials" in message and "glue.secret-access-key" in message
        assert secret not in message and secret not in repr(caught.value.__cause__ or "")


def test_an_unreachable_endpoint_names_it(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"
    properties = {
        "glue.endpoint": endpoint,
        "glue.region": "us-east-1",
        "glue.access-key-id": "a",
        "glue.secret-access-key": "s3cr3t-value",
    }
    catalog = GlueCatalog("lake", str(tmp_path), properties)
    with pytest.raises(StorageError) as caught:
        catalog.load_table(T)
    message = str(caught.value)
    assert f"cannot reach Glue catalog 'lake' for table 'db.t' at {endpoint}" in message
    assert "check glue.endpoint, glue.region" in message and "s3cr3t-value" not in message


def test_no_region_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with pytest.raises(
        UserError, match=r"Glue catalog 'lake': cannot set up the Glue client.*check glue\.region"
    ):
        GlueCatalog("lake", str(tmp_path), {"glue.access-key-id": "a", "glue.secret-access-key": "b"})
