"""Which statements may run inside a transaction.

Inside ``BEGIN ... COMMIT`` the session's commits are deferred
(:mod:`iceduck.txn.transaction`), and only snapshots can be: INSERT (and INSERT OVERWRITE),
DELETE, UPDATE and MERGE, plus queries and statements on the session's own objects. Table
and namespace DDL (CREATE, CTAS, ALTER, DROP, RENAME, branches and tags) and ``CALL``
procedures change metadata a deferred snapshot may be built on, or commit by themselves;
they are refused by name rather than committed outside the transaction's atomicity.
"""

from __future__ import annotations

from typing import Any

from iceduck.errors import UnsupportedError
from iceduck.sql import statements as st
from iceduck.sql.call import CallStatement
from iceduck.sql.parse import leading_word

#: the write statements a transaction takes
DATA_STATEMENTS = (st.Insert, st.Delete, st.Update, st.Merge)

#: the others, by what to call them in the refusal
_NAMES: dict[type, str] = {
    st.CreateNamespace: "CREATE NAMESPACE",
    st.DropNamespace: "DROP NAMESPACE",
    st.CreateTable: "CREATE TABLE",
    st.DropTable: "DROP TABLE",
    st.RenameTable: "ALTER TABLE ... RENAME",
    st.AlterTable: "ALTER TABLE",
    st.CreateRef: "CREATE BRANCH/TAG",
    st.DropRef: "DROP BRANCH/TAG",
    st.CreateView: "CREATE VIEW",
    st.AlterViewAs: "ALTER VIEW ... AS",
    st.SetViewProperties: "ALTER VIEW ... SET TBLPROPERTIES",
    st.UnsetViewProperties: "ALTER VIEW ... UNSET TBLPROPERTIES",
    st.RenameView: "ALTER VIEW ... RENAME",
    st.DropCatalogView: "DROP VIEW",
    CallStatement: "CALL",
}


def refusal_in_transaction(text: str, statement: Any) -> UnsupportedError | None:
    """The error naming ``statement`` when a transaction cannot take it; None when it can."""
    if isinstance(statement, DATA_STATEMENTS):
        return None
    name = _NAMES.get(type(statement))
    if name is None:
        return None  # a query, SHOW, USE, DESCRIBE: reads
    if name == "CREATE TABLE" and " AS " in f" {text.upper()} ":
        name = "CREATE TABLE ... AS SELECT"
    return UnsupportedError(
        f"{name} cannot run inside a transaction: only INSERT, DELETE, UPDATE and MERGE "
        f"are part of one (COMMIT or ROLLBACK first, then run the {leading_word(text)} on its own)"
    )
