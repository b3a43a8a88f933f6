"""``python -m bench --baseline REV [--rounds N]``: every chosen scenario measured on a reference
commit and on this tree in the same run, on the same machine, alternating (reference, current,
reference, current…), N rounds each; the medians of every figure side by side with the ratio
current / reference, printed and written to ``var/bench/compare-<scenario>.json``.

The machine is shared and the same code moves by a fifth from one run to the next: a change is
only known against a reference measured beside it, as a median of several alternating rounds.

The reference is a git worktree of REV under ``var/bench/`` whose ``bench/`` is replaced by this
tree's: the driver (``bench/``: seeding, load, measurements, figures) is always the current one, so
both sides are measured the same way, and the system under test (everything else: the apps,
``config/``, ``gunicorn.conf.py``, the migrations) is REV's. Each round is one ``python -m bench
--scenario NAME`` in a process of its own, started in that side's tree with it first on
``PYTHONPATH``, so its in-process measurements, web, worker and beat import that tree's code; it
migrates a fresh ``crosspost_bench`` database, settles it and drops it, whichever side it is."""

from __future__ import annotations

import json
import math
import shutil
import statistics
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.report import _fmt, machine, text_table
from bench.stack import BENCH_DIR, PYTHON, ROOT

SIDES = ("reference", "current")


@dataclass(frozen=True)
class Round:
    scenario: str
    side: str  # "reference" or "current"
    number: int  # 1-based, per side


def schedule(scenarios: Sequence[str], rounds: int) -> list[Round]:
    """The order of the runs: each scenario in turn, its rounds alternating reference, current."""
    return [Round(s, side, n) for s in scenarios for n in range(1, rounds + 1) for side in SIDES]


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) else value


def median(values: Iterable[Any]) -> int | float | None:
    """The median of the numeric values (None, text and NaN left out); None when there is none."""
    numbers = [n for n in map(_number, values) if n is not None]
    return statistics.median(numbers) if numbers else None


def ratio(current: int | float | None, reference: int | float | None) -> float | None:
    """current / reference; None when either is missing or the reference is 0."""
    if current is None or reference is None or reference == 0:
        return None
    return current / reference


def compare(reference: Sequence[dict[str, Any]], current: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per figure name of the rounds' reports (``Report.write``'s JSON): each side's value
    in every round (None where a round lacks the figure), the medians and their ratio. Figures in
    the current reports' order, then any only the reference has. Text figures have no median:
    their distinct values are listed instead."""
    names: dict[str, str] = {}  # name -> unit, in order of first appearance
    for report in (*current, *reference):
        for figure in report.get("figures", []):
            names.setdefault(figure["name"], figure.get("unit", ""))
    rows = []
    for name, unit in names.items():
        row: dict[str, Any] = {"figure": name, "unit": unit}
        for side, reports in (("reference", reference), ("current", current)):
            values = [_value(report, name) for report in reports]
            texts = [v for v in values if v is not None and _number(v) is None]
            row[side] = {"values": values, "median": median(values), "texts": list(dict.fromkeys(map(str, texts)))}
        row["ratio"] = ratio(row["current"]["median"], row["reference"]["median"])
        rows.append(row)
    return rows


def _value(report: dict[str, Any], name: str) -> Any:
    for figure in report.get("figures", []):
        if figure["name"] == name:
            return figure.get("value")
    return None


def render(scenario: str, rows: Sequence[dict[str, Any]], *, reference: str, current: str, notes: Sequence[str]) -> str:
    header = ["figure", f"reference {reference}", f"current {current}", "current / reference"]
    table = [
        [
            row["figure"],
            _cell(row["reference"], row["unit"]),
            _cell(row["current"], row["unit"]),
            "n/a" if row["ratio"] is None else f"{row['ratio']:.3f}",
        ]
        for row in rows
    ]
    return text_table(f"{scenario}: medians, reference against current", header, table, notes=notes)


def _cell(side: dict[str, Any], unit: str) -> str:
    if side["median"] is not None:
        return f"{_fmt(side['median'])} {unit}".strip()
    if side["texts"]:
        return " / ".join(side["texts"])
    return "n/a"


# running the rounds ------------------------------------------------------------------------
def _git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd or ROOT, check=True, capture_output=True, text=True).stdout.strip()


def describe_current() -> str:
    """This tree's commit, marked when its tracked files differ from it (the run measures those)."""
    head = _git("rev-parse", "--short=10", "HEAD")
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--"], cwd=ROOT).returncode != 0
    return f"{head}+changes" if dirty else head


def prepare_reference(rev: str) -> tuple[str, Path]:
    """(the commit REV names, a worktree of it under var/bench/ with this tree's bench/)."""
    sha = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    path = BENCH_DIR / f"ref-{sha[:10]}"
    # A worktree has a .git file; without one, git would answer for this tree, which holds the path.
    if path.exists() and not ((path / ".git").is_file() and _git("rev-parse", "HEAD", cwd=path) == sha):
        remove_reference(path)
        shutil.rmtree(path, ignore_errors=True)
    if not path.exists():
        BENCH_DIR.mkdir(parents=True, exist_ok=True)
        # --force: a worktree of that path removed by `make clean` is still registered.
        _git("worktree", "add", "--force", "--detach", str(path), sha)
    shutil.rmtree(path / "bench", ignore_errors=True)
    shutil.copytree(ROOT / "bench", path / "bench", ignore=shutil.ignore_patterns("__pycache__"))
    return sha, path


def remove_reference(path: Path) -> None:
    subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, capture_output=True)


def run_round(tree: Path, scenario: str, options: Sequence[str], env: dict[str, str]) -> dict[str, Any] | None:
    """One ``python -m bench --scenario NAME`` in ``tree``; its report's JSON, None if it wrote none."""
    written = tree / "var" / "bench" / f"{scenario}.json"
    written.unlink(missing_ok=True)
    process_env = {**env, "PYTHONPATH": str(tree)}
    result = subprocess.run([PYTHON, "-m", "bench", "--scenario", scenario, *options], cwd=tree, env=process_env)
    if result.returncode != 0 or not written.exists():
        return None
    return dict(json.loads(written.read_text()))


def run(
    *, baseline: str, scenarios: Sequence[str], rounds: int, options: Sequence[str], keep: bool, env: dict[str, str]
) -> int:
    """Run the schedule, print and write one comparison per scenario; 1 if any round failed."""
    sha, tree = prepare_reference(baseline)
    reference_name, current_name = sha[:10], describe_current()
    trees = {"reference": tree, "current": ROOT}
    driver_note = (
        f"the reference rounds ran this tree's bench driver (bench/ of {current_name}) against {reference_name}'s "
        "application code: its own bench/ was not used"
    )
    print(
        f"bench: comparing {current_name} with {baseline} ({reference_name}), {rounds} alternating rounds", flush=True
    )
    print(f"bench: {driver_note}", flush=True)
    failed = 0
    try:
        reports: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for item in schedule(scenarios, rounds):
            label = reference_name if item.side == "reference" else current_name
            print(f"bench: {item.scenario}, round {item.number} of {rounds}, {item.side} ({label})", flush=True)
            report = run_round(trees[item.side], item.scenario, options, env)
            if report is None:
                failed += 1
                print(f"bench: {item.scenario} {item.side} round {item.number} failed (no report)", flush=True)
                report = {"figures": [], "failed": True}
            report["round"], report["side"] = item.number, item.side
            reports.setdefault((item.scenario, item.side), []).append(report)
            if item.side == SIDES[-1] and item.number == rounds:
                _conclude(item.scenario, reports, baseline=baseline, names=(reference_name, current_name))
                print(f"  ({driver_note})\n", flush=True)
    finally:
        if not keep:
            remove_reference(tree)
    return 1 if failed else 0


def _conclude(
    scenario: str, reports: dict[tuple[str, str], list[dict[str, Any]]], *, baseline: str, names: tuple[str, str]
) -> None:
    reference, current = reports[(scenario, "reference")], reports[(scenario, "current")]
    rows = compare(reference, current)
    notes = [f"medians of {len(current)} alternating rounds each, reference first"]
    for side, side_reports in (("reference", reference), ("current", current)):
        missing = [r["round"] for r in side_reports if r.get("failed")]
        if missing:
            notes.append(f"{side} rounds {', '.join(map(str, missing))} failed: left out of the medians")
    print(render(scenario, rows, reference=names[0], current=names[1], notes=notes), flush=True)
    body = {
        "scenario": scenario,
        "baseline": baseline,
        "reference": names[0],
        "current": names[1],
        "driver": "current bench/ for both sides; each side's own application code",
        "order": [f"{r['side']} {r['round']}" for pair in zip(reference, current, strict=True) for r in pair],
        "machine": machine(),
        "figures": rows,
        "notes": notes,
        "rounds": {"reference": reference, "current": current},
    }
    (BENCH_DIR / f"compare-{scenario}.json").write_text(json.dumps(body, indent=2, default=str) + "\n")
