"""The DB-API 2.0 compliance suite again, with transactions on: every connection the suite
opens has ``autocommit = False``, so its INSERTs wait in a transaction until ``commit()``
and its reads see them through read-your-writes (:mod:`iceduck.txn.transaction`); its
DDL, run before any change, commits on its own."""

from __future__ import annotations

from typing import Any

import iceduck
from tests import test_dbapi_compliance as plain


class IceduckDBAPI20TransactionsTest(plain.IceduckDBAPI20Test):
    def _connect(self) -> Any:
        con = iceduck.connect(*self.connect_args)
        con.autocommit = False
        return con

    def test_autocommit_off(self) -> None:
        con = self._connect()
        try:
            self.assertFalse(con.autocommit)
            cur = con.cursor()
            cur.execute(self.ddl1)
            cur.execute(f"insert into {self.table_prefix}booze values ('Victoria Bitter')")
            self.assertTrue(con.in_transaction)
            other = iceduck.connect(*self.connect_args)
            try:
                count = f"select count(*) from {self.table_prefix}booze"
                self.assertEqual(other.execute(count).fetchone(), (0,))
                con.commit()
                self.assertEqual(other.execute(count).fetchone(), (1,))
                cur.execute(f"insert into {self.table_prefix}booze values ('Cooper''s')")
                self.assertEqual(cur.execute(count).fetchone(), (2,))
                con.rollback()
                self.assertEqual(cur.execute(count).fetchone(), (1,))
            finally:
                other.close()
        finally:
            con.close()
