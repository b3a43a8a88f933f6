"""``crosspost mcp --http``: the same server over streamable HTTP (resources need no API call)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextResourceContents

from tests.e2e.harness import free_port, wait_for


def _accepts(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    env = {"CROSSPOST_API_KEY": "cp_unused_key", "CROSSPOST_BASE_URL": "http://127.0.0.1:9/api/v1", "PATH": ""}
    process = subprocess.Popen(
        [sys.executable, "-m", "crosspost", "mcp", "--http", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(lambda: process.poll() is not None or _accepts(port), timeout=60, what="the MCP HTTP server")
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(15)


def test_resources_over_streamable_http(http_server: str) -> None:
    async def run() -> tuple[list[str], dict[str, object]]:
        async with streamable_http_client(http_server) as streams, ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            uris = [str(r.uri) for r in (await session.list_resources()).resources]
            read = await session.read_resource("crosspost://platforms/PINTEREST/capabilities")
            content = read.contents[0]
            assert isinstance(content, TextResourceContents)
            return uris, json.loads(content.text)

    uris, pinterest = anyio.run(run)
    assert len(uris) == 12 and "crosspost://platforms/BLUESKY/capabilities" in uris
    assert pinterest["mediaRequired"] is True and pinterest["titleLimit"] == 100
