"""Which legacy position delete files a v3 write's new deletion vectors replace.

A table upgraded from v2 to v3 keeps its Parquet position delete files ("Existing
position delete files are valid in tables that have been upgraded from v2"), but a write
that deletes from one of their data files writes a deletion vector instead, and "These
position delete files must be merged into the DV for a data file when one is created"
(spec, "Version 3"). Once merged, the old file is redundant for that data file: "If a DV
is written for a data file, it must replace all previously written position delete files
so that when a DV is present, readers can safely ignore matching position delete files".

When may the old file leave the table? "Position delete files that contain deletes for
more than one data file need to be kept in table metadata until all deletes are replaced
by DVs". So a position delete file is removed in the commit that writes DVs exactly when
every data file it holds deletes for has a DV once the commit lands: one written by this
commit, or one the snapshot already has (a DV made earlier merged this file's deletes, as
every DV must), or one this commit removes; deletes of a data file no longer live are
moot. Any other data file keeps the file in the table: keeping a redundant delete file
is always safe, dropping a needed one would resurrect rows.

Iceberg Java 1.10 (``BaseDVFileWriter`` / ``ClusteredDVFileWriter``) removes only the
*file-scoped* previous deletes (``referenced_data_file`` set, or equal ``file_path``
bounds) and leaves multi-file ones in place for good; this rule removes those too and,
in addition, a multi-file one as soon as all its data files are covered, which the spec
allows and keeps v3 reads from opening files every reader ignores.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping


def replaced_position_delete_files(
    contents: Mapping[str, Iterable[str]], covered: Collection[str], live: Collection[str]
) -> list[str]:
    """The position delete files (paths, in the order given) every deletion of which is
    for a data file in ``covered`` -- the data files with a DV once the commit lands or
    removed by it -- or for one not in ``live`` (removed earlier: its deletes are moot).

    ``contents`` maps each candidate position delete file to the data files it holds
    deletes for (as read from the file itself, not guessed from metadata)."""
    covered = set(covered)
    live = set(live)
    replaced = []
    for path, data_files in contents.items():
        needed = {f for f in data_files if f in live and f not in covered}
        if not needed:
            replaced.append(path)
    return replaced
