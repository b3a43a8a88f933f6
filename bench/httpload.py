"""``python -m bench.httpload SPEC URL CONNECTIONS SECONDS``: the load generator used when ``wrk``
is not installed. One process, asyncio, ``CONNECTIONS`` keep-alive HTTP/1.1 connections each
sending the request of ``SPEC`` (JSON written by :func:`bench.loadgen.lua_script`: method, path,
headers, body, ids) as soon as the previous answer is read, like wrk's closed loop. Prints JSON:
requests, req/s, p50/p99 latency, errors (non-2xx/3xx answers, broken connections) and the CPU
seconds this generator used, since on a small machine it competes with the server for the cores."""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from typing import Any
from urllib.parse import urlsplit

READ_TIMEOUT_S = 10.0


def _request(spec: dict[str, Any], host: str, path: str) -> bytes:
    body = spec["body"].encode() if spec.get("body") is not None else b""
    lines = [f"{spec['method']} {path} HTTP/1.1", f"Host: {host}"]
    lines += [f"{name}: {value}" for name, value in spec["headers"].items()]
    if body or spec["method"] not in ("GET", "HEAD"):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def _read_answer(reader: asyncio.StreamReader) -> tuple[int, bool]:
    """(status, connection kept alive) of one answer, its body read and dropped."""
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    lowered = head.lower()
    start = lowered.find(b"\r\ncontent-length:")
    if start >= 0:
        end = lowered.index(b"\r\n", start + 2)
        await reader.readexactly(int(lowered[start + 17 : end]))
    elif b"\r\ntransfer-encoding: chunked" in lowered:
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    if head.startswith(b"HTTP/1.0"):
        return status, b"\r\nconnection: keep-alive" in lowered
    return status, b"\r\nconnection: close" not in lowered


async def _connection(
    url: Any, spec: dict[str, Any], deadline: float, latencies: list[float], errors: list[int]
) -> None:
    host = f"{url.hostname}:{url.port}"
    fixed = None if spec.get("ids") else _request(spec, host, spec["path"])
    reader = writer = None
    while time.monotonic() < deadline:
        request = fixed or _request(spec, host, spec["path"].replace("{id}", random.choice(spec["ids"])))
        started = time.perf_counter()
        try:
            if writer is None:
                reader, writer = await asyncio.open_connection(url.hostname, url.port)
            assert reader is not None
            writer.write(request)
            async with asyncio.timeout(READ_TIMEOUT_S):
                status, alive = await _read_answer(reader)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ValueError):
            errors[0] += 1
            if writer is not None:
                writer.close()
            writer = None
            await asyncio.sleep(0.01)  # a refused connection is not retried in a busy loop
            continue
        latencies.append((time.perf_counter() - started) * 1000)
        if not 200 <= status < 400:
            errors[0] += 1
        if not alive:
            writer.close()
            writer = None
    if writer is not None:
        writer.close()


async def _run(spec: dict[str, Any], base_url: str, connections: int, seconds: float) -> dict[str, Any]:
    url = urlsplit(base_url)
    latencies: list[float] = []
    errors = [0]
    started, cpu_started = time.monotonic(), time.process_time()
    deadline = started + seconds
    await asyncio.gather(*(_connection(url, spec, deadline, latencies, errors) for _ in range(connections)))
    elapsed = time.monotonic() - started
    latencies.sort()

    def pct(p: float) -> float | None:
        return round(latencies[min(len(latencies) - 1, int(len(latencies) * p / 100))], 3) if latencies else None

    return {
        "requests": len(latencies),
        "rps": len(latencies) / elapsed if elapsed else 0.0,
        "p50Ms": pct(50),
        "p99Ms": pct(99),
        "errors": errors[0],
        "cpuSeconds": round(time.process_time() - cpu_started, 3),
        "seconds": round(elapsed, 3),
    }


def main(argv: list[str]) -> int:
    spec_path, base_url, connections, seconds = argv
    with open(spec_path) as handle:
        spec = json.load(handle)
    if spec.get("idsFile"):
        with open(spec["idsFile"]) as handle:
            spec["ids"] = [line.strip() for line in handle if line.strip()]
    print(json.dumps(asyncio.run(_run(spec, base_url, int(connections), float(seconds)))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
