"""One table, two engines: iceduck creates and changes it, a PySpark job reads and appends to it.

    python3 examples/spark_sharing.py [WAREHOUSE]      # default ./warehouse

Needs Java 17, PySpark 3.5 and the jars Spark opens the catalog with:
``python3 -m pip install -e '.[spark]'`` (PySpark, the Iceberg runtime) and
``apt-get install -y libxerial-sqlite-jdbc-java`` (the SQLite JDBC driver).
``iceduck.spark_conf(warehouse, jars=True)`` gives every setting: the JDBC catalog named
``iceduck`` on ``<warehouse>/catalog.db`` and the class path assembled from those packages
(or an error naming what is missing).
"""

from __future__ import annotations

import argparse

from pyspark.sql import SparkSession

import iceduck


def spark_for(warehouse: str) -> SparkSession:
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("iceduck-sharing-example")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
    )
    for key, value in iceduck.spark_conf(warehouse, jars=True).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("warehouse", nargs="?", default="warehouse")
    args = parser.parse_args()

    # 1. iceduck creates the table (this also creates catalog.db, which Spark then opens)
    con = iceduck.connect(args.warehouse)
    con.execute("CREATE NAMESPACE IF NOT EXISTS shared")
    con.execute("DROP TABLE IF EXISTS shared.orders PURGE")
    con.execute(
        """CREATE TABLE shared.orders (id bigint NOT NULL, customer string, amount double, ts timestamp)
           USING iceberg PARTITIONED BY (days(ts))
           TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read')"""
    )
    con.execute(
        "INSERT INTO shared.orders SELECT i, 'c' || (i % 7), i * 1.5, "
        "TIMESTAMP '2024-05-01 00:00:00' + to_hours(i) FROM range(100) r(i)"
    )
    con.execute("DELETE FROM shared.orders WHERE customer = 'c3'")  # deletion vectors

    # 2. the Spark job reads what iceduck wrote, then appends
    spark = spark_for(args.warehouse)
    spark.sparkContext.setLogLevel("ERROR")
    query = "SELECT count(*) AS n, round(sum(amount), 1) AS total FROM iceduck.shared.orders"
    seen = spark.sql(query).first()
    print(f"spark reads: {seen.n} rows, total {seen.total}")
    spark.sql(
        "INSERT INTO iceduck.shared.orders VALUES (1000, 'spark', 42.0, TIMESTAMP '2024-05-10 12:00:00')"
    )
    spark.stop()

    # 3. iceduck reads Spark's commit
    n, total = con.execute("SELECT count(*), round(sum(amount), 1) FROM shared.orders").fetchone()
    print(f"iceduck reads: {n} rows, total {total}")
    history = con.execute(
        "SELECT operation, summary['engine-name'] FROM shared.orders.snapshots ORDER BY committed_at"
    ).fetchall()
    print("snapshots:", history)


if __name__ == "__main__":
    main()
