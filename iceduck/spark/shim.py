"""The relocated Jackson jar that the PyPI copy of Iceberg's Spark runtime lacks.

The Iceberg 1.10.2 Spark runtime jar that ``snowpark-connect-deps-iceberg`` ships on PyPI
leaves out the Jackson classes the real runtime bundles under
``org.apache.iceberg.shaded.com.fasterxml.jackson``; Iceberg reads and writes every metadata
file through them, so Spark fails at its first table with ``ClassNotFoundException:
org.apache.iceberg.shaded.com.fasterxml.jackson.core.JsonFactoryBuilder``. This module
rebuilds that package from plain Jackson jars by doing what the Gradle shadow plugin's
``relocate`` does: rename the entries and rewrite the names inside each class file's
constant pool. It is plain file work (no JVM needed), so a user gets a working class path
from ``pip`` alone.
"""

from __future__ import annotations

import io
import os
import struct
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from iceduck.errors import CorruptDataError

# What the relocation maps: internal (slashed) names and dotted names used via reflection.
OLD_SLASHED = b"com/fasterxml/jackson/"
NEW_SLASHED = b"org/apache/iceberg/shaded/com/fasterxml/jackson/"
OLD_DOTTED = b"com.fasterxml.jackson."
NEW_DOTTED = b"org.apache.iceberg.shaded.com.fasterxml.jackson."


class Relocation(NamedTuple):
    """One shadow-plugin ``relocate``: a package's slashed and dotted names, old and new."""

    old_slashed: bytes
    new_slashed: bytes
    old_dotted: bytes
    new_dotted: bytes


#: Jackson under Iceberg's shaded package (the default of every function here)
JACKSON = Relocation(OLD_SLASHED, NEW_SLASHED, OLD_DOTTED, NEW_DOTTED)

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


def relocate_bytes(data: bytes, relocation: Relocation = JACKSON) -> bytes:
    """Relocate Jackson names inside one modified-UTF-8 string (slashed and dotted forms).

    Both patterns are ASCII, so a byte-level replace is exact in modified UTF-8 too.
    """
    r = relocation
    return data.replace(r.old_slashed, r.new_slashed).replace(r.old_dotted, r.new_dotted)


def relocate_class(data: bytes, name: str = "<class>", relocation: Relocation = JACKSON) -> bytes:
    """Rewrite a class file's CONSTANT_Utf8 entries, leaving everything else byte-identical.

    Only the constant pool changes: entry indices stay the same, so the rest of the class
    (fields, methods, attributes: all refer to the pool by index) is copied unchanged.
    Internal names (``com/fasterxml/jackson/X``), descriptors and generic signatures
    (``Lcom/fasterxml/jackson/X;``) and dotted names used for reflection
    (``com.fasterxml.jackson.X``) all live in Utf8 entries.
    """
    if data[:4] != _CLASS_MAGIC or len(data) < 10:
        raise CorruptDataError("not a class file (bad magic)", name)
    (count,) = struct.unpack_from(">H", data, 8)
    out = io.BytesIO()
    out.write(data[:10])
    pos, index = 10, 1
    try:
        while index < count:
            tag = data[pos]
            if tag == 1:
                (length,) = struct.unpack_from(">H", data, pos + 1)
                text = relocate_bytes(data[pos + 3 : pos + 3 + length], relocation)
                if len(text) > 0xFFFF:
                    raise CorruptDataError("relocated constant longer than 65535 bytes", name)
                out.write(struct.pack(">BH", 1, len(text)))
                out.write(text)
                pos += 3 + length
                index += 1
                continue
            size = _CP_FIXED_SIZES.get(tag)
            if size is None:
                raise CorruptDataError(f"unknown constant-pool tag {tag} at entry {index}", name)
            out.write(data[pos : pos + 1 + size])
            pos += 1 + size
            index += 2 if tag in (5, 6) else 1
    except (IndexError, struct.error) as exc:
        raise CorruptDataError(f"class file ends inside its constant pool (entry {index})", name) from exc
    out.write(data[pos:])
    return out.getvalue()


def _relocated_entries(jar: Path, r: Relocation, licences: str) -> Iterable[tuple[str, bytes]]:
    """(new name, new bytes) for each entry of a Jackson jar that the shim keeps.

    Dropped: ``module-info`` and ``META-INF/versions/`` (multi-release overlays; the base
    classes run on any JVM and a relocated module descriptor would be wrong), signatures,
    the manifest and Maven metadata. Licences are kept, under ``META-INF/jackson/``.
    """
    with zipfile.ZipFile(jar) as zf:
        for info in zf.infolist():
            name = info.filename
            if info.is_dir() or name.endswith("module-info.class"):
                continue
            if name.startswith("META-INF/") and not name.startswith("META-INF/services/"):
                if name.startswith(("META-INF/LICENSE", "META-INF/NOTICE")):
                    yield f"META-INF/{licences}/{jar.stem}/{name[9:]}", zf.read(name)
                continue
            data = zf.read(name)
            new_name = relocate_bytes(name.encode(), r).decode()
            if name.endswith(".class"):
                yield new_name, relocate_class(data, f"{jar}!{name}", r)
            elif name.startswith("META-INF/services/"):
                yield new_name, relocate_bytes(data, r)
            else:
                yield new_name, data


def build_jackson_shim(jars: Iterable[Path], target: Path) -> Path:
    """Write a jar holding the given Jackson jars relocated under Iceberg's shaded package."""
    return build_relocated_jar(jars, target, JACKSON, "jackson")


def build_relocated_jar(
    jars: Iterable[Path], target: Path, relocation: Relocation, licences: str, extra: Iterable[Path] = ()
) -> Path:
    """Write a jar holding ``jars`` relocated by ``relocation`` (licences kept under
    ``META-INF/<licences>/``), then the already relocated class files of the folders in
    ``extra`` (relative names; they replace a relocated entry of the same name).

    Written to a temporary file then renamed, so a concurrent build never exposes half a jar.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=target.name, suffix=".tmp", dir=target.parent)
    os.close(fd)
    seen: set[str] = set()
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as out:
            out.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: iceduck\n\n")
            overrides = {
                str(path.relative_to(folder)): path for folder in extra for path in folder.rglob("*.class")
            }
            for jar in jars:
                try:
                    for name, data in _relocated_entries(jar, relocation, licences):
                        if name in seen:
                            what = licences.capitalize()
                            raise CorruptDataError(f"two {what} jars both hold {name}", str(jar))
                        seen.add(name)
                        if name not in overrides:
                            out.writestr(name, data)
                except zipfile.BadZipFile as exc:
                    raise CorruptDataError(f"not a jar (zip) file: {exc}", str(jar)) from exc
            for name, path in sorted(overrides.items()):
                out.writestr(name, path.read_bytes())
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target
