"""DuckDB's errors about table files, named after the file (iceduck.engine.file_errors)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from iceduck.engine.file_errors import (
    file_error,
    find_damaged,
    io_error,
    object_store_refusal,
    quoted_paths,
    scan_files,
    statement_file_error,
)
from iceduck.engine.read import INLINE_FILES, attach_scan, scan_to_arrow
from iceduck.errors import CorruptDataError, StorageError
from iceduck.io.fileio import MissingFileError
from iceduck.scan.tasks import ScanPlan
from iceduck.spec.schema import Schema
from iceduck.spec.types import LongType, NestedField, StringType
from tests.engine.helpers import data_task, equality_delete_file, position_delete_file, write_parquet
from tests.support import faults

SCHEMA = Schema((NestedField(1, "id", LongType()), NestedField(2, "name", StringType())))
IDS = {"id": 1, "name": 2}


def numbers(con: Any, path: Path, n: int = 50) -> Path:
    return write_parquet(con, path, f"SELECT i::BIGINT AS id, 'n' || i AS name FROM range({n}) t(i)", IDS)


def duckdb_error(con: Any, sql: str) -> duckdb.Error:
    with pytest.raises(duckdb.Error) as caught:
        con.execute(sql).fetchall()
    return caught.value


def test_quoted_paths_in_duckdb_messages() -> None:
    nested = (
        'IO Error: Async write failed for range [offset=0, size=27]: {"exception_type":"IO",'
        '"exception_message":"Could not write file \\"/w/db/t/data/x.parquet\\": No space left on device"}'
    )
    assert quoted_paths(nested) == ["/w/db/t/data/x.parquet"]
    assert quoted_paths("No magic bytes found at end of file '/w/a.parquet'") == ["/w/a.parquet"]
    assert quoted_paths("Binder Error: column \"k\" not found\n\nLINE 1: FROM '/x/y'") == []


def test_a_failed_read_of_an_opened_object_names_the_file_or_folder_read() -> None:
    """pyarrow's error for a read of an object opened already names no key (DuckDB quotes
    the traceback of the fsspec filesystem): a store failure, never "corrupt data", naming
    the one file the statement read, or the folder of the several."""
    message = (
        'Invalid Input Error: Traceback (most recent call last):\n  File "pyarrow/error.pxi", '
        "line 92, in pyarrow.lib.check_status\nOSError: AWS Error NETWORK_CONNECTION during "
        "GetObject operation: curlCode: 18, Transferred a partial file"
    )
    one = object_store_refusal(message, ["s3://b/t/data/a=1/x.parquet"])
    assert isinstance(one, StorageError)
    assert str(one).startswith("s3://b/t/data/a=1/x.parquet: the store's answer was cut off")
    several = object_store_refusal(message, ["s3://b/t/data/a=1/x.parquet", "s3://b/t/data/a=2/y.parquet"])
    assert str(several).startswith("s3://b/t/data/ (one of 2 files): the store's answer was cut off")


def test_a_full_disk_under_copy_is_a_storage_error() -> None:
    error = duckdb.IOException(
        'IO Error: Could not write file "/w/db/t/data/.tmp/data_1.parquet": No space left on device'
    )
    translated = io_error(error)
    assert isinstance(translated, StorageError)
    assert translated.path == "/w/db/t/data/.tmp/data_1.parquet"
    assert "free space and run the statement again" in str(translated)


def test_a_truncated_file_of_the_statement_is_corrupt_data(con: Any, tmp_path: Path) -> None:
    path = numbers(con, tmp_path / "a.parquet")
    faults.damage(path, "truncated")
    error = duckdb_error(con, f"SELECT * FROM read_parquet('{path}')")
    translated = file_error(con, error, [str(path)])
    assert isinstance(translated, CorruptDataError)
    assert translated.path == str(path)
    # a file the statement does not read as a table file stays what DuckDB says it is
    assert file_error(con, error, []) is None


def test_a_missing_file_is_named(con: Any, tmp_path: Path) -> None:
    error = duckdb_error(con, f"SELECT * FROM read_parquet('{tmp_path}/gone.parquet')")
    translated = file_error(con, error, [f"{tmp_path}/gone.parquet"])
    assert isinstance(translated, MissingFileError)


def test_garbage_naming_no_file_is_found_among_the_statement_files(con: Any, tmp_path: Path) -> None:
    """The Thrift decoder's 'don't know what type' names no file: the files are read one at a
    time to find the broken one."""
    good = [numbers(con, tmp_path / f"{n}.parquet") for n in range(3)]
    bad = numbers(con, tmp_path / "bad.parquet")
    faults.damage(bad, "footer-garbage")
    files = [str(p) for p in [good[0], bad, *good[1:]]]
    error = duckdb_error(con, f"SELECT * FROM read_parquet({files})")
    assert not quoted_paths(str(error))  # DuckDB does not say which
    translated = file_error(con, error, files)
    assert isinstance(translated, CorruptDataError)
    assert translated.path == str(bad)
    assert find_damaged(con, [str(p) for p in good]) is None


def test_scan_files_are_read_back_from_the_cursor(con: Any, tmp_path: Path) -> None:
    a, b = numbers(con, tmp_path / "a.parquet"), numbers(con, tmp_path / "b.parquet")
    eq = equality_delete_file(con, tmp_path / "eq.parquet", "SELECT 3::BIGINT AS id", {"id": 1}, [1])
    tasks = (data_task(con, a, equality_deletes=[eq]), data_task(con, b))
    cursor = con.cursor()
    attach_scan(cursor, ScanPlan(SCHEMA, 1, tasks), "__iceduck_7")
    # the equality delete was read while attaching (as the positions it deletes)
    assert sorted(scan_files(cursor)) == sorted([str(a), str(b)])
    assert cursor.execute("SELECT 42").fetchall() == [(42,)]  # nothing left unfinished


@pytest.mark.parametrize("count", [1, INLINE_FILES, INLINE_FILES + 1])
def test_scan_files_listed_in_the_sql_or_in_variables_are_read_back(
    con: Any, tmp_path: Path, count: int
) -> None:
    """A few files are listed in the scan's SQL, more in a variable: both are the statement's."""
    paths = [str(numbers(con, tmp_path / f"{n}.parquet", 2)) for n in range(count)]
    cursor = con.cursor()
    sql = attach_scan(
        cursor, ScanPlan(SCHEMA, 1, tuple(data_task(con, Path(p)) for p in paths)), "__iceduck_8"
    )
    assert ("getvariable" in sql) == (count > INLINE_FILES)
    assert sorted(scan_files(cursor)) == sorted(paths)
    assert cursor.execute(f"SELECT count(*) FROM ({sql})").fetchall() == [(2 * count,)]


def test_broken_data_file_in_a_statement_is_named(con: Any, tmp_path: Path) -> None:
    a, b = numbers(con, tmp_path / "a.parquet"), numbers(con, tmp_path / "b.parquet")
    tasks = (data_task(con, a), data_task(con, b))
    faults.damage(b, "footer-garbage")
    cursor = con.cursor()
    try:  # a scan that reads footers (engine/plain_read) finds it while attaching
        sql = attach_scan(cursor, ScanPlan(SCHEMA, 1, tasks), "__iceduck_9")
    except CorruptDataError as e:
        translated: Exception | None = e
    else:
        translated = statement_file_error(cursor, duckdb_error(cursor, sql))
    assert isinstance(translated, CorruptDataError)
    assert translated.path == str(b)


def test_broken_equality_delete_file_is_named(con: Any, tmp_path: Path) -> None:
    """Equality deletes are matched while the scan is attached: the broken file is named then."""
    a = numbers(con, tmp_path / "a.parquet")
    eq = equality_delete_file(con, tmp_path / "eq.parquet", "SELECT 3::BIGINT AS id", {"id": 1}, [1])
    faults.damage(eq.path, "footer-garbage")
    cursor = con.cursor()
    with pytest.raises(CorruptDataError) as caught:
        attach_scan(cursor, ScanPlan(SCHEMA, 1, (data_task(con, a, equality_deletes=[eq]),)), "__iceduck_8")
    assert caught.value.path == str(eq.path)
    assert cursor.execute("SELECT 42").fetchall() == [(42,)]


def test_broken_position_delete_file_is_named(con: Any, tmp_path: Path) -> None:
    a = numbers(con, tmp_path / "a.parquet")
    pd = position_delete_file(con, tmp_path / "pd.parquet", [(str(a), 1), (str(a), 2)])
    faults.damage(pd.path, "footer-garbage")
    with pytest.raises(CorruptDataError) as caught:
        scan_to_arrow(con, ScanPlan(SCHEMA, 1, (data_task(con, a, position_deletes=[pd]),)))
    assert caught.value.path == str(pd.path)
