"""The web front on real gunicorn processes: bodies arrive whole whatever their framing, stalled
clients hold no thread, and what the HTTP parser refuses is answered in the JSON error body."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
import requests

from tests.e2e.harness import E2EStack, start_stack

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

BODY_TIMEOUT = 3
STALLED = 64


@pytest.fixture(scope="module")
def stack() -> Iterator[E2EStack]:
    with start_stack(FRONT_BODY_TIMEOUT=str(BODY_TIMEOUT)) as running:
        yield running


def _upload_url(stack: E2EStack, mime_type: str = "video/mp4") -> dict[str, str]:
    response = stack.api("POST", "/upload-urls", json={"files": [{"fileName": "clip.mp4", "mimeType": mime_type}]})
    assert response.status_code in (200, 201), response.text
    return response.json()["urls"][0]


def _address(stack: E2EStack) -> tuple[str, int]:
    parts = urlsplit(stack.web_url)
    return parts.hostname or "127.0.0.1", parts.port or 80


def _read_answer(sock: socket.socket) -> bytes:
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def test_an_8_mib_chunked_upload_is_stored_and_served_back_byte_for_byte(stack):
    item = _upload_url(stack)
    content = os.urandom(8 * 1024 * 1024)

    def chunks() -> Iterator[bytes]:  # a generator body: requests sends it chunked, with no length
        for start in range(0, len(content), 100_000):
            yield content[start : start + 100_000]

    put = requests.put(item["uploadUrl"], data=chunks(), headers={"Content-Type": "video/mp4"}, timeout=60)
    assert put.status_code == 200, put.text
    assert put.json()["size"] == len(content)

    served = requests.get(item["publicUrl"], timeout=60)
    assert served.status_code == 200
    assert hashlib.sha256(served.content).hexdigest() == hashlib.sha256(content).hexdigest()


def test_a_declared_upload_over_the_media_limit_is_413_and_nothing_is_stored(stack):
    item = _upload_url(stack)
    with socket.create_connection(_address(stack), timeout=30) as sock:
        path = item["uploadUrl"].split(stack.web_url, 1)[1]
        sock.sendall(
            f"PUT {path} HTTP/1.1\r\nHost: x\r\nContent-Type: video/mp4\r\nContent-Length: {2**40}\r\n\r\n".encode()
            + b"x" * 1000
        )
        answer = _read_answer(sock)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413")
    assert json.loads(body)["code"] == "payload_too_large"
    assert requests.get(item["publicUrl"], timeout=30).status_code == 404


def test_stalled_uploads_hold_no_thread_and_are_dropped_after_the_read_timeout(stack):
    item = _upload_url(stack)
    path = item["uploadUrl"].split(stack.web_url, 1)[1]
    stalled = []
    for _ in range(STALLED):
        sock = socket.create_connection(_address(stack), timeout=30)
        sock.sendall(
            f"PUT {path} HTTP/1.1\r\nHost: x\r\nContent-Type: video/mp4\r\nContent-Length: 1000\r\n\r\nx".encode()
        )
        stalled.append(sock)
    try:
        # Every web thread would be waiting on a body were bodies read by threads: healthz would
        # then wait as long as the stalls do. With the front, each is answered at once; the
        # client's timeout (well below the read timeout's multiples) is the bound.
        seconds = []
        for _ in range(20):
            started = time.monotonic()
            assert requests.get(f"{stack.web_url}/healthz", timeout=BODY_TIMEOUT - 1).status_code == 200
            seconds.append(time.monotonic() - started)
        print(f"healthz beside {STALLED} stalled uploads: max {max(seconds) * 1000:.0f} ms")

        for sock in stalled:
            head, _, body = _read_answer(sock).partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 408"), head
            assert json.loads(body)["code"] == "request_body_timeout"
    finally:
        for sock in stalled:
            sock.close()
    # The URL was never used: the stalled PUTs never reached the application.
    content = b"\x00\x01" * 5000
    put = requests.put(item["uploadUrl"], data=content, headers={"Content-Type": "video/mp4"}, timeout=30)
    assert put.status_code == 200, put.text


@pytest.mark.parametrize(
    ("raw", "status", "code"),
    [
        (b"GARBAGE\r\n\r\n", 400, "malformed_request"),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 40_000 + b"\r\n\r\n", 431, "request_header_too_large"),
        (b"GET /" + b"a" * 40_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 431, "request_header_too_large"),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n", 400, "malformed_request"),
    ],
)
def test_what_the_parser_refuses_is_answered_in_the_json_error_body(stack, raw, status, code):
    with socket.create_connection(_address(stack), timeout=30) as sock:
        sock.sendall(raw)
        answer = _read_answer(sock)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(f"HTTP/1.1 {status}".encode()), head
    assert b"content-type: application/json" in head.lower()
    assert json.loads(body) | {"message": ""} == {
        "statusCode": status,
        "error": json.loads(body)["error"],
        "message": "",
        "code": code,
    }
