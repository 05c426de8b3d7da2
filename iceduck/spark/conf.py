"""``iceduck.spark_conf``: the Spark settings that open the catalog an iceduck lake uses.

A local warehouse keeps its catalog in ``<warehouse>/catalog.db``, a SQLite database laid
out as Iceberg's JDBC catalog lays it out, so a Spark session configured with these settings
sees (and commits to) the same tables::

    from pyspark.sql import SparkSession
    import iceduck

    builder = SparkSession.builder
    for key, value in iceduck.spark_conf("warehouse", jars=True).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sql("SELECT * FROM iceduck.ns.events").show()

The settings tell Spark not to create the catalog tables of a SQLite file (see
``init-catalog-tables`` below): open the warehouse with iceduck once first
(``iceduck.connect(warehouse)`` creates ``catalog.db``). ``jars=True`` adds the class path of
Spark 3.5 with Iceberg 1.10.2 from installed packages (:mod:`iceduck.spark.jars`); without it
the jars are the caller's business (``spark.jars.packages``, e.g.
:data:`iceduck.spark.jars.MAVEN_PACKAGES`, or a class path).

A team's lake -- ``spark_conf(warehouse="s3://lake/wh", catalog_uri="postgresql://...",
properties={...})``, the arguments of ``iceduck.connect`` -- gives Spark the same JDBC catalog
(``uri`` as a JDBC URL, the credentials as ``jdbc.user`` / ``jdbc.password``), the warehouse,
the FileIO of the warehouse's store (``io-impl``: Iceberg's ``S3FileIO``, ``GCSFileIO`` or
``ADLSFileIO``) and every property as it is, since iceduck's properties are Iceberg's names.
Spark's JVM then also needs the store's SDK, which is not on PyPI: the
``org.apache.iceberg:iceberg-aws-bundle:1.10.2`` jar for S3 (``iceberg-gcp-bundle`` /
``iceberg-azure-bundle`` for the others), and for PostgreSQL a JDBC driver, which
``jars=True`` adds from Debian's ``libpostgresql-jdbc-java``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from iceduck.errors import UnsupportedError, UserError

#: the catalog name iceduck uses unless told otherwise (stored in every catalog row)
DEFAULT_CATALOG = "iceduck"

#: Iceberg's FileIO for each object store scheme (Iceberg's ``io-impl`` catalog property)
FILE_IO = {
    "s3": "org.apache.iceberg.aws.s3.S3FileIO",
    "s3a": "org.apache.iceberg.aws.s3.S3FileIO",
    "s3n": "org.apache.iceberg.aws.s3.S3FileIO",
    "gs": "org.apache.iceberg.gcp.gcs.GCSFileIO",
    "abfs": "org.apache.iceberg.azure.adlsv2.ADLSFileIO",
    "abfss": "org.apache.iceberg.azure.adlsv2.ADLSFileIO",
}
#: the PostgreSQL JDBC driver: ``$ICEDUCK_POSTGRES_JDBC_JAR``, else Debian's
POSTGRES_JDBC_ENV = "ICEDUCK_POSTGRES_JDBC_JAR"
DEBIAN_POSTGRES_JDBC_JAR = Path("/usr/share/java/postgresql.jar")
POSTGRES_APT_HINT = "apt-get install -y libpostgresql-jdbc-java"
#: properties of iceduck's own (``iceduck.*``), which mean nothing to Spark
_ICEDUCK_PREFIX = "iceduck."


def spark_conf(
    warehouse: str | Path | None = None,
    catalog: str | None = None,
    *,
    catalog_uri: str | None = None,
    properties: Mapping[str, str] | None = None,
    jars: bool = False,
) -> dict[str, str]:
    """Spark settings declaring catalog ``catalog`` over the lake ``iceduck.connect`` opens
    with the same arguments (with none: the lake of the environment and the config file,
    :mod:`iceduck.config`).

    ``catalog`` must be the name iceduck opens the lake with: both sides store and filter
    rows by it. ``jars=True`` adds the class path and JVM options of
    :func:`iceduck.spark.jars.spark_jar_conf`, and the PostgreSQL JDBC driver for a PostgreSQL
    catalog (a clear ``SparkJarsMissingError`` names any missing piece and how to install
    it); they take effect only in a new Spark session, which starts a JVM.
    """
    # here: ``import iceduck`` stays light
    from iceduck.catalog.open import is_remote
    from iceduck.catalog.sqlite import CATALOG_DB
    from iceduck.catalog.uri import (
        GLUE,
        HIVE,
        POSTGRESQL,
        REST,
        glue_catalog_id,
        jdbc_postgres,
        parse_catalog_uri,
    )
    from iceduck.config import resolve_lake

    lake = resolve_lake(warehouse, catalog_uri, catalog, None, properties)
    glue = parse_catalog_uri(lake.catalog_uri) if lake.catalog_uri is not None else None
    if (glue is not None and glue.kind == GLUE) or GLUE in (lake.catalog_type, lake.properties.get("type")):
        if jars:
            raise UnsupportedError(
                "spark_conf(jars=True) puts the Iceberg runtime from PyPI on Spark's class path, and it "
                "lacks the AWS SDK Iceberg's GlueCatalog needs: leave jars=False and add "
                "org.apache.iceberg:iceberg-aws-bundle to spark.jars.packages"
            )
        catalog_id = glue_catalog_id(glue) if glue is not None and glue.kind == GLUE else None
        return glue_conf(lake.name, lake.warehouse, lake.properties, catalog_id)
    if lake.catalog_type != "sql":
        raise UserError("spark_conf declares a JDBC catalog: a Hadoop catalog is not one")
    if lake.catalog_uri is not None and parse_catalog_uri(lake.catalog_uri).kind == REST:
        if jars:
            from iceduck.spark.jars import MAVEN_PACKAGES

            raise UnsupportedError(
                "spark_conf(jars=True) puts the Iceberg runtime from PyPI on Spark's class path, "
                "and it lacks the HTTP client Iceberg's REST catalog needs: leave jars=False and "
                f"set spark.jars.packages={MAVEN_PACKAGES.split(',')[0]} (the complete runtime)"
            )
        return rest_conf(lake.name, parse_catalog_uri(lake.catalog_uri).uri, lake.warehouse, lake.properties)
    location = str(lake.warehouse)
    remote = is_remote(location)
    if lake.catalog_uri is not None and parse_catalog_uri(lake.catalog_uri).kind == HIVE:
        conf = rest_conf(lake.name, parse_catalog_uri(lake.catalog_uri).uri, location, lake.properties)
        conf[f"spark.sql.catalog.{lake.name}.type"] = "hive"  # Iceberg's HiveCatalog, same properties
        if jars:
            from iceduck.spark.jars import spark_jar_conf

            conf.update(spark_jar_conf())
        return conf
    if not remote:
        location = str(Path(location).expanduser().resolve())
    prefix = f"spark.sql.catalog.{lake.name}"
    conf = {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "jdbc",
        # V1 adds iceberg_type (TABLE/VIEW) to iceberg_tables, as iceduck's catalog expects.
        f"{prefix}.jdbc.schema-version": "V1",
        # Re-read metadata on every statement: iceduck commits to the same tables, and a
        # cached table would hide its commits from Spark.
        f"{prefix}.cache-enabled": "false",
        # CALL procedures, ALTER TABLE ... WRITE ORDERED BY, branches and tags in SQL.
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    }
    carried = {k: v for k, v in lake.properties.items() if not k.startswith(_ICEDUCK_PREFIX)}
    parsed = parse_catalog_uri(lake.catalog_uri) if lake.catalog_uri is not None else None
    if parsed is None and remote:
        raise UserError(f"warehouse {location} is not a local folder: name its catalog with catalog_uri")
    postgres = parsed is not None and parsed.kind == POSTGRESQL
    if parsed is not None and postgres:
        url, credentials = jdbc_postgres(parsed)
        conf[f"{prefix}.uri"] = url
        for key, value in credentials.items():  # the URI's credentials win over the properties'
            carried[key] = value
    else:
        db_path = Path(location) / CATALOG_DB if parsed is None else parsed.db_path
        assert db_path is not None
        conf[f"{prefix}.uri"] = f"jdbc:sqlite:{db_path.expanduser().resolve()}"
        # Iceberg 1.10's JdbcCatalog.atomicCreateTable never closes the ResultSet of its "do
        # the catalog tables exist?" check; when they do, that open statement holds a SHARED
        # lock on catalog.db for the whole session and every other writer (iceduck, PyIceberg)
        # waits for it in vain. iceduck creates the catalog tables when it opens a warehouse.
        conf[f"{prefix}.jdbc.init-catalog-tables"] = "false"
    conf[f"{prefix}.warehouse"] = location
    scheme = location.partition("://")[0].lower() if remote else ""
    if scheme in FILE_IO and "io-impl" not in carried:
        conf[f"{prefix}.io-impl"] = FILE_IO[scheme]
    for key, value in carried.items():
        conf.setdefault(f"{prefix}.{key}", value)
    if jars:
        from iceduck.spark.jars import spark_jar_conf

        jar_conf = spark_jar_conf()
        if postgres:
            driver = str(postgres_jdbc_jar())
            for key in ("spark.driver.extraClassPath", "spark.executor.extraClassPath"):
                if driver not in jar_conf[key].split(os.pathsep):
                    jar_conf[key] = os.pathsep.join((jar_conf[key], driver))
        conf.update(jar_conf)
    return conf


def rest_conf(
    name: str, uri: str, warehouse: str | Path | None, properties: Mapping[str, str]
) -> dict[str, str]:
    """Spark settings for catalog ``name`` on the REST catalog at ``uri``, with Iceberg's own
    property names (``type=rest``, ``uri``, ``warehouse``) and the lake's properties as they are
    (``token``, ``credential``, ``scope``, ``oauth2-server-uri``, ``header.*``, ``s3.*``: iceduck
    reads the same names as Java's ``RESTSessionCatalog``). The server owns the locations and
    names the FileIO; a warehouse given is passed on as the config request's ``warehouse``."""
    prefix = f"spark.sql.catalog.{name}"
    conf = {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "rest",
        f"{prefix}.uri": uri,
        # iceduck and other engines commit through the same server: see them at once
        f"{prefix}.cache-enabled": "false",
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    }
    if warehouse is not None:
        conf[f"{prefix}.warehouse"] = str(warehouse)
    for key, value in properties.items():
        if not key.startswith(_ICEDUCK_PREFIX):
            conf.setdefault(f"{prefix}.{key}", value)
    return conf


def glue_conf(
    name: str, warehouse: str | Path | None, properties: Mapping[str, str], catalog_id: str | None
) -> dict[str, str]:
    """Spark settings for catalog ``name`` on AWS Glue (Java's ``GlueCatalog``, ``type=glue``):
    the warehouse, ``glue.id`` from a ``glue://<catalog-id>`` URI, and the lake's properties as
    they are (``glue.endpoint``, ``client.region``, ``s3.*``: the names Java's ``AwsProperties``
    and ``S3FileIOProperties`` read)."""
    prefix = f"spark.sql.catalog.{name}"
    conf = {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "glue",
        # iceduck and other engines commit to the same Glue tables: see them at once
        f"{prefix}.cache-enabled": "false",
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    }
    if warehouse is not None:
        conf[f"{prefix}.warehouse"] = str(warehouse)
    if catalog_id is not None:
        conf[f"{prefix}.glue.id"] = catalog_id
    for key, value in properties.items():
        if not key.startswith(_ICEDUCK_PREFIX) and key != "type":
            conf.setdefault(f"{prefix}.{key}", value)
    return conf


def postgres_jdbc_jar() -> Path:
    """The PostgreSQL JDBC driver jar: ``$ICEDUCK_POSTGRES_JDBC_JAR``, else Debian's
    ``libpostgresql-jdbc-java``; a ``SparkJarsMissingError`` saying how to install it."""
    from iceduck.spark.jars import SparkJarsMissingError, postgresql_jdbc_jar

    named = os.environ.get(POSTGRES_JDBC_ENV)
    jar = Path(named).expanduser() if named else postgresql_jdbc_jar() or DEBIAN_POSTGRES_JDBC_JAR
    if not jar.is_file():
        hint = f"point ${POSTGRES_JDBC_ENV} at a postgresql jar" if named else POSTGRES_APT_HINT
        raise SparkJarsMissingError(f"the PostgreSQL JDBC driver jar is missing: {jar}; {hint}")
    return jar
