"""Arrow, pandas and polars views of a statement's rows, read from the DuckDB cursor that ran it.

DuckDB streams a result as Arrow record batches, so every view here is built from
Arrow without a detour through Python tuples: ``pyarrow.table(result)`` and
``polars.DataFrame(result)`` take the stream through the Arrow PyCapsule interface
(``__arrow_c_stream__``) and copy nothing. Like ``fetchall``, each view consumes the rows
that are still unread.

DuckDB renamed its Arrow methods in 2.0 (``fetch_record_batch`` became ``to_arrow_reader``,
``fetch_arrow_table`` became ``to_arrow_table``); both spellings are accepted, because
iceduck supports DuckDB from 1.1 on. pandas and polars are optional: a view that needs one
that is missing raises :class:`ImportError` naming the package to install.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

#: rows per Arrow batch when the caller does not say (DuckDB's own default)
ROWS_PER_BATCH = 1_000_000


def require(package: str, method: str) -> Any:
    """Import optional ``package`` for ``method``, or say which package to install."""
    try:
        return importlib.import_module(package)
    except ImportError as e:
        raise ImportError(
            f"{method} needs the {package} package, which is not installed: pip install {package}",
            name=package,
        ) from e


def _call(duck: Any, new: str, old: str, *args: Any) -> Any:
    method = getattr(duck, new, None) or getattr(duck, old)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DuckDB notes the copy a DB-API result costs
        return method(*args)


def arrow_table(duck: Any) -> Any:
    """The unread rows as a ``pyarrow.Table``."""
    return _call(duck, "to_arrow_table", "fetch_arrow_table")


def record_batch_reader(duck: Any, rows_per_batch: int = ROWS_PER_BATCH) -> Any:
    """A ``pyarrow.RecordBatchReader`` streaming the unread rows from DuckDB."""
    if rows_per_batch < 1:
        raise ValueError(f"rows_per_batch must be positive, not {rows_per_batch}")
    return _call(duck, "to_arrow_reader", "fetch_record_batch", rows_per_batch)


def pandas_frame(duck: Any) -> Any:
    """The unread rows as a ``pandas.DataFrame`` (DuckDB converts from its vectors)."""
    require("pandas", "df()")
    return _call(duck, "fetch_df", "df")


def polars_frame(duck: Any) -> Any:
    """The unread rows as a ``polars.DataFrame``, built from Arrow without copying buffers."""
    polars = require("polars", "pl()")
    return polars.from_arrow(arrow_table(duck))


def empty_table() -> Any:
    """What a statement without rows (DDL, INSERT...) yields: a table of no columns."""
    import pyarrow as pa

    return pa.table({})


def empty_reader() -> Any:
    import pyarrow as pa

    return pa.RecordBatchReader.from_batches(pa.schema([]), [])
