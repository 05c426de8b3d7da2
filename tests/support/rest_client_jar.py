"""The HTTP client classes Iceberg's ``RESTCatalog`` needs, for the test Spark's class path.

The Iceberg 1.10.2 Spark runtime jar of ``snowpark-connect-deps-iceberg`` (the one the
harness can install without Maven) leaves out Apache HttpClient 5, which the real runtime
bundles under ``org.apache.iceberg.shaded.org.apache.hc``: a REST catalog then fails at its
first use with ``NoClassDefFoundError: org/apache/iceberg/shaded/org/apache/hc/core5/http/Method``.
(With Maven access, ``spark.jars.packages`` gets the complete runtime and none of this is
needed.) This module rebuilds that package from Debian's HttpClient 5.2
(``libhttpclient5-java``, ``libhttpcore5-java``), relocated as the shadow plugin does
(:func:`iceduck.spark.shim.build_relocated_jar`), plus two classes of HttpClient 5.4's API
that Iceberg's ``HTTPClient`` calls and 5.2 lacks, compiled from ``java/hc_compat/`` with
``javac``. Everything else in Iceberg's REST client -- requests, JSON, error handling,
retries, auth -- runs as shipped.

:func:`rest_client_jar` returns the jar (built once into the test cache), or raises
:class:`RestClientJarMissing` naming what to install.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

from iceduck.spark.shim import Relocation, build_relocated_jar
from tests.support.spark_jars import cache_dir

HC = Relocation(
    b"org/apache/hc/",
    b"org/apache/iceberg/shaded/org/apache/hc/",
    b"org.apache.hc.",
    b"org.apache.iceberg.shaded.org.apache.hc.",
)
DEBIAN_JARS = tuple(
    Path("/usr/share/java") / n for n in ("httpclient5.jar", "httpcore5.jar", "httpcore5-h2.jar")
)
APT_HINT = "apt-get install -y libhttpclient5-java libhttpcore5-java"
SOURCES = Path(__file__).parent / "java" / "hc_compat"


class RestClientJarMissing(RuntimeError):
    """The jar cannot be built here: a Debian package or ``javac`` is missing."""


def rest_client_jar() -> Path:
    """The relocated HttpClient jar, built on first use into the test cache."""
    missing = [str(j) for j in DEBIAN_JARS if not j.is_file()]
    if missing:
        raise RestClientJarMissing(f"{', '.join(missing)} missing: {APT_HINT}")
    javac = shutil.which("javac")
    if javac is None:
        raise RestClientJarMissing("javac is missing: apt-get install -y openjdk-17-jdk-headless")
    sources = sorted(SOURCES.glob("*.java"))
    digest = hashlib.sha256()
    for path in [*DEBIAN_JARS, *sources]:
        digest.update(f"{path.name}:{path.stat().st_size}:".encode())
        if path.suffix == ".java":
            digest.update(path.read_bytes())
    target = cache_dir() / "jars" / f"iceberg-httpclient5-{digest.hexdigest()[:16]}.jar"
    if target.is_file():
        return target
    with tempfile.TemporaryDirectory(prefix="iceduck-hc-") as tmp:
        base = build_relocated_jar(DEBIAN_JARS, Path(tmp) / "base.jar", HC, "httpcomponents")
        classes = Path(tmp) / "classes"
        done = subprocess.run(
            [javac, "-nowarn", "--release", "11", "-cp", str(base), "-d", str(classes), *map(str, sources)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RestClientJarMissing(f"javac failed on {SOURCES}: {done.stderr.strip()}")
        build_relocated_jar(DEBIAN_JARS, target, HC, "httpcomponents", extra=[classes])
    return target
