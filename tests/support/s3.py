"""A real S3 for the tests: moto's server on loopback, one per test run.

moto (``moto[server]``) implements the S3 REST API in process; pyarrow's S3 client (and
DuckDB's httpfs, in bench/.venv) talk to it over HTTP exactly as to AWS. Tests use it
through the ``s3_server`` and ``s3_bucket`` fixtures of tests/conftest.py:

* ``s3_server`` -- ``S3Server(endpoint_url, properties)``: the session's server and the
  Iceberg catalog properties that reach it (``s3.endpoint``, ``s3.access-key-id``,
  ``s3.secret-access-key``, ``s3.path-style-access``, ``client.region``);
* ``s3_bucket`` -- a fresh bucket per test module (its name).

When moto is not installed the fixtures skip, naming the reason.

:func:`start_auth_server` starts a second moto server in a subprocess with credential
checking on (moto checks signatures only when ``INITIAL_NO_AUTH_ACTION_COUNT`` is set in
its environment before it starts, which a server in this process cannot do), for tests
of wrong credentials.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

#: moto's default credentials, accepted by a server without authentication
ACCESS_KEY = "testing"
SECRET_KEY = "testing"
REGION = "us-east-1"


@dataclass(frozen=True)
class S3Server:
    #: ``http://127.0.0.1:PORT``
    endpoint_url: str
    #: Iceberg catalog properties reaching the server (S3FileIOProperties names)
    properties: dict[str, str] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Any]:  # ``endpoint_url, properties = s3_server``
        return iter((self.endpoint_url, self.properties))


def properties_for(
    endpoint_url: str, access_key: str = ACCESS_KEY, secret_key: str = SECRET_KEY
) -> dict[str, str]:
    """The catalog properties of an S3 endpoint, named as Iceberg Java's S3FileIOProperties."""
    return {
        "s3.endpoint": endpoint_url,
        "s3.access-key-id": access_key,
        "s3.secret-access-key": secret_key,
        "s3.path-style-access": "true",
        "client.region": REGION,
    }


def moto_missing() -> str | None:
    """Why moto's server cannot run here, or None."""
    try:
        import moto.server  # noqa: F401
    except ImportError as e:
        return f"moto[server] is not installed ({e}): pip install 'moto[server]>=5.2.5'"
    return None


@contextmanager
def moto_server() -> Iterator[S3Server]:
    """moto's threaded server on a free loopback port, for the duration of the block."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # not a line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        yield S3Server(endpoint, properties_for(endpoint))
    finally:
        server.stop()


def create_bucket(server: S3Server, prefix: str = "iceduck") -> str:
    """A new bucket with a unique name on ``server``."""
    name = f"{prefix}-{uuid.uuid4().hex[:12]}"
    client(server.endpoint_url).create_bucket(Bucket=name)
    return name


def client(endpoint_url: str, access_key: str = ACCESS_KEY, secret_key: str = SECRET_KEY) -> Any:
    """A boto3 S3 client of the endpoint (to set up and inspect buckets from tests)."""
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=endpoint_url,
        aws_access_key_id=access_key,
        aws_secret_access_key=secret_key,
        region_name=REGION,
    )


def list_keys(endpoint_url: str, bucket: str, prefix: str = "") -> list[str]:
    """Every key of ``bucket`` under ``prefix``."""
    paginator = client(endpoint_url).get_paginator("list_objects_v2")
    keys: list[str] = []
    for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
        keys.extend(item["Key"] for item in page.get("Contents", ()))
    return keys


def free_port() -> int:
    """A loopback port nothing listens on (bound then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: the bucket :func:`auth_server` creates
AUTH_BUCKET = "authbucket"

_POLICY = '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}'


@contextmanager
def auth_server() -> Iterator[S3Server]:
    """A moto server in a subprocess that checks credentials, with bucket :data:`AUTH_BUCKET`.

    moto lets the first ``INITIAL_NO_AUTH_ACTION_COUNT`` requests through unsigned, then
    checks every request's signature against its IAM users: the first four requests create
    a user, its access key (the server's ``properties``), an allow-all policy and the bucket.
    Any other key is then refused as AWS refuses an unknown one.
    """
    port = free_port()
    env = dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="4")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from moto.server import main; main(sys.argv[1:])",
            "-H",
            "127.0.0.1",
            "-p",
            str(port),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    err = proc.stderr.read().decode() if proc.stderr else ""
                    raise RuntimeError(f"moto auth server did not start: {err[-2000:]}") from None
                time.sleep(0.1)
        endpoint = f"http://127.0.0.1:{port}"
        import boto3

        iam = boto3.client(
            "iam",
            endpoint_url=endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name=REGION,
        )
        iam.create_user(UserName="iceduck")
        key = iam.create_access_key(UserName="iceduck")["AccessKey"]
        iam.put_user_policy(UserName="iceduck", PolicyName="all", PolicyDocument=_POLICY)
        access, secret = key["AccessKeyId"], key["SecretAccessKey"]
        client(endpoint, access, secret).create_bucket(Bucket=AUTH_BUCKET)
        yield S3Server(endpoint, properties_for(endpoint, access, secret))
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def admin(server: S3Server, service: str) -> Any:
    """A boto3 client of ``service`` on ``server`` with the server's own (allow-all) key."""
    import boto3

    props = server.properties
    return boto3.client(
        service,
        endpoint_url=server.endpoint_url,
        aws_access_key_id=props["s3.access-key-id"],
        aws_secret_access_key=props["s3.secret-access-key"],
        region_name=REGION,
    )


def bucket_user(server: S3Server, bucket: str) -> tuple[str, str]:
    """On an :func:`auth_server`: a new IAM user allowed ``bucket`` and nothing else (moto
    checks the policy of every request), and its access key and secret."""
    iam = admin(server, "iam")
    name = f"u-{uuid.uuid4().hex[:8]}"
    iam.create_user(UserName=name)
    resources = [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]
    policy = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": resources}],
    }
    iam.put_user_policy(UserName=name, PolicyName="one-bucket", PolicyDocument=json.dumps(policy))
    return new_key(server, name)


def new_key(server: S3Server, user: str) -> tuple[str, str]:
    """A new access key of IAM ``user`` (a rotation's second key)."""
    key = admin(server, "iam").create_access_key(UserName=user)["AccessKey"]
    return key["AccessKeyId"], key["SecretAccessKey"]


def user_of(server: S3Server, access_key: str) -> str:
    """The IAM user an access key belongs to."""
    return str(admin(server, "iam").get_access_key_last_used(AccessKeyId=access_key)["UserName"])


def bucket_of(location: str) -> str:
    """The bucket of an ``s3://bucket/key`` location."""
    match = re.match(r"^s3[an]?://([^/]+)", location)
    if match is None:
        raise ValueError(f"not an s3 location: {location}")
    return match.group(1)


def age_objects(bucket: str, days: float = 10) -> None:
    """Set the last-modified time of every object of ``bucket`` on the in-process moto
    server ``days`` back (S3 has no utime): orphan removal's age guard then lets them go."""
    from datetime import timedelta

    from moto.s3.models import s3_backends

    for account in s3_backends.values():
        for backend in account.values():
            found = backend.buckets.get(bucket)
            if found is None:
                continue
            for key in found.keys.values():
                key.last_modified = key.last_modified - timedelta(days=days)


def loopback_name() -> str | None:
    """A name of this machine resolving to loopback whose subdomains do not resolve (not
    "localhost": curl resolves every ``*.localhost`` itself)."""
    name = socket.gethostname()
    try:
        if not socket.gethostbyname(name).startswith("127."):
            return None
    except OSError:
        return None
    try:
        socket.gethostbyname(f"bucket.{name}")
    except OSError:
        return name
    return None
