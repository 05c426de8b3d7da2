"""Which lake ``iceduck.connect`` opens: the call's arguments, the environment, the config file.

The rule (iceduck/config.py): a call naming a warehouse or a catalog URI opens exactly that;
otherwise the environment wins over the config file field by field, and the call's own name,
type and properties over both. Secrets are never shown.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import iceduck
from iceduck.catalog.open import open_catalog, warehouse_location
from iceduck.config import Lake, environment_properties, redacted_properties, resolve_lake
from iceduck.errors import UnsupportedError, UserError

NO_ENV: dict[str, str] = {"ICEDUCK_CONFIG": ""}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write(
        tmp_path / "config.toml",
        f"""
[catalog]
uri = "sqlite:///{tmp_path}/file/catalog.db"
warehouse = "{tmp_path}/file-wh"
name = "filecat"

[properties]
"s3.endpoint" = "http://file:9000"
"s3.path-style-access" = true
"s3.secret-access-key" = "file-secret"
"client.region" = "eu-west-1"
""",
    )


def test_nothing_anywhere_is_the_warehouse_folder() -> None:
    assert resolve_lake(environ=NO_ENV) == Lake("warehouse", None, "iceduck", "sql", {})


def test_the_config_file_gives_the_lake(config: Path, tmp_path: Path) -> None:
    lake = resolve_lake(environ={"ICEDUCK_CONFIG": str(config)})
    assert lake.catalog_uri == f"sqlite:///{tmp_path}/file/catalog.db"
    assert lake.warehouse == f"{tmp_path}/file-wh"
    assert lake.name == "filecat"
    assert lake.properties == {
        "s3.endpoint": "http://file:9000",
        "s3.path-style-access": "true",  # a TOML boolean, as Spark's settings carry it
        "s3.secret-access-key": "file-secret",
        "client.region": "eu-west-1",
    }


def test_the_environment_wins_over_the_file_field_by_field(config: Path, tmp_path: Path) -> None:
    env = {
        "ICEDUCK_CONFIG": str(config),
        "ICEDUCK_WAREHOUSE": "s3://env-bucket/wh",
        "ICEDUCK_PROPERTY__S3__ENDPOINT": "http://env:9000",
        "ICEDUCK_PROPERTY__S3__PATH_STYLE_ACCESS": "false",
        "ICEDUCK_CATALOG_URI": "",  # empty: unset
    }
    lake = resolve_lake(environ=env)
    assert lake.warehouse == "s3://env-bucket/wh"
    assert lake.catalog_uri == f"sqlite:///{tmp_path}/file/catalog.db"  # the file's
    assert lake.name == "filecat"
    assert lake.properties["s3.endpoint"] == "http://env:9000"
    assert lake.properties["s3.path-style-access"] == "false"
    assert lake.properties["client.region"] == "eu-west-1"


def test_arguments_win_over_the_environment_and_the_file(config: Path) -> None:
    env = {"ICEDUCK_CONFIG": str(config), "ICEDUCK_CATALOG_NAME": "envcat"}
    assert resolve_lake(environ=env).name == "envcat"
    lake = resolve_lake(name="argcat", properties={"client.region": "us-east-2"}, environ=env)
    assert lake.name == "argcat"
    assert lake.properties["client.region"] == "us-east-2"
    assert lake.properties["s3.endpoint"] == "http://file:9000"


def test_a_call_naming_a_lake_reads_neither_environment_nor_file(config: Path) -> None:
    env = {"ICEDUCK_CONFIG": str(config), "ICEDUCK_PROPERTY__S3__ENDPOINT": "http://env:9000"}
    assert resolve_lake("wh", environ=env) == Lake("wh", None, "iceduck", "sql", {})
    with pytest.raises(UserError, match="needs a warehouse location"):  # not the file's
        resolve_lake(None, "sqlite:////x/catalog.db", environ=env)
    lake = resolve_lake("s3://b/wh", "postgresql://h/db", "prod", None, {"a": "1"}, environ=env)
    assert lake == Lake("s3://b/wh", "postgresql://h/db", "prod", "sql", {"a": "1"})


def test_without_a_config_file_the_environment_alone(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "ICEDUCK_WAREHOUSE": str(tmp_path / "wh")}
    lake = resolve_lake(environ=env)
    assert lake.warehouse == str(tmp_path / "wh")


def test_the_default_config_file_is_read_when_it_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICEDUCK_CONFIG", raising=False)
    assert resolve_lake(environ={}).warehouse == "warehouse"  # none there yet
    write(tmp_path / ".iceduck" / "config.toml", '[catalog]\nwarehouse = "/lake/wh"\n')
    assert resolve_lake(environ={}).warehouse == "/lake/wh"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[catalog\n", "is not valid TOML"),
        ("[catalog]\nurl = 'x'\n", "unknown key 'catalog.url'"),
        ("[catalogs.prod]\nuri = 'x'\n", "unknown key 'catalogs'"),
        ("warehouse = 'x'\n", "unknown key 'warehouse'"),
        ("catalog = 'x'\n", "'catalog' must be a table"),
        ("[catalog]\nwarehouse = 3\n", "'catalog.warehouse' must be a string"),
        ("[properties]\n's3.endpoint' = ['a']\n", "property 's3.endpoint' must be a string"),
        ("[catalog]\ntype = 'hive'\n", "unknown catalog type 'hive'"),
        ("[catalog]\nuri = 'postgresql://h/db'\n", "needs a warehouse location"),
        ("[catalog]\nuri = 'sqlite:////x.db'\ntype = 'hadoop'\nwarehouse = '/w'\n", "takes no catalog URI"),
    ],
)
def test_a_bad_config_file_is_one_error_naming_the_file_and_the_key(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path / "bad.toml", text)
    with pytest.raises(UserError, match=message) as caught:
        resolve_lake(environ={"ICEDUCK_CONFIG": str(path)})
    assert str(path) in str(caught.value)


def test_a_secret_of_a_bad_config_file_is_not_shown(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.toml", "[properties]\n'jdbc.password' = {v = 'hunter2'}\n")
    with pytest.raises(UserError) as caught:
        resolve_lake(environ={"ICEDUCK_CONFIG": str(path)})
    assert "hunter2" not in str(caught.value)


def test_a_named_config_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        resolve_lake(environ={"ICEDUCK_CONFIG": str(tmp_path / "missing.toml")})
    with pytest.raises(UserError, match="does not exist"):
        resolve_lake(config_file=tmp_path / "missing.toml", environ={})


def test_property_variables_follow_pyiceberg_spelling() -> None:
    env = {
        "ICEDUCK_PROPERTY__S3__ENDPOINT": "e",
        "ICEDUCK_PROPERTY__S3__PATH_STYLE_ACCESS": "true",
        "ICEDUCK_PROPERTY__ADLS__SAS_TOKEN__MYACCOUNT": "t",
        "ICEDUCK_PROPERTY__": "ignored",
        "OTHER": "x",
    }
    assert environment_properties(env) == {
        "s3.endpoint": "e",
        "s3.path-style-access": "true",
        "adls.sas-token.myaccount": "t",
    }


def test_secrets_are_hidden_in_reprs() -> None:
    properties = {
        "s3.access-key-id": "AKIA",
        "s3.secret-access-key": "s3cret",
        "s3.session-token": "t0ken",
        "jdbc.password": "pw",
        "adls.account-key": "k",
        "gcs.oauth2.token": "g",
        "s3.endpoint": "http://h",
    }
    shown = redacted_properties(properties)
    assert shown["s3.access-key-id"] == "AKIA"
    assert shown["s3.endpoint"] == "http://h"
    assert all(shown[k] == "***" for k in properties if k not in ("s3.access-key-id", "s3.endpoint"))
    text = repr(Lake("s3://b/w", "postgresql://me:hunter2@h/db", "n", "sql", properties))
    for secret in ("hunter2", "s3cret", "t0ken", "'pw'"):
        assert secret not in text


# -- connect() on what the configuration names ----------------------------------------------------


def test_connect_without_arguments_opens_the_configured_lake(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "shared" / "catalog.db"
    path = write(
        tmp_path / "c.toml",
        f'[catalog]\nuri = "jdbc:sqlite:{db}"\nwarehouse = "{tmp_path}/wh"\nname = "team"\n',
    )
    monkeypatch.setenv("ICEDUCK_CONFIG", str(path))
    with iceduck.connect() as con:
        con.execute("CREATE NAMESPACE ns")
        con.execute("CREATE TABLE ns.t (x int)")
        con.execute("INSERT INTO ns.t VALUES (1), (2)")
        assert con.session.warehouse == str(tmp_path / "wh")
        assert con.session.catalog.name == "team"
    assert db.is_file()
    assert (tmp_path / "wh" / "ns" / "t" / "metadata").is_dir()  # tables under the warehouse
    assert not (tmp_path / "wh" / "catalog.db").exists()  # the catalog is the named file
    # the same lake by explicit arguments, PyIceberg's spelling of the URI
    with iceduck.connect(tmp_path / "wh", "team", catalog_uri=f"sqlite:///{db}") as con:
        assert con.execute("SELECT sum(x) FROM ns.t").fetchone() == (3,)
    # an explicit folder is that folder's own catalog.db: the configuration is not read
    with iceduck.connect(tmp_path / "other") as con:
        assert con.execute("SHOW NAMESPACES").fetchall() == []
        assert con.session.catalog.name == "iceduck"


def test_connect_keeps_the_warehouse_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ICEDUCK_CONFIG", "")
    with iceduck.connect() as con:
        assert con.session.warehouse == str(tmp_path / "warehouse")
    assert (tmp_path / "warehouse" / "catalog.db").is_file()


def test_a_relative_sqlite_uri_is_relative_to_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with iceduck.connect("wh", catalog_uri="sqlite:///cat/catalog.db") as con:
        con.execute("CREATE NAMESPACE ns")
    assert (tmp_path / "cat" / "catalog.db").is_file()


def test_warehouse_locations() -> None:
    assert warehouse_location("s3://b/wh/") == "s3://b/wh"
    assert warehouse_location("s3a://b") == "s3a://b"
    assert warehouse_location("file:/tmp/wh") == "/tmp/wh"
    assert warehouse_location("file:///tmp/wh") == "/tmp/wh"
    assert warehouse_location(Path("/tmp/wh")) == "/tmp/wh"
    assert warehouse_location("~/wh") == str(Path.home() / "wh")


@pytest.mark.parametrize(
    ("kwargs", "kind", "message"),
    [
        ({"warehouse": "s3://bkt/wh"}, UserError, "SQLite catalog.db cannot live in object storage"),
        (
            {"warehouse": "W", "catalog_uri": "sqlite:////x.db", "catalog_type": "hadoop"},
            UserError,
            "takes no catalog URI",
        ),
        ({"warehouse": "W", "catalog_uri": "https://me:pw@rest/v1"}, UserError, "holds credentials"),
        ({"warehouse": "W", "catalog_uri": "mysql://h/db"}, UserError, "unknown catalog URI"),
        ({"warehouse": "W", "catalog_type": "hive"}, UserError, "unknown catalog type 'hive'"),
        ({"catalog_type": "glue"}, UserError, "needs a warehouse location"),
        ({"catalog_uri": "glue://"}, UserError, "needs a warehouse location"),
        ({"catalog_uri": "sqlite:////x.db"}, UserError, "needs a warehouse location"),
        (
            {"warehouse": "hdfs://namenode/wh", "catalog_uri": "sqlite:////x.db"},
            UnsupportedError,
            "hdfs://namenode/wh: its scheme is not supported",
        ),
        ({"warehouse": "W", "properties": {"s3.endpoint": ["x"]}}, UserError, "must be a string"),
    ],
)
def test_connect_refuses_a_bad_lake_with_one_clear_error(
    tmp_path: Path, kwargs: dict[str, object], kind: type[Exception], message: str
) -> None:
    if kwargs.get("warehouse") == "W":
        kwargs = {**kwargs, "warehouse": str(tmp_path / "wh")}
    with pytest.raises(kind, match=message):
        iceduck.connect(**kwargs)  # type: ignore[arg-type]
    assert not (tmp_path / "wh").exists()  # nothing created for a refused lake


def test_an_unreachable_postgresql_catalog_never_shows_its_password(tmp_path: Path) -> None:
    """Refused at connect (the catalog's driver or its absence): the password not in the
    message, whatever the cause."""
    with pytest.raises(iceduck.Error) as caught:
        iceduck.connect(tmp_path / "wh", catalog_uri="postgresql://me:hunter2@127.0.0.1:1/lake")
    assert "hunter2" not in str(caught.value)
    assert "hunter2" not in repr(caught.value)


def test_open_catalog_passes_read_only_to_the_hadoop_catalog(tmp_path: Path) -> None:
    catalog = open_catalog(tmp_path, "iceduck", "hadoop", read_only=True)
    with pytest.raises(UserError, match=r"read-only|read only"):
        catalog.create_namespace(("ns",))
