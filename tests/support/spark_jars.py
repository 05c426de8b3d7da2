"""The JVM classpath of the reference Spark: Iceberg runtime, a Jackson shim and SQLite JDBC.

The reference implementation iceduck must stay byte-compatible with is Spark 3.5 plus the
Iceberg 1.10.2 Spark runtime. Its jar ships on PyPI inside ``snowpark-connect-deps-iceberg``,
but that copy lacks the relocated Jackson classes
(``org.apache.iceberg.shaded.com.fasterxml.jackson.*``) that the real runtime bundles.
Iceberg reads and writes every metadata JSON file through Jackson, so without them nothing
works. We rebuild the missing package from the plain Jackson 2.18 jars shipped in
``snowpark-connect-deps-2`` by doing what the Gradle shadow plugin's ``relocate`` does:
rewrite the names inside each class file's constant pool and move the entries.

The shim is built once per machine and cached (``ICEDUCK_TEST_CACHE``, default
``<repo>/.cache/``), keyed by the input jars, so the cost (a few seconds) is paid once.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import struct
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

ICEBERG_PACKAGE = "snowpark_connect_deps_iceberg"
DEPS_PACKAGE = "snowpark_connect_deps_2"
PIP_HINT = "python3 -m pip install -e '.[test]'"

ICEBERG_RUNTIME_JAR = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
JACKSON_JARS = ("jackson-core-2.18.8.jar", "jackson-databind-2.18.8.jar", "jackson-annotations-2.18.8.jar")

SQLITE_JDBC_JAR = Path("/usr/share/java/sqlite-jdbc.jar")
SQLITE_JNI_DIR = Path("/usr/lib/x86_64-linux-gnu/jni")
SQLITE_JNI_LIB = "libsqlitejdbc.so"
APT_HINT = "apt-get install -y libxerial-sqlite-jdbc-java"

# What the relocation maps: internal (slashed) names and dotted names used via reflection.
OLD_SLASHED = b"com/fasterxml/jackson/"
NEW_SLASHED = b"org/apache/iceberg/shaded/com/fasterxml/jackson/"
OLD_DOTTED = b"com.fasterxml.jackson."
NEW_DOTTED = b"org.apache.iceberg.shaded.com.fasterxml.jackson."

# Bump when the shim-building algorithm changes, so stale cached shims are not reused.
SHIM_FORMAT = 1

REPO_ROOT = Path(__file__).resolve().parents[2]

# JVM class file constant-pool tags (JVMS §4.4) -> size of the entry body in bytes.
# CONSTANT_Utf8 (1) is variable-length and handled separately.
_CP_FIXED_SIZES = {
    3: 4,  # Integer
    4: 4,  # Float
    5: 8,  # Long (takes two slots)
    6: 8,  # Double (takes two slots)
    7: 2,  # Class
    8: 2,  # String
    9: 4,  # Fieldref
    10: 4,  # Methodref
    11: 4,  # InterfaceMethodref
    12: 4,  # NameAndType
    15: 3,  # MethodHandle
    16: 2,  # MethodType
    17: 4,  # Dynamic
    18: 4,  # InvokeDynamic
    19: 2,  # Module
    20: 2,  # Package
}
_CLASS_MAGIC = b"\xca\xfe\xba\xbe"


class SparkHarnessError(RuntimeError):
    """The Spark test harness cannot start: a package, jar or system library is missing."""


def _package_jar_dir(package: str) -> Path:
    """The ``jars/`` folder of an installed wheel, found through the import system."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SparkHarnessError(f"Python package {package!r} is not installed; run: {PIP_HINT}")
    return Path(next(iter(spec.submodule_search_locations))) / "jars"


def _require_file(path: Path, hint: str) -> Path:
    if not path.is_file():
        raise SparkHarnessError(f"missing {path}; {hint}")
    return path


def iceberg_runtime_jar() -> Path:
    """The Iceberg 1.10.2 Spark 3.5 (Scala 2.12) runtime jar."""
    return _require_file(_package_jar_dir(ICEBERG_PACKAGE) / ICEBERG_RUNTIME_JAR, f"run: {PIP_HINT}")


def jackson_jars() -> list[Path]:
    """The plain Jackson 2.18 jars the shim is relocated from."""
    folder = _package_jar_dir(DEPS_PACKAGE)
    return [_require_file(folder / name, f"run: {PIP_HINT}") for name in JACKSON_JARS]


def sqlite_jdbc_jar() -> Path:
    """Debian's xerial SQLite JDBC driver, for Iceberg's JDBC catalog."""
    _require_file(SQLITE_JNI_DIR / SQLITE_JNI_LIB, f"install it with: {APT_HINT}")
    return _require_file(SQLITE_JDBC_JAR, f"install it with: {APT_HINT}")


def sqlite_jvm_options() -> str:
    """JVM flags pointing Debian's sqlite-jdbc (which has no bundled natives) at its JNI library."""
    return f"-Dorg.sqlite.lib.path={SQLITE_JNI_DIR} -Dorg.sqlite.lib.name={SQLITE_JNI_LIB}"


def cache_dir() -> Path:
    """Where built test artifacts live: ``$ICEDUCK_TEST_CACHE`` or ``<repo>/.cache`` (git-ignored)."""
    return Path(os.environ.get("ICEDUCK_TEST_CACHE") or REPO_ROOT / ".cache")


# --- class-file relocation -----------------------------------------------------------------


def relocate_bytes(data: bytes) -> bytes:
    """Relocate Jackson names inside one modified-UTF-8 string (slashed and dotted forms).

    Both patterns are ASCII, so a byte-level replace is exact in modified UTF-8 too.
    """
    return data.replace(OLD_SLASHED, NEW_SLASHED).replace(OLD_DOTTED, NEW_DOTTED)


def relocate_class(data: bytes, name: str = "<class>") -> bytes:
    """Rewrite a class file's CONSTANT_Utf8 entries, leaving everything else byte-identical.

    Only the constant pool changes: entry indices stay the same, so the rest of the class
    (fields, methods, attributes: all refer to the pool by index) is copied unchanged.
    Internal names (``com/fasterxml/jackson/X``), descriptors and generic signatures
    (``Lcom/fasterxml/jackson/X;``) and dotted names used for reflection
    (``com.fasterxml.jackson.X``) all live in Utf8 entries.
    """
    if data[:4] != _CLASS_MAGIC:
        raise SparkHarnessError(f"{name}: not a class file (bad magic)")
    (count,) = struct.unpack_from(">H", data, 8)
    out = io.BytesIO()
    out.write(data[:10])
    pos, index = 10, 1
    while index < count:
        tag = data[pos]
        if tag == 1:
            (length,) = struct.unpack_from(">H", data, pos + 1)
            text = relocate_bytes(data[pos + 3 : pos + 3 + length])
            if len(text) > 0xFFFF:
                raise SparkHarnessError(f"{name}: relocated constant longer than 65535 bytes")
            out.write(struct.pack(">BH", 1, len(text)))
            out.write(text)
            pos += 3 + length
            index += 1
            continue
        size = _CP_FIXED_SIZES.get(tag)
        if size is None:
            raise SparkHarnessError(f"{name}: unknown constant-pool tag {tag} at entry {index}")
        out.write(data[pos : pos + 1 + size])
        pos += 1 + size
        index += 2 if tag in (5, 6) else 1
    out.write(data[pos:])
    return out.getvalue()


def _relocated_entries(jar: Path) -> Iterable[tuple[str, bytes]]:
    """(new name, new bytes) for each entry of a Jackson jar that the shim keeps.

    Dropped: ``module-info`` and ``META-INF/versions/`` (multi-release overlays; the base
    classes run on any JVM and a relocated module descriptor would be wrong), signatures,
    the manifest and Maven metadata.
    """
    with zipfile.ZipFile(jar) as zf:
        for info in zf.infolist():
            name = info.filename
            if info.is_dir() or name.endswith("module-info.class"):
                continue
            if name.startswith("META-INF/") and not name.startswith("META-INF/services/"):
                if name.startswith(("META-INF/LICENSE", "META-INF/NOTICE")):
                    yield f"META-INF/jackson/{jar.stem}/{name[9:]}", zf.read(name)
                continue
            data = zf.read(name)
            if name.endswith(".class"):
                yield relocate_bytes(name.encode()).decode(), relocate_class(data, f"{jar.name}!{name}")
            elif name.startswith("META-INF/services/"):
                yield relocate_bytes(name.encode()).decode(), relocate_bytes(data)
            else:
                yield relocate_bytes(name.encode()).decode(), data


def build_jackson_shim(jars: Iterable[Path], target: Path) -> Path:
    """Write a jar holding the given Jackson jars relocated under Iceberg's shaded package.

    Written to a temporary file then renamed, so concurrent test runs never see half a jar.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=target.name, suffix=".tmp", dir=target.parent)
    os.close(fd)
    seen: set[str] = set()
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as out:
            out.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: iceduck tests\n\n")
            for jar in jars:
                for name, data in _relocated_entries(jar):
                    if name in seen:
                        raise SparkHarnessError(f"duplicate entry {name} while building {target}")
                    seen.add(name)
                    out.writestr(name, data)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def jackson_shim_jar() -> Path:
    """The cached relocated-Jackson jar, built on first use."""
    jars = jackson_jars()
    key = hashlib.sha256(
        repr((SHIM_FORMAT, [(j.name, j.stat().st_size) for j in jars])).encode()
    ).hexdigest()[:16]
    target = cache_dir() / "jars" / f"iceberg-jackson-shim-{key}.jar"
    if not target.is_file():
        build_jackson_shim(jars, target)
    return target


def spark_classpath() -> list[Path]:
    """Every jar the reference Spark needs beyond pyspark's own: runtime, shim, SQLite JDBC."""
    return [iceberg_runtime_jar(), jackson_shim_jar(), sqlite_jdbc_jar()]
