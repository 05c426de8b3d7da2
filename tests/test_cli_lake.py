"""``iceduck`` on a team's lake: ``--catalog URI --warehouse LOCATION -p KEY=VALUE``, the config
file and the environment, through the real command in a subprocess; startup errors are one
``Error:`` line without a traceback, and never show a password."""

from __future__ import annotations

from pathlib import Path

import pytest

from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.connection import Connection
from iceduck.session.session import Session
from iceduck.shell.core import Shell
from iceduck.shell.repl import banner
from iceduck.shell.state import Settings
from tests.support.cli import one_error_line, run_iceduck

SETUP = (
    "CREATE NAMESPACE ns; CREATE TABLE ns.t (id bigint, kind string); "
    "INSERT INTO ns.t VALUES (1, 'a'), (2, 'b');"
)


def test_the_config_file_s_lake_through_the_command(tmp_path: Path) -> None:
    db = tmp_path / "catalog" / "team.db"
    warehouse = tmp_path / "lake"
    config = tmp_path / "config.toml"
    config.write_text(f'[catalog]\nuri = "sqlite:///{db}"\nwarehouse = "{warehouse}"\nname = "team"\n')
    env = {"ICEDUCK_CONFIG": str(config)}
    run = run_iceduck("--csv", "-c", SETUP, "-c", "SELECT count(*) AS n FROM ns.t", env=env, home=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "n\n2\n"
    assert f"Created warehouse folder {warehouse}" in run.stderr  # a local folder is created
    assert db.is_file() and (warehouse / "ns" / "t" / "metadata").is_dir()
    assert not (warehouse / "catalog.db").exists()
    # ~/.iceduck/config.toml is the default file
    (tmp_path / ".iceduck").mkdir()
    (tmp_path / ".iceduck" / "config.toml").write_text(config.read_text())
    run = run_iceduck("--csv", "-c", "SELECT sum(id) AS s FROM ns.t", home=tmp_path)
    assert (run.returncode, run.stdout) == (0, "s\n3\n"), run.stderr
    # the environment wins: another catalog name is another (empty) catalog in the same file
    run = run_iceduck("--csv", "-c", "SHOW NAMESPACES", env={"ICEDUCK_CATALOG_NAME": "other"}, home=tmp_path)
    assert (run.returncode, run.stdout.strip()) == (0, "namespace"), run.stderr


def test_catalog_uri_warehouse_and_properties_on_the_command_line(tmp_path: Path) -> None:
    db = tmp_path / "cat.db"
    lake = ["--catalog", f"jdbc:sqlite:{db}", "--warehouse", str(tmp_path / "wh"), "--catalog-name", "team"]
    run = run_iceduck(*lake, "-p", "s3.endpoint=http://127.0.0.1:1", "-c", SETUP, home=tmp_path)
    assert run.returncode == 0, run.stderr
    # PyIceberg's spelling of the same file, the warehouse as the positional argument
    run = run_iceduck(
        str(tmp_path / "wh"),
        "--catalog",
        f"sqlite:///{db}",
        "--catalog-name",
        "team",
        "--csv",
        "-c",
        "SELECT id, kind FROM ns.t ORDER BY id",
        home=tmp_path,
    )
    assert (run.returncode, run.stdout) == (0, "id,kind\n1,a\n2,b\n"), run.stderr
    # --catalog NAME is still the catalog name, the warehouse's own catalog.db
    run = run_iceduck(str(tmp_path / "wh2"), "--catalog", "team", "--csv", "-c", SETUP, home=tmp_path)
    assert run.returncode == 0, run.stderr
    assert SqliteCatalog(tmp_path / "wh2", "team").list_namespaces() == [("ns",)]


def test_a_named_config_file(tmp_path: Path) -> None:
    config = tmp_path / "team.toml"
    config.write_text(f'[catalog]\nwarehouse = "{tmp_path / "wh"}"\n')
    run = run_iceduck("--config", str(config), "--csv", "-c", "SELECT 41 + 1 AS x", home=tmp_path)
    assert (run.returncode, run.stdout) == (0, "x\n42\n"), run.stderr
    assert (tmp_path / "wh" / "catalog.db").is_file()


@pytest.mark.parametrize(
    ("args", "parts"),
    [
        (["--catalog", "mysql://me:hunter2@h/db", "--warehouse", "{tmp}/wh"], ["unknown catalog URI"]),
        (["--catalog", "https://me:hunter2@rest/v1", "--warehouse", "{tmp}/wh"], ["holds credentials"]),
        (["--catalog", "postgresql://me:hunter2@h", "--warehouse", "{tmp}/wh"], ["names no database"]),
        (["--catalog", "sqlite:////{tmp}/c.db"], ["needs a warehouse location"]),
        (["--warehouse", "s3://bucket/wh"], ["s3://bucket/wh", "cannot live in object storage"]),
        (["{tmp}/wh", "--warehouse", "{tmp}/other"], ["two warehouses"]),
        (["--catalog", "a", "--catalog-name", "b"], ["two catalog names"]),
        (["-p", "s3.endpoint"], ["--property takes KEY=VALUE"]),
        (["--config", "{tmp}/missing.toml"], ["does not exist", "missing.toml"]),
        (["--config", "{tmp}/bad.toml"], ["bad.toml", "unknown key 'catalog.url'"]),
        (["--config", "{tmp}/bad.toml", "{tmp}/wh"], ["--config describes the lake"]),
        (["--catalog", "sqlite:////{tmp}/c.db", "{tmp}/wh", "--catalog-type", "hadoop"], ["takes no"]),
    ],
)
def test_a_bad_lake_is_one_error_line(tmp_path: Path, args: list[str], parts: list[str]) -> None:
    (tmp_path / "bad.toml").write_text("[catalog]\nurl = 'postgresql://me:hunter2@h/db'\n")
    run = run_iceduck(*(a.replace("{tmp}", str(tmp_path)) for a in args), "-c", "SELECT 1", home=tmp_path)
    line = one_error_line(run, *parts)
    assert "hunter2" not in run.stdout + run.stderr, line
    assert not (tmp_path / "wh").exists()  # nothing created for a refused lake


def test_an_unreachable_postgresql_catalog_is_one_line_without_its_password(tmp_path: Path) -> None:
    run = run_iceduck(
        "--catalog",
        "postgresql://me:hunter2@127.0.0.1:1/lake",
        "--warehouse",
        str(tmp_path / "wh"),
        "-c",
        "SELECT 1",
        home=tmp_path,
    )
    one_error_line(run)
    assert "hunter2" not in run.stdout + run.stderr


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    run = run_iceduck("--debug", "--catalog", "mysql://h/db", "--warehouse", str(tmp_path), home=tmp_path)
    assert run.returncode != 0 and "Traceback" in run.stderr


def test_the_banner_names_the_lake_without_the_password(tmp_path: Path) -> None:
    uri = "postgresql://me:hunter2@pg.internal/lake"
    catalog = SqliteCatalog(tmp_path / "wh", "team")
    session = Session(tmp_path / "wh", "team", catalog_impl=catalog, catalog_uri=uri)
    connection = Connection(session)
    try:
        text = banner(Shell(connection, Settings()))
    finally:
        connection.close()
    assert f"on warehouse {tmp_path / 'wh'} (catalog team at postgresql://me:***@pg.internal/lake)" in text
    assert "hunter2" not in text
    session = Session(tmp_path / "wh")
    connection = Connection(session)
    try:
        assert f"on warehouse {tmp_path / 'wh'} (catalog iceduck)\n" in banner(Shell(connection, Settings()))
    finally:
        connection.close()


def test_a_missing_warehouse_folder_is_created_with_a_note(tmp_path: Path) -> None:
    run = run_iceduck(str(tmp_path / "fresh"), "-c", "SELECT 1", home=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stderr.strip() == f"Created warehouse folder {tmp_path / 'fresh'} (it did not exist)."
    assert (tmp_path / "fresh" / "catalog.db").is_file()
    run = run_iceduck(str(tmp_path / "fresh"), "-c", "SELECT 1", home=tmp_path)
    assert (run.returncode, run.stderr) == (0, "")
