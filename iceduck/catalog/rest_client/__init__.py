"""The Iceberg REST catalog client: ``http`` the transport, ``error_model`` the spec's
errors as iceduck's, ``auth`` bearer tokens and OAuth2, ``config`` the negotiation,
``catalog`` the :class:`~iceduck.catalog.base.Catalog` itself.
"""
