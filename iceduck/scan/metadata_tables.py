"""The import path of metadata tables for the SQL layer; they live in :mod:`iceduck.scan.metadata`.

``metadata_table(kind, metadata, metadata_location, *, snapshot_id=None, reader=None)``
returns the ``pyarrow.Table`` Spark shows for ``ns.t.<kind>``; see
:mod:`iceduck.scan.metadata.tables`.
"""

from __future__ import annotations

from iceduck.scan.metadata.reader import DirectManifestSource, ManifestSource
from iceduck.scan.metadata.tables import METADATA_TABLE_KINDS, metadata_table

__all__ = ["METADATA_TABLE_KINDS", "DirectManifestSource", "ManifestSource", "metadata_table"]
