"""pypaimon, the Paimon project's Python SDK, as the writer and the reference reader of test tables.

pypaimon 2.1.0 needs pyarrow<20, pandas<3 and polars<2, which iceduck's own environment is past,
so it lives in its own venv, ``tests/.venv-paimon`` (git-ignored; ``.ci/run`` creates it, and the
first test that needs it creates it too, under a file lock so two pytest processes do not race).
``paimon_writer.py`` runs there as a subprocess and never imports iceduck: every expected result
comes from pypaimon's reader.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.support.scenario_rows import Rows

REPO_ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("ICEDUCK_PAIMON_VENV") or REPO_ROOT / "tests" / ".venv-paimon")
WRITER = Path(__file__).with_name("paimon_writer.py")
PYPAIMON = "pypaimon==2.1.0"
#: the tables of paimon_writer.py whose rows are compared (``fmt_orc``/``fmt_avro``: the error tests)
TABLES = (
    "append_part",
    "pk",
    "pk_part",
    "pk_dv",
    "evolved",
    "append_dv",
    "partial",
    "agg",
    "first",
    "pk_multi",
    "pk_dynamic",
    "fmt_orc",
    "fmt_avro",
    "pk_orc",
    "pk_avro",
)
#: written last, after a successful install: a venv without it is half-made and gets rebuilt
STAMP = "pypaimon-installed"


class PaimonEnvError(RuntimeError):
    """The pypaimon venv cannot be created (no network to PyPI, no venv module): the reason."""


def venv_python() -> Path:
    return VENV / "bin" / "python"


def ensure_venv() -> Path:
    """The venv's interpreter, creating the venv (``pip install pypaimon==2.1.0``) when missing."""
    try:
        VENV.parent.mkdir(parents=True, exist_ok=True)
        with open(VENV.parent / ".venv-paimon.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if (VENV / STAMP).exists() and venv_python().exists():
                return venv_python()
            venv.EnvBuilder(clear=True, with_pip=True).create(VENV)
            done = subprocess.run(
                [str(venv_python()), "-m", "pip", "install", "-q", "--disable-pip-version-check", PYPAIMON],
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0:
                raise PaimonEnvError(
                    f"pip install {PYPAIMON} into {VENV} failed: {done.stderr.strip()[-2000:]}"
                )
            (VENV / STAMP).write_text(PYPAIMON + "\n")
            return venv_python()
    except (OSError, subprocess.SubprocessError) as e:
        raise PaimonEnvError(f"cannot create {VENV}: {e}") from e


def run_pypaimon(script: Path, *args: str, timeout: float = 600) -> str:
    """Run ``script`` in the pypaimon venv; its stdout, or an error carrying its stderr."""
    python = ensure_venv()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run(
        [str(python), str(script), *args], capture_output=True, text=True, timeout=timeout, env=env
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{script.name} {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-4000:]}"
        )
    return done.stdout


@dataclass(frozen=True)
class Expected:
    """One of pypaimon's reads of a table: at ``snapshot``, ``tag`` or the latest, with ``where``."""

    table: str
    file: Path
    snapshot: int | None = None
    tag: str | None = None
    where: str | None = None
    #: a system table (``snapshots``, ``files``...): pypaimon's read of ``<table>$<system>``
    system: str | None = None


@dataclass(frozen=True)
class PaimonWarehouse:
    """The warehouse ``paimon_writer.py`` wrote, and pypaimon's expected reads of it."""

    path: Path
    expected: tuple[Expected, ...]
    notes: dict[str, Any]

    def table_path(self, table: str, database: str = "db") -> Path:
        return self.path / f"{database}.db" / table

    def reads(self, table: str) -> list[Expected]:
        """pypaimon's reads of ``table``'s rows (every snapshot, tag, filter), not its system tables."""
        return [e for e in self.expected if e.table == table and e.system is None]

    def current(self, table: str) -> Expected:
        """pypaimon's full read of ``table`` at its latest snapshot."""
        (read,) = (e for e in self.reads(table) if e.snapshot is None and e.tag is None and e.where is None)
        return read

    def system(self, table: str, system: str) -> Expected:
        """pypaimon's read of the system table ``<table>$<system>``."""
        (read,) = (e for e in self.expected if e.table == table and e.system == system)
        return read


def write_warehouse(path: Path) -> PaimonWarehouse:
    """Write the test warehouse at ``path`` with pypaimon (about 3 s) and load its index."""
    run_pypaimon(WRITER, str(path))
    return load_warehouse(path)


def table_rows(table: Any) -> Rows:
    """``scenario_rows.arrow_rows`` of a ``pyarrow.Table`` with lists as tuples, so rows are hashable
    (``assert_same`` counts them) whatever the nesting (``append_part`` has an ARRAY column)."""
    from tests.support.scenario_rows import arrow_rows  # not at import: bench/paimon.py uses the venv alone

    names, rows = arrow_rows(table)
    return names, sorted((_frozen(r) for r in rows), key=repr)


def _frozen(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return ("list" if isinstance(value, list) else "tuple", tuple(_frozen(v) for v in value))
    return value


def load_warehouse(path: Path) -> PaimonWarehouse:
    folder = path / "_expected"
    index = json.loads((folder / "index.json").read_text())
    expected = tuple(
        Expected(
            e["table"], folder / e["file"], e.get("snapshot"), e.get("tag"), e.get("where"), e.get("system")
        )
        for e in index
    )
    return PaimonWarehouse(path, expected, json.loads((folder / "notes.json").read_text()))


if __name__ == "__main__":  # python3 tests/support/paimon.py <folder>: write a warehouse by hand
    print(write_warehouse(Path(sys.argv[1])).path)
