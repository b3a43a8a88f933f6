"""Load generation in its own process: ``wrk`` (Debian package) with a Lua script per endpoint
for the Authorization header, POST bodies and random ids; ``--latency`` gives the distribution.
Also a tiny sequential timer for slow endpoints (analytics), where wrk's percentiles at
concurrency 1 over a few seconds would rest on too few samples."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from bench.report import percentile
from bench.stack import BENCH_DIR

_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


@dataclass
class WrkResult:
    requests_per_second: float
    p50_ms: float | None
    p99_ms: float | None
    requests: int
    errors: int  # non-2xx/3xx answers plus socket errors
    client_cpu_seconds: float | None = None  # the load generator's own CPU (bench.httpload only)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rps": round(self.requests_per_second, 1),
            "p50Ms": self.p50_ms,
            "p99Ms": self.p99_ms,
            "requests": self.requests,
            "errors": self.errors,
            "clientCpuSeconds": self.client_cpu_seconds,
        }


def wrk_available() -> bool:
    return shutil.which("wrk") is not None


def lua_script(
    *, name: str, method: str, path: str, key: str, body: dict[str, Any] | None = None, ids_file: Path | None = None
) -> Path:
    """A wrk script sending ``method path`` with the key; ``{id}`` in the path is replaced by a
    random line of ``ids_file`` per request."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    if body is not None:
        headers["Content-Type"] = "application/json"
    lines = ["local ids = {}"]
    if ids_file is not None:
        lines.append(f"for line in io.lines({json.dumps(str(ids_file))}) do ids[#ids + 1] = line end")
    lines.append("local headers = {}")
    for header, value in headers.items():
        lines.append(f"headers[{json.dumps(header)}] = {json.dumps(value)}")
    body_literal = json.dumps(json.dumps(body)) if body is not None else "nil"
    lines += [
        "function setup(thread) thread:set('seed', math.random(1, 1000000)) end",
        "function init(args) math.randomseed(seed or os.time()) end",
        "request = function()",
        f"  local path = {json.dumps(path)}",
        "  if #ids > 0 then path = path:gsub('{id}', ids[math.random(#ids)]) end",
        f"  return wrk.format({json.dumps(method)}, path, headers, {body_literal})",
        "end",
    ]
    script = BENCH_DIR / "lua" / f"{name}.lua"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text("\n".join(lines) + "\n")
    # The same request for bench.httpload, the fallback when wrk is not installed.
    spec = {
        "method": method,
        "path": path,
        "headers": headers,
        "body": json.dumps(body) if body is not None else None,
        "idsFile": str(ids_file) if ids_file is not None else None,
    }
    script.with_suffix(".json").write_text(json.dumps(spec))
    return script


def load_generator() -> str:
    return "wrk" if wrk_available() else "bench.httpload (python asyncio; wrk is not installed)"


def run_wrk(base_url: str, script: Path, *, connections: int, seconds: int) -> WrkResult:
    """``wrk`` with the script, or :mod:`bench.httpload` with the same request where wrk is missing
    (costlier per request: its CPU time is in ``client_cpu_seconds``)."""
    if not wrk_available():
        return _run_httpload(base_url, script, connections=connections, seconds=seconds)
    threads = max(1, min(connections, 2))
    args = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "--latency"]
    args += ["-s", str(script), base_url]
    output = subprocess.run(args, capture_output=True, text=True, timeout=seconds + 60).stdout
    return parse_wrk(output)


def _run_httpload(base_url: str, script: Path, *, connections: int, seconds: int) -> WrkResult:
    args = [sys.executable, "-m", "bench.httpload", str(script.with_suffix(".json")), base_url, str(connections)]
    root = Path(__file__).resolve().parent.parent
    result = subprocess.run([*args, str(seconds)], cwd=root, capture_output=True, text=True, timeout=seconds + 60)
    if result.returncode != 0:
        raise RuntimeError(f"bench.httpload failed: {result.stderr[-2000:]}")
    data = json.loads(result.stdout)
    return WrkResult(
        requests_per_second=float(data["rps"]),
        p50_ms=data["p50Ms"],
        p99_ms=data["p99Ms"],
        requests=int(data["requests"]),
        errors=int(data["errors"]),
        client_cpu_seconds=float(data["cpuSeconds"]),
    )


def _ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text.strip())
    if not match:
        raise ValueError(f"unreadable wrk latency {text!r}")
    return round(float(match.group(1)) * _UNITS[match.group(2)], 3)


def parse_wrk(output: str) -> WrkResult:
    rps = re.search(r"Requests/sec:\s+([\d.]+)", output)
    total = re.search(r"(\d+) requests in", output)
    p50 = re.search(r"^\s+50%\s+(\S+)", output, re.M)
    p99 = re.search(r"^\s+99%\s+(\S+)", output, re.M)
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    socket = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    errors = int(non2xx.group(1)) if non2xx else 0
    if socket:
        errors += sum(int(x) for x in socket.groups())
    return WrkResult(
        requests_per_second=float(rps.group(1)) if rps else 0.0,
        p50_ms=_ms(p50.group(1)) if p50 else None,
        p99_ms=_ms(p99.group(1)) if p99 else None,
        requests=int(total.group(1)) if total else 0,
        errors=errors,
    )


def sequential_timings(url: str, *, key: str, params: dict[str, Any], count: int, budget_s: float) -> dict[str, Any]:
    """``count`` GETs one after another (after one warm-up), stopping early when ``budget_s`` is
    spent; wall-clock milliseconds per request as seen by the client."""
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {key}"
    warm = session.get(url, params=params, timeout=120)
    timings: list[float] = []
    statuses: set[int] = {warm.status_code}
    deadline = time.monotonic() + budget_s
    while len(timings) < count and time.monotonic() < deadline:
        started = time.perf_counter()
        response = session.get(url, params=params, timeout=120)
        timings.append((time.perf_counter() - started) * 1000)
        statuses.add(response.status_code)
    return {
        "samples": len(timings),
        "p50Ms": percentile(timings, 50),
        "p99Ms": percentile(timings, 99),
        "maxMs": max(timings) if timings else None,
        "statuses": sorted(statuses),
    }
