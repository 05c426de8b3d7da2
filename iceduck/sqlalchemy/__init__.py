"""SQLAlchemy dialect for iceduck: ``create_engine("iceduck:///warehouse")``.

:mod:`iceduck.sqlalchemy.dialect` is the dialect (registered as the ``iceduck`` entry point
of ``sqlalchemy.dialects``), :mod:`iceduck.sqlalchemy.url` reads the URL into
:func:`iceduck.connect`'s arguments, :mod:`iceduck.sqlalchemy.types` maps column types, and
:mod:`iceduck.sqlalchemy.reflection` asks the catalog what it holds.
"""
