"""The project's speed and memory targets, checked against the rows one run printed.

Why here and not in the sections: a target is a promise of the project (an issue's "Done
when"), not a property of a measurement; keeping them in one table makes ``run.py --all``
say, at its end, which promises the run kept, and the table of docs/performance.md shows each row's
target beside its figure. A target is met or missed on one run's figures, compared within
that run (a ratio against the limit measured in the same run), never as a timed assertion
in a test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from common import Measure, fmt_ratio


@dataclass(frozen=True)
class Target:
    """A bound on the measures whose name matches ``pattern``: on their ratio to the limit
    (``kind == "ratio"``) or on iceduck's own figure in the measure's unit (``"value"``)."""

    pattern: str
    bound: float
    kind: str = "ratio"
    #: where the promise comes from, printed with it
    source: str = ""

    def matches(self, m: Measure) -> bool:
        return re.search(self.pattern, m.name) is not None

    def figure(self, m: Measure) -> float | None:
        return m.ratio if self.kind == "ratio" else m.iceduck

    def text(self, unit: str = "ms") -> str:
        return f"<= {fmt_ratio(self.bound)}" if self.kind == "ratio" else f"<= {self.bound:g} {unit}"


#: every target, first match wins (so a narrower pattern goes before a wider one)
TARGETS: tuple[Target, ...] = (
    Target(r"^TPC-DS .* worst query", 1.25, source="issue 31: no TPC-DS query over 1.25x"),
    Target(r"^TPC-DS .*queries, total", 1.05, source="issue 31"),
    Target(r"^TPC-H .* worst query", 1.25, source="TPC-H worst query, as TPC-DS"),
    Target(r"^TPC-H .*queries.*, total", 1.03, source="issue 31"),
    Target(r"^events .*point query, warm", 1.5, source="issue 31: warm point query"),
    Target(r"point query repeated", 1.2, source="issue 31: repeated statements"),
    Target(r"^events .*full query, warm", 1.0, source="analytical speed: full scan"),
    Target(r"^MoR ", 1.25, source="analytical speed: merge-on-read"),
    Target(r"^write: INSERT", 1.15, source="INSERT against DuckDB COPY"),
    Target(r"^one-row commit, sqlite catalog", 10.0, kind="value", source="one-row commit"),
    Target(r"^cold CLI query", 400.0, kind="value", source="issue 31: cold CLI"),
    Target(r"sequential round trips.*cold point", 8.0, kind="value", source="issue 31: lake at 20 ms"),
    Target(r"peak RSS", 1.1, source="streaming memory against DuckDB's"),
)


def target_of(m: Measure) -> Target | None:
    return next((t for t in TARGETS if t.matches(m)), None)


def verdict(m: Measure) -> str:
    """``"met"``, ``"MISSED"``, or ``""`` when the measure has no target or no figure."""
    t = target_of(m)
    figure = None if t is None else t.figure(m)
    if t is None or figure is None:
        return ""
    return "met" if figure <= t.bound else "MISSED"


def cell(m: Measure) -> str:
    """The performance table's target cell: the bound and whether this run kept it."""
    t = target_of(m)
    if t is None:
        return ""
    v = verdict(m)
    return f"{t.text(m.unit)} ({v})" if v else t.text(m.unit)


def lines(measures: list[Measure]) -> list[str]:
    """The run's end: each target with its rows' figures, then how many were met."""
    out = ["targets (ratios within this run; see bench/targets.py):"]
    met = missed = 0
    for m in measures:
        t = target_of(m)
        v = verdict(m)
        if t is None or not v:
            continue
        figure = t.figure(m)
        shown = fmt_ratio(figure) if t.kind == "ratio" else f"{figure:,.1f} {m.unit}"
        out.append(f"  {v:6} {m.name}: {shown} (target {t.text(m.unit)}; {t.source})")
        met, missed = (met + 1, missed) if v == "met" else (met, missed + 1)
    out.append(f"targets: {met} met, {missed} missed")
    return out
