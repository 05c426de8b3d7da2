"""iceduck results as Arrow, pandas and polars, without copies where the library allows; and
DataFrames going in as tables.

    python3 examples/dataframes.py [WAREHOUSE]     # needs pandas and polars installed
"""

from __future__ import annotations

import sys
import tempfile
import warnings

import pyarrow as pa

import iceduck

try:
    import pandas as pd
    import polars as pl
except ImportError as missing:  # not dependencies of iceduck: say what to install
    needed = "examples/dataframes.py needs pandas and polars: pip install pandas polars"
    raise SystemExit(f"{needed} ({missing})") from None


def main(warehouse: str) -> None:
    con = iceduck.connect(warehouse)
    con.execute("CREATE NAMESPACE IF NOT EXISTS frames")
    con.execute("DROP TABLE IF EXISTS frames.sales PURGE")
    con.execute("CREATE TABLE frames.sales (region string, amount decimal(10, 2), day date)")
    con.execute(
        "INSERT INTO frames.sales SELECT ['north', 'south', 'east'][1 + i % 3], (i * 7 % 100) + 0.5, "
        "DATE '2024-01-01' + (i % 31)::INTEGER FROM range(300) r(i)"
    )
    query = (
        "SELECT region, sum(amount) AS total, count(*) AS n FROM frames.sales GROUP BY region ORDER BY region"
    )

    arrow: pa.Table = con.execute(query).fetch_arrow_table()          # a pyarrow.Table
    print("arrow:", arrow.schema.names, arrow.num_rows, "rows")
    print("pandas:\n", con.execute(query).df())                      # a pandas.DataFrame
    print("polars:\n", con.execute(query).pl())                      # a polars.DataFrame

    # the Arrow PyCapsule stream: libraries read the cursor directly
    print("pa.table(cursor):", pa.table(con.execute(query)).num_rows, "rows")
    print("pl.DataFrame(cursor):", pl.DataFrame(con.execute(query)).shape)

    # streaming in batches, for results larger than memory
    reader = con.execute("SELECT * FROM frames.sales").fetch_record_batch(rows_per_batch=100)
    print("batches:", [batch.num_rows for batch in reader])

    # the DataFrame libraries' own SQL readers take the connection (pandas warns that it only
    # tests SQLAlchemy and sqlite3 connections; any DB-API connection works)
    warnings.filterwarnings("ignore", message="pandas only supports SQLAlchemy")
    print("pd.read_sql:", pd.read_sql("SELECT count(*) AS n FROM frames.sales", con).iloc[0, 0])
    print("pl.read_database:", pl.read_database("SELECT count(*) AS n FROM frames.sales", con).item())

    # and DataFrames going in: a variable by its name (as DuckDB's replacement scans read it),
    # a frame bound to a parameter, or one registered on the connection
    returns = pd.DataFrame({"region": ["north", "west"], "amount": [-10.5, -3.0], "day": [None, None]})
    con.execute("INSERT INTO frames.sales SELECT region, amount, CAST(day AS DATE) FROM returns")
    targets = pl.DataFrame({"region": ["north", "south", "east", "west"], "target": [90, 80, 70, 1]})
    con.register("targets", targets)
    joined = con.execute(
        "SELECT region, count(*), any_value(target) FROM frames.sales JOIN targets USING (region) "
        "GROUP BY region ORDER BY region"
    ).fetchall()
    print("joined with a registered polars frame:", joined)
    print("from ?:", con.execute("SELECT count(*) FROM ?", [returns]).fetchone())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="iceduck-frames-"))
