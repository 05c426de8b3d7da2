"""Hostile names through SQL: no name puts a file outside the warehouse.

Every statement runs through ``iceduck.connect`` with quoted identifiers, on the SQLite
and the Hadoop catalog. The warehouse is ``<tmp>/outer/wh``; the whole of ``<tmp>`` is
listed before and after each statement, and any new path that is not under the warehouse
(or under the statement's explicit LOCATION) fails the test. Names that are folder-safe
must work end to end (create, insert, select, the files on disk); the others must be
refused with a :class:`ValidationError` that is also a DB-API ``DataError``.

The longer, randomised version is ``tests/stress/stress_hostile_names.py``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.errors import ValidationError

CATALOG_TYPES = ["sql", "hadoop"]

#: names every catalog must accept as a namespace level and as a table name
GOOD = [
    "plain",
    "with space",
    " lead and trail ",
    'dq"uote',
    "sq'uote",
    "per%cent",
    "%2e%2e",
    "%2F",
    "ünï©ødé",
    "表格",
    "emoji🧊🦆",
    "x" * 255,  # the longest folder name: 255 bytes
    "é" * 127,  # 254 bytes
    "-dash",
    "~tilde",
    "...",
    ".hidden",
    "a..b",
    "tab\there",
    "new\nline",
    "[glob]*?",
    "file:x",
    "s3:..",
]

#: names no catalog may create (a namespace level or a table name), with what the error says
BAD = [
    ("..", "parent folder"),
    (".", "current folder"),
    ("../../../escaped", "slash"),
    ("a/b", "slash"),
    ("/abs", "slash"),
    ("a\\b", "backslash"),
    ("..\\..\\x", "backslash"),
    ("nul\x00byte", "NUL"),
    ("x" * 256, "255 bytes"),
    ("é" * 128, "255 bytes"),
    ("🧊" * 64, "255 bytes"),
    ("", "empty"),
]


def namespace_level(name: str) -> str:
    """``name`` as a namespace level: a dot cannot be inside one (the catalog stores
    namespaces as dotted strings), so dots become underscores."""
    return name.replace(".", "_")


def quote(name: str) -> str:
    """A SQL quoted identifier (``"`` doubled)."""
    return '"' + name.replace('"', '""') + '"'


def tree(root: Path) -> set[str]:
    """Every path under ``root`` (files and folders), relative to it."""
    found: set[str] = set()
    for folder, dirs, files in os.walk(root):
        for entry in (*dirs, *files):
            found.add(os.path.relpath(os.path.join(folder, entry), root))
    return found


def allowed_path(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder``, lies inside it, or is one of the parents that
    creating ``folder`` makes (all relative to the same root)."""
    return path == folder or path.startswith(folder + os.sep) or folder.startswith(path + os.sep)


class Sandbox:
    """A warehouse two levels below ``root``, checked for escapes after every statement."""

    def __init__(self, root: Path, catalog_type: str) -> None:
        self.root = root
        self.warehouse = root / "outer" / "wh"
        self.warehouse.mkdir(parents=True)
        self.con = iceduck.connect(self.warehouse, catalog_type=catalog_type)
        self.allowed: list[Path] = [self.warehouse]

    def run(self, sql: str) -> list[tuple[object, ...]]:
        """Run ``sql``; fail if anything appeared outside the allowed folders, even when
        the statement itself failed."""
        before = tree(self.root)
        try:
            cur = self.con.cursor()
            cur.execute(sql)
            return cur.fetchall() if cur.description else []
        finally:
            self.assert_no_escape(before)

    def assert_no_escape(self, before: set[str]) -> None:
        new = tree(self.root) - before
        allowed = [os.path.relpath(a, self.root) for a in self.allowed]
        escaped = [p for p in new if not any(allowed_path(p, a) for a in allowed)]
        assert not escaped, f"written outside the warehouse: {sorted(escaped)[:5]}"

    def refused(self, sql: str, says: str) -> None:
        """``sql`` fails with a ValidationError (a DB-API DataError) mentioning ``says``."""
        with pytest.raises(ValidationError) as info:
            self.run(sql)
        assert isinstance(info.value, iceduck.DataError)
        assert says in str(info.value)


@pytest.fixture(params=CATALOG_TYPES)
def box(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Sandbox]:
    sandbox = Sandbox(tmp_path, request.param)
    sandbox.run("CREATE NAMESPACE db")
    yield sandbox
    sandbox.con.close()


@pytest.mark.parametrize(("name", "says"), BAD, ids=[repr(n)[:20] for n, _ in BAD])
def test_bad_table_names_are_refused(box: Sandbox, name: str, says: str) -> None:
    box.refused(f"CREATE TABLE db.{quote(name)} (a int)", says)
    box.refused(f"CREATE TABLE db.{quote(name)} AS SELECT 1 AS a", says)
    box.refused(f"CREATE OR REPLACE TABLE db.{quote(name)} (a int)", says)
    box.refused(f"CREATE TABLE IF NOT EXISTS db.{quote(name)} (a int)", says)
    assert box.run("SHOW TABLES IN db") == []


@pytest.mark.parametrize(("name", "says"), BAD, ids=[repr(n)[:20] for n, _ in BAD])
def test_bad_namespace_levels_are_refused(box: Sandbox, name: str, says: str) -> None:
    box.refused(f"CREATE NAMESPACE {quote(name)}", says)
    box.refused(f"CREATE NAMESPACE db.{quote(name)}", says)
    assert box.run("SHOW NAMESPACES") == [("db",)]


@pytest.mark.parametrize(("name", "says"), BAD, ids=[repr(n)[:20] for n, _ in BAD])
def test_bad_rename_targets_are_refused(tmp_path: Path, name: str, says: str) -> None:
    box = Sandbox(tmp_path, "sql")  # the Hadoop catalog cannot rename at all
    box.run("CREATE NAMESPACE db")
    box.run("CREATE TABLE db.t (a int)")
    box.refused(f"ALTER TABLE db.t RENAME TO db.{quote(name)}", says)
    box.refused(f"ALTER TABLE db.t RENAME TO {quote(name)}", says)
    box.run("INSERT INTO db.t VALUES (1)")  # the table is where it was, and writable
    assert box.run("SELECT * FROM db.t") == [(1,)]


def test_the_reported_escape_is_refused_and_writes_nothing(box: Sandbox) -> None:
    """The issue's reproduction: metadata, manifests and data landed three levels up."""
    box.refused('CREATE TABLE db."../../../escaped" (a int)', "slash")
    box.refused('CREATE TABLE db."../../../escaped" AS SELECT i AS a FROM range(3) r(i)', "slash")
    assert not (box.root / "escaped").exists()
    assert not any((box.warehouse / "db").rglob("*"))  # and nothing was left inside either


@pytest.mark.parametrize("name", GOOD, ids=[repr(n)[:20] for n in GOOD])
def test_good_names_round_trip_through_sql_and_folders(box: Sandbox, name: str) -> None:
    level = namespace_level(name)
    ns, table = quote(level), quote(name)
    box.run(f"CREATE NAMESPACE {ns}")
    box.run(f"CREATE TABLE {ns}.{table} (a int, b string)")
    box.run(f"INSERT INTO {ns}.{table} VALUES (1, 'one'), (2, 'two')")
    box.run(f"CREATE TABLE db.{table} AS SELECT * FROM {ns}.{table} WHERE a = 2")
    assert box.run(f"SELECT * FROM {ns}.{table} ORDER BY a") == [(1, "one"), (2, "two")]
    assert box.run(f"SELECT * FROM db.{table}") == [(2, "two")]
    assert (level,) in box.run("SHOW NAMESPACES")
    assert (name,) in [row[-1:] for row in box.run("SHOW TABLES IN db")]
    folder = box.warehouse / level / name
    assert (folder / "metadata").is_dir() and any((folder / "data").rglob("*.parquet"))
    assert any((box.warehouse / "db" / name / "data").rglob("*.parquet"))


def test_good_rename_target_round_trips(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, "sql")
    box.run("CREATE NAMESPACE db")
    box.run("CREATE TABLE db.t (a int)")
    for name in GOOD:
        box.run(f"ALTER TABLE db.t RENAME TO db.{quote(name)}")
        box.run(f"INSERT INTO db.{quote(name)} VALUES (1)")
        box.run(f"ALTER TABLE db.{quote(name)} RENAME TO db.t")
    assert box.run("SELECT count(*) FROM db.t") == [(len(GOOD),)]


@pytest.mark.parametrize(
    ("location", "says"),
    [
        ("{root}/x\\y", "backslash"),
        ("{root}/x\x00y", "NUL"),
        ("file:{root}/x\\y", "backslash"),
        ("file:{root}/x\x00y", "NUL"),
    ],
)
def test_location_with_a_backslash_or_nul_is_refused_at_create(
    tmp_path: Path, location: str, says: str
) -> None:
    """DuckDB writes data into folders with the backslash read as a separator, so such a
    table could be created but never written (a misleading MissingFileError)."""
    box = Sandbox(tmp_path, "sql")
    box.run("CREATE NAMESPACE db")
    where = location.format(root=tmp_path).replace("'", "''")
    box.refused(f"CREATE TABLE db.t (a int) LOCATION '{where}'", says)
    box.refused(f"CREATE TABLE db.t LOCATION '{where}' AS SELECT 1 AS a", says)
    box.run("CREATE TABLE db.t (a int)")
    box.refused(f"CREATE OR REPLACE TABLE db.t (a int) LOCATION '{where}'", says)


@pytest.mark.parametrize("prop", ["write.data.path", "write.metadata.path"])
@pytest.mark.parametrize("value", ["{root}/p\\q", "{root}/p\x00q", "file:{root}/p\\q"])
def test_write_paths_with_a_backslash_or_nul_are_refused_at_create(
    tmp_path: Path, prop: str, value: str
) -> None:
    box = Sandbox(tmp_path, "sql")
    box.run("CREATE NAMESPACE db")
    where = value.format(root=tmp_path)
    says = "NUL" if "\x00" in where else "backslash"
    box.refused(f"CREATE TABLE db.t (a int) TBLPROPERTIES ('{prop}'='{where}')", says)
    box.refused(f"CREATE TABLE db.t TBLPROPERTIES ('{prop}'='{where}') AS SELECT 1 AS a", says)
    box.run("CREATE TABLE db.t (a int)")
    box.refused(f"CREATE OR REPLACE TABLE db.t (a int) TBLPROPERTIES ('{prop}'='{where}')", says)
    box.run("INSERT INTO db.t VALUES (1)")
    assert box.run("SELECT * FROM db.t") == [(1,)]
    box.refused(f"ALTER TABLE db.t SET TBLPROPERTIES ('{prop}'='{where}')", says)
    box.run("INSERT INTO db.t VALUES (2)")  # the table kept its paths and still takes writes
    assert sorted(box.run("SELECT * FROM db.t")) == [(1,), (2,)]


@pytest.mark.parametrize("catalog_type", CATALOG_TYPES)
def test_a_warehouse_path_with_a_backslash_refuses_new_tables(tmp_path: Path, catalog_type: str) -> None:
    """DuckDB's COPY reads a backslash as ``/``: a table created there could never be written."""
    box = Sandbox(tmp_path / "w\\h", catalog_type)
    box.run("CREATE NAMESPACE db")
    box.refused("CREATE TABLE db.t (a int)", "backslash")
    box.refused("CREATE TABLE db.t AS SELECT 1 AS a", "backslash")
    if catalog_type == "hadoop":
        return  # a Hadoop table lives in its folder: no LOCATION
    box.allowed.append(tmp_path / "elsewhere")
    box.run(f"CREATE TABLE db.t (a int) LOCATION '{tmp_path / 'elsewhere'}'")  # an explicit one still works
    box.run("INSERT INTO db.t VALUES (1)")
    assert box.run("SELECT * FROM db.t") == [(1,)]


def test_an_explicit_location_outside_the_warehouse_stays_the_users_choice(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, "sql")
    box.run("CREATE NAMESPACE db")
    elsewhere = tmp_path / "elsewhere" / "with space ü"
    box.allowed.append(elsewhere)
    box.run(f"CREATE TABLE db.t (a int) LOCATION '{elsewhere}'")
    box.run("INSERT INTO db.t VALUES (7)")
    assert box.run("SELECT * FROM db.t") == [(7,)]
    assert any((elsewhere / "data").rglob("*.parquet"))


@pytest.mark.parametrize("name", ["..", "a/b", "a\\b", "x" * 300])
def test_an_existing_table_with_such_a_name_keeps_working(tmp_path: Path, name: str) -> None:
    """Only new names are checked: a catalog row another engine wrote (Spark's JDBC catalog
    checks nothing) is read, written, replaced, renamed away and dropped as usual."""
    box = Sandbox(tmp_path, "sql")
    box.run("CREATE NAMESPACE db")
    box.run("CREATE TABLE db.t (a int)")
    with sqlite3.connect(box.warehouse / "catalog.db") as db:  # as Spark would have named it
        db.execute("UPDATE iceberg_tables SET table_name = ? WHERE table_name = 't'", (name,))
    db.close()
    table = f"db.{quote(name)}"
    box.run(f"INSERT INTO {table} VALUES (1), (2)")
    box.run(f"DELETE FROM {table} WHERE a = 1")
    assert box.run(f"SELECT * FROM {table}") == [(2,)]
    box.run(f"CREATE TABLE IF NOT EXISTS {table} (a int)")
    box.run(f"CREATE OR REPLACE TABLE {table} AS SELECT 3 AS a")
    assert box.run(f"SELECT * FROM {table}") == [(3,)]
    assert box.run(f"SELECT count(*) FROM {table}.snapshots") == [(3,)]
    box.run(f"ALTER TABLE {table} RENAME TO db.renamed")
    box.refused(f"ALTER TABLE db.renamed RENAME TO {table}", "table name")
    box.run("DROP TABLE db.renamed")
    assert box.run("SHOW TABLES IN db") == []


def test_a_slash_level_cannot_share_the_folder_of_nested_levels(box: Sandbox) -> None:
    """Namespace ``a.b`` is the levels ``a``, ``b``: folder ``a/b``. A level spelled ``a/b``
    would get the same folder, and its table ``t`` the files of ``a.b.t``."""
    box.run("CREATE NAMESPACE a.b")
    box.run("CREATE TABLE a.b.t (x int)")
    box.run("INSERT INTO a.b.t VALUES (1)")
    assert (box.warehouse / "a" / "b" / "t" / "metadata").is_dir()
    box.refused('CREATE NAMESPACE "a/b"', "slash")
    box.refused('CREATE TABLE a."b/t" (x int)', "slash")
    assert box.run("SELECT * FROM a.b.t") == [(1,)]
