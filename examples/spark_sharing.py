"""One table, two engines: iceduck creates and changes it, a PySpark job reads and appends to it.

    python3 examples/spark_sharing.py WAREHOUSE --classpath JARS [--java-options OPTS]

JARS is the class path Spark needs for Iceberg and the SQLite catalog (os.pathsep-separated):
the Iceberg Spark runtime (``iceberg-spark-runtime-3.5_2.12-1.10.x.jar``) and a SQLite JDBC
driver (Debian: ``/usr/share/java/sqlite-jdbc.jar``, which also needs
``--java-options "-Dorg.sqlite.lib.path=/usr/lib/x86_64-linux-gnu/jni
-Dorg.sqlite.lib.name=libsqlitejdbc.so"``). ``iceduck.spark_conf(warehouse)`` gives every other
setting: the JDBC catalog named ``iceduck`` on ``<warehouse>/catalog.db``.
"""

from __future__ import annotations

import argparse

from pyspark.sql import SparkSession

import iceduck


def spark_for(warehouse: str, classpath: str, java_options: str) -> SparkSession:
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("iceduck-sharing-example")
        .config("spark.driver.memory", "2g")
        .config("spark.driver.extraClassPath", classpath)
        .config("spark.driver.extraJavaOptions", f"{java_options} -Duser.timezone=UTC")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
    )
    for key, value in iceduck.spark_conf(warehouse).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("warehouse")
    parser.add_argument("--classpath", required=True)
    parser.add_argument("--java-options", default="")
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
    spark = spark_for(args.warehouse, args.classpath, args.java_options)
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
