"""The typed getters of iceduck.spec.properties (Java's PropertyUtil semantics)."""

from __future__ import annotations

import pytest

from iceduck.errors import ValidationError
from iceduck.spec import properties as p


def test_int_property() -> None:
    assert p.int_property({}, p.COMMIT_NUM_RETRIES, p.COMMIT_NUM_RETRIES_DEFAULT) == 4
    assert p.int_property({p.COMMIT_NUM_RETRIES: " 7 "}, p.COMMIT_NUM_RETRIES, 4) == 7
    with pytest.raises(ValidationError, match=r"'commit\.retry\.num-retries' must be an integer"):
        p.int_property({p.COMMIT_NUM_RETRIES: "seven"}, p.COMMIT_NUM_RETRIES, 4)


def test_bool_property_reads_like_java() -> None:
    name = p.METADATA_DELETE_AFTER_COMMIT_ENABLED
    assert p.bool_property({}, name, False) is False
    assert p.bool_property({name: "TRUE"}, name, False) is True
    assert p.bool_property({name: "yes"}, name, True) is False  # Boolean.parseBoolean


def test_row_level_mode() -> None:
    assert p.row_level_mode({}, p.DELETE_MODE) == "copy-on-write"
    assert p.row_level_mode({p.UPDATE_MODE: "Merge-On-Read"}, p.UPDATE_MODE) == "merge-on-read"
    with pytest.raises(ValidationError, match=r"write\.merge\.mode"):
        p.row_level_mode({p.MERGE_MODE: "sideways"}, p.MERGE_MODE)


def test_locations() -> None:
    assert p.data_location({}, "/w/t/") == "/w/t/data"
    assert p.data_location({p.WRITE_DATA_LOCATION: "/else/"}, "/w/t") == "/else"
    assert p.metadata_location({}, "file:/w/t") == "file:/w/t/metadata"
    assert p.metadata_location({p.WRITE_METADATA_LOCATION: "/m"}, "/w/t") == "/m"
