"""A failure the sandbox answers on purpose (an armed fault, a scenario) is the simulated
platform's answer, not an error of the service: one INFO line from the simulator under its own
request id, and no ERROR ``django.request`` "Server Error" line."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import requests

from core import logs
from platforms.sandbox import faults


@pytest.fixture
def written() -> Iterator[io.StringIO]:
    """Every line any thread logs meanwhile, through the service's filter and JSON formatter."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(logs.LogContextFilter())
    handler.setFormatter(logs.RedactingJsonFormatter())
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def test_an_armed_5xx_is_an_info_line_of_the_simulator_not_a_server_error(sandbox: str, written: io.StringIO) -> None:
    faults.clear("mastodon")
    faults.arm("mastodon", "server_error", path="/api/v1/instance")
    url = f"{sandbox}/mastodon/api/v1/instance"
    try:
        answer = requests.get(url, headers={"X-Request-Id": "sbx-fault-1"}, timeout=30)
        normal = requests.get(url, timeout=30)
    finally:
        faults.clear("mastodon")
    assert (answer.status_code, normal.status_code) == (502, 200)
    lines = [json.loads(line) for line in written.getvalue().splitlines()]
    assert [line for line in lines if line["logger"] == "django.request" or line["level"] == "ERROR"] == []
    (line,) = [line for line in lines if line["logger"] == "platforms.sandbox"]
    assert line["level"] == "INFO"
    assert (
        line["message"]
        == "sandbox mastodon answered GET /sandbox/mastodon/api/v1/instance with 502 (armed fault: server_error)"
    )
    assert (line["simulator"], line["status"], line["fault"]) == ("mastodon", 502, "server_error")
    assert line["request_id"] == "sbx-fault-1"  # the simulator's own request: the call the client made
