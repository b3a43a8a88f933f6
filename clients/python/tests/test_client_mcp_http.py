"""``crosspost mcp --http``: the same server over streamable HTTP (resources need no API call)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextResourceContents

from tests.e2e.harness import listening_socket, wait_for


def _answers(url: str) -> bool:
    """True once the server answers HTTP at all (the socket is listening before the server starts,
    so a connection alone proves nothing; a bare GET on the MCP endpoint is an error status)."""
    try:
        urllib.request.urlopen(url, timeout=2).close()  # noqa: S310 (our own server)
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False
    return True


@pytest.fixture
def http_server() -> Iterator[str]:
    """``crosspost mcp --http`` serving a socket this test bound first (``--fd``): a port chosen
    free and bound later by the server could meanwhile be taken by another test worker's server."""
    listener = listening_socket()
    host, port = listener.getsockname()
    env = {"CROSSPOST_API_KEY": "cp_unused_key", "CROSSPOST_BASE_URL": "http://127.0.0.1:9/api/v1", "PATH": ""}
    process = subprocess.Popen(
        [sys.executable, "-m", "crosspost", "mcp", "--http", "--fd", str(listener.fileno())],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        pass_fds=(listener.fileno(),),
    )
    url = f"http://{host}:{port}/mcp"
    try:
        wait_for(lambda: process.poll() is not None or _answers(url), timeout=60, what="the MCP HTTP server")
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        yield url
    finally:
        process.terminate()
        process.wait(15)
        listener.close()


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
