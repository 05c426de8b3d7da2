"""The relocated Jackson jar (``iceduck.spark.shim``) that Spark's Iceberg runtime from PyPI needs.

Pure Python, no JVM: the constant-pool rewrite is checked against a class file parsed here
independently, and the shim built from the installed Jackson jars holds only relocated names.
(That Spark actually runs with it is what every ``spark`` test shows.)
"""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest

from iceduck.errors import CorruptDataError
from iceduck.spark.shim import NEW_SLASHED, build_jackson_shim, relocate_class
from tests.support.spark_jars import jackson_shim_jar


def _utf8(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">BH", 1, len(data)) + data


def _class_file(entries: list[bytes], slots: int, tail: bytes) -> bytes:
    return b"\xca\xfe\xba\xbe" + struct.pack(">HHH", 0, 61, slots + 1) + b"".join(entries) + tail


def _utf8_entries(data: bytes) -> list[str]:
    """Every CONSTANT_Utf8 of a class file, parsed independently of the code under test."""
    (count,) = struct.unpack_from(">H", data, 8)
    pos, index, found = 10, 1, []
    sizes = {
        3: 4,
        4: 4,
        5: 8,
        6: 8,
        7: 2,
        8: 2,
        9: 4,
        10: 4,
        11: 4,
        12: 4,
        15: 3,
        16: 2,
        17: 4,
        18: 4,
        19: 2,
        20: 2,
    }
    while index < count:
        tag = data[pos]
        if tag == 1:
            (length,) = struct.unpack_from(">H", data, pos + 1)
            found.append(data[pos + 3 : pos + 3 + length].decode())
            pos, index = pos + 3 + length, index + 1
        else:
            pos, index = pos + 1 + sizes[tag], index + (2 if tag in (5, 6) else 1)
    return found


def test_relocate_class_rewrites_only_utf8_constants() -> None:
    # A Long/Double whose bytes look like a Utf8 tag would derail a parser that gets the
    # two-slot rule wrong; the tail (fields, methods, attributes) must survive untouched.
    entries = [
        _utf8("com/fasterxml/jackson/databind/ObjectMapper"),
        b"\x05" + b"\x01\x00\x03abc\x00\x00",  # Long (2 slots)
        b"\x06" + b"\x01" * 8,  # Double (2 slots)
        b"\x07\x00\x01",  # Class -> #1
        _utf8("(Lcom/fasterxml/jackson/core/JsonParser;)Ljava/util/List<Lcom/fasterxml/jackson/a/B;>;"),
        b"\x08\x00\x08",  # String -> #8
        _utf8("com.fasterxml.jackson.databind.ext.Java7Handlers"),
        b"\x03\x00\x00\x00\x01\x04\x00\x00\x00\x02",  # Integer, Float
        b"\x0f\x06\x00\x04\x10\x00\x01\x11\x00\x01\x00\x01\x12\x00\x01\x00\x01\x13\x00\x01\x14\x00\x01",
        _utf8("com.fasterxml.jacksonish is not jackson; java/lang/Object"),
    ]
    tail = b"\x00\x21\x00\x04\x00\x00" + b"\xde\xad"
    data = _class_file(entries, slots=18, tail=tail)
    out = relocate_class(data)
    assert out.endswith(tail)
    assert _utf8_entries(out) == [
        "org/apache/iceberg/shaded/com/fasterxml/jackson/databind/ObjectMapper",
        "(Lorg/apache/iceberg/shaded/com/fasterxml/jackson/core/JsonParser;)"
        "Ljava/util/List<Lorg/apache/iceberg/shaded/com/fasterxml/jackson/a/B;>;",
        "org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ext.Java7Handlers",
        "com.fasterxml.jacksonish is not jackson; java/lang/Object",
    ]


def test_relocate_class_rejects_garbage() -> None:
    with pytest.raises(CorruptDataError, match="bad magic"):
        relocate_class(b"PK\x03\x04" + bytes(20), "x.class")
    with pytest.raises(CorruptDataError, match="unknown constant-pool tag 2"):
        relocate_class(_class_file([b"\x02\x00"], slots=1, tail=b""))


def test_jackson_shim_holds_relocated_jackson_only() -> None:
    with zipfile.ZipFile(jackson_shim_jar()) as shim:
        names = shim.namelist()
        classes = [n for n in names if n.endswith(".class")]
        assert "org/apache/iceberg/shaded/com/fasterxml/jackson/databind/ObjectMapper.class" in names
        assert "org/apache/iceberg/shaded/com/fasterxml/jackson/core/JsonFactory.class" in names
        assert "org/apache/iceberg/shaded/com/fasterxml/jackson/annotation/JsonProperty.class" in names
        assert all(n.startswith("org/apache/iceberg/shaded/com/fasterxml/jackson/") for n in classes)
        assert len(classes) > 1000
        service = "META-INF/services/org.apache.iceberg.shaded.com.fasterxml.jackson.core.JsonFactory"
        assert shim.read(service).decode().strip().startswith("org.apache.iceberg.shaded.com.fasterxml")
        for name in classes[::50]:
            assert b"com/fasterxml/jackson/" not in shim.read(name).replace(NEW_SLASHED, b""), name


def test_relocate_class_names_a_truncated_class() -> None:
    truncated = _class_file([_utf8("com/fasterxml/jackson/X")], slots=2, tail=b"")
    with pytest.raises(CorruptDataError, match=r"Foo.class: class file ends inside its constant pool"):
        relocate_class(truncated, "Foo.class")


def test_a_jar_that_is_not_a_zip_is_named(tmp_path: Path) -> None:
    fake = tmp_path / "jackson-core.jar"
    fake.write_bytes(b"not a zip")
    target = tmp_path / "out" / "shim.jar"
    with pytest.raises(CorruptDataError, match=r"jackson-core\.jar: not a jar"):
        build_jackson_shim([fake], target)
    assert list(target.parent.iterdir()) == []  # no half-written jar left behind


def test_build_relocates_classes_and_services_and_keeps_licences(tmp_path: Path) -> None:
    source = tmp_path / "jackson-x.jar"
    with zipfile.ZipFile(source, "w") as jar:
        jar.writestr(
            "com/fasterxml/jackson/x/A.class", _class_file([_utf8("com/fasterxml/jackson/x/A")], 1, b"")
        )
        jar.writestr("module-info.class", b"\xca\xfe\xba\xbe")
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        jar.writestr("META-INF/LICENSE", "Apache")
        jar.writestr("META-INF/services/com.fasterxml.jackson.x.A", "com.fasterxml.jackson.x.B\n")
    with zipfile.ZipFile(build_jackson_shim([source], tmp_path / "shim.jar")) as shim:
        names = set(shim.namelist())
        assert names == {
            "META-INF/MANIFEST.MF",
            "org/apache/iceberg/shaded/com/fasterxml/jackson/x/A.class",
            "META-INF/jackson/jackson-x/LICENSE",
            "META-INF/services/org.apache.iceberg.shaded.com.fasterxml.jackson.x.A",
        }
        service = shim.read("META-INF/services/org.apache.iceberg.shaded.com.fasterxml.jackson.x.A")
        assert service == b"org.apache.iceberg.shaded.com.fasterxml.jackson.x.B\n"
        relocated = shim.read("org/apache/iceberg/shaded/com/fasterxml/jackson/x/A.class")
        assert _utf8_entries(relocated) == ["org/apache/iceberg/shaded/com/fasterxml/jackson/x/A"]
    with pytest.raises(CorruptDataError, match="two Jackson jars both hold"):
        build_jackson_shim([source, source], tmp_path / "twice.jar")
