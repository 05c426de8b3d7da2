"""SigV4 signing of the REST catalog's requests (``rest.sigv4-enabled``), through a loopback
proxy that checks every signature as AWS does (tests/support/sigv4_proxy.py) in front of a
real ``iceduck serve``.

The proxy's check is first held to AWS's published SigV4 test suite (the ``get-vanilla``,
``get-vanilla-query-order-key-case`` and ``post-vanilla`` vectors: a fixed date, key and
secret, and the signature AWS computed), so a request it accepts is one AWS's algorithm
accepts. moto serves no Iceberg REST endpoint (neither its Glue nor its S3 Tables backend
has the ``/iceberg/v1`` routes), so there is no AWS emulator to sign against here.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

import iceduck
from iceduck.catalog.base import LoadedTable, TableIdentifier
from iceduck.catalog.rest_client.catalog import RestCatalog
from iceduck.catalog.rest_client.http import Transport
from iceduck.catalog.rest_client.sigv4 import SigV4Signer
from iceduck.errors import CommitConflictError, UserError
from iceduck.serve.auth import Authenticator
from iceduck.serve.server import CatalogServer
from iceduck.spec.partition import UNPARTITIONED
from iceduck.spec.schema import Schema
from iceduck.spec.sort import UNSORTED
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.types import LongType, NestedField
from iceduck.txn.builder import MetadataBuilder, new_table_metadata
from tests.support.lost_answers import AnswerLosingProxy
from tests.support.rest import start_server
from tests.support.sigv4_proxy import Keys, SigV4Proxy, canonical_parts, verify

ACCESS_KEY = "AKIDICEDUCKTEST"
SECRET = "s3cret/ICEDUCK+sigv4KEY"
REGION = "eu-west-3"
KEYS = Keys(ACCESS_KEY, SECRET, REGION, "glue")
SIGNED = {
    "rest.sigv4-enabled": "true",
    "rest.signing-name": "glue",
    "rest.signing-region": REGION,
    "rest.access-key-id": ACCESS_KEY,
    "rest.secret-access-key": SECRET,
}
TOKEN = "bearer-t0ken"
CREDENTIAL = "etl:s3cret-value"

# AWS's SigV4 test suite (aws-sig-v4-test-suite): its credentials, date and scope
SUITE = Keys("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "us-east-1", "service")
SUITE_DATE = "20150830T123600Z"


@pytest.fixture(autouse=True)
def no_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Nothing of the machine's AWS setup leaks in, and botocore's chain never asks the
    instance metadata service (an address off this machine)."""
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_ROLE_ARN",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[CatalogServer]:
    warehouse = tmp_path / "served"
    warehouse.mkdir()
    running = start_server(warehouse)
    yield running
    running.stop()


def _upstream(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port.rstrip("/"))


@pytest.fixture
def proxy(server: CatalogServer) -> Iterator[SigV4Proxy]:
    with SigV4Proxy(_upstream(server.url), KEYS) as running:
        yield running


# -- the check, held to AWS's published vectors ------------------------------------------------


def _suite_authorization(signature: str) -> str:
    return (
        f"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
        f"SignedHeaders=host;x-amz-date, Signature={signature}"
    )


@pytest.mark.parametrize(
    ("method", "target", "signature"),
    [
        ("GET", "/", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
        (
            "GET",
            "/?Param2=value2&Param1=value1",
            "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
        ),
        ("POST", "/", "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"),
    ],
)
def test_the_check_accepts_the_aws_test_suite_vectors(method: str, target: str, signature: str) -> None:
    headers = {"Host": "example.amazonaws.com", "X-Amz-Date": SUITE_DATE}
    assert (
        verify(method, target, {**headers, "Authorization": _suite_authorization(signature)}, b"", SUITE)
        is None
    )
    wrong = signature[:-1] + ("0" if signature[-1] != "0" else "1")
    refused = verify(method, target, {**headers, "Authorization": _suite_authorization(wrong)}, b"", SUITE)
    assert refused is not None and refused.kind == "InvalidSignatureException"


def test_the_canonical_request_is_the_suites() -> None:
    """get-vanilla.creq, line by line."""
    headers = {"Host": "example.amazonaws.com", "X-Amz-Date": SUITE_DATE}
    request, auth = canonical_parts("GET", "/", headers, b"", SUITE, ["host", "x-amz-date"])
    assert auth.canonical_request(request).split("\n") == [
        "GET",
        "/",
        "",
        "host:example.amazonaws.com",
        "x-amz-date:20150830T123600Z",
        "",
        "host;x-amz-date",
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ]


# -- the client through the checking proxy ----------------------------------------------------


def test_the_catalog_works_through_a_signature_checking_endpoint(proxy: SigV4Proxy) -> None:
    con = iceduck.connect(catalog_uri=proxy.url, properties=SIGNED)
    cur = con.cursor()
    cur.execute("CREATE NAMESPACE s")
    cur.execute("CREATE TABLE s.t (id bigint, name varchar)")
    cur.execute("INSERT INTO s.t VALUES (1, 'a'), (2, 'b')")
    cur.execute("INSERT INTO s.t VALUES (3, 'c')")
    assert cur.execute("SELECT id, name FROM s.t ORDER BY id").fetchall() == [(1, "a"), (2, "b"), (3, "c")]
    cur.execute("DROP TABLE s.t")
    cur.execute("DROP NAMESPACE s")
    assert proxy.refused == []
    posts = [seen for seen in proxy.accepted if seen.method == "POST"]
    assert posts and all("x-amz-content-sha256" in seen.signed for seen in posts)
    assert all(seen.target.startswith("/v1/") for seen in proxy.accepted)


def _create(catalog: RestCatalog, ident: TableIdentifier) -> None:
    catalog.create_namespace(ident.namespace)
    schema = Schema((NestedField(1, "id", LongType(), True),))
    location = catalog.default_table_location(ident)
    catalog.create_table(ident, new_table_metadata(schema, UNPARTITIONED, UNSORTED, location, {}))


def _with_column(base: LoadedTable, name: str) -> TableMetadata:
    """``base`` with a column ``name`` (id 2): the commit asserts the base's schema."""
    builder = MetadataBuilder(base.metadata)
    fields = (*base.metadata.schema().fields, NestedField(2, name, LongType()))
    builder.set_current_schema(builder.add_schema(Schema(fields), last_column_id=2))
    return builder.build()


def test_escaped_paths_and_queries_are_signed_as_sent(tmp_path: Path) -> None:
    """An S3 Tables-like prefix (a table bucket ARN: ':', '/' and ' ' escaped in the path),
    a multi-part namespace (0x1F escaped) and paged lists (pageSize, pageToken in the
    query): the signature covers the escaped forms exactly as they go out."""
    warehouse = tmp_path / "served"
    warehouse.mkdir()
    arn = "arn:aws:s3tables:eu-west-3:123456789012:bucket/lake one"
    server = start_server(warehouse, prefix=arn)
    try:
        with SigV4Proxy(_upstream(server.url), KEYS) as proxy:
            cur = iceduck.connect(
                catalog_uri=proxy.url, properties={**SIGNED, "rest-page-size": "1"}
            ).cursor()
            cur.execute("CREATE NAMESPACE a")
            cur.execute("CREATE NAMESPACE a.b")
            cur.execute("CREATE TABLE a.b.t (id bigint)")
            cur.execute("CREATE TABLE a.b.u (id bigint)")
            cur.execute("INSERT INTO a.b.t VALUES (7)")
            assert sorted(row[-1] for row in cur.execute("SHOW TABLES IN a.b").fetchall()) == ["t", "u"]
            assert cur.execute("SELECT id FROM a.b.t").fetchall() == [(7,)]
            assert not proxy.refused
            targets = [seen.target for seen in proxy.accepted]
            escaped = "/v1/arn%3Aaws%3As3tables%3Aeu-west-3%3A123456789012%3Abucket%2Flake%20one/"
            assert all(t.startswith(escaped) for t in targets if t != "/v1/config")
            assert any("a%1Fb" in t for t in targets) and any("pageToken=" in t for t in targets)
    finally:
        server.stop()


def test_a_commit_conflict_comes_through_signed(proxy: SigV4Proxy) -> None:
    """Two schema changes on the same base: the second's 409 (its assert-current-schema-id
    fails) reaches the client as a conflict, not as a refused signature."""
    catalog = RestCatalog(proxy.url, "iceduck", SIGNED)
    ident = TableIdentifier(("c",), "t")
    _create(catalog, ident)
    base = catalog.load_table(ident)
    catalog.commit_table(base, _with_column(base, "a"))
    with pytest.raises(CommitConflictError):
        catalog.commit_table(base, _with_column(base, "b"))
    assert proxy.refused == []


@pytest.mark.parametrize(
    ("override", "kind"),
    [
        ({"rest.secret-access-key": "not-the-secret"}, "does not match"),
        ({"rest.signing-region": "us-east-1"}, "valid region"),
        ({"rest.signing-name": "s3tables"}, "correct service"),
        ({"rest.access-key-id": "AKIDUNKNOWN"}, "security token"),
    ],
)
def test_a_refused_signature_is_one_clear_error(
    proxy: SigV4Proxy, override: dict[str, str], kind: str
) -> None:
    with pytest.raises(UserError) as caught:
        iceduck.connect(catalog_uri=proxy.url, properties={**SIGNED, **override})
    message = str(caught.value)
    assert (
        "the SigV4 signature was refused: check rest.signing-region / rest.signing-name / the keys" in message
    )
    assert kind in message
    assert "not-the-secret" not in message and SECRET not in message
    assert proxy.refused


def test_a_refused_head_is_the_same_clear_error(proxy: SigV4Proxy) -> None:
    """An answer to HEAD (how the client asks whether a namespace exists) has no body: the
    x-amzn-ErrorType header alone says the signature was refused."""
    catalog = RestCatalog(proxy.url, "iceduck", SIGNED)
    assert catalog.config.supports("HEAD", "namespaces/{namespace}")
    proxy.keys = Keys(ACCESS_KEY, "another-secret", REGION, "glue")
    with pytest.raises(UserError, match=r"InvalidSignatureException.* the SigV4 signature was refused"):
        catalog.namespace_exists(("h",))
    assert proxy.refused


def test_the_signing_name_defaults_to_javas(server: CatalogServer) -> None:
    """Java's AwsProperties.REST_SIGNING_NAME_DEFAULT: execute-api (API Gateway); an endpoint
    of another service refuses it, one of execute-api accepts it."""
    unnamed = {k: v for k, v in SIGNED.items() if k != "rest.signing-name"}
    with SigV4Proxy(_upstream(server.url), Keys(ACCESS_KEY, SECRET, REGION, "execute-api")) as gateway:
        iceduck.connect(catalog_uri=gateway.url, properties=unnamed).cursor().execute("SHOW NAMESPACES")
        assert gateway.accepted and not gateway.refused
    with (
        SigV4Proxy(_upstream(server.url), KEYS) as glue,
        pytest.raises(UserError, match="correct service: 'glue'"),
    ):
        iceduck.connect(catalog_uri=glue.url, properties=unnamed)


def test_a_bearer_token_moves_to_original_authorization(tmp_path: Path) -> None:
    """Java's RESTSigV4Signer: "Relocate Authorization header as SigV4 takes precedence"; the
    relocated header is among the signed ones, and here a token-checking server behind the
    endpoint still gets it."""
    warehouse = tmp_path / "served"
    warehouse.mkdir()
    server = start_server(warehouse, token=TOKEN)
    try:
        with SigV4Proxy(_upstream(server.url), KEYS) as proxy:
            con = iceduck.connect(catalog_uri=proxy.url, properties={**SIGNED, "token": TOKEN})
            con.cursor().execute("CREATE NAMESPACE b")
            assert proxy.accepted and not proxy.refused
            for seen in proxy.accepted:
                assert seen.headers["Original-Authorization"] == f"Bearer {TOKEN}"
                assert seen.headers["Authorization"].startswith("AWS4-HMAC-SHA256 ")
                assert "original-authorization" in seen.signed
    finally:
        server.stop()


def test_a_retried_commit_is_signed_again_and_accepted(proxy: SigV4Proxy) -> None:
    """The commit's answer is lost between the endpoint and the client; the client sends it
    again with the same Idempotency-Key, signed (the key among the signed headers), and the
    endpoint accepts both."""
    with AnswerLosingProxy(*_upstream(proxy.url)) as losing:
        catalog = RestCatalog(losing.url, "iceduck", SIGNED)
        ident = TableIdentifier(("r",), "t")
        _create(catalog, ident)
        base = catalog.load_table(ident)
        builder = MetadataBuilder(base.metadata)
        builder.set_properties({"landed": "yes"})
        losing.lose_next_answer()
        committed = catalog.commit_table(base, builder.build())
        assert losing.lost.is_set()
    assert committed.metadata.properties["landed"] == "yes"
    commits = [seen for seen in proxy.accepted if seen.method == "POST" and seen.target.endswith("/tables/t")]
    assert len(commits) == 2 and not proxy.refused
    keys = {seen.headers["Idempotency-Key"] for seen in commits}
    assert len(keys) == 1
    assert all("idempotency-key" in seen.signed for seen in commits)


def test_credentials_come_from_the_environment_without_rest_keys(
    proxy: SigV4Proxy, server: CatalogServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No rest.* keys: botocore's default chain, here its environment variables, with the
    session token sent as X-Amz-Security-Token; the region from AWS_REGION."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session-t0ken")
    monkeypatch.setenv("AWS_REGION", REGION)
    keys = Keys(ACCESS_KEY, SECRET, REGION, "glue", session_token="session-t0ken")
    with SigV4Proxy(_upstream(server.url), keys) as checking:
        properties = {"rest.sigv4-enabled": "true", "rest.signing-name": "glue"}
        iceduck.connect(catalog_uri=checking.url, properties=properties).cursor().execute(
            "CREATE NAMESPACE e"
        )
        assert checking.accepted and not checking.refused
        assert all("x-amz-security-token" in seen.signed for seen in checking.accepted)


def test_no_credentials_anywhere_is_one_clear_error(proxy: SigV4Proxy) -> None:
    with pytest.raises(UserError, match=r"found no AWS credentials: set rest\.access-key-id") as caught:
        iceduck.connect(
            catalog_uri=proxy.url, properties={"rest.sigv4-enabled": "true", "client.region": REGION}
        )
    assert "AWS_ACCESS_KEY_ID" in str(caught.value)
    assert proxy.accepted == [] and proxy.refused == []


def test_no_region_anywhere_is_one_clear_error(proxy: SigV4Proxy) -> None:
    unregioned = {k: v for k, v in SIGNED.items() if k != "rest.signing-region"}
    with pytest.raises(UserError, match=r"needs the region to sign for: set rest\.signing-region"):
        iceduck.connect(catalog_uri=proxy.url, properties=unregioned)


def test_without_botocore_the_error_names_the_extra(
    proxy: SigV4Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """botocore absent (its modules unimportable, as in an install without the extra)."""
    for name in [m for m in sys.modules if m == "botocore" or m.startswith("botocore.")] + ["botocore"]:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(UserError, match=r"botocore, which is not installed: pip install 'iceduck\[aws\]'"):
        iceduck.connect(catalog_uri=proxy.url, properties=SIGNED)


def test_unsigned_requests_are_refused_by_the_endpoint(proxy: SigV4Proxy) -> None:
    """Without rest.sigv4-enabled nothing is signed: the endpoint refuses, and the error is
    the catalog's ordinary 403 (the client did not sign, so it does not blame a signature)."""
    with pytest.raises(UserError, match="HTTP 403") as caught:
        iceduck.connect(catalog_uri=proxy.url)
    assert "SigV4 signature was refused" not in str(caught.value)
    assert [r.kind for r in proxy.refused] == ["MissingAuthenticationTokenException"]


def test_the_token_endpoint_is_signed_too(tmp_path: Path) -> None:
    """OAuth2 client credentials behind a SigV4 endpoint: the token request (the catalog's
    own /v1/oauth/tokens) is signed like every other, and the token it gets rides along
    as Original-Authorization."""
    warehouse = tmp_path / "served"
    warehouse.mkdir()
    server = start_server(warehouse, auth=Authenticator(credentials={"etl": "s3cret-value"}))
    try:
        with SigV4Proxy(_upstream(server.url), KEYS) as proxy:
            con = iceduck.connect(catalog_uri=proxy.url, properties={**SIGNED, "credential": CREDENTIAL})
            con.cursor().execute("CREATE NAMESPACE o")
            assert [seen.method for seen in proxy.accepted if seen.target == "/v1/oauth/tokens"] == ["POST"]
            assert all(
                seen.headers["Original-Authorization"].startswith("Bearer ")
                for seen in proxy.accepted
                if seen.target != "/v1/oauth/tokens"
            )
            assert not proxy.refused
            with pytest.raises(UserError, match=r"token endpoint .* the SigV4 signature was refused"):
                iceduck.connect(
                    catalog_uri=proxy.url,
                    properties={**SIGNED, "credential": CREDENTIAL, "rest.secret-access-key": "wrong"},
                )
    finally:
        server.stop()


ROTATING = """import datetime, json, pathlib, sys
access_key, secret = pathlib.Path(sys.argv[1]).read_text().split()
expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=5)
print(json.dumps({"Version": 1, "AccessKeyId": access_key, "SecretAccessKey": secret,
                  "Expiration": expires.strftime("%Y-%m-%dT%H:%M:%SZ")}))
"""


def _rotating_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An AWS profile whose credential_process prints the keys in the returned file, expiring
    in five minutes (within botocore's refresh window, so every use fetches them again)."""
    keys_file = tmp_path / "current-keys"
    keys_file.write_text(f"{ACCESS_KEY} {SECRET}")
    script = tmp_path / "rotating.py"
    script.write_text(ROTATING)
    config = tmp_path / "aws-config"
    config.write_text(f"[default]\ncredential_process = {sys.executable} {script} {keys_file}\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    return keys_file


CHAIN = {"rest.sigv4-enabled": "true", "rest.signing-name": "glue", "client.region": REGION}


def test_expiring_credentials_are_read_again_for_each_request(
    proxy: SigV4Proxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Credentials from the chain that expire (here a profile's credential_process) are
    fetched again as they come due: the keys rotate between two statements, and the second
    is signed with the new ones."""
    keys_file = _rotating_profile(tmp_path, monkeypatch)
    cur = iceduck.connect(catalog_uri=proxy.url, properties=CHAIN).cursor()
    cur.execute("CREATE NAMESPACE k")
    keys_file.write_text(f"AKIDROTATED {SECRET}-rotated")
    proxy.keys = Keys("AKIDROTATED", f"{SECRET}-rotated", REGION, "glue")
    cur.execute("CREATE NAMESPACE k2")
    assert not proxy.refused
    assert proxy.accepted[-1].headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDROTATED/")


def test_a_failed_refresh_is_one_clear_error(
    proxy: SigV4Proxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys_file = _rotating_profile(tmp_path, monkeypatch)
    cur = iceduck.connect(catalog_uri=proxy.url, properties=CHAIN).cursor()
    keys_file.unlink()  # the credential process now fails
    with pytest.raises(UserError, match=r"AWS credentials for rest\.sigv4-enabled could not be refreshed"):
        cur.execute("CREATE NAMESPACE f")


def test_an_aws_endpoint_url_is_signed_with_its_host_and_scope() -> None:
    """An https endpoint on the default port: the Host header signed (and sent) is the bare
    host name, as AWS reads it, and the scope is the region and service named."""
    signer = SigV4Signer(SIGNED)
    transport = Transport("https://glue.eu-west-3.amazonaws.com/iceberg", SIGNED, signer.sign)
    body = b'{"namespace": ["a"]}'
    headers = transport._signed("POST", "/iceberg/v1/namespaces", {"Content-Type": "application/json"}, body)
    assert headers["Host"] == "glue.eu-west-3.amazonaws.com"
    assert f"/{REGION}/glue/aws4_request, SignedHeaders=" in headers["Authorization"]
    assert headers["X-Amz-Content-SHA256"] == hashlib.sha256(body).hexdigest()
    assert verify("POST", "/iceberg/v1/namespaces", headers, body, KEYS) is None


def test_queries_go_out_in_sigv4s_canonical_escapes(proxy: SigV4Proxy) -> None:
    """SigV4's canonical query escapes everything but A-Z a-z 0-9 - _ . ~ as %XY (a space is
    %20, never +): the query is sent in that form, so AWS's reading of it is the signed one."""
    signer = SigV4Signer(SIGNED)
    urls: list[str] = []

    def recording(method: str, url: str, headers: Mapping[str, str], body: bytes | None) -> dict[str, str]:
        urls.append(url)
        return signer.sign(method, url, headers, body)

    transport = Transport(proxy.url, SIGNED, recording)
    reply = transport.request("GET", "/v1/config", query={"warehouse": "a b/c+d:e~f"})
    assert urls == [f"{proxy.url}/v1/config?warehouse=a%20b%2Fc%2Bd%3Ae~f"]
    assert reply.status != 403 and not proxy.refused
