"""Running a media child process (``media.probe``, ``media.fit``) under its limits: CPU time, not
wall clock, is what a child is allowed, so a fit on a loaded machine (its core shared, its wall
time two or three times its CPU time) is not failed for work it has not done.

- **CPU time** (``cpu_seconds``): the child caps its own CPU time (``RLIMIT_CPU``, read from
  ``CPU_SECONDS_VARIABLE`` before it loads any decoder); the kernel stops it with ``SIGXCPU`` once
  it has used that much, and with ``SIGKILL`` a few seconds later if it lingers.
- **A wall-clock backstop** (``wall_seconds``, a generous multiple of the CPU budget): for a child
  that waits rather than works (a hung read); the parent kills it then.

A child stopped by either limit raises ``ValueError`` with a reason naming the limit and its
setting (shown to the client as the reason the media is unusable or the fit failed). A child killed
otherwise (``SIGKILL`` from the kernel's memory guard, a crash in C) is put down to its memory cap."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import IO

CPU_SECONDS_VARIABLE = "MEDIA_CHILD_CPU_SECONDS"
# SIGKILL this long after SIGXCPU, should the child catch or ignore SIGXCPU.
_HARD_LIMIT_GRACE_SECONDS = 5
_REASON_MAX_LENGTH = 500


@dataclass(frozen=True)
class Limits:
    """A child's budget: ``cpu_seconds`` of CPU, killed after ``wall_seconds`` whatever it does;
    ``what`` names the work in reasons ("the probe", "the fit"), and the two settings the limits
    come from are named there too."""

    what: str
    cpu_seconds: int
    wall_seconds: float
    cpu_setting: str
    wall_setting: str


def limit_own_cpu(default_seconds: int) -> None:
    """In the child, before it loads a decoder: cap its CPU time at ``CPU_SECONDS_VARIABLE``
    seconds (``default_seconds`` when run by hand)."""
    try:
        seconds = max(1, int(os.environ.get(CPU_SECONDS_VARIABLE, default_seconds)))
    except ValueError:
        seconds = default_seconds
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + _HARD_LIMIT_GRACE_SECONDS))


def run_child(command: list[str], *, stdin: IO[bytes], cwd: Path, limits: Limits) -> bytes:
    """Run ``command`` (a child that limits its own CPU with :func:`limit_own_cpu`) with ``stdin``
    on its standard input; its standard output. Exit 1 is the child's own refusal: its last line
    of standard error is the reason. Raises ``ValueError`` with the reason for that, for a child
    stopped by its CPU limit or the wall-clock backstop, and for one that died otherwise (its
    memory cap, a crash in C)."""
    environment = {**os.environ, CPU_SECONDS_VARIABLE: str(limits.cpu_seconds)}
    try:
        done = subprocess.run(
            command,
            stdin=stdin,
            capture_output=True,
            timeout=limits.wall_seconds,
            check=False,
            cwd=cwd,
            env=environment,
        )
    except subprocess.TimeoutExpired:
        raise ValueError(
            f"{limits.what} was stopped by its wall-clock backstop of {limits.wall_seconds:g} s "
            f"({limits.wall_setting}) before using its {limits.cpu_seconds} s of CPU"
        ) from None
    if done.returncode == 0:
        return done.stdout
    if done.returncode == 1:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ValueError((reason[-1] if reason else f"{limits.what} could not read the file")[:_REASON_MAX_LENGTH])
    if done.returncode == -signal.SIGXCPU:
        raise ValueError(
            f"{limits.what} was stopped by its CPU-time limit of {limits.cpu_seconds} s ({limits.cpu_setting})"
        )
    raise ValueError(f"{limits.what} could not finish within its memory limit")
