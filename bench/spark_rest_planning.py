"""Spark's query latency on one table through ``iceduck serve`` (REST) and through the JDBC
catalog on the same ``catalog.db``: what the REST hop costs Spark per query.

    PYTHONPATH=. python3 bench/spark_rest_planning.py [--runs 20] [--commits 10]

One Spark 3.5 + Iceberg 1.10.2 session (the test harness's, :mod:`tests.support`) with
catalog ``iceduck`` (JDBC on ``<warehouse>/catalog.db``) and catalog ``rest`` (an
``iceduck serve`` thread on the same warehouse), ``cache-enabled=false`` on both so every
query loads the table. A table with ``--commits`` appends; then ``--runs`` times each:
planning (``queryExecution().executedPlan()``: analysis, the table load, optimisation,
physical planning) and the whole ``SELECT count(*)`` (``collect``). Medians, in ms.
"""

from __future__ import annotations

import checkout  # noqa: F401  (first: this checkout's iceduck, not an installed one)

# isort: split
import argparse
import statistics
import tempfile
import time
from pathlib import Path

from iceduck.catalog.open import open_catalog, warehouse_location
from iceduck.serve.context import ServeContext
from iceduck.serve.server import CatalogServer
from tests.support.rest_spark import attach
from tests.support.spark_session import spark_session, stop_spark_session


def _median_ms(fn: object, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--commits", type=int, default=10)
    args = parser.parse_args()
    warehouse = Path(tempfile.mkdtemp(prefix="rest-planning-")) / "wh"
    spark = spark_session(warehouse)
    spark.conf.set("spark.sql.catalog.iceduck.cache-enabled", "false")
    location = warehouse_location(warehouse)
    server = CatalogServer(("127.0.0.1", 0), ServeContext(open_catalog(location, "iceduck"), location))
    server.start()
    attach(spark, "rest", server.url)
    spark.sql("CREATE NAMESPACE iceduck.bench")
    spark.sql("CREATE TABLE iceduck.bench.t (id bigint, v string) USING iceberg")
    for i in range(args.commits):
        spark.sql(f"INSERT INTO iceduck.bench.t SELECT id + {i * 100}, 'x' FROM range(100)")
    print(f"{args.commits} commits, {args.runs} runs each, medians after a warm-up:")
    for catalog in ("iceduck", "rest"):
        query = f"SELECT count(*) FROM {catalog}.bench.t"
        for _ in range(3):
            spark.sql(query).collect()
        plan = _median_ms(lambda q=query: spark.sql(q)._jdf.queryExecution().executedPlan(), args.runs)
        run = _median_ms(lambda q=query: spark.sql(q).collect(), args.runs)
        name = "JDBC (catalog.db)" if catalog == "iceduck" else "REST (iceduck serve)"
        print(f"  {name:22} planning {plan:7.1f} ms   SELECT count(*) {run:7.1f} ms")
    server.stop()
    stop_spark_session()


if __name__ == "__main__":
    main()
