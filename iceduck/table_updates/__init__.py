"""Table changes as the REST catalog protocol states them: requirements, updates, their
JSON, and a commit's request from the updates the metadata builder recorded (no I/O: a
catalog client and the server's commit path both build on them)."""
