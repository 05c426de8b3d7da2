"""Scenario scripts: ordered SQL steps, each run by one writer, as plain data.

A scenario is what the end-to-end write suite replays (:mod:`tests.support.scenario`
runs it): an ordered list of :class:`Step`, each one SQL statement run by one *writer* --
``iceduck`` (``iceduck.connect(warehouse).cursor().execute(sql)``), ``spark`` (the
reference Spark through the ``spark`` fixture) or ``query`` (a SELECT every reader runs
and whose answers must agree, for reads of branches and tags). After each step the table
under test is read by every reader and compared with the reference answer.

Scripts live in ``sql/tests/*.sql`` so they double as golden scripts; the format::

    -- any comment line is ignored, except these directives:
    -- step: iceduck [peers] [nocheck] [error=ValidationError] [when=fv:3] [unless=mode:merge-on-read]
    INSERT INTO $ns.t VALUES (1, 'a');
    -- reference: INSERT INTO $ns.t VALUES (1, 'a')   (the DuckDB text, when it differs; may repeat;
    --                                                   "-- reference: none" = nothing to do)
    -- table: $ns.t2                                   (the table checked from this step on)
    -- expect:                                         (what the statement returns: the comment
    -- Iceberg scan of iceduck.shop.t                   lines that follow, each one output line,
    --   snapshot: ...                                  up to a blank line; the golden EXPLAIN
                                                        scripts, tests/sql/test_golden_scripts.py)

``$name`` placeholders are filled from the scenario's parameters (:class:`string.Template`;
``$ns`` the namespace, ``$fv`` the format version, ``$mode`` the row-level write mode...).
``peers`` adds the second-opinion readers (PyIceberg, DuckDB's Iceberg extension) after
the step; ``error=Kind`` makes the step a bad statement: it must raise that
:mod:`iceduck.errors` kind and leave the table unchanged; ``when``/``unless`` keep a step
only for some parameter values.

Every statement without a ``-- reference:`` line is translated to DuckDB by
:func:`reference_sql` (Iceberg-only clauses dropped, Spark types spelled as DuckDB's); Iceberg
statements with no table-content effect (partition evolution, sort orders, properties,
branches...) are no-ops on the reference.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, replace
from pathlib import Path

WRITERS = ("iceduck", "spark", "query")
FLAGS = ("peers", "nocheck")
NO_REFERENCE = "none"


class ScriptError(ValueError):
    """A scenario script that does not follow the format of the module docstring."""


@dataclass(frozen=True)
class Step:
    """One statement of a scenario, run by ``writer``, then checked (unless ``check`` is off)."""

    writer: str
    sql: str
    #: the DuckDB text run on the reference; None: translate ``sql``; "": nothing
    reference: str | None = None
    #: the iceduck error kind a bad statement must raise (name in :mod:`iceduck.errors`)
    error: str | None = None
    #: the table checked from this step on (None: the previous step's)
    table: str | None = None
    peers: bool = False
    check: bool = True
    #: the script line the step starts on (for messages)
    line: int = 0
    #: the output the statement must return, one line per line (``-- expect:``); None: unchecked
    expect: str | None = None
    #: the script line of the ``-- expect:`` directive (where a regenerated block goes)
    expect_line: int = 0

    def where(self) -> str:
        return f"line {self.line}" if self.line else "step"


@dataclass(frozen=True)
class Scenario:
    name: str
    steps: tuple[Step, ...]
    #: namespaces the scenario creates: dropped before it runs (a kept warehouse keeps them)
    namespaces: tuple[str, ...]


# -- parsing ----------------------------------------------------------------------------------------

_DIRECTIVE = re.compile(r"^--\s*(step|reference|table|expect)\s*:\s*(.*)$", re.IGNORECASE)
_NAMESPACE = re.compile(r"\bCREATE\s+(?:NAMESPACE|SCHEMA)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.IGNORECASE)
Condition = tuple[str, str, str]  # ("when" | "unless", parameter, value)


def parse_script(text: str, name: str, params: dict[str, str]) -> Scenario:
    """The scenario of a script, ``$placeholders`` filled from ``params``, conditions applied."""
    try:
        text = string.Template(text).substitute(params)
    except (KeyError, ValueError) as exc:
        raise ScriptError(f"{name}: placeholder {exc} has no value (parameters: {sorted(params)})") from exc
    steps = tuple(step for step, conditions in _steps(text, name) if _applies(conditions, params, name, step))
    if not steps:
        raise ScriptError(f"{name}: no steps")
    namespaces = tuple(sorted({m.group(1) for s in steps for m in _NAMESPACE.finditer(s.sql)}))
    return Scenario(name, steps, namespaces)


def load_script(path: Path, params: dict[str, str]) -> Scenario:
    """The scenario of ``path`` for one set of parameters, named ``<stem>[<params>]``."""
    label = ",".join(f"{k}={v}" for k, v in sorted(params.items()) if k not in ("ns", "writer"))
    label += "" if params.get("writer", "iceduck") == "iceduck" else f",by={params['writer']}"
    return parse_script(path.read_text(), f"{path.stem}[{label}]", params)


def _steps(text: str, name: str) -> list[tuple[Step, tuple[Condition, ...]]]:
    steps: list[tuple[Step, tuple[Condition, ...]]] = []
    current: dict | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        match = _DIRECTIVE.match(line)
        directive = match.group(1).lower() if match else None
        if current is not None and current.get("expecting") and directive != "step":
            if line.startswith("--"):
                current["expect"].append(_expected_line(line))
                continue
            current["expecting"] = False  # a blank line ends the block
            if line:
                raise ScriptError(f"{name}:{number}: SQL after '-- expect:' (the output comes last)")
            continue
        if directive == "step":
            if current is not None:
                steps.append(_finish(current, name))
            current = {"line": number, "header": match.group(2).split(), "sql": [], "reference": None}
        elif current is None:
            if line and not line.startswith("--"):
                raise ScriptError(f"{name}:{number}: SQL before the first '-- step:' line")
        elif directive == "reference":
            current["reference"] = (current["reference"] or []) + [match.group(2)]
        elif directive == "table":
            current["table"] = match.group(2).strip()
        elif directive == "expect":
            current.update(expect=[], expect_line=number, expecting=True)
        elif line and not line.startswith("--"):
            current["sql"].append(raw)
    if current is not None:
        steps.append(_finish(current, name))
    return steps


def _finish(current: dict, name: str) -> tuple[Step, tuple[Condition, ...]]:
    header: list[str] = current["header"]
    where = f"{name}:{current['line']}"
    if not header or header[0] not in WRITERS:
        raise ScriptError(f"{where}: a step names its writer first, one of {WRITERS}")
    sql = "\n".join(current["sql"]).strip().rstrip(";").strip()
    if not sql:
        raise ScriptError(f"{where}: a step without SQL")
    if ";" in _strip_strings(sql):
        raise ScriptError(f"{where}: one statement per step (Spark runs one at a time)")
    step = Step(header[0], sql, line=current["line"], table=current.get("table"))
    if "expect" in current:
        step = replace(step, expect="\n".join(current["expect"]), expect_line=current["expect_line"])
    reference = current["reference"]
    if reference is not None:
        text = "\n".join(reference).strip()
        step = replace(step, reference="" if text.lower() == NO_REFERENCE else text)
    conditions: list[Condition] = []
    for option in header[1:]:
        key, _, value = option.partition("=")
        if option == "peers":
            step = replace(step, peers=True)
        elif option == "nocheck":
            step = replace(step, check=False)
        elif key == "error" and value:
            step = replace(step, error=value)
        elif key in ("when", "unless") and ":" in value:
            param, _, wanted = value.partition(":")
            conditions.append((key, param, wanted))
        else:
            raise ScriptError(f"{where}: unknown step option {option!r}")
    if step.error and step.writer != "iceduck":
        raise ScriptError(f"{where}: only iceduck steps can expect an error")
    return step, tuple(conditions)


def _expected_line(line: str) -> str:
    """One line of expected output: the comment marker and the one space after it removed."""
    text = line.removeprefix("--")
    return text.removeprefix(" ")


def _applies(conditions: tuple[Condition, ...], params: dict[str, str], name: str, step: Step) -> bool:
    for kind, param, wanted in conditions:
        if param not in params:
            raise ScriptError(f"{name}:{step.line}: condition on unknown parameter {param!r}")
        if (params[param] == wanted) != (kind == "when"):
            return False
    return True


def _strip_strings(sql: str) -> str:
    """``sql`` with its string literals emptied (a ';' inside a literal is not a separator)."""
    return re.sub(r"'(?:[^']|'')*'", "''", sql)
