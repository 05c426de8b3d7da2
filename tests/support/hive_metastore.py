"""A real Hive standalone metastore for the tests: resolved from Maven Central once per machine,
started once per run on a loopback port over embedded Derby in a fresh folder, stopped at the end.

The class path is ``tests/support/hms/pom.xml``'s (``mvn dependency:build-classpath``, as the
REST Compatibility Kit's: :func:`tests.support.maven.classpath`): Hive's
``hive-standalone-metastore`` 3.1.3 with Hadoop 3.3 in place of its own. The server is
``HiveMetaStore.main`` behind ``hms/MetastoreMain.java`` (run by ``java`` as a source file,
nothing is built), which first creates the transaction tables ``lock`` needs; DataNucleus
creates the rest (``datanucleus.schema.autoCreateAll``). Readiness is the port answering
a connection, polled.

:class:`MetastoreUnavailable` says why it cannot start (no Java, no Maven artifacts, a server
that exited), which the fixture turns into a skip naming the reason, or a failure under
``ICEDUCK_REQUIRE_MAVEN=1``.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.maven import MavenUnavailable, classpath

HOST = "127.0.0.1"
POM = Path(__file__).resolve().parent / "hms" / "pom.xml"
MAIN = Path(__file__).resolve().parent / "hms" / "MetastoreMain.java"
#: how long the first start may take (Derby schema creation on a slow, busy machine)
START_TIMEOUT_S = 240.0
VERSION = "3.1.3"


class MetastoreUnavailable(RuntimeError):
    """The metastore cannot be started here; the message says why."""


def metastore_classpath() -> list[Path]:
    """The metastore's jars (fetched by Maven the first time)."""
    from tests.support.spark_jars import cache_dir

    try:
        return classpath(POM, cache_dir())
    except MavenUnavailable as e:
        raise MetastoreUnavailable(str(e)) from e


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def answers(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1):
            return True
    except OSError:
        return False


@dataclass
class HiveMetastore:
    """A running metastore: its port, its folder (Derby database, warehouse, log)."""

    process: subprocess.Popen[bytes]
    root: Path
    port: int
    started_in_s: float

    @property
    def uri(self) -> str:
        return f"thrift://{HOST}:{self.port}"

    @property
    def warehouse(self) -> Path:
        return self.root / "warehouse"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.root, ignore_errors=True)


def start_metastore() -> HiveMetastore:
    """Start a metastore on a free loopback port; MetastoreUnavailable naming the cause."""
    java = shutil.which("java")
    if java is None:
        raise MetastoreUnavailable("no java on PATH (apt-get install -y openjdk-17-jdk-headless)")
    jars = metastore_classpath()
    root = Path(tempfile.mkdtemp(prefix="iceduck-hms-"))
    (root / "warehouse").mkdir()
    port = free_port()
    derby = f"jdbc:derby:;databaseName={root / 'derby'};create=true"
    settings = {
        "javax.jdo.option.ConnectionURL": derby,
        "metastore.schema.verification": "false",
        "datanucleus.schema.autoCreateAll": "true",
        "metastore.warehouse.dir": str(root / "warehouse"),
        # the defaults name classes of the full Hive (hive-exec), absent from the standalone jar
        "metastore.expression.proxy": "org.apache.hadoop.hive.metastore.DefaultPartitionExpressionProxy",
        "metastore.task.threads.always": "org.apache.hadoop.hive.metastore.events.EventCleanerTask",
        "metastore.thrift.bind.host": HOST,
    }
    command = [java, f"-Diceduck.derby.url={derby}", f"-Dderby.system.home={root}", "-cp"]
    command += [":".join(map(str, jars)), str(MAIN), "-p", str(port)]
    for key, value in settings.items():
        command += ["--hiveconf", f"{key}={value}"]
    log = (root / "metastore.log").open("wb")
    began = time.monotonic()
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    while not answers(port):
        if process.poll() is not None or time.monotonic() - began > START_TIMEOUT_S:
            process.kill()
            said = (root / "metastore.log").read_text(errors="replace").strip().splitlines()[-5:]
            shutil.rmtree(root, ignore_errors=True)
            raise MetastoreUnavailable(f"the Hive metastore did not start: {' / '.join(said)}")
        time.sleep(0.2)  # polling the port: the server says nothing else when it is ready
    return HiveMetastore(process, root, port, time.monotonic() - began)


@contextmanager
def client(uri: str) -> Iterator[Any]:
    """A raw Thrift client of the metastore at ``thrift://host:port`` (not iceduck's catalog)."""
    from hive_metastore.ThriftHiveMetastore import Client
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TSocket, TTransport

    host, _, port = uri.removeprefix("thrift://").partition(":")
    transport = TTransport.TBufferedTransport(TSocket.TSocket(host, int(port)))
    transport.open()
    try:
        yield Client(TBinaryProtocol.TBinaryProtocol(transport))
    finally:
        transport.close()


def metastore_table(uri: str, database: str, table: str) -> Any:
    """The metastore's ``Table`` object, as any Thrift client reads it."""
    with client(uri) as hms:
        return hms.get_table(database, table)


def empty_metastore(metastore: HiveMetastore) -> None:
    """Drop every database but ``default`` with its tables (not their files): a clean
    metastore for the next test of the run."""
    with client(metastore.uri) as hms:
        for name in hms.get_all_databases():
            if name != "default":
                hms.drop_database(name, False, True)
