"""``python -m bench --baseline REV`` (issue 35) without a bench run: the alternation, the medians
and ratios, the JSON, and the reference's worktree (its application code, this tree's bench/),
on a small git repository of its own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import compare


def _report(**figures: Any) -> dict[str, Any]:
    return {"figures": [{"name": name, "value": value, "unit": "ms"} for name, value in figures.items()]}


def test_rounds_alternate_reference_first_scenario_by_scenario() -> None:
    order = [(r.scenario, r.side, r.number) for r in compare.schedule(["api", "burst"], 2)]

    assert order == [
        ("api", "reference", 1),
        ("api", "current", 1),
        ("api", "reference", 2),
        ("api", "current", 2),
        ("burst", "reference", 1),
        ("burst", "current", 1),
        ("burst", "reference", 2),
        ("burst", "current", 2),
    ]


def test_medians_leave_out_what_is_not_a_number() -> None:
    assert compare.median([3, 1, 2]) == 2
    assert compare.median([4, 1, 3, 2]) == 2.5
    assert compare.median([None, 5.0, float("nan"), "yes", True]) == 5.0
    assert compare.median([None, "n/a"]) is None
    assert compare.median([7, 7, 8]) == 7 and isinstance(compare.median([7, 7, 8]), int)  # a count stays a count


def test_ratio_is_current_over_reference() -> None:
    assert compare.ratio(3.0, 4.0) == 0.75
    assert compare.ratio(0.0, 2.0) == 0.0
    assert compare.ratio(1.0, 0.0) is None
    assert compare.ratio(None, 2.0) is None
    assert compare.ratio(2.0, None) is None


def test_every_figure_compared_by_name_medians_side_by_side() -> None:
    reference = [
        _report(cpu=4.0, rate=180, constant="yes", gone=1.0),
        _report(cpu=6.0, rate=None, constant="yes", gone=3.0),
        _report(cpu=5.0, rate=200, constant="no", gone=2.0),
    ]
    current = [_report(rate=250, cpu=2.0, constant="yes"), _report(rate=240, cpu=3.0, constant="yes"), _report()]

    rows = {row["figure"]: row for row in compare.compare(reference, current)}

    assert list(rows) == ["rate", "cpu", "constant", "gone"]  # the current order, then the reference's own
    assert rows["cpu"]["reference"]["median"] == 5.0
    assert rows["cpu"]["current"]["values"] == [2.0, 3.0, None]
    assert rows["cpu"]["current"]["median"] == 2.5
    assert rows["cpu"]["ratio"] == 0.5
    assert rows["rate"]["reference"]["median"] == 190  # the round without the figure is left out
    assert rows["rate"]["ratio"] == 245 / 190
    assert rows["constant"]["ratio"] is None
    assert rows["constant"]["reference"]["texts"] == ["yes", "no"]
    assert rows["gone"]["current"]["median"] is None and rows["gone"]["ratio"] is None

    table = compare.render("api", list(rows.values()), reference="aaa", current="bbb", notes=["a note"])
    assert "reference aaa" in table and "current bbb" in table
    cpu_line = next(line for line in table.splitlines() if line.startswith(" cpu "))
    assert [cell.strip() for cell in cpu_line.split("|")] == ["cpu", "5.00 ms", "2.50 ms", "0.500"]
    assert "yes / no" in table and "note: a note" in table


def test_run_alternates_the_trees_and_writes_the_medians(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reference_tree, current_tree = tmp_path / "ref", tmp_path / "cur"
    calls: list[tuple[Path, str, list[str]]] = []
    figures = {reference_tree: iter([10.0, 12.0, 11.0]), current_tree: iter([5.0, 7.0, 6.0])}

    def fake_round(tree: Path, scenario: str, options: list[str], env: dict[str, str]) -> dict[str, Any]:
        calls.append((tree, scenario, list(options)))
        return _report(cpu=next(figures[tree]))

    monkeypatch.setattr(compare, "BENCH_DIR", tmp_path)
    monkeypatch.setattr(compare, "ROOT", current_tree)
    monkeypatch.setattr(compare, "prepare_reference", lambda rev: ("f" * 40, reference_tree))
    monkeypatch.setattr(compare, "describe_current", lambda: "cccccccccc")
    removed: list[Path] = []
    monkeypatch.setattr(compare, "remove_reference", removed.append)
    monkeypatch.setattr(compare, "run_round", fake_round)

    status = compare.run(baseline="v1", scenarios=["api"], rounds=3, options=["--quick"], keep=False, env={})

    assert status == 0
    assert [tree for tree, _, _ in calls] == [reference_tree, current_tree] * 3
    assert {(scenario, tuple(options)) for _, scenario, options in calls} == {("api", ("--quick",))}
    assert removed == [reference_tree]
    written = json.loads((tmp_path / "compare-api.json").read_text())
    assert written["order"] == [f"{side} {n}" for n in (1, 2, 3) for side in ("reference", "current")]
    (cpu,) = written["figures"]
    assert (cpu["reference"]["median"], cpu["current"]["median"], cpu["ratio"]) == (11.0, 6.0, 6.0 / 11.0)
    assert written["reference"] == "ffffffffff" and written["current"] == "cccccccccc"


def test_a_failed_round_is_counted_and_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answers = iter([_report(cpu=4.0), _report(cpu=2.0), None, _report(cpu=3.0)])
    monkeypatch.setattr(compare, "BENCH_DIR", tmp_path)
    monkeypatch.setattr(compare, "prepare_reference", lambda rev: ("a" * 40, tmp_path / "ref"))
    monkeypatch.setattr(compare, "describe_current", lambda: "current")
    monkeypatch.setattr(compare, "remove_reference", lambda path: None)
    monkeypatch.setattr(compare, "run_round", lambda *args: next(answers))

    status = compare.run(baseline="v1", scenarios=["api"], rounds=2, options=[], keep=False, env={})

    assert status == 1
    written = json.loads((tmp_path / "compare-api.json").read_text())
    (cpu,) = written["figures"]
    assert cpu["reference"]["values"] == [4.0, None] and cpu["reference"]["median"] == 4.0
    assert cpu["current"]["median"] == 2.5
    assert any("reference rounds 2 failed" in note for note in written["notes"])


def _git(repo: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", *args]
    return subprocess.run(command, cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with an application module and a bench driver, two commits: REV's driver
    writes the wrong file name; this tree's driver reports which application module it imported."""
    repo = tmp_path / "repo"
    (repo / "bench").mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / ".gitignore").write_text("var/\n")
    (repo / "app.py").write_text("VERSION = 'reference'\n")
    (repo / "bench" / "__init__.py").write_text("")
    (repo / "bench" / "__main__.py").write_text("raise SystemExit('the reference driver ran')\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "reference")
    (repo / "app.py").write_text("VERSION = 'current'\n")
    (repo / "bench" / "__main__.py").write_text(
        "import json, pathlib, sys\n"
        "import app\n"
        "out = pathlib.Path('var/bench'); out.mkdir(parents=True, exist_ok=True)\n"
        "figures = [{'name': 'version', 'value': app.VERSION}, {'name': 'module', 'value': app.__file__},\n"
        "           {'name': 'argv', 'value': ' '.join(sys.argv[1:])}]\n"
        "(out / (sys.argv[2] + '.json')).write_text(json.dumps({'figures': figures}))\n"
    )
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "current")
    monkeypatch.setattr(compare, "ROOT", repo)
    monkeypatch.setattr(compare, "BENCH_DIR", repo / "var" / "bench")
    monkeypatch.setattr(compare, "PYTHON", sys.executable)
    return repo


def test_the_reference_runs_its_own_application_code_under_this_trees_driver(repository: Path) -> None:
    assert compare._git("rev-parse", "--show-toplevel") == str(repository)  # never this checkout's repository
    sha, tree = compare.prepare_reference("HEAD~1")

    assert sha == _git(repository, "rev-parse", "HEAD~1")
    assert tree == repository / "var" / "bench" / f"ref-{sha[:10]}"
    assert (tree / "app.py").read_text() == "VERSION = 'reference'\n"
    assert (tree / "bench" / "__main__.py").read_text() == (repository / "bench" / "__main__.py").read_text()
    env = {"PATH": "/usr/bin:/bin"}
    reference = compare.run_round(tree, "api", ["--quick"], env)
    current = compare.run_round(repository, "api", ["--quick"], env)
    assert reference is not None and current is not None
    values = {
        side: {f["name"]: f["value"] for f in report["figures"]} for side, report in (("r", reference), ("c", current))
    }
    assert values["r"]["version"] == "reference" and values["c"]["version"] == "current"
    assert values["r"]["module"] == str(tree / "app.py")
    assert values["r"]["argv"] == "--scenario api --quick"

    again, same_tree = compare.prepare_reference("HEAD~1")  # reused, its driver put back
    assert (again, same_tree) == (sha, tree)
    compare.remove_reference(tree)
    assert not tree.exists()
    assert str(tree) not in _git(repository, "worktree", "list")
