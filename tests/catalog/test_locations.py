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
        ("file:/tmp/a%5Cb", "backslash"),
        ("file:/tmp/a%5cb", "backslash"),
        ("file:///tmp/a%00b", "NUL"),
    ],
)
def test_backslash_and_nul_are_refused(location: str, says: str) -> None:
    with pytest.raises(ValidationError, match=f"invalid LOCATION .*{says}"):
        check_location(location)


@pytest.mark.parametrize("name", ["write.data.path", "write.metadata.path"])
def test_write_path_properties_are_checked(name: str) -> None:
    check_path_properties({name: "/tmp/ok", "comment": "a\\b is fine in a comment"})
    with pytest.raises(ValidationError, match=f"table property '{name}' value .*backslash"):
        check_path_properties({name: "/tmp/a\\b"})
