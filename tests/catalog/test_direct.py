import gzip
from pathlib import Path

import pytest

from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.direct import load_table_from_path
from iceduck.catalog.metadata_files import MetadataCache
from iceduck.errors import CorruptDataError, NotFoundError
from tests.catalog.helpers import write_metadata


@pytest.fixture
def table(tmp_path: Path) -> Path:
    table = tmp_path / "events"
    write_metadata(table, "00000-a.metadata.json", 100)
    write_metadata(table, "00001-b.metadata.json", 101)
    return table


def test_metadata_file(table: Path) -> None:
    path = table / "metadata" / "00000-a.metadata.json"
    loaded = load_table_from_path(str(path))
    assert loaded.metadata_location == str(path)
    assert loaded.metadata.last_updated_ms == 100
    assert loaded.identifier == TableIdentifier((), "events")
    assert load_table_from_path(f"file://{path}").metadata.last_updated_ms == 100


def test_gzip_metadata_file(tmp_path: Path) -> None:
    path = write_metadata(tmp_path / "t", "00004-z.gz.metadata.json", 4)
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    assert load_table_from_path(str(path)).metadata.last_updated_ms == 4
    assert load_table_from_path(str(tmp_path / "t")).metadata_location == str(path)


def test_table_folder_and_metadata_folder_mean_the_newest(table: Path) -> None:
    newest = str(table / "metadata" / "00001-b.metadata.json")
    assert load_table_from_path(str(table)).metadata_location == newest
    assert load_table_from_path(str(table / "metadata")).metadata_location == newest
    cache = MetadataCache()
    assert (
        load_table_from_path(str(table), cache).metadata is load_table_from_path(str(table), cache).metadata
    )


def test_hadoop_folder_uses_the_hint(tmp_path: Path) -> None:
    for v in (1, 2):
        write_metadata(tmp_path / "t", f"v{v}.metadata.json", v)
    (tmp_path / "t" / "metadata" / "version-hint.text").write_text("2")
    assert load_table_from_path(str(tmp_path / "t")).metadata.last_updated_ms == 2


def test_errors_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match=r"no Iceberg metadata file or table folder at .*/nowhere"):
        load_table_from_path(str(tmp_path / "nowhere"))
    (tmp_path / "plain").mkdir()
    with pytest.raises(NotFoundError, match=r"plain is not an Iceberg table folder"):
        load_table_from_path(str(tmp_path / "plain"))
    (tmp_path / "t" / "metadata").mkdir(parents=True)
    with pytest.raises(NotFoundError, match=r"no metadata file .* in .*t/metadata"):
        load_table_from_path(str(tmp_path / "t"))
    bad = tmp_path / "bad.metadata.json"
    bad.write_bytes(gzip.compress(b"{not json"))
    with pytest.raises(CorruptDataError, match=r"bad\.metadata\.json: metadata file is not valid JSON"):
        load_table_from_path(str(bad))
