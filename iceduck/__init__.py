"""iceduck: an embedded SQL engine for Apache Iceberg tables (DuckDB executes, sqlglot parses)."""

__version__ = "0.1.0"
