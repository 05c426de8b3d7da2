from pathlib import Path

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.filesystem import HadoopCatalog
from iceduck.errors import NotFoundError, ValidationError
from tests.catalog.helpers import write_metadata


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    write_metadata(tmp_path / "db" / "t1", "v1.metadata.json", 1)
    write_metadata(tmp_path / "db" / "t1", "v2.metadata.json", 2)
    (tmp_path / "db" / "t1" / "metadata" / "version-hint.text").write_text("2")
    write_metadata(tmp_path / "db" / "t2", "v1.metadata.json", 11)  # no hint: listed
    write_metadata(tmp_path / "deep" / "er" / "t3", "v1.metadata.json", 21)
    write_metadata(tmp_path / "db" / "jdbc_style", "00001-u.metadata.json", 31)
    (tmp_path / "empty_ns").mkdir()
    (tmp_path / "catalog.db").write_bytes(b"")  # files are neither namespaces nor tables
    return tmp_path


def test_namespaces_are_folders(warehouse: Path) -> None:
    catalog = HadoopCatalog(warehouse)
    assert catalog.list_namespaces() == [("db",), ("deep",), ("empty_ns",)]
    assert catalog.list_namespaces(("deep",)) == [("deep", "er")]
    assert catalog.list_namespaces(("db",)) == []  # its folders are all tables
    assert catalog.namespace_exists(("deep", "er")) and not catalog.namespace_exists(("db", "t1"))
    assert catalog.load_namespace_properties(("db",)) == {"location": str(warehouse / "db")}
    with pytest.raises(NotFoundError, match="namespace 'nope' not found in catalog 'hc'"):
        HadoopCatalog(warehouse, "hc").list_tables(("nope",))
    with pytest.raises(NotFoundError):
        catalog.list_namespaces(("db", "t1"))  # a table is not a namespace


def test_tables(warehouse: Path) -> None:
    catalog = HadoopCatalog(warehouse)
    assert [t.name for t in catalog.list_tables(("db",))] == ["jdbc_style", "t1", "t2"]
    assert catalog.list_tables(("deep", "er")) == [TableIdentifier(("deep", "er"), "t3")]
    loaded = catalog.load_table(TableIdentifier(("db",), "t1"))
    assert loaded.metadata_location == str(warehouse / "db" / "t1" / "metadata" / "v2.metadata.json")
    assert loaded.metadata.last_updated_ms == 2
    assert catalog.load_table(TableIdentifier(("db",), "t2")).metadata.last_updated_ms == 11
    assert catalog.load_table(TableIdentifier(("deep", "er"), "t3")).metadata.last_updated_ms == 21
    assert catalog.table_exists(TableIdentifier(("db",), "t1"))
    assert not catalog.table_exists(TableIdentifier(("db",), "nope"))


def test_table_errors(warehouse: Path) -> None:
    catalog = HadoopCatalog(warehouse)
    with pytest.raises(NotFoundError, match=r"table 'db\.nope' not found in catalog 'iceduck'$"):
        catalog.load_table(TableIdentifier(("db",), "nope"))
    with pytest.raises(NotFoundError, match=r"'db\.jdbc_style' not found .*no v<N>\.metadata\.json"):
        catalog.load_table(TableIdentifier(("db",), "jdbc_style"))
    with pytest.raises(ValidationError, match="invalid name"):
        catalog.load_table(TableIdentifier(("..",), "t1"))


def test_missing_warehouse_is_empty(tmp_path: Path) -> None:
    catalog = HadoopCatalog(tmp_path / "none")
    assert catalog.list_namespaces() == []
    assert not (tmp_path / "none").exists()
