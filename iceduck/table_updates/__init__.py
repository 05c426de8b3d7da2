"""Table changes as the REST catalog protocol states them: requirements, updates, their
JSON, and the diff of two versions of a table's metadata (no I/O: a catalog client and
the server's commit path both build on them)."""
