"""``--storage-credentials FILE``: each table is vended the file's entry for its location,
in load-table answers and through ``loadCredentials``; the file is read again when it
changes; a bad file is refused at start, naming what is wrong."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from iceduck.errors import UserError
from iceduck.serve.serve import build_server, parser
from iceduck.serve.storage_credentials import CredentialsFile, parse_credentials
from tests.serve.conftest import RestClient, start_server

DELEGATION = {"X-Iceberg-Access-Delegation": "vended-credentials"}
SCHEMA = {"type": "struct", "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}


def _write(path: Path, entries: dict[str, str]) -> None:
    text = "".join(
        f'[[storage-credentials]]\nprefix = "{prefix}"\nconfig = {{ "s3.access-key-id" = "{key}" }}\n\n'
        for prefix, key in entries.items()
    )
    path.write_text(text)


def test_each_table_gets_the_entry_for_its_location_and_renewals_see_a_rotation(
    warehouse: Path, tmp_path: Path
) -> None:
    file = tmp_path / "credentials.toml"
    root = str(warehouse.resolve())
    _write(file, {f"{root}/": "warehouse-key", f"{root}/sales/": "sales-key"})
    server = start_server(warehouse, storage_credentials=CredentialsFile(file))
    try:
        client = RestClient(server.url)
        for ns in ("sales", "hr"):
            client.post("/v1/namespaces", {"namespace": [ns]})
            client.post(f"/v1/namespaces/{ns}/tables", {"name": "t", "schema": SCHEMA})
        sales = client.call("GET", "/v1/namespaces/sales/tables/t", headers=DELEGATION).body
        assert sales["storage-credentials"] == [
            {"prefix": f"{root}/sales/", "config": {"s3.access-key-id": "sales-key"}}
        ]
        assert "config" not in sales or sales["config"] == {}  # the other bucket's keys are not handed out
        hr = client.call("GET", "/v1/namespaces/hr/tables/t/credentials", headers=DELEGATION).body
        assert hr == {
            "storage-credentials": [{"prefix": f"{root}/", "config": {"s3.access-key-id": "warehouse-key"}}]
        }
        plain = client.get("/v1/namespaces/sales/tables/t")  # not asked for
        assert "storage-credentials" not in plain.body
        _write(file, {f"{root}/": "rotated-key"})
        stat = file.stat()
        os.utime(
            file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000)
        )  # a later change, whatever the clock
        again = client.get("/v1/namespaces/sales/tables/t/credentials").body
        assert again["storage-credentials"][0]["config"] == {"s3.access-key-id": "rotated-key"}
        assert (
            "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"
            in client.get("/v1/config").body["endpoints"]
        )
        missing = client.call("GET", "/v1/namespaces/sales/tables/nope/credentials")
        assert missing.status == 404
    finally:
        server.stop()


def test_a_server_that_does_not_vend_answers_no_credentials(client: RestClient) -> None:
    client.post("/v1/namespaces", {"namespace": ["n"]})
    client.post("/v1/namespaces/n/tables", {"name": "t", "schema": SCHEMA})
    assert client.call("GET", "/v1/namespaces/n/tables/t/credentials", headers=DELEGATION).body == {
        "storage-credentials": []
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[storage-credentials]\n", "is not valid TOML"),
        ('storage-credentials = "x"\n', "must be a list of tables"),
        ('[[storage-credentials]]\nconfig = { a = "b" }\n', "entry 1: needs a prefix"),
        ('[[storage-credentials]]\nprefix = "s3://b/"\n', r"entry 1 \(s3://b/\): needs a config table"),
    ],
)
def test_a_bad_file_is_refused_naming_the_problem(text: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        parse_credentials(text, "c.toml")


def test_serve_refuses_a_missing_file_at_start(warehouse: Path, tmp_path: Path) -> None:
    args = parser().parse_args(
        [str(warehouse), "--port", "0", "--storage-credentials", str(tmp_path / "none.toml")]
    )
    with pytest.raises(UserError, match=r"none\.toml: No such file"):
        build_server(args)
