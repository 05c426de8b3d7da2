"""The Iceberg REST catalog server (``iceduck serve``): any iceduck catalog over HTTP.

``server`` is the transport, ``routes`` the dispatch table, ``config``/``namespaces``/
``tables`` the handlers per resource, ``errors`` the spec's JSON error model.
"""
