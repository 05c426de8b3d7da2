"""The reference answer's SQL: a scenario statement translated to plain DuckDB tables.

The end-to-end suite runs every statement of a scenario a second time on an in-memory
DuckDB database whose tables are ordinary DuckDB tables (namespaces become schemas), so
the expected contents after each step come from an engine that knows nothing of Iceberg.
Iceberg-only clauses have no effect on table contents and are dropped; statements that only
change Iceberg metadata (partition specs, sort orders, properties, refs, identifier fields)
do nothing on the reference. Spark's types are spelled as DuckDB's, with Spark's meaning:
``timestamp`` is a timestamp *with* time zone (``TIMESTAMPTZ``), ``timestamp_ntz`` one
without, ``string`` ``VARCHAR``, ``binary`` ``BLOB``.

What cannot be translated mechanically (``INSERT OVERWRITE``, writes to and reads of
branches and tags, time travel, Spark-only functions) must carry a ``-- reference:`` line in
the script; :func:`translate` raises :class:`NeedsReference` for those, so a missing
override is an error and never a silently wrong answer.
"""

from __future__ import annotations

import re

_WS = r"\s+"


class NeedsReference(ValueError):
    """The statement has no mechanical DuckDB translation: the script must give one."""


#: metadata-only ALTER TABLE forms (no effect on the rows a SELECT returns)
_METADATA_ONLY = re.compile(
    r"^ALTER\s+TABLE\s+\S+\s+("
    r"(ADD|DROP|REPLACE)\s+PARTITION\s+FIELD|WRITE\s|(SET|DROP)\s+IDENTIFIER\s+FIELDS|"
    r"(SET|UNSET)\s+TBLPROPERTIES|(CREATE|REPLACE|DROP)\s+(OR\s+REPLACE\s+)?(BRANCH|TAG)|"
    r"CREATE\s+(BRANCH|TAG)\s+IF|ALTER\s+(COLUMN\s+)?\S+\s+COMMENT)",
    re.IGNORECASE,
)
_ROWS = ("INSERT", "SELECT", "WITH", "DELETE", "UPDATE", "MERGE")
_UNTRANSLATABLE = (
    (re.compile(r"^INSERT\s+OVERWRITE", re.IGNORECASE), "INSERT OVERWRITE", _ROWS),
    (re.compile(r"\bVERSION\s+AS\s+OF|\bTIMESTAMP\s+AS\s+OF", re.IGNORECASE), "time travel", _ROWS),
    (re.compile(r"\.(branch|tag)_\w+", re.IGNORECASE), "a branch or tag", _ROWS),
    (re.compile(r"\s(FIRST|AFTER\s+\w+)\s*$", re.IGNORECASE), "a column position", ("ALTER",)),
)


def translate(sql: str) -> str:
    """The DuckDB statement(s) doing to plain tables what ``sql`` does to an Iceberg table.

    Returns "" for metadata-only statements. Raises :class:`NeedsReference` when ``sql``
    has no mechanical translation.
    """
    text = sql.strip().rstrip(";").strip()
    if _METADATA_ONLY.match(text):
        return ""
    head = text.split(None, 1)[0].upper()
    for pattern, what, heads in _UNTRANSLATABLE:
        if head in heads and pattern.search(text):
            raise NeedsReference(f"{what} needs a '-- reference:' line: {text[:80]}")
    text = re.sub(r"^(CREATE|DROP)\s+NAMESPACE\b", r"\1 SCHEMA", text, flags=re.IGNORECASE)
    if re.match(r"^DROP\s+TABLE\b", text, re.IGNORECASE):
        return re.sub(r"\s+PURGE\s*$", "", text, flags=re.IGNORECASE)
    rename = re.match(r"^(ALTER\s+TABLE\s+\S+\s+RENAME\s+TO\s+)(\S+)$", text, re.IGNORECASE)
    if rename:  # DuckDB names the new table without its schema
        return rename.group(1) + rename.group(2).rsplit(".", 1)[-1]
    if re.match(r"^(CREATE|REPLACE)\s+(OR\s+REPLACE\s+)?TABLE\b|^ALTER\s+TABLE\b", text, re.IGNORECASE):
        return _ddl(text)
    return text


def _ddl(text: str) -> str:
    """CREATE TABLE / CTAS / ALTER TABLE column changes without Iceberg clauses, DuckDB types."""
    body, query = _split_query(text)
    body = re.sub(r"\bUSING\s+iceberg\b", "", body, flags=re.IGNORECASE)
    body = re.sub(r"\bLOCATION\s+'(?:[^']|'')*'", "", body, flags=re.IGNORECASE)
    body = re.sub(r"\bCOMMENT\s+'(?:[^']|'')*'", "", body, flags=re.IGNORECASE)
    for clause in ("PARTITIONED BY", "TBLPROPERTIES"):
        body = _drop_parenthesised(body, clause)
    body = re.sub(r"^REPLACE\s+TABLE\b", "CREATE OR REPLACE TABLE", body, flags=re.IGNORECASE)
    body = re.sub(r"\bADD\s+COLUMNS?\s*\(\s*(.*)\)\s*$", r"ADD COLUMN \1", body, flags=re.IGNORECASE)
    body = _types(body)
    body = " ".join(body.split())
    return f"{body} {query}" if query else body


def _split_query(text: str) -> tuple[str, str]:
    """``CREATE TABLE ... AS SELECT ...`` -> (the CREATE part, ``AS SELECT ...``)."""
    match = re.search(r"\bAS\s+(SELECT|WITH|\()", text, re.IGNORECASE)
    if not match or not re.match(r"^(CREATE|REPLACE)", text, re.IGNORECASE):
        return text, ""
    return text[: match.start()], text[match.start() :]


def _drop_parenthesised(text: str, clause: str) -> str:
    """``text`` without ``<clause> ( ... )`` (balanced parentheses)."""
    pattern = re.compile(clause.replace(" ", _WS) + r"\s*\(", re.IGNORECASE)
    match = pattern.search(text)
    if not match:
        return text
    depth, end = 0, match.end() - 1
    for end in range(match.end() - 1, len(text)):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        if depth == 0:
            break
    return text[: match.start()] + text[end + 1 :]


_TYPES = (
    (r"\btimestamp_ntz\b", "TIMESTAMP_NTZ_"),  # placeholder so the next rule skips it
    (r"\btimestamp_ltz\b", "TIMESTAMPTZ"),
    (r"\btimestamp\b(?!\s*')", "TIMESTAMPTZ"),
    (r"\bTIMESTAMP_NTZ_\b", "TIMESTAMP"),
    (r"\bstring\b", "VARCHAR"),
    (r"\bbinary\b", "BLOB"),
)


def _types(text: str) -> str:
    if re.search(r"\b(struct|array|map)\s*<", text, re.IGNORECASE):
        raise NeedsReference(f"nested Spark types need a '-- reference:' line: {text[:80]}")
    for pattern, replacement in _TYPES:
        text = re.sub(pattern, replacement, text, flags=re.IGNORECASE)
    return text
