"""``iceduck serve [WAREHOUSE] --host 127.0.0.1 --port 8181 [--catalog URI] [--token TOKEN]
[--credential ID:SECRET] [-p KEY=VALUE]... [--vend-credentials] [--storage-credentials FILE]
[--tls-cert FILE --tls-key FILE [--tls-key-password-file FILE]]``.

Opens the warehouse's catalog as the shell would (``<warehouse>/catalog.db`` by default, or
the catalog a URI names: :func:`iceduck.catalog.open.open_catalog`, with the ``-p``
properties configuring its object store) and serves it until interrupted. Loopback by
default: serving another interface is a choice to make on purpose, with ``--token`` (every
request then needs ``Authorization: Bearer <token>``) and/or ``--credential`` (OAuth2
clients get expiring tokens from ``/v1/oauth/tokens``: :mod:`iceduck.serve.oauth`), over
TLS with ``--tls-cert``/``--tls-key`` (:mod:`iceduck.serve.tls`: the URL is then https). A
warehouse folder really named ``serve`` is still reachable as ``iceduck ./serve``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from iceduck.catalog.base import Catalog
from iceduck.catalog.open import is_remote, open_catalog, warehouse_location
from iceduck.errors import IceduckError, UserError
from iceduck.serve.audit import AuditTrail
from iceduck.serve.auth import DEFAULT_TTL_SECONDS, Authenticator, parse_credential
from iceduck.serve.context import ServeContext
from iceduck.serve.principals import PrincipalsFile
from iceduck.serve.server import CatalogServer
from iceduck.serve.storage_credentials import CredentialsFile
from iceduck.serve.tls import configured_context

DEFAULT_PORT = 8181


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"a port is 0-65535, not {text!r}")
    return int(text)


def _ttl(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"a token lifetime is a positive number of seconds, not {text!r}")
    return int(text)


def _credential(text: str) -> tuple[str, str]:
    try:
        return parse_credential(text)
    except IceduckError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _property(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise argparse.ArgumentTypeError(
            f"a property is KEY=VALUE (s3.endpoint=http://host:9000), not {text!r}"
        )
    return key.strip(), value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="iceduck serve", description="Serve a warehouse as an Iceberg REST catalog."
    )
    p.add_argument(
        "warehouse", nargs="?", default="warehouse", help="warehouse location (default ./warehouse)"
    )
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    p.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free)"
    )
    p.add_argument("--catalog", metavar="URI", help="catalog URI (default <warehouse>/catalog.db)")
    p.add_argument("--catalog-name", default="iceduck", metavar="NAME", help="catalog name (default iceduck)")
    p.add_argument("--prefix", help="the REST {prefix} path segment clients are told to use (default none)")
    p.add_argument(
        "--token",
        default=os.environ.get("ICEDUCK_SERVE_TOKEN"),
        help="require 'Authorization: Bearer TOKEN' on every request (default $ICEDUCK_SERVE_TOKEN)",
    )
    credential = os.environ.get("ICEDUCK_SERVE_CREDENTIAL")
    p.add_argument(
        "--credential",
        action="append",
        type=_credential,
        metavar="CLIENT_ID:SECRET",
        help="an OAuth2 client that may get tokens from /v1/oauth/tokens; repeat for more "
        "(default $ICEDUCK_SERVE_CREDENTIAL)",
    )
    p.set_defaults(env_credential=credential)
    p.add_argument(
        "--token-ttl",
        type=_ttl,
        default=DEFAULT_TTL_SECONDS,
        metavar="SECONDS",
        help=f"lifetime of issued tokens (default {DEFAULT_TTL_SECONDS}); a restart forgets them",
    )
    p.add_argument(
        "--principals",
        type=Path,
        metavar="FILE",
        help="named principals (tokens or OAuth2 clients), their roles and grants (TOML); "
        "read again on SIGHUP or POST /v1/iceduck/principals/reload; replaces --token and --credential",
    )
    p.add_argument(
        "--audit",
        metavar="FILE",
        help="append one JSON line per mutation and per refusal to FILE ('-': stdout)",
    )
    p.add_argument(
        "-p",
        "--property",
        action="append",
        type=_property,
        default=[],
        metavar="KEY=VALUE",
        help="a catalog or object-store property (s3.endpoint=..., s3.access-key-id=...); repeat for more",
    )
    p.add_argument(
        "--vend-credentials",
        action="store_true",
        help="hand the object-store properties (s3.*, gcs.*, adls.*, client.*) to clients that ask "
        "with X-Iceberg-Access-Delegation: vended-credentials",
    )
    p.add_argument(
        "--storage-credentials",
        type=Path,
        metavar="FILE",
        help="vend each table the credentials of this TOML file for its location prefix "
        "([[storage-credentials]] prefix = ..., config = {...}); read again when it changes",
    )
    p.add_argument("--tls-cert", type=Path, metavar="FILE", help="serve HTTPS with this PEM certificate")
    p.add_argument("--tls-key", type=Path, metavar="FILE", help="the PEM private key of --tls-cert")
    p.add_argument(
        "--tls-key-password-file",
        type=Path,
        metavar="FILE",
        help="a file whose first line is the passphrase of --tls-key, if it has one",
    )
    return p


def build_server(args: argparse.Namespace) -> CatalogServer:
    """The server the arguments describe, bound but not yet serving."""
    # a bad certificate or key is refused before anything is opened or created
    tls = configured_context(args.tls_cert, args.tls_key, args.tls_key_password_file)
    location = warehouse_location(args.warehouse)
    if not is_remote(location) and args.catalog is None:
        Path(location).mkdir(parents=True, exist_ok=True)
    properties = dict(args.property)
    catalog = open_catalog(location, args.catalog_name, catalog_uri=args.catalog, properties=properties)
    auth = _authenticator(args, catalog)
    context = ServeContext(
        catalog,
        location,
        prefix=args.prefix or None,
        catalog_name=args.catalog_name,
        auth=auth,
        storage=properties,
        vend_credentials=args.vend_credentials,
        storage_credentials=_credentials_file(args.storage_credentials),
        audit=AuditTrail.open(args.audit) if args.audit else None,
    )
    return CatalogServer((args.host, args.port), context, tls=tls)


def _authenticator(args: argparse.Namespace, catalog: Catalog) -> Authenticator:
    """Who may call: the principals file's principals, or ``--token``/``--credential``."""
    credentials = args.credential
    if credentials is None and args.env_credential:
        credentials = [parse_credential(args.env_credential)]
    if args.principals is None:
        return Authenticator(
            token=args.token or None, credentials=dict(credentials or []), ttl=args.token_ttl
        )
    if args.token or credentials:
        raise UserError(
            "--principals names every principal: give tokens and client credentials in the file, "
            "not with --token/--credential (or $ICEDUCK_SERVE_TOKEN/$ICEDUCK_SERVE_CREDENTIAL)"
        )
    principals = PrincipalsFile(args.principals.expanduser().absolute(), catalog.namespace_exists)
    return Authenticator(principals=principals, ttl=args.token_ttl)


def _credentials_file(path: Path | None) -> CredentialsFile | None:
    """The ``--storage-credentials`` file, read once now so a bad one fails at start."""
    if path is None:
        return None
    credentials = CredentialsFile(path.expanduser().absolute())
    credentials.entries()
    return credentials


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    try:
        server = build_server(args)
    except (IceduckError, OSError) as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    print(f"Serving {args.warehouse} as an Iceberg REST catalog at {server.url}", file=sys.stderr)
    _reload_on_hangup(server)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def _reload_on_hangup(server: CatalogServer) -> None:
    """``kill -HUP``: read the principals file again (a bad file keeps the grants in force)."""
    principals = server.context.auth.principals
    if principals is None or not hasattr(signal, "SIGHUP"):
        return

    def reload(signum: int, frame: object) -> None:
        try:
            policy = principals.reload()
        except IceduckError as e:
            print(f"Principals not reloaded, the previous grants still serve: {e}", file=sys.stderr)
            return
        print(
            f"Principals reloaded: {len(policy.principals)} principals, {len(policy.roles)} roles",
            file=sys.stderr,
        )

    signal.signal(signal.SIGHUP, reload)
