"""Spark's ``CALL system.*`` table-maintenance procedures, run by iceduck."""
