"""The error-kind table: every fault a hostile user or an unlucky machine
can cause reaches the caller as one iceduck error kind that is also the right PEP 249
class, and names the file when a file is at fault.

Faults are real (:mod:`tests.support.faults`): a full tmpfs, a read-only bind mount,
``chattr +i``, ``RLIMIT_FSIZE``, another user, names over 255 bytes, damaged files. A case
whose fault this machine cannot produce is skipped with the reason (not passed).

After each storage fault the table still reads the rows it had; after each damaged file
is put back, the table reads again: the fault touched nothing else.
"""

from __future__ import annotations

import contextlib
import decimal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

import iceduck
from iceduck import dbapi, errors
from iceduck.session.result import statement_errors
from tests.support import faults

T = TypeVar("T")

# -- helpers ---------------------------------------------------------------------------------------


def caught(run: Callable[[], object]) -> Exception:
    """The exception ``run`` raises; the test fails if it raises none."""
    try:
        run()
    except Exception as e:
        return e
    pytest.fail("the statement succeeded, but the fault should have failed it")


def count(con: iceduck.Connection, table: str) -> int:
    return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def new_table(warehouse: Path, *, version: int = 2, rows: int = 100, mode: str = "merge-on-read"):
    """A connection and ``db.t(k bigint, v string)`` holding ``rows`` rows."""
    con = iceduck.connect(warehouse)
    con.execute("CREATE NAMESPACE db")
    con.execute(
        f"CREATE TABLE db.t (k bigint, v string) TBLPROPERTIES ('format-version'='{version}', "
        f"'write.delete.mode'='{mode}', 'write.update.mode'='{mode}')"
    )
    con.execute(f"INSERT INTO db.t SELECT i, 'v' || i FROM range({rows}) r(i)")
    return con


@contextlib.contextmanager
def available(fault: contextlib.AbstractContextManager[T]) -> Iterator[T]:
    """Enter a fault, skipping the test (with the reason) when this machine cannot make it."""
    with contextlib.ExitStack() as stack:
        try:
            value = stack.enter_context(fault)
        except faults.FaultUnavailable as e:
            pytest.skip(f"fault not available on this machine: {e}")
        yield value


@dataclass(frozen=True)
class Outcome:
    """What a case observed: the error, the file it must name (None: no file is at fault)."""

    error: Exception
    file: str | None


# -- storage faults --------------------------------------------------------------------------------


def disk_full_insert(tmp: Path) -> Outcome:
    with available(faults.tmpfs(tmp / "mnt")) as mnt:
        con = new_table(mnt / "wh")
        with faults.disk_full(mnt):
            error = caught(
                lambda: con.execute("INSERT INTO db.t SELECT i, repeat('x', 50) FROM range(100000) r(i)")
            )
        assert count(con, "db.t") == 100  # nothing landed, the table reads
        con.execute("INSERT INTO db.t VALUES (-1, 'after')")  # and takes writes once there is space
        assert count(con, "db.t") == 101
        con.close()
    return Outcome(error, str(mnt / "wh" / "db" / "t" / "data"))


def disk_full_create(tmp: Path) -> Outcome:
    with available(faults.tmpfs(tmp / "mnt")) as mnt:
        con = new_table(mnt / "wh")
        with faults.disk_full(mnt):
            error = caught(lambda: con.execute("CREATE TABLE db.u (a int)"))
        con.execute("CREATE TABLE db.u (a int)")  # the name was not taken by the failure
        con.close()
    return Outcome(error, str(mnt / "wh" / "db" / "u" / "metadata"))


def disk_full_delete(tmp: Path) -> Outcome:
    with available(faults.tmpfs(tmp / "mnt")) as mnt:
        con = new_table(mnt / "wh")
        with faults.disk_full(mnt):
            error = caught(lambda: con.execute("DELETE FROM db.t WHERE k < 10"))
        assert count(con, "db.t") == 100
        con.close()
    return Outcome(error, str(mnt / "wh" / "db" / "t"))


def disk_full_copy_on_write(tmp: Path) -> Outcome:
    """The failed COPY is translated on the statement's cursor, which the DELETE then still
    cleans up (a translation leaving a result unfinished made DuckDB refuse that)."""
    with available(faults.tmpfs(tmp / "mnt")) as mnt:
        con = new_table(mnt / "wh", rows=3000, mode="copy-on-write")
        with faults.disk_full(mnt, leave=512):
            error = caught(lambda: con.execute("DELETE FROM db.t WHERE k % 2 = 0"))
        assert count(con, "db.t") == 3000
        con.close()
    return Outcome(error, str(mnt / "wh" / "db" / "t" / "data"))


def disk_full_catalog(tmp: Path) -> Outcome:
    """Metadata lands outside the full disk; the catalog database on it cannot grow."""
    with available(faults.tmpfs(tmp / "mnt", "1m")) as mnt:
        con = new_table(mnt / "wh", rows=0)
        elsewhere = tmp / "elsewhere"
        with faults.disk_full(mnt):
            error = caught(
                lambda: [
                    con.execute(f"CREATE TABLE db.u{i} (a int) LOCATION '{elsewhere}/u{i}'")
                    for i in range(50)
                ]
            )
        con.close()
    return Outcome(error, str(mnt / "wh" / "catalog.db"))


def read_only_insert(tmp: Path) -> Outcome:
    con = new_table(tmp / "wh")
    folder = tmp / "wh" / "db" / "t"
    with available(faults.read_only(folder)):
        error = caught(lambda: con.execute("INSERT INTO db.t VALUES (1, 'x')"))
        assert count(con, "db.t") == 100  # reading a read-only table is fine
    return Outcome(error, str(folder / "data"))


def read_only_alter(tmp: Path) -> Outcome:
    con = new_table(tmp / "wh")
    folder = tmp / "wh" / "db" / "t" / "metadata"
    with available(faults.read_only(folder)):
        error = caught(lambda: con.execute("ALTER TABLE db.t ADD COLUMN extra int"))
    assert [d[0] for d in con.execute("SELECT * FROM db.t LIMIT 1").description] == ["k", "v"]
    return Outcome(error, str(folder))


def immutable_data_folder(tmp: Path) -> Outcome:
    con = new_table(tmp / "wh")
    folder = tmp / "wh" / "db" / "t" / "data"
    with available(faults.immutable(folder)):
        error = caught(lambda: con.execute("INSERT INTO db.t VALUES (1, 'x')"))
    assert count(con, "db.t") == 100
    return Outcome(error, str(folder))


def permission_denied_read(tmp: Path) -> Outcome:
    """Root's 0700 test folder refuses user nobody: the metadata file cannot be opened."""
    new_table(tmp / "wh").close()
    con = iceduck.connect(tmp / "wh")  # the catalog is open; the table is not loaded yet
    (tmp / "wh").chmod(0o700)
    with available(faults.as_user()):
        error = caught(lambda: con.execute("SELECT count(*) FROM db.t").fetchall())
    assert count(con, "db.t") == 100
    return Outcome(error, str(tmp / "wh" / "db" / "t" / "metadata"))


def file_size_limit(tmp: Path) -> Outcome:
    con = new_table(tmp / "wh")
    with faults.file_size_limit(64 * 1024):
        error = caught(
            lambda: con.execute("INSERT INTO db.t SELECT i, md5(i::VARCHAR) FROM range(200000) r(i)")
        )
    assert count(con, "db.t") == 100
    return Outcome(error, str(tmp / "wh" / "db" / "t" / "data"))


def path_too_long_location(tmp: Path) -> Outcome:
    """Every folder name fits, the whole path (20 x 250 bytes) does not (PATH_MAX)."""
    con = new_table(tmp / "wh", rows=0)
    location = tmp.joinpath(*[f"{i:02d}" + "y" * 248 for i in range(20)])
    error = caught(lambda: con.execute(f"CREATE TABLE db.long (a int) LOCATION '{location}'"))
    return Outcome(error, str(tmp / ("00" + "y" * 248)))


def path_too_long_data_path(tmp: Path) -> Outcome:
    """DuckDB's COPY meets the over-long path (each folder name fits, PATH_MAX does not)."""
    con = new_table(tmp / "wh")
    path = tmp.joinpath(*[f"{i:02d}" + "z" * 248 for i in range(20)])
    con.execute(f"ALTER TABLE db.t SET TBLPROPERTIES ('write.data.path' = '{path}')")
    error = caught(lambda: con.execute("INSERT INTO db.t VALUES (1, 'x')"))
    assert count(con, "db.t") == 100
    return Outcome(error, str(tmp / ("00" + "z" * 248)))


def warehouse_name_too_long(tmp: Path) -> Outcome:
    warehouse = tmp / ("w" * 300)
    return Outcome(caught(lambda: iceduck.connect(warehouse)), str(warehouse))


# -- hostile input ---------------------------------------------------------------------------------


def nul_in_table_name(tmp: Path) -> Outcome:
    """Refused as a name (ValidationError, a DataError) before the file layer would refuse
    it as a path (UserError): either way an iceduck UserError, never Python's ValueError."""
    con = new_table(tmp / "wh", rows=0)
    return Outcome(caught(lambda: con.execute('CREATE TABLE db."a\x00b" (a int)')), None)


def nul_in_warehouse(tmp: Path) -> Outcome:
    return Outcome(caught(lambda: iceduck.connect(f"{tmp}/a\x00b")), None)


def nul_in_scan_path(tmp: Path) -> Outcome:
    con = iceduck.connect(tmp / "wh")
    return Outcome(caught(lambda: con.execute(f"SELECT * FROM iceduck_scan('{tmp}/a\x00b')")), None)


def deep_nesting(tmp: Path) -> Outcome:
    con = iceduck.connect(tmp / "wh")
    error = caught(lambda: con.execute("SELECT " + "(" * 3000 + "1" + ")" * 3000))
    assert con.execute("SELECT 1").fetchone() == (1,)  # the connection is still usable
    return Outcome(error, None)


def surrogate_in_sql(tmp: Path) -> Outcome:
    con = iceduck.connect(tmp / "wh")
    error = caught(lambda: con.execute("SELECT '\ud800'"))
    assert con.execute("SELECT 'ok'").fetchone() == ("ok",)
    return Outcome(error, None)


def surrogate_in_parameter(tmp: Path) -> Outcome:
    con = new_table(tmp / "wh", rows=1)
    return Outcome(caught(lambda: con.execute("SELECT * FROM db.t WHERE v = ?", ["a\udc80"])), None)


def infinite_time_travel(tmp: Path) -> Outcome:
    con = new_table(tmp / "wh", rows=10)
    return Outcome(caught(lambda: con.execute("SELECT * FROM db.t TIMESTAMP AS OF 1e999")), None)


def decimal_at_the_boundary(tmp: Path) -> Outcome:
    """The last line catches a decimal.InvalidOperation escaping any layer; Python's own
    decimal module raises it here (quantizing 40 digits in a 28-digit context)."""

    def overflow() -> None:
        with statement_errors():
            decimal.Decimal(10**40).quantize(decimal.Decimal(1))

    return Outcome(caught(lambda: dbapi_call(overflow)), None)


def dbapi_call(fn: Callable[[], object]) -> object:
    """``fn`` behind the cursor's error boundary."""
    from iceduck.connection import _call

    return _call(fn)


# -- damaged files ---------------------------------------------------------------------------------


def damaged(table_version: int, kind: str, how: str, equality: bool = False) -> Callable[[Path], Outcome]:
    """A case: damage one file of ``kind`` of a table, read the table, put the file back."""

    def case(tmp: Path) -> Outcome:
        con = new_table(tmp / "wh", version=table_version)
        if equality:
            faults.add_equality_deletes(con, "db", "t", "k", [1, 2, 3])
        elif kind == "delete":
            con.execute("DELETE FROM db.t WHERE k % 10 = 0")
        expected = count(con, "db.t")
        con.close()
        con = iceduck.connect(tmp / "wh")
        path = faults.table_files(con, "db.t")[kind]
        con.close()
        original = faults.damage(path, how)
        con = iceduck.connect(tmp / "wh")
        error = caught(lambda: con.execute("SELECT k, v FROM db.t").fetchall())
        con.close()
        faults.restore(path, original)
        con = iceduck.connect(tmp / "wh")
        assert count(con, "db.t") == expected  # only that file was at fault
        con.close()
        return Outcome(error, path)

    return case


def missing_data_file(tmp: Path) -> Outcome:
    con = new_table(tmp / "wh")
    path = faults.table_files(con, "db.t")["data"]
    Path(path).unlink()
    return Outcome(caught(lambda: con.execute("SELECT * FROM db.t").fetchall()), path)


def missing_user_file(tmp: Path) -> Outcome:
    """A file the statement itself names is no table's: missing, the statement is wrong."""
    con = new_table(tmp / "wh")
    sql = f"INSERT INTO db.t SELECT * FROM read_parquet('{tmp}/no.parquet')"
    return Outcome(caught(lambda: con.execute(sql)), None)


def copy_into_missing_folder(tmp: Path) -> Outcome:
    con = new_table(tmp / "wh")
    sql = f"COPY (SELECT * FROM db.t) TO '{tmp}/no/such/x.parquet'"
    return Outcome(caught(lambda: con.execute(sql)), None)


# -- the table -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    run: Callable[[Path], Outcome]
    kind: type[errors.IceduckError]
    #: the PEP 249 class (or classes, where two layers may each refuse first)
    dbapi_class: type[dbapi.Error] | tuple[type[dbapi.Error], ...]
    #: a phrase the message must hold (what happened, what to do)
    says: str


S, U, V, C = errors.StorageError, errors.UserError, errors.ValidationError, errors.CorruptDataError
OPS, PROG, DATA, DB = dbapi.OperationalError, dbapi.ProgrammingError, dbapi.DataError, dbapi.DatabaseError

CASES = [
    Case("disk full: INSERT", disk_full_insert, S, OPS, "no space left on device: free space"),
    Case("disk full: CREATE TABLE", disk_full_create, S, OPS, "no space left on device: free space"),
    Case("disk full: DELETE (merge-on-read)", disk_full_delete, S, OPS, "no space left on device"),
    Case("disk full: DELETE (copy-on-write)", disk_full_copy_on_write, S, OPS, "no space left on device"),
    Case("disk full: catalog database", disk_full_catalog, S, OPS, "free space"),
    Case("read-only file system: INSERT", read_only_insert, S, OPS, "read-only file system"),
    Case("read-only file system: ALTER", read_only_alter, S, OPS, "read-only file system"),
    Case("immutable folder: INSERT", immutable_data_folder, S, OPS, "operation not permitted"),
    Case("permission denied: SELECT", permission_denied_read, S, OPS, "permission denied"),
    Case("file size limit: INSERT", file_size_limit, S, OPS, "file too large (limit 65,536 bytes"),
    Case("path over 4,096 bytes: LOCATION", path_too_long_location, S, OPS, "name too long: the path has"),
    Case(
        "path over 4,096 bytes: write.data.path",
        path_too_long_data_path,
        S,
        OPS,
        "name too long: the path has",
    ),
    Case("name over 255 bytes: connect()", warehouse_name_too_long, S, OPS, "(255 bytes per name)"),
    Case("NUL in a table name", nul_in_table_name, U, (PROG, DATA), "NUL"),
    Case("NUL in the warehouse path", nul_in_warehouse, U, PROG, "NUL"),
    Case("NUL in an iceduck_scan path", nul_in_scan_path, U, PROG, "NUL"),
    Case("3,000 nested parentheses", deep_nesting, U, PROG, "nested too deeply"),
    Case("lone surrogate in the SQL", surrogate_in_sql, U, PROG, "unpaired surrogate U+D800 at position 8"),
    Case(
        "lone surrogate in a parameter", surrogate_in_parameter, U, PROG, "parameter 1 is not valid Unicode"
    ),
    Case(
        "TIMESTAMP AS OF 1e999", infinite_time_travel, U, PROG, "TIMESTAMP AS OF takes a constant timestamp"
    ),
    Case("decimal.InvalidOperation", decimal_at_the_boundary, V, DATA, "decimal computation failed"),
    Case("truncated data file", damaged(2, "data", "truncated"), C, DB, "cannot read the file"),
    Case("garbage in a data file's footer", damaged(2, "data", "footer-garbage"), C, DB, "cannot read"),
    Case("garbage in a data page header", damaged(2, "data", "head-garbage"), C, DB, "cannot read"),
    Case("missing data file", missing_data_file, C, DB, "does not exist"),
    Case("read_parquet of a missing file", missing_user_file, errors.NotFoundError, PROG, "no.parquet"),
    Case("COPY TO a missing folder", copy_into_missing_folder, errors.NotFoundError, PROG, "No such file"),
    Case("position deletes: garbage footer", damaged(2, "delete", "footer-garbage"), C, DB, "cannot read"),
    Case("position deletes: garbage page", damaged(2, "delete", "head-garbage"), C, DB, "cannot read"),
    Case("position deletes: truncated", damaged(2, "delete", "truncated"), C, DB, "cannot read"),
    Case("equality deletes: garbage", damaged(2, "delete", "footer-garbage", True), C, DB, "cannot read"),
    Case("equality deletes: truncated", damaged(2, "delete", "truncated", True), C, DB, "cannot read"),
    Case("deletion vector: garbage blob", damaged(3, "delete", "head-garbage"), C, DB, "deletion vector"),
    Case("deletion vector: truncated", damaged(3, "delete", "empty"), C, DB, "Puffin"),
    Case("truncated manifest", damaged(2, "manifest", "truncated"), C, DB, "Avro"),
    Case("truncated manifest list", damaged(2, "manifest_list", "truncated"), C, DB, "Avro"),
    Case("truncated metadata.json", damaged(2, "metadata", "truncated"), C, DB, "not valid JSON"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_error_kind(case: Case, tmp_path: Path) -> None:
    outcome = case.run(tmp_path)
    error = outcome.error
    assert isinstance(error, dbapi.Error), f"a raw {type(error).__name__} escaped: {error}"
    assert isinstance(error, case.kind), f"{type(error).__mro__[:3]}: {error}"
    assert isinstance(error, case.dbapi_class), f"{type(error).__mro__[:3]}: {error}"
    assert case.says in str(error)
    assert "\n" not in str(error).strip() or case.kind is errors.UserError  # one line, for a log
    if outcome.file is not None:
        assert outcome.file in str(error), f"the message does not name {outcome.file}: {error}"
        path = getattr(error, "path", None)
        assert path is not None and path.startswith(outcome.file), f"path={path!r}, expected {outcome.file}"


def test_huge_integer_in_a_filter_is_never_pushed_down(tmp_path: Path) -> None:
    """A 5,000-digit literal: Python's int() refuses 4,300 digits, so pushdown must not try.
    DuckDB decides what the literal means: 1.x refuses it ("Out of Range", a UserError), 2.x
    reads it as a BIGNUM and compares exactly; either way no raw ValueError escapes and no
    row is pruned by a wrong filter."""
    con = new_table(tmp_path / "wh", rows=10)
    huge = "9" * 5000
    try:
        below = con.execute(f"SELECT count(*) FROM db.t WHERE k < {huge}").fetchone()
        above = con.execute(f"SELECT count(*) FROM db.t WHERE k > {huge}").fetchone()
        negative = con.execute(f"SELECT count(*) FROM db.t WHERE k > -{huge}").fetchone()
    except dbapi.Error as e:
        assert isinstance(e, errors.UserError) and isinstance(e, dbapi.ProgrammingError), repr(e)
        assert "Out of Range" in str(e)
        return
    assert (below, above, negative) == ((10,), (0,), (10,))
