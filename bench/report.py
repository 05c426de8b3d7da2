"""The one command's output: the header (machine, versions, load), each section's lines, the
performance table of docs/performance.md (``--markdown``) and the JSON document (``--json``).

Why generated: the table of docs/performance.md must be exactly what a run printed, so it is pasted from
``python3 bench/run.py --all --markdown``, never edited by hand.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import duckdb
import targets
from common import Measure, Section, fmt_ms, fmt_ratio, load_average, machine, ratio


def versions() -> dict[str, str]:
    import iceduck

    out = {"iceduck": iceduck.__version__, "duckdb": duckdb.__version__}
    try:
        import pyiceberg

        out["pyiceberg"] = pyiceberg.__version__
    except ImportError:
        out["pyiceberg"] = "not installed"
    return out


def header() -> list[str]:
    v = versions()
    return [
        f"iceduck bench, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        f"machine: {machine()}",
        f"iceduck {v['iceduck']}, DuckDB {v['duckdb']}, PyIceberg {v['pyiceberg']}; "
        f"load average {load_average()} (the machine may be shared: compare rows of one run, not runs)",
    ]


def _cell(value: float | str | None, limit: float | None) -> str:
    """A peer's cell: ms with its multiple of the limit, or the text saying why not."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    r = ratio(value, limit)
    return f"{fmt_ms(value)} ({fmt_ratio(r)})" if r is not None else fmt_ms(value)


def markdown(sections: list[Section]) -> str:
    """One row per measure: measure | iceduck | limit | ratio | target | DuckDB ext |
    PyIceberg (ms unless the measure names its unit)."""
    lines = [
        "| measure | iceduck ms | limit ms | ratio | target | DuckDB ext ms | PyIceberg ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for sec in sections:
        for m in sec.measures:
            name = f"{m.name} ({m.note})" if m.note else m.name
            unit = "" if m.unit == "ms" else f" {m.unit}"
            lines.append(
                f"| {name} | {fmt_ms(m.iceduck)}{unit} | {fmt_ms(m.limit)}{unit} | {fmt_ratio(m.ratio)} | "
                f"{targets.cell(m)} | {_cell(m.duckdb_ext, m.limit)} | {_cell(m.pyiceberg, m.limit)} |"
            )
    return "\n".join(lines)


def target_lines(sections: list[Section]) -> list[str]:
    """Every target of bench/targets.py against this run's rows: met or missed."""
    return targets.lines([m for sec in sections for m in sec.measures])


def summary_lines(sections: list[Section]) -> list[str]:
    """The answers check across sections: the run is only worth reading when this is clean."""
    mismatches = [m for sec in sections for m in sec.mismatches]
    if not mismatches:
        return ["answers: every iceduck answer agreed with its baseline"]
    return ["ANSWERS DIFFER:", *(f"  {m}" for m in mismatches)]


def to_json(sections: list[Section], argv: list[str]) -> dict[str, Any]:
    def measure(m: Measure) -> dict[str, Any]:
        return {
            "name": m.name,
            "iceduck_ms": m.iceduck,
            "limit_ms": m.limit,
            "ratio": m.ratio,
            "duckdb_ext": m.duckdb_ext,
            "pyiceberg": m.pyiceberg,
            "note": m.note,
            "unit": m.unit,
            "target": targets.cell(m),
        }

    return {
        "when": f"{datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC",
        "machine": machine(),
        "versions": versions(),
        "load_average": load_average(),
        "argv": argv,
        "sections": {
            sec.name: {
                "measures": [measure(m) for m in sec.measures],
                "mismatches": sec.mismatches,
                "lines": sec.lines,
                "data": sec.data,
            }
            for sec in sections
        },
    }
