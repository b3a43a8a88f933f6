"""What both counting drivers need from valgrind: a helper library the measured process loads to
switch callgrind's collection on and off around its window (``counts_start``, and
``counts_stop(name)``, which dumps the window's figures under ``name``), and the instructions of
each named dump. The process runs under ``valgrind --tool=callgrind --instr-atstart=no``."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

HELPER_SOURCE = r"""
#include <valgrind/callgrind.h>
void counts_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void counts_stop(const char *name) { CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS_AT(name); }
"""


def helper(out_dir: Path) -> Path:
    """The helper library, compiled with ``cc`` into ``out_dir`` (the process names it in
    ``COUNTS_HELPER`` and loads it with ctypes)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    source, library = out_dir / "callgrind_helper.c", out_dir / "callgrind_helper.so"
    source.write_text(HELPER_SOURCE)
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    return library


def dumps(out: Path) -> dict[str, int]:
    """Instructions (``Ir``) of each named dump of the callgrind run written to ``out``."""
    found: dict[str, int] = {}
    for path in sorted(out.parent.glob(out.name + "*")):
        text = path.read_text(errors="replace")
        trigger = re.search(r"^desc: Trigger: Client Request: (\S+)", text, re.M)
        total = re.search(r"^totals: (\d+)", text, re.M)  # "summary:" reads 0 once collection stopped
        if trigger and total:
            found[trigger.group(1)] = int(total.group(1))
    return found
