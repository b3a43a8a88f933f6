"""One table per scenario, the target beside each figure; the same as JSON in var/bench/."""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import platform
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import psutil

from bench.stack import BENCH_DIR


def percentile(values: Sequence[float], pct: float) -> float | None:
    """Nearest-rank percentile (pct in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return float(ordered[min(rank, len(ordered)) - 1])


def machine() -> dict[str, Any]:
    return {
        "cores": os.cpu_count(),
        "ramGB": round(psutil.virtual_memory().total / 1024**3, 1),
        "loadAverage": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
    }


@dataclass
class Figure:
    name: str
    value: float | int | str | None
    unit: str = ""
    target: str = ""
    met: bool | None = None


@dataclass
class Report:
    scenario: str
    figures: list[Figure] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    started_at: str = field(default_factory=lambda: dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))

    def add(
        self,
        name: str,
        value: float | int | str | None,
        unit: str = "",
        *,
        at_most: float | None = None,
        at_least: float | None = None,
        target: str = "",
    ) -> Figure:
        met: bool | None = None
        if isinstance(value, int | float) and at_most is not None:
            met, target = value <= at_most, target or f"≤ {at_most:g}"
        elif isinstance(value, int | float) and at_least is not None:
            met, target = value >= at_least, target or f"≥ {at_least:g}"
        elif value is None and (at_most is not None or at_least is not None):
            met, target = False, target or (f"≤ {at_most:g}" if at_most is not None else f"≥ {at_least:g}")
        figure = Figure(name=name, value=value, unit=unit, target=target, met=met)
        self.figures.append(figure)
        return figure

    def render(self) -> str:
        rows = []
        for f in self.figures:
            verdict = "" if f.met is None else ("ok" if f.met else "MISSED")
            rows.append([f.name, f"{_fmt(f.value)} {f.unit}".strip(), f.target, verdict])
        return text_table(self.scenario, ["figure", "value", "target", ""], rows, notes=self.notes)

    def write(self) -> None:
        BENCH_DIR.mkdir(parents=True, exist_ok=True)
        body = {
            "scenario": self.scenario,
            "startedAt": self.started_at,
            "finishedAt": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "machine": machine(),
            "figures": [asdict(f) for f in self.figures],
            "details": self.details,
            "notes": self.notes,
        }
        (BENCH_DIR / f"{self.scenario}.json").write_text(json.dumps(body, indent=2, default=str) + "\n")


def text_table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]], *, notes: Sequence[str] = ()) -> str:
    """``== title ==``, then a table of ``header`` and ``rows`` (columns as wide as their widest
    cell, the header ruled off), then a line per note: how the bench prints every table."""
    table = [list(header), *(list(row) for row in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    line = "+".join("-" * (w + 2) for w in widths)
    out = [f"== {title} ==", line]
    for index, cells in enumerate(table):
        out.append("|".join(f" {cell:<{widths[i]}} " for i, cell in enumerate(cells)))
        if index == 0:
            out.append(line)
    out.append(line)
    out.extend(f"  note: {n}" for n in notes)
    return "\n".join(out)


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 1:
            return f"{value:.2f}"
        return f"{value:.3f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
