"""iceduck's own routes, beside the REST spec's: ``POST /v1/iceduck/principals/reload``.

Reading the principals file again is what ``SIGHUP`` does on the server's host; this route
lets a catalog ``admin`` do it from anywhere (Polaris manages grants through its own
management API; here the file stays the one place they are written). Not listed in
``GET /v1/config``: no Iceberg client calls it.
"""

from __future__ import annotations

from iceduck.errors import UserError
from iceduck.serve.context import ServeContext
from iceduck.serve.request import Request, Response


def reload_principals(ctx: ServeContext, req: Request) -> Response:
    """200 with the principals and roles now in force, or a 400 naming the file's mistake
    (the previous grants still serve)."""
    principals = ctx.auth.principals
    if principals is None:
        raise UserError("this server has no principals file to reload (see iceduck serve --principals)")
    policy = principals.reload()
    return Response(200, {"principals": sorted(policy.principals), "roles": sorted(policy.roles)})
