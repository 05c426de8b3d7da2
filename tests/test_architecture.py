"""The layer rules of the README's "Layout" table, checked rather than intended.

Imports are checked by import-linter against the contracts in ``pyproject.toml`` (the same
check CI runs as ``lint-imports``). What an import graph cannot see is checked here over the
syntax trees of the package:

- only ``engine/`` *calls* DuckDB: elsewhere a DuckDB handle (by iceduck's naming
  convention a name or attribute called ``duck`` or ``database``) may be passed along, but no
  attribute of it is read, so none of its methods is called;
- ``spec/`` does no I/O, not even through the ``open`` builtin;
- ``__init__.py`` files hold no logic: a docstring, imports and ``__all__``;
- one error hierarchy: every exception class derives from ``IceduckError`` (the PEP 249
  classes of ``dbapi.py`` excepted, onto which ``dbapi.MAPPING`` maps them).
"""

from __future__ import annotations

import ast
import inspect
import logging
from pathlib import Path

import pytest

import iceduck
from iceduck import dbapi, errors

PACKAGE = Path(iceduck.__file__).parent
ENGINE = PACKAGE / "engine"

#: the names iceduck gives a DuckDB connection or cursor outside the engine
DUCKDB_HANDLE_NAMES = frozenset({"duck", "database"})


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _label(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(PACKAGE.parent)}:{getattr(node, 'lineno', '?')}"


def _receiver_name(node: ast.expr) -> str | None:
    """``duck`` for ``duck.execute``, ``ctx.duck.sql`` and ``self.database.cursor``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def duckdb_uses(tree: ast.Module) -> list[ast.Attribute]:
    """Uses of a DuckDB handle: any attribute read from it, ``<handle>.<method>`` (called at once
    or handed to a wrapper that calls it)."""
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and _receiver_name(node.value) in DUCKDB_HANDLE_NAMES
    ]


def test_the_check_sees_uses_of_a_handle_and_lets_it_be_passed_along():
    source = "ctx.duck.sql('SELECT 1')\nself.database.cursor()\ncall(self.duck.fetchone)\nf(ctx.duck, duck)\n"
    uses = duckdb_uses(ast.parse(source))
    shown = sorted(ast.unparse(u) for u in uses)
    assert shown == ["ctx.duck.sql", "self.database.cursor", "self.duck.fetchone"]


def test_only_the_engine_calls_duckdb():
    found = [
        f"{_label(path, use)}: {ast.unparse(use)}"
        for path in _modules()
        if ENGINE not in path.parents
        for use in duckdb_uses(_tree(path))
    ]
    assert found == [], "DuckDB is called outside engine/:\n" + "\n".join(found)


def test_spec_does_no_io():
    found = [
        _label(path, node)
        for path in _modules()
        if PACKAGE / "spec" in path.parents
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open"
    ]
    assert found == [], f"spec/ opens files: {found}"


def _is_plain_statement(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import | ast.ImportFrom):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return True  # the docstring
    targets = node.targets if isinstance(node, ast.Assign) else []
    return len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id == "__all__"


def test_init_files_hold_no_logic():
    found = [
        _label(path, node)
        for path in _modules()
        if path.name == "__init__.py"
        for node in _tree(path).body
        if not _is_plain_statement(node)
    ]
    assert found == [], f"logic in __init__.py: {found}"


_EXCEPTION_SUFFIXES = ("Error", "Exception", "Warning")


def _exception_classes(path: Path) -> list[ast.ClassDef]:
    return [
        node
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.ClassDef)
        and any(isinstance(b, ast.Name) and b.id.endswith(_EXCEPTION_SUFFIXES) for b in node.bases)
    ]


def test_one_error_hierarchy():
    """Every exception iceduck raises of its own is an ``IceduckError``, so ``dbapi_error`` maps
    it onto PEP 249; only ``dbapi.py`` defines the PEP 249 classes themselves."""
    found = []
    for path in _modules():
        if path == PACKAGE / "dbapi.py":
            continue
        module_name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        module = __import__(module_name, fromlist=["_"])
        for node in _exception_classes(path):
            cls = getattr(module, node.name)
            if not (inspect.isclass(cls) and issubclass(cls, errors.IceduckError)):
                found.append(f"{_label(path, node)}: {node.name}")
    assert found == [], f"exceptions outside the IceduckError hierarchy: {found}"


@pytest.mark.parametrize(
    "kind", [c for c in vars(errors).values() if inspect.isclass(c) and issubclass(c, errors.IceduckError)]
)
def test_every_error_kind_maps_onto_dbapi(kind):
    assert isinstance(dbapi.dbapi_error(kind("x")), dbapi.Error)


def test_import_contracts_hold():
    """The contracts of ``pyproject.toml`` (what ``lint-imports`` checks in CI)."""
    from importlinter.cli import EXIT_STATUS_SUCCESS, lint_imports  # the test extra's import-linter

    # its logging.config.dictConfig disables every logger that exists (disable_existing_loggers):
    # later tests reading a log (the REST server's access log, ``iceduck.rest``) would see nothing
    enabled = [
        logger
        for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger) and not logger.disabled
    ]
    try:
        config = str(PACKAGE.parent / "pyproject.toml")
        status = lint_imports(config_filename=config, no_cache=True, no_logo=True)
    finally:
        for logger in enabled:
            logger.disabled = False
    assert status == EXIT_STATUS_SUCCESS, "a layer rule of pyproject.toml is broken: see the report above"
