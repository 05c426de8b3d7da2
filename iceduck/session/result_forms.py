"""Arrow, pandas and polars forms of a statement's rows: what needs no DuckDB.

The engine reads a statement's rows as Arrow (:class:`iceduck.engine.results.StatementRows`:
a query runs in the form first asked, so an Arrow form is DuckDB's stream or table, no copy);
here are the optional packages the pandas and polars forms need, and the empty forms of a
statement without rows. ``pyarrow.table(result)`` and ``polars.DataFrame(result)`` take a
result's stream through the Arrow PyCapsule interface (``__arrow_c_stream__``) and copy
nothing. pandas and polars are optional: a form that needs one that is missing raises
:class:`ImportError` naming the package to install.
"""

from __future__ import annotations

import importlib
from typing import Any


def require(package: str, method: str) -> Any:
    """Import optional ``package`` for ``method``, or say which package to install."""
    try:
        return importlib.import_module(package)
    except ImportError as e:
        raise ImportError(
            f"{method} needs the {package} package, which is not installed: pip install {package}",
            name=package,
        ) from e


def empty_table() -> Any:
    """What a statement without rows (DDL, INSERT...) yields: a table of no columns."""
    import pyarrow as pa

    return pa.table({})


def empty_reader() -> Any:
    import pyarrow as pa

    return pa.RecordBatchReader.from_batches(pa.schema([]), [])
