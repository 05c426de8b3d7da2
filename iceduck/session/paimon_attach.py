"""``ATTACH 'location' AS alias (TYPE paimon)`` and ``DETACH alias``: the session's map of
attached Paimon warehouses, by lower-case alias (their tables read as
``alias.<database>.<table>``, :mod:`iceduck.session.paimon_sources`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from iceduck.errors import NotFoundError, UserError
from iceduck.io.fileio import to_local_path
from iceduck.io.listing import list_children
from iceduck.io.object_store import is_object_store
from iceduck.session.iceberg_sources import DUCKDB_SCHEMAS

if TYPE_CHECKING:  # the Paimon catalog is imported by ATTACH, not by every session
    from iceduck.catalog.paimon_warehouse import PaimonWarehouse


def attach(
    paimon: dict[str, PaimonWarehouse], location: str | Path, alias: str, if_not_exists: bool, catalog: str
) -> None:
    """Add the warehouse at ``location`` as ``alias`` to ``paimon``; ``catalog`` is the
    Iceberg catalog's name, which no alias may take."""
    if not isinstance(alias, str) or not alias or "." in alias:
        raise UserError(f"a Paimon warehouse alias is a plain name, not {alias!r}")
    key = alias.lower()
    if key in paimon:
        if if_not_exists:
            return
        raise UserError(f"{alias} is attached already (to {paimon[key].location}); DETACH it first")
    if key == catalog.lower() or key in DUCKDB_SCHEMAS:
        raise UserError(f"{alias} cannot name a Paimon warehouse: it is the name of a catalog or schema")
    text = str(location)
    if is_object_store(text):
        list_children(text)  # reach the store now: a wrong endpoint or credential fails here
    else:
        text = str(Path(to_local_path(text)).expanduser().resolve())
        if not Path(text).is_dir():
            raise NotFoundError(f"cannot attach {alias}: no Paimon warehouse folder at {text}")
    from iceduck.catalog.paimon_warehouse import PaimonWarehouse

    paimon[key] = PaimonWarehouse(text, alias)


def detach(paimon: dict[str, PaimonWarehouse], alias: str, if_exists: bool) -> None:
    """Remove the warehouse attached as ``alias`` from ``paimon``."""
    if paimon.pop(alias.lower(), None) is None and not if_exists:
        attached = ", ".join(w.alias for w in paimon.values()) or "none"
        raise NotFoundError(f"no Paimon warehouse is attached as {alias} (attached: {attached})")
