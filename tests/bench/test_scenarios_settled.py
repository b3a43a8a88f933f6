"""Every scenario of a bench run starts from a settled database (issue 35): the driver settles
before each scenario, not once per run, so a scenario that follows another reads what it reads
alone; each report carries what its own settling found. Scenarios and settling are stand-ins."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from bench.__main__ import run_scenarios


class _Report:
    def __init__(self, name: str, journal: list[str]) -> None:
        self.name = name
        self.journal = journal
        self.details: dict[str, Any] = {}
        self.notes: list[str] = []

    def write(self) -> None:
        self.journal.append(f"write {self.name}")

    def render(self) -> str:
        return f"table of {self.name}"


def _scenarios(journal: list[str], failing: str = "") -> Any:
    def load(module: str) -> Any:
        name = module.rsplit(".", 1)[-1]

        def run(runner: Any, **options: Any) -> _Report:
            journal.append(f"run {name}")
            if name == failing:
                raise RuntimeError(f"{name} broke")
            return _Report(name, journal)

        return SimpleNamespace(run=run)

    return load


def _settle(journal: list[str], still_running: dict[int, list[str]] | None = None) -> Any:
    def settle() -> dict[str, Any]:
        journal.append("settle")
        count = journal.count("settle")
        left = (still_running or {}).get(count, [])
        return {"seconds": 0.1, "autovacuum": {"busyPolls": 0, "seen": [], "stillRunning": left}, "number": count}

    return settle


def _runner(journal: list[str]) -> Any:
    return SimpleNamespace(record_memory=lambda name: journal.append(f"memory {name}"))


def test_the_database_is_settled_before_each_scenario_not_once_per_run() -> None:
    journal: list[str] = []
    written: list[_Report] = []
    load = _scenarios(journal)

    def loading(module: str) -> Any:
        scenario = load(module)
        run = scenario.run

        def keep(runner: Any, **options: Any) -> _Report:
            report = run(runner, **options)
            written.append(report)
            return report

        return SimpleNamespace(run=keep)

    failures = run_scenarios(
        _runner(journal), ["api", "burst", "webhooks"], settle=_settle(journal), code="/tree", load=loading
    )

    assert failures == 0
    runs_and_settles = [entry for entry in journal if entry == "settle" or entry.startswith("run ")]
    assert runs_and_settles == ["settle", "run api", "settle", "run burst", "settle", "run webhooks"]
    # Each report holds what the settling just before it found, and the code it measured.
    assert [report.details["settle"]["number"] for report in written] == [1, 2, 3]
    assert all(report.details["applicationCode"] == "/tree" for report in written)


def test_a_scenario_that_raises_does_not_skip_the_next_ones_settling() -> None:
    journal: list[str] = []

    failures = run_scenarios(
        _runner(journal), ["api", "burst"], settle=_settle(journal), code="/tree", load=_scenarios(journal, "api")
    )

    assert failures == 1
    assert [entry for entry in journal if entry == "settle" or entry.startswith("run ")] == [
        "settle",
        "run api",
        "settle",
        "run burst",
    ]
    assert "write api" not in journal and "write burst" in journal


def test_an_autovacuum_still_running_at_the_start_is_noted_on_that_scenario_only() -> None:
    journal: list[str] = []
    reports: dict[str, _Report] = {}
    load = _scenarios(journal)

    def loading(module: str) -> Any:
        run = load(module).run

        def keep(runner: Any, **options: Any) -> _Report:
            report = run(runner, **options)
            reports[report.name] = report
            return report

        return SimpleNamespace(run=keep)

    settle = _settle(journal, still_running={2: ["autovacuum: VACUUM public.posts_post"]})
    run_scenarios(_runner(journal), ["api", "burst"], settle=settle, code="/tree", load=loading)

    assert reports["api"].notes == []
    assert reports["burst"].notes == ["autovacuum was still running when burst started: see details.settle"]
