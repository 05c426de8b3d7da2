"""``iceduck://`` URLs as connect() arguments, and the entry point that registers the dialect."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from iceduck.errors import UserError
from iceduck.sqlalchemy.dialect import IceduckDialect
from iceduck.sqlalchemy.url import connect_arguments

ROOT = Path(__file__).resolve().parents[2]


def arguments(url: str) -> dict[str, object]:
    return IceduckDialect().create_connect_args(make_url(url))[1]


def test_the_path_is_the_warehouse() -> None:
    assert arguments("iceduck://") == {}
    assert arguments("iceduck:///warehouse") == {"warehouse": "warehouse"}
    assert arguments("iceduck:////data/warehouse") == {"warehouse": "/data/warehouse"}


def test_the_query_holds_arguments_and_catalog_properties() -> None:
    url = (
        "iceduck://?warehouse=s3://bucket/wh&catalog_uri=http://rest:8181&catalog=prod"
        "&read_only=true&s3.endpoint=http://minio:9000&namespace=sales"
    )
    assert arguments(url) == {
        "warehouse": "s3://bucket/wh",
        "catalog_uri": "http://rest:8181",
        "catalog": "prod",
        "read_only": True,
        "namespace": "sales",
        "properties": {"s3.endpoint": "http://minio:9000"},
    }
    assert arguments("iceduck:///wh?catalog_uri=sqlite:///wh/other.db&manifest_cache_entries=10") == {
        "warehouse": "wh",
        "catalog_uri": "sqlite:///wh/other.db",
        "manifest_cache_entries": 10,
    }


@pytest.mark.parametrize(
    ("database", "query", "message"),
    [
        ("wh", {"warehouse": "other"}, "names the warehouse twice"),
        (None, {"read_only": "maybe"}, "takes true or false"),
        (None, {"manifest_cache_entries": "many"}, "whole number"),
        (None, {"catalog": ("a", "b")}, "more than once"),
    ],
)
def test_a_wrong_url_says_why(database: str | None, query: dict[str, object], message: str) -> None:
    with pytest.raises(UserError, match=message):
        connect_arguments(database, query)  # type: ignore[arg-type]


def test_a_catalog_uri_in_the_query_opens_that_catalog(tmp_path: Path) -> None:
    catalog = tmp_path / "elsewhere.db"
    engine = sa.create_engine(f"iceduck:///{tmp_path / 'wh'}?catalog_uri=sqlite:///{catalog}")
    with engine.connect() as conn:
        conn.exec_driver_sql("CREATE NAMESPACE ns")
    engine.dispose()
    assert catalog.exists()
    assert not (tmp_path / "wh" / "catalog.db").exists()


def test_the_entry_point_names_the_dialect() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    target = pyproject["project"]["entry-points"]["sqlalchemy.dialects"]["iceduck"]
    module, _, name = target.partition(":")
    assert getattr(importlib.import_module(module), name) is IceduckDialect
    assert pyproject["project"]["optional-dependencies"]["sqlalchemy"] == ["sqlalchemy>=1.4"]
