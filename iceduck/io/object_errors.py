"""What an object store's refusal means: pyarrow's ``OSError`` -> one iceduck error.

pyarrow's S3 client reports failures as ``OSError`` texts carrying the AWS SDK's error
code and curl's (``When reading information for key 'k' in bucket 'b': AWS Error
ACCESS_DENIED during HeadObject operation: No response body.``, ``AWS Error
NETWORK_CONNECTION ... curlCode: 7, Could not connect to server``). A user needs the
location and what to do, not the SDK's phrasing (kept in short, in parentheses, where it
says which answer the store gave): :func:`object_error` maps the known
codes to a sentence naming the property to check, and keeps a short form of anything else.
A missing object is :class:`~iceduck.io.fileio.MissingFileError`'s business (the caller
knows whether a missing file is the table's problem); a missing bucket is
:class:`~iceduck.errors.NotFoundError`.
"""

from __future__ import annotations

import re

from iceduck.errors import IceduckError, NotFoundError, StorageError

#: (pattern in pyarrow's message, what it means and what to do)
_CAUSES: tuple[tuple[str, str], ...] = (
    (r"NO_SUCH_BUCKET|NoSuchBucket|The specified bucket does not exist", ""),  # NotFoundError below
    (
        r"INVALID_ACCESS_KEY_ID|InvalidAccessKeyId|access key id you provided does not exist",
        "the access key is not known to the store: check s3.access-key-id (or AWS_ACCESS_KEY_ID)",
    ),
    (
        r"SIGNATURE_DOES_NOT_MATCH|SignatureDoesNotMatch",
        "the request signature does not match: check s3.secret-access-key (or AWS_SECRET_ACCESS_KEY)",
    ),
    (
        r"ACCESS_DENIED|AccessDenied|Access Denied|HTTP status 403|Forbidden",
        "access denied: check the credentials (s3.access-key-id, s3.secret-access-key, "
        "s3.session-token) and that they may use this bucket",
    ),
    (
        r"EXPIRED_TOKEN|ExpiredToken|token.*expired",
        "the session token has expired: renew s3.session-token",
    ),
    (
        r"curlCode: 6|Could(?:n't| not) resolve host",
        "the endpoint's host name does not resolve: check s3.endpoint; with virtual-hosted "
        "addressing (s3.path-style-access=false) the bucket is part of the host name, so an "
        "endpoint that takes path-style requests (MinIO, a local server) needs s3.path-style-access=true",
    ),
    # a request that reached the store and failed on every attempt the client's retry
    # strategy made (3 by default): the store is failing or throttling, not misconfigured
    (
        r"INTERNAL_FAILURE|InternalError|SERVICE_UNAVAILABLE|ServiceUnavailable|SLOW_DOWN|SlowDown"
        r"|HTTP status 5[0-9][0-9]|HTTP response code: 5[0-9][0-9]",
        "the store answered with a server error on every attempt ({short}): it is failing or "
        "throttling requests; run the statement again later (s3.retry.num-retries sets how often "
        "a request is retried)",
    ),
    (
        r"curlCode: (?:18|52|56)|Transferred a partial file|Empty reply from server|Recv failure",
        "the store's answer was cut off on every attempt (the connection closed mid-response: "
        "{short}); nothing of it was used: check the network and the store's health",
    ),
    (
        r"Operation too slow|Operation timed out",
        "the store did not answer within s3.request-timeout on every attempt ({short}): it is "
        "overloaded or the network is slow; raise s3.request-timeout or run the statement again later",
    ),
    (
        r"NETWORK_CONNECTION|curlCode: (?:7|28|35|52|56)|Could not connect|Connection refused|timed out",
        "the store cannot be reached: check the endpoint (s3.endpoint, gcs.service.host, "
        "adls.blob-storage-authority) and the network",
    ),
    (
        r"PERMANENT_REDIRECT|PermanentRedirect|AuthorizationHeaderMalformed|wrong region",
        "the bucket is in another region: set client.region to the bucket's region",
    ),
)


def object_error(error: OSError, location: str, bucket: str = "") -> IceduckError:
    """The iceduck error for pyarrow's ``error`` on ``location`` (of ``bucket``)."""
    message = str(error)
    for pattern, cause in _CAUSES:
        if re.search(pattern, message, re.IGNORECASE):
            if not cause:
                return NotFoundError(
                    f"{location}: bucket {bucket!r} does not exist: create it or fix the location"
                )
            return StorageError(cause.replace("{short}", short(message)), location)
    return StorageError(f"the object store refused: {short(message)}", location)


def short(message: str) -> str:
    """pyarrow's message without its request id and the SDK's preamble."""
    message = re.sub(r"\s*\(Request ID: [^)]*\)", "", message)
    message = re.sub(r"^When [^:]*: ", "", message)
    message = message.replace("AWS Error ", "")
    return message.strip()
