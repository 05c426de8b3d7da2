"""``iceduck.spark_conf``: the Spark settings that open the catalog an iceduck warehouse uses.

iceduck keeps its catalog in ``<warehouse>/catalog.db``, a SQLite database laid out as
Iceberg's JDBC catalog lays it out, so a Spark session configured with these settings sees
(and commits to) the same tables::

    from pyspark.sql import SparkSession
    import iceduck

    builder = SparkSession.builder
    for key, value in iceduck.spark_conf("warehouse", jars=True).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sql("SELECT * FROM iceduck.ns.events").show()

The settings tell Spark not to create the catalog tables (see ``init-catalog-tables``
below): open the warehouse with iceduck once first (``iceduck.connect(warehouse)`` creates
``catalog.db``). ``jars=True`` adds the class path of Spark 3.5 with Iceberg 1.10.2 from
installed packages (:mod:`iceduck.spark_jars`); without it the jars are the caller's business
(``spark.jars.packages``, e.g. :data:`iceduck.spark_jars.MAVEN_PACKAGES`, or a class path).
"""

from __future__ import annotations

from pathlib import Path

#: the catalog name iceduck uses unless told otherwise (stored in every catalog row)
DEFAULT_CATALOG = "iceduck"


def spark_conf(
    warehouse: str | Path, catalog: str = DEFAULT_CATALOG, *, jars: bool = False
) -> dict[str, str]:
    """Spark settings declaring catalog ``catalog`` over ``<warehouse>/catalog.db``.

    ``catalog`` must be the name iceduck opens the warehouse with
    (``iceduck.connect(warehouse, catalog)``): both sides store and filter rows by it.
    ``jars=True`` adds the class path and JVM options of :func:`iceduck.spark_jars.spark_jar_conf`
    (a clear ``SparkJarsMissingError`` names any missing piece and how to install it); they take
    effect only in a new Spark session, which starts a JVM.
    """
    from iceduck.catalog.sqlite import CATALOG_DB  # here: ``import iceduck`` stays light

    warehouse = Path(warehouse).expanduser().resolve()
    prefix = f"spark.sql.catalog.{catalog}"
    conf = {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "jdbc",
        f"{prefix}.uri": f"jdbc:sqlite:{warehouse / CATALOG_DB}",
        f"{prefix}.warehouse": str(warehouse),
        # V1 adds iceberg_type (TABLE/VIEW) to iceberg_tables, as iceduck's catalog expects.
        f"{prefix}.jdbc.schema-version": "V1",
        # Iceberg 1.10's JdbcCatalog.atomicCreateTable never closes the ResultSet of its "do
        # the catalog tables exist?" check; when they do, that open statement holds a SHARED
        # lock on catalog.db for the whole session and every other writer (iceduck, PyIceberg)
        # waits for it in vain. iceduck creates the catalog tables when it opens a warehouse.
        f"{prefix}.jdbc.init-catalog-tables": "false",
        # Re-read metadata on every statement: iceduck commits to the same tables, and a
        # cached table would hide its commits from Spark.
        f"{prefix}.cache-enabled": "false",
        # CALL procedures, ALTER TABLE ... WRITE ORDERED BY, branches and tags in SQL.
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    }
    if jars:
        from iceduck.spark_jars import spark_jar_conf

        conf.update(spark_jar_conf())
    return conf
