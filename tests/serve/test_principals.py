"""The principals file: what it accepts, and every mistake refused with its line."""

from __future__ import annotations

import datetime
import hashlib

import pytest

from iceduck.errors import UserError
from iceduck.serve.principals import Securable, parse_policy

GOOD = """\
[principals.etl]
client-id = "etl"
client-secret-sha256 = "HASH"
roles = ["engineer"]

[principals.notebook]
token = "nb-token"
roles = ["analyst"]
expires = 2027-01-01T00:00:00Z

[roles.analyst]
grants = [
  { namespace = "sales", privileges = ["read"] },
  { table = ["a.b", "t"], privileges = ["write"] },
]

[roles.engineer]
grants = [{ catalog = true, privileges = ["admin"] }]
""".replace("HASH", hashlib.sha256(b"etl-secret").hexdigest())


def _parse(text: str, existing: tuple[tuple[str, ...], ...] = (("sales",), ("a.b",))):
    return parse_policy(text, "team.toml", lambda ns: ns in existing)


def test_a_good_file() -> None:
    policy = _parse(GOOD)
    etl, notebook = policy.principals["etl"], policy.principals["notebook"]
    assert policy.by_client("etl", "etl-secret") == etl
    assert policy.by_client("etl", "wrong") is None and policy.by_client("other", "etl-secret") is None
    assert policy.by_token("nb-token") == notebook and policy.by_token("nb-token ") is None
    assert notebook.expires == datetime.datetime(2027, 1, 1, tzinfo=datetime.UTC)
    analyst = policy.grants_of(notebook)
    assert analyst[0].on == Securable(("sales",)) and analyst[0].privileges == {"read"}
    assert analyst[1].on == Securable(("a.b",), "t") and analyst[1].privileges == {"write", "read"}
    assert policy.grants_of(etl)[0].privileges == {"read", "write", "create", "drop", "admin"}
    assert "nb-token" not in repr(policy)  # only digests are kept


@pytest.mark.parametrize(
    ("change", "line", "reason"),
    [
        (('privileges = ["read"]', 'privileges = ["reed"]'), 13, "unknown privilege 'reed'"),
        (
            ('namespace = "sales"', 'namespace = "salse"'),
            13,
            "grant on namespace salse, which does not exist",
        ),
        (('roles = ["analyst"]', 'roles = ["analysts"]'), 8, "role 'analysts' is not defined"),
        (('token = "nb-token"', 'tokn = "nb-token"'), 7, "unknown key 'tokn'"),
        (("expires = 2027-01-01T00:00:00Z", "expires = 2027-01-01T00:00:00"), 9, "expires must be a date"),
        (('{ catalog = true, privileges = ["admin"] }', '{ privileges = ["admin"] }'), 18, "exactly one of"),
        (('client-id = "etl"\n', ""), 2, "client-id and client-secret go together"),
        (('token = "nb-token"', 'token = "nb-token"\ntoken-sha256 = "' + "0" * 64 + '"'), 7, "not both"),
        (('table = ["a.b", "t"]', 'table = "t"'), 14, "is not a valid table name"),
    ],
)
def test_mistakes_name_their_line(change: tuple[str, str], line: int, reason: str) -> None:
    text = GOOD.replace(*change)
    assert text != GOOD
    with pytest.raises(UserError) as e:
        _parse(text)
    assert f"principals file team.toml, line {line}: " in str(e.value)
    assert reason in str(e.value)


def test_a_duplicate_principal_is_refused_with_its_line() -> None:
    with pytest.raises(UserError, match=r"team.toml is not valid TOML: .*line 11"):
        _parse(GOOD.replace("[roles.analyst]", '[principals.etl]\ntoken = "x"\n[roles.analyst]'))


def test_two_principals_may_not_share_a_token_or_client() -> None:
    text = GOOD + '\n[principals.copy]\ntoken = "nb-token"\nroles = []\n'
    with pytest.raises(UserError, match="line 21: principals 'notebook' and 'copy' have the same token"):
        _parse(text)


def test_no_secret_in_any_refusal() -> None:
    text = GOOD.replace('roles = ["analyst"]', 'roles = ["nope"]')
    with pytest.raises(UserError) as e:
        _parse(text)
    assert "nb-token" not in str(e.value)


def test_a_file_that_is_not_toml() -> None:
    with pytest.raises(UserError, match=r"not valid TOML: .*line 2"):
        _parse('[principals.a]\ntoken = "unterminated\n')
