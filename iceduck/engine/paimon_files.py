"""Paimon data files DuckDB cannot read itself, as Arrow tables it can: ORC (Paimon's
default ``file.format`` before 1.0, read by pyarrow's ORC reader) and Avro (decoded by
:mod:`iceduck.formats.avro_arrow`; DuckDB reads Avro only through an extension).

A group's files become one Arrow table with the two virtual columns DuckDB's
``read_parquet`` gives (``file_index``: the file's place in the group; ``file_row_number``:
the row's position in its file), so the same SQL selects from it, deletion vectors and
merges included (:mod:`iceduck.engine.paimon_read`). The files are read whole, into memory:
these formats are the exception in today's Paimon tables, and correctness comes first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from iceduck.errors import CorruptDataError, UnsupportedError
from iceduck.formats.avro_files import read_avro
from iceduck.io.fileio import open_input, read_bytes

# pyarrow is imported when an ORC or Avro data file is read
if TYPE_CHECKING:
    import pyarrow as pa

#: the data file formats read through Arrow, by Paimon's ``file.format`` name
ARROW_FORMATS = frozenset({"orc", "avro"})


def files_table(paths: Sequence[str], file_format: str) -> pa.Table:
    """The rows of ``paths`` (all in ``file_format``), with ``file_index`` and
    ``file_row_number`` added; columns present in only some files are null in the others."""
    import pyarrow as pa

    tables = []
    for index, path in enumerate(paths):
        table = _read(path, file_format)
        n = table.num_rows
        table = table.append_column("file_index", pa.array([index] * n, pa.int64()))
        table = table.append_column("file_row_number", pa.array(range(n), pa.int64()))
        tables.append(table)
    return pa.concat_tables(tables, promote_options="permissive")


def _read(path: str, file_format: str) -> pa.Table:
    import pyarrow as pa
    import pyarrow.orc as orc

    from iceduck.formats.avro_arrow import avro_table

    if file_format == "orc":
        with open_input(path) as f:
            try:
                return orc.ORCFile(f).read()
            except (pa.ArrowInvalid, OSError) as e:  # pyarrow's errors on a truncated or foreign file
                raise CorruptDataError(f"not a readable ORC file: {e}", path) from None
    if file_format == "avro":
        contents = read_avro(read_bytes(path), path)
        return avro_table(contents.schema, contents.records, path)
    raise UnsupportedError(f"reading Paimon {file_format} data files is not supported: {path}")
