"""``make run``'s supervisor (config/run.py): Ctrl-C stops every child with exactly one signal.

The children here stand in for gunicorn, the Celery worker and beat: small processes that
write down every signal they receive. The supervisor runs in a session of its own and the
test sends SIGINT to that whole process group, as a terminal does on Ctrl-C.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings

CHILD = """
import os, pathlib, signal, sys, time
log = pathlib.Path(sys.argv[1])
ignore_term = sys.argv[2] == "ignore-term"
def record(signum, frame):
    with log.open("a") as out:
        out.write(signal.Signals(signum).name + "\\n")
    if signum == signal.SIGTERM and not ignore_term:
        sys.exit(0)
signal.signal(signal.SIGINT, record)
signal.signal(signal.SIGTERM, record)
log.with_suffix(".ready").write_text(str(os.getpid()))
while True:
    time.sleep(0.02)
"""

SUPERVISOR = """
import json, os, sys
from config.run import catch_stop_signals, start_children, supervise
stop_requested = catch_stop_signals()
children = start_children(json.loads(sys.argv[1]), dict(os.environ))
sys.exit(supervise(children, stop_requested, grace_seconds=float(sys.argv[2])))
"""


def _start(tmp_path: Path, behaviours: dict[str, str], grace: float = 20.0) -> subprocess.Popen[str]:
    commands = {
        name: [sys.executable, "-c", CHILD, str(tmp_path / f"{name}.log"), behaviour]
        for name, behaviour in behaviours.items()
    }
    supervisor = subprocess.Popen(
        [sys.executable, "-c", SUPERVISOR, json.dumps(commands), str(grace)],
        cwd=settings.BASE_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not all((tmp_path / f"{name}.ready").exists() for name in behaviours):
        assert supervisor.poll() is None, supervisor.communicate()[0]
        assert time.monotonic() < deadline, "children did not start"
        time.sleep(0.05)
    return supervisor


def _signals(tmp_path: Path, name: str) -> list[str]:
    log = tmp_path / f"{name}.log"
    return log.read_text().split() if log.exists() else []


def _pid(tmp_path: Path, name: str) -> int:
    return int((tmp_path / f"{name}.ready").read_text())


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_ctrl_c_stops_each_child_with_exactly_one_sigterm(tmp_path: Path) -> None:
    names = {"web": "normal", "worker": "normal", "beat": "normal"}
    supervisor = _start(tmp_path, names)
    os.killpg(supervisor.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
    output, _ = supervisor.communicate(timeout=60)
    assert supervisor.returncode == 0, output
    # One signal each, from the supervisor: the terminal's SIGINT never reached them directly
    # (a second signal inside gunicorn's quit handler is what hung its workers).
    assert {name: _signals(tmp_path, name) for name in names} == {name: ["SIGTERM"] for name in names}
    assert [name for name in names if _alive(_pid(tmp_path, name))] == []


def test_a_child_that_exits_stops_the_others(tmp_path: Path) -> None:
    supervisor = _start(tmp_path, {"web": "normal", "beat": "normal"})
    os.kill(_pid(tmp_path, "beat"), signal.SIGKILL)
    output, _ = supervisor.communicate(timeout=60)
    assert supervisor.returncode == 1
    assert "beat exited with -9; stopping the rest" in output
    assert _signals(tmp_path, "web") == ["SIGTERM"]
    assert not _alive(_pid(tmp_path, "web"))


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace_period(tmp_path: Path) -> None:
    supervisor = _start(tmp_path, {"web": "normal", "worker": "ignore-term"}, grace=1.0)
    os.kill(supervisor.pid, signal.SIGTERM)
    output, _ = supervisor.communicate(timeout=60)
    assert supervisor.returncode == 0, output
    assert "worker did not stop within 1 s; killing it" in output
    assert _signals(tmp_path, "worker") == ["SIGTERM"]
    assert not _alive(_pid(tmp_path, "worker"))
