"""The DuckDB database iceduck runs on: UTC, no extension autoloading, per-cursor views."""

from __future__ import annotations

import datetime as dt

import pytest

from iceduck.engine.connection import open_database


def test_settings_apply_to_every_cursor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    database = open_database(threads=1, memory_limit="1GB")
    try:
        cursor = database.cursor()
        settings = cursor.execute(
            "SELECT current_setting('TimeZone'), current_setting('threads'), "
            "current_setting('autoload_known_extensions'), current_setting('autoinstall_known_extensions')"
        ).fetchall()
        assert settings == [("UTC", 1, False, False)]
        # a literal without an offset is UTC; timestamptz prints in UTC
        row = cursor.execute(
            "SELECT TIMESTAMPTZ '2024-01-01 00:00:00', CAST(TIMESTAMPTZ '2024-01-01 00:00:00' AS VARCHAR)"
        ).fetchall()
        assert row == [(dt.datetime(2024, 1, 1, tzinfo=dt.UTC), "2024-01-01 00:00:00+00")]
    finally:
        database.close()


def test_temporary_views_are_per_cursor() -> None:
    database = open_database()
    try:
        a, b = database.cursor(), database.cursor()
        a.execute("CREATE TEMP VIEW v AS SELECT 1 AS x")
        assert a.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = 'v'").fetchall() == [(1,)]
        assert b.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = 'v'").fetchall() == [(0,)]
    finally:
        database.close()
