"""A session and its helpers: what runs one statement through the layers.

``session`` holds :class:`~iceduck.session.session.Session` ("life of a query", "life of a
write"); around it, a statement's references resolved and attached (``name_resolution``,
``iceberg_sources``, ``paimon_sources``, ``python_objects`` over ``caller_scope``), the
connection's own objects (``own_objects``), the rows iceduck answers itself (``answers``), a
statement's result (``result``, its Arrow, pandas and polars forms in ``result_forms``), and
``executemany`` as one INSERT (``batch_insert``).
"""
