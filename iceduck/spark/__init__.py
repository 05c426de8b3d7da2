"""Sharing tables with Spark: ``conf`` the Spark settings of a lake (``iceduck.spark_conf``),
``jars`` the class path from installed packages (``python3 -m iceduck.spark.jars``), ``shim``
the Jackson jar relocated for the Iceberg runtime.
"""
