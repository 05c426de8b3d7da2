"""Jars from Maven Central, as users get them: ``mvn dependency:get`` into the local Maven
repository, once per machine; offline afterwards.

The repository is Maven's own (``~/.m2/repository``, or ``$ICEDUCK_MAVEN_REPO``), outside
this repository and never committed, so a developer's Maven cache serves the tests and the
tests' downloads serve the developer. :func:`jar` returns the path of an artifact's jar,
asking Maven only when it is not there yet; ``.ci/run`` fetches every artifact the suite
uses up front (``python3 -m tests.support.maven``), so no test downloads.

An artifact that cannot be had (no ``mvn``, no network on first use) is a
:class:`MavenUnavailable` naming the artifact and Maven's last words: tests that need it
fail with that message, or skip where the README says the artifact is optional.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: the Iceberg Spark runtimes whose tables the suite reads and writes: the last patch of
#: every minor release since 1.4 (tests/interop/test_old_runtimes.py); 1.7.2 has no Spark 3.5
#: runtime on Maven Central, so 1.7.1 stands for 1.7
ICEBERG_RUNTIMES = ("1.4.3", "1.5.2", "1.6.1", "1.7.1", "1.8.1", "1.9.2", "1.10.2", "1.11.0", "1.12.0")
SPARK_RUNTIME = "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12"
#: the AWS SDK for Spark's ``S3FileIO`` (whose classes the runtime holds); 1.10.2 has no
#: bundle on Maven Central, and the bundle holds only the SDK, so 1.10.1's serves 1.10.2
AWS_BUNDLE = "org.apache.iceberg:iceberg-aws-bundle:1.10.1"
#: Paimon's Spark connector; Maven Central answers 404 for every 1.x paimon-spark-3.5 here
PAIMON_SPARK = "org.apache.paimon:paimon-spark-3.5:0.9.0"


class MavenUnavailable(RuntimeError):
    """The artifact is not in the local repository and Maven could not fetch it."""


@dataclass(frozen=True)
class Artifact:
    group: str
    name: str
    version: str
    classifier: str | None = None

    @classmethod
    def parse(cls, coordinate: str) -> Artifact:
        """``group:artifact:version`` or ``group:artifact:version:classifier``."""
        parts = coordinate.split(":")
        if len(parts) not in (3, 4) or not all(parts):
            raise ValueError(f"a Maven coordinate is group:artifact:version[:classifier], not {coordinate!r}")
        return cls(*parts)

    @property
    def coordinate(self) -> str:
        """As ``dependency:get`` takes it (``group:artifact:version[:packaging:classifier]``)."""
        base = f"{self.group}:{self.name}:{self.version}"
        return f"{base}:jar:{self.classifier}" if self.classifier else base

    def path(self, repository: Path) -> Path:
        """Where Maven keeps the jar in ``repository``."""
        suffix = f"-{self.classifier}" if self.classifier else ""
        folder = repository.joinpath(*self.group.split("."), self.name, self.version)
        return folder / f"{self.name}-{self.version}{suffix}.jar"


def repository() -> Path:
    """The local Maven repository: ``$ICEDUCK_MAVEN_REPO``, else Maven's default."""
    configured = os.environ.get("ICEDUCK_MAVEN_REPO")
    return Path(configured) if configured else Path.home() / ".m2" / "repository"


def jar(coordinate: str) -> Path:
    """The jar of ``coordinate``, fetched by Maven (without its dependencies) the first time."""
    artifact = Artifact.parse(coordinate)
    local = artifact.path(repository())
    if local.is_file():
        return local
    mvn = shutil.which("mvn")
    if mvn is None:
        raise MavenUnavailable(f"{coordinate} is not in {repository()} and there is no mvn to fetch it")
    done = subprocess.run(
        [
            mvn,
            "-B",
            "-q",
            "dependency:get",
            f"-Dartifact={artifact.coordinate}",
            "-Dtransitive=false",
            f"-Dmaven.repo.local={repository()}",
        ],
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),  # no project's pom.xml in the way
    )
    if done.returncode != 0 or not local.is_file():
        said = (done.stdout + done.stderr).strip().splitlines()[-3:]
        raise MavenUnavailable(f"mvn could not fetch {coordinate}: {' / '.join(said) or done.returncode}")
    return local


def iceberg_runtime(version: str) -> Path:
    """``iceberg-spark-runtime-3.5_2.12`` at ``version``."""
    return jar(f"{SPARK_RUNTIME}:{version}")


RCK_POM = Path(__file__).resolve().parent / "rck" / "pom.xml"
#: the Hive standalone metastore's class path (tests/support/hive_metastore.py)
HMS_POM = Path(__file__).resolve().parent / "hms" / "pom.xml"


def classpath(pom: Path, cache: Path) -> list[Path]:
    """The jars of ``pom``'s dependencies and theirs, in Maven's local repository (fetched the
    first time), as ``mvn dependency:build-classpath`` lists them; the list is kept in
    ``cache`` by the pom's digest, so later runs ask Maven nothing."""
    digest = hashlib.sha256(pom.read_bytes()).hexdigest()[:16]
    listing = cache / f"classpath-{pom.parent.name}-{digest}.txt"
    if not listing.is_file():
        mvn = shutil.which("mvn")
        if mvn is None:
            raise MavenUnavailable(f"no mvn to resolve the class path of {pom}")
        cache.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [
                mvn,
                "-B",
                "-q",
                "-f",
                str(pom),
                "dependency:build-classpath",
                f"-Dmdep.outputFile={listing}",
                f"-Dmaven.repo.local={repository()}",
            ],
            capture_output=True,
            text=True,
            cwd=tempfile.gettempdir(),
        )
        if done.returncode != 0 or not listing.is_file():
            said = (done.stdout + done.stderr).strip().splitlines()[-3:]
            raise MavenUnavailable(f"mvn could not resolve {pom}: {' / '.join(said) or done.returncode}")
    jars = [Path(p) for p in listing.read_text().strip().split(os.pathsep) if p]
    missing = [j for j in jars if not j.is_file()]
    if missing:  # the local repository was emptied since: resolve again
        listing.unlink()
        return classpath(pom, cache)
    return jars


def every_artifact() -> list[str]:
    """Every coordinate the suite resolves (what ``.ci/run`` fetches before the tests)."""
    return [*(f"{SPARK_RUNTIME}:{v}" for v in ICEBERG_RUNTIMES), AWS_BUNDLE, PAIMON_SPARK]


def main() -> int:
    """Fetch every artifact the suite uses (and the class paths of the REST Compatibility Kit
    and the Hive metastore);
    print where each is."""
    from tests.support.spark_jars import cache_dir

    failed = 0
    for coordinate in every_artifact():
        try:
            print(f"{coordinate}: {jar(coordinate)}")
        except MavenUnavailable as e:
            print(e, file=sys.stderr)
            failed += 1
    for what, pom in (("REST Compatibility Kit", RCK_POM), ("Hive standalone metastore", HMS_POM)):
        try:
            print(f"{what}: {len(classpath(pom, cache_dir()))} jars")
        except MavenUnavailable as e:
            print(e, file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
