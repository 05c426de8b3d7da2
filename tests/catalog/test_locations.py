"""Explicit table locations and write paths no writer could use are refused."""

from __future__ import annotations

import pytest

from iceduck.catalog.locations import check_location, check_path_properties, location_problem
from iceduck.errors import ValidationError


@pytest.mark.parametrize(
    "location",
    [
        "/tmp/elsewhere",
        "/tmp/../outside/the/warehouse",  # the user's choice
        "/tmp/with space/ü/🧊",
        "file:/tmp/a%20b",
        "file:///tmp/x",
        "/tmp/per%5Ccent",  # a plain path is not decoded: this is a folder named 'per%5Ccent'
        "s3://bucket/key",
        "s3://bucket/" + "k" * 300,  # an object store's keys are not folder names
        "/tmp/a\tb",  # a plain path is not parsed as a URI: a tab is part of the name
        "/tmp/a#b?c",
        "file:/tmp/a%23b%3Fc",
        "file:/tmp/a%5Cb%00c",  # never decoded: a folder named 'a%5Cb%00c', as in Java and DuckDB
        "/tmp/" + "x" * 255,
        "file:/tmp/" + "%20" * 85,  # 255 bytes as written
    ],
)
def test_usable_locations_pass(location: str) -> None:
    assert location_problem(location) is None
    check_location(location)


@pytest.mark.parametrize(
    ("location", "says"),
    [
        ("/tmp/a\\b", "backslash"),
        ("C:\\warehouse\\t", "backslash"),
        ("/tmp/a\x00b", "NUL"),
        ("file:/tmp/a\\b", "backslash"),
        ("file:///tmp/a\x00b", "NUL"),
        ("/tmp/a\ud800b", "lone surrogate"),
        ("file:/tmp/a\tb", "tab, which URI parsers drop"),
        ("file:/tmp/a\nb", "line feed"),
        ("file:/tmp/a#b", "fragment"),
        ("file:/tmp/a?b", "query"),
        ("/tmp/" + "x" * 256 + "/t", "256 bytes"),
        ("file:/tmp/" + "%C3%A9" * 128, "768 bytes"),  # as written: the path is not decoded
        ("file:/tmp/" + "%20" * 86, "258 bytes"),
    ],
)
def test_unusable_locations_are_refused(location: str, says: str) -> None:
    assert says in (location_problem(location) or "")
    with pytest.raises(ValidationError, match="invalid LOCATION"):
        check_location(location)


@pytest.mark.parametrize("name", ["write.data.path", "write.metadata.path"])
def test_write_path_properties_are_checked(name: str) -> None:
    check_path_properties({name: "/tmp/ok", "comment": "a\\b is fine in a comment"})
    with pytest.raises(ValidationError, match=f"table property '{name}' value .*backslash"):
        check_path_properties({name: "/tmp/a\\b"})
