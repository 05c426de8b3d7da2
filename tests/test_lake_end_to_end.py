"""A team's lake end to end: a catalog URI and a warehouse in a bucket, from Python and from
the shell, against the real components the test run starts (moto's S3 server, a PostgreSQL
server: tests/support/s3.py, tests/support/postgres.py)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

import iceduck
from iceduck.catalog.uri import redact
from iceduck.errors import IceduckError
from tests.support.cli import one_error_line, property_flags, run_iceduck
from tests.support.s3 import AUTH_BUCKET, S3Server, auth_server, list_keys, loopback_name


@pytest.fixture(scope="module")
def s3(s3_server: S3Server, s3_bucket: str) -> tuple[str, dict[str, str], str]:
    """The moto server's endpoint, its catalog properties, and this module's bucket."""
    return s3_server.endpoint_url, dict(s3_server.properties), s3_bucket


@pytest.fixture(scope="module")
def postgres(postgres_database: str) -> str:
    """A fresh PostgreSQL database of the run's server: its ``postgresql://`` URI."""
    return postgres_database


@pytest.fixture(autouse=True)
def _restored(object_store_restored: None) -> None:
    """connect(properties=...) configures the process's object stores: undone after each test."""


def exercise(con: iceduck.Connection, table: str) -> None:
    """Create, write, delete, update and time-travel one table; check every answer."""
    namespace = table.rpartition(".")[0]
    con.execute(f"CREATE NAMESPACE IF NOT EXISTS {namespace}")
    con.execute(
        f"CREATE TABLE {table} (id bigint, kind string) PARTITIONED BY (kind) "
        "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read')"
    )
    con.execute(f"INSERT INTO {table} SELECT i, 'k' || (i % 3) FROM range(30) r(i)")
    first = con.execute(f"SELECT snapshot_id FROM {table}.snapshots").fetchall()[-1][0]
    con.execute(f"DELETE FROM {table} WHERE id < 5")
    con.execute(f"UPDATE {table} SET kind = 'x' WHERE id = 29")
    assert con.execute(f"SELECT count(*), sum(id) FROM {table}").fetchone() == (25, sum(range(5, 30)))
    assert con.execute(f"SELECT kind FROM {table} WHERE id = 29").fetchone() == ("x",)
    assert con.execute(f"SELECT count(*) FROM {table} VERSION AS OF {first}").fetchone() == (30,)


# -- S3 with a SQLite catalog file --------------------------------------------------------------


S3 = tuple[str, dict[str, str], str]


def test_connect_to_a_bucket_with_a_sqlite_catalog(s3: S3, tmp_path: Path) -> None:
    endpoint, properties, bucket = s3
    uri = f"sqlite:///{tmp_path}/catalog.db"
    warehouse = f"s3://{bucket}/py"
    with iceduck.connect(warehouse, catalog_uri=uri, properties=properties) as con:
        assert con.session.warehouse == warehouse
        exercise(con, "shop.orders")
        location = con.execute("SELECT file_path FROM shop.orders.files").fetchall()[0][0]
    assert location.startswith(f"{warehouse}/shop/orders/data/")
    assert any(k.startswith("py/shop/orders/metadata/") for k in list_keys(endpoint, bucket, "py/"))
    assert not (tmp_path / "py").exists()
    # another connection, Spark's spelling of the catalog file, sees the same table
    spark_uri = f"jdbc:sqlite:{tmp_path}/catalog.db"
    with iceduck.connect(warehouse, catalog_uri=spark_uri, properties=properties) as con:
        assert con.execute("SELECT count(*) FROM shop.orders").fetchone() == (25,)


def test_the_shell_on_a_bucket_with_properties(s3: S3, tmp_path: Path) -> None:
    endpoint, properties, bucket = s3
    lake = ["--catalog", f"sqlite:///{tmp_path}/catalog.db", "--warehouse", f"s3://{bucket}/cli"]
    flags = property_flags(properties)
    run = run_iceduck(
        *lake,
        *flags,
        "--csv",
        "-c",
        "CREATE NAMESPACE ns; CREATE TABLE ns.t (id int); INSERT INTO ns.t VALUES (1), (2);",
        "-c",
        "SELECT sum(id) AS s FROM ns.t",
        home=tmp_path,
    )
    assert (run.returncode, run.stdout) == (0, "s\n3\n"), run.stderr
    assert "Created warehouse folder" not in run.stderr  # a bucket location is no folder
    assert any(k.startswith("cli/ns/t/data/") for k in list_keys(endpoint, bucket, "cli/"))
    # the same lake from the environment alone, properties in PyIceberg's spelling
    env = {
        "ICEDUCK_CONFIG": "",
        "ICEDUCK_CATALOG_URI": f"sqlite:///{tmp_path}/catalog.db",
        "ICEDUCK_WAREHOUSE": f"s3://{bucket}/cli",
        **{
            f"ICEDUCK_PROPERTY__{k.upper().replace('.', '__').replace('-', '_')}": v
            for k, v in properties.items()
        },
    }
    run = run_iceduck("--csv", "-c", "SELECT count(*) AS n FROM ns.t", home=tmp_path, env=env)
    assert (run.returncode, run.stdout) == (0, "n\n2\n"), run.stderr


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"warehouse": "s3://no-such-bucket-iceduck/wh"}, "no-such-bucket-iceduck"),
        ({"s3.endpoint": "http://127.0.0.1:1"}, "s3.endpoint"),
    ],
)
def test_a_wrong_bucket_or_endpoint_is_one_clear_error_at_connect(
    s3: S3, tmp_path: Path, change: dict[str, str], expected: str
) -> None:
    _, properties, bucket = s3
    properties = {**properties, **{k: v for k, v in change.items() if k != "warehouse"}}
    warehouse = change.get("warehouse", f"s3://{bucket}/bad")
    uri = f"sqlite:///{tmp_path}/catalog.db"
    with pytest.raises(IceduckError) as caught:
        iceduck.connect(warehouse, catalog_uri=uri, properties=properties)
    assert expected in str(caught.value) and warehouse in str(caught.value)
    assert properties["s3.secret-access-key"] not in str(caught.value)
    flags = property_flags(properties)
    run = run_iceduck("--catalog", uri, "--warehouse", warehouse, *flags, "-c", "SELECT 1", home=tmp_path)
    one_error_line(run, expected)


#: no retries and short timeouts: a refused request fails at once
FAST = {"s3.retry.num-retries": "0", "s3.connect-timeout": "1", "s3.request-timeout": "2"}


def test_wrong_credentials_are_one_error_line_in_the_shell(tmp_path: Path) -> None:
    """A store that checks credentials (moto with authentication on): an unknown access key
    and a wrong secret are each one ``Error:`` line naming the warehouse and the property to
    check, never the secret; the right ones open the lake."""
    uri = f"sqlite:///{tmp_path}/catalog.db"
    with auth_server() as server:
        warehouse = f"s3://{AUTH_BUCKET}/wh"
        good = {**server.properties, **FAST}
        run = run_iceduck(
            "--catalog",
            uri,
            "--warehouse",
            warehouse,
            *property_flags(good),
            "-c",
            "SELECT 1 AS x",
            "--csv",
            home=tmp_path,
        )
        assert (run.returncode, run.stdout) == (0, "x\n1\n"), run.stderr
        for change, expected in (
            ({"s3.access-key-id": "AKIAWRONGWRONGWRONG"}, "s3.access-key-id"),
            ({"s3.secret-access-key": "not-the-secret"}, "s3.secret-access-key"),
        ):
            flags = property_flags({**good, **change})
            run = run_iceduck(
                "--catalog", uri, "--warehouse", warehouse, *flags, "-c", "SELECT 1", home=tmp_path
            )
            line = one_error_line(run, warehouse, expected)
            assert "not-the-secret" not in line and good["s3.secret-access-key"] not in line


def test_a_path_style_mismatch_is_one_error_line_in_the_shell(s3: S3, tmp_path: Path) -> None:
    """An endpoint that takes path-style requests, reached with virtual-hosted ones (the
    bucket in the host name): one line saying to set ``s3.path-style-access=true``."""
    endpoint, properties, bucket = s3
    name = loopback_name()
    if name is None:
        pytest.skip("no host name of this machine resolves to loopback without resolving its subdomains")
    virtual = {
        **properties,
        **FAST,
        "s3.endpoint": endpoint.replace("127.0.0.1", name),
        "s3.path-style-access": "false",
    }
    uri = f"sqlite:///{tmp_path}/catalog.db"
    warehouse = f"s3://{bucket}/virtual"
    run = run_iceduck(
        "--catalog", uri, "--warehouse", warehouse, *property_flags(virtual), "-c", "SELECT 1", home=tmp_path
    )
    one_error_line(run, warehouse, "s3.path-style-access=true")


def test_the_hadoop_catalog_refuses_a_bucket(s3: S3) -> None:
    _, properties, bucket = s3
    with pytest.raises(IceduckError, match=f"s3://{bucket}/hadoop"):
        iceduck.connect(f"s3://{bucket}/hadoop", catalog_type="hadoop", properties=properties)


# -- S3 with the JDBC catalog on PostgreSQL -----------------------------------------------------


def test_connect_to_postgresql_and_a_bucket(postgres: str, s3: S3, tmp_path: Path) -> None:
    endpoint, properties, bucket = s3
    warehouse = f"s3://{bucket}/pg"
    with iceduck.connect(warehouse, "team", catalog_uri=postgres, properties=properties) as con:
        exercise(con, "pg.events")
        shown = con.session.catalog_uri  # what the shell's banner prints
        assert shown == redact(postgres)
        password = urlsplit(postgres).password
        assert password is None or password not in (shown or "")
    assert any(k.startswith("pg/pg/events/metadata/") for k in list_keys(endpoint, bucket, "pg/"))
    # the shell on the same lake, Spark's JDBC URL with the credentials as properties
    jdbc = iceduck.spark_conf(warehouse, "team", catalog_uri=postgres)
    prefix = "spark.sql.catalog.team"
    flags = property_flags(properties)
    for key in ("jdbc.user", "jdbc.password"):
        if f"{prefix}.{key}" in jdbc:
            flags += ["-p", f"{key}={jdbc[f'{prefix}.{key}']}"]
    run = run_iceduck(
        "--catalog",
        jdbc[f"{prefix}.uri"],
        "--catalog-name",
        "team",
        "--warehouse",
        warehouse,
        *flags,
        "--csv",
        "-c",
        "INSERT INTO pg.events VALUES (100, 'cli')",
        "-c",
        "SELECT count(*) AS n FROM pg.events",
        home=tmp_path,
    )
    assert (run.returncode, run.stdout) == (0, "n\n26\n"), run.stderr


def test_postgresql_uri_on_the_command_line(postgres: str, s3: S3, tmp_path: Path) -> None:
    _, properties, bucket = s3
    flags = property_flags(properties)
    lake = ["--catalog", postgres, "--warehouse", f"s3://{bucket}/pgcli", *flags]
    run = run_iceduck(
        *lake,
        "--csv",
        "-c",
        "CREATE NAMESPACE c; CREATE TABLE c.t (x int); INSERT INTO c.t VALUES (7);",
        "-c",
        "SELECT x FROM c.t",
        home=tmp_path,
    )
    assert (run.returncode, run.stdout) == (0, "x\n7\n"), run.stderr


def test_a_wrong_postgresql_password_is_one_line_without_it(postgres: str, tmp_path: Path) -> None:
    scheme, _, rest = postgres.partition("://")
    host_and_db = rest.rpartition("@")[2]
    wrong = f"{scheme}://iceduck_nobody:hunter2@{host_and_db}"
    lake = ["--catalog", wrong, "--warehouse", str(tmp_path / "wh")]
    run = run_iceduck(*lake, "-c", "SELECT 1", home=tmp_path)
    one_error_line(run)
    assert "hunter2" not in run.stderr + run.stdout
    assert not (tmp_path / "wh").exists()


def test_postgresql_catalog_and_a_local_folder_from_the_config_file(postgres: str, tmp_path: Path) -> None:
    config = tmp_path / "team.toml"
    config.write_text(f'[catalog]\nuri = "{postgres}"\nwarehouse = "{tmp_path}/wh"\nname = "local"\n')
    env = {"ICEDUCK_CONFIG": str(config)}
    setup = "CREATE NAMESPACE l; CREATE TABLE l.t (x int); INSERT INTO l.t VALUES (1), (2);"
    run = run_iceduck("--csv", "-c", setup, "-c", "SELECT sum(x) AS s FROM l.t", home=tmp_path, env=env)
    assert (run.returncode, run.stdout) == (0, "s\n3\n"), run.stderr
    assert (tmp_path / "wh" / "l" / "t" / "metadata").is_dir()
    assert not (tmp_path / "wh" / "catalog.db").exists()  # the catalog is PostgreSQL
    with iceduck.connect(tmp_path / "wh", "local", catalog_uri=postgres) as con:
        assert con.execute("SELECT count(*) FROM l.t").fetchone() == (2,)
