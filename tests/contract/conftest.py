"""The contract tests talk to the app in-process and to the simulators on loopback; nothing else.
Generated webhook URLs and hostnames must never reach DNS or the Internet, so name lookups of
anything but loopback fail (as an unknown host would) and connections anywhere but loopback or a
Unix socket raise."""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Iterator
from typing import Any

import pytest

_LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "ip6-localhost"}


def _is_loopback(host: object) -> bool:
    if host is None:
        return True
    text = host.decode() if isinstance(host, bytes) else str(host)
    if text.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(text.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


class OutboundRefused(OSError):
    pass


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _is_loopback(host):
            raise socket.gaierror(socket.EAI_NONAME, f"name lookups are off in contract tests: {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    def _vet(sock: socket.socket, address: Any) -> None:
        if sock.family == socket.AF_UNIX:
            return
        host = address[0] if isinstance(address, tuple) else address
        if not _is_loopback(host):
            raise OutboundRefused(f"connection outside loopback refused in contract tests: {address!r}")

    def connect(self: socket.socket, address: Any) -> None:
        _vet(self, address)
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        _vet(self, address)
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    yield


def pytest_terminal_summary(terminalreporter: Any) -> None:
    module = sys.modules.get("tests.contract.test_api_fuzz")
    counts = getattr(module, "CASES_RUN", None)
    if counts:
        terminalreporter.write_line(f"contract fuzz: {sum(counts.values())} cases over {len(counts)} operations")
        if terminalreporter.config.getoption("verbose") > 0:
            statuses = getattr(module, "STATUSES", {})
            for label, count in counts.most_common():
                seen = ", ".join(f"{code}×{n}" for code, n in sorted(statuses.get(label, {}).items()))
                terminalreporter.write_line(f"  {count:5d}  {label}  ({seen})")
