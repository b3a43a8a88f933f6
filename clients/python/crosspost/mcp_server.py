"""``crosspost mcp``: an MCP server (the official ``mcp`` SDK) over stdio, or streamable HTTP
with ``--http``. Tools call the API with the caller's key; an API error comes back as a tool
error whose text is the service's error body. Resources: each platform's capabilities."""

from __future__ import annotations

import json
import mimetypes
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from crosspost import __version__
from crosspost._http import Settings
from crosspost.client import AsyncClient
from crosspost.errors import APIError, CrosspostError
from crosspost.mcp_tools import HELPER_SCHEMAS, TOOLS, input_schema, split_arguments

CAPABILITIES_URI = "crosspost://platforms/{platform}/capabilities"


def capabilities() -> dict[str, Any]:
    return dict(json.loads(resources.files("crosspost").joinpath("capabilities.json").read_text()))


def _text(data: Any) -> list[types.ContentBlock]:
    return [types.TextContent(type="text", text=json.dumps(data))]


class CrosspostMCP:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.openapi: dict[str, Any] = {}
        self.specs = {spec.name: spec for spec in TOOLS}

    async def load_description(self, client: AsyncClient) -> None:
        self.openapi = await client.fetch_openapi()

    def tools(self) -> list[types.Tool]:
        return [
            types.Tool(
                name=spec.name,
                description=spec.description,
                input_schema=HELPER_SCHEMAS.get(spec.name) or input_schema(self.openapi, spec.operation),
            )
            for spec in TOOLS
        ]

    async def call(self, client: AsyncClient, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        spec = self.specs.get(name)
        if spec is None:
            return types.CallToolResult(content=_text({"message": f"unknown tool {name}"}), is_error=True)
        result: Any
        try:
            if name == "wait_for_post":
                result = await client.wait_for(
                    str(arguments["id"]), timeout=float(arguments.get("timeoutSeconds", 120))
                )
            elif name == "upload_media":
                result = {"publicUrl": await self._upload(client, arguments)}
            else:
                result = await client.call(spec.operation, **split_arguments(self.openapi, spec.operation, arguments))
        except APIError as exc:
            return types.CallToolResult(content=_text(exc.body), is_error=True)
        except (CrosspostError, KeyError, ValueError, OSError) as exc:
            return types.CallToolResult(content=_text({"message": str(exc)}), is_error=True)
        structured = result if isinstance(result, dict) else {"result": result}
        return types.CallToolResult(content=_text(result), structured_content=structured)

    async def _upload(self, client: AsyncClient, arguments: dict[str, Any]) -> str:
        mime = arguments.get("mimeType")
        if arguments.get("path"):
            return await client.upload(arguments["path"], mime_type=mime)
        url = str(arguments.get("url") or "")
        if not url.startswith(("http://", "https://")):
            raise ValueError("give a file path or an http(s) url")
        async with httpx.AsyncClient(timeout=120, follow_redirects=True) as plain:
            response = await plain.get(url)
            response.raise_for_status()
        name = Path(urlsplit(url).path).name or "media"
        mime = mime or response.headers.get("content-type", "").split(";")[0] or mimetypes.guess_type(name)[0]
        with tempfile.TemporaryDirectory() as directory:
            file = Path(directory) / name
            file.write_bytes(response.content)
            return await client.upload(file, mime_type=mime)


def build_server(settings: Settings) -> tuple[Server[Any], CrosspostMCP, AsyncClient]:
    app = CrosspostMCP(settings)
    client = AsyncClient(settings.api_key, base_url=settings.base_url, workspace_id=settings.workspace_id)
    table = capabilities()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        if not app.openapi:
            await app.load_description(client)
        return types.ListToolsResult(tools=app.tools())

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if not app.openapi:
            await app.load_description(client)
        return await app.call(client, params.name, dict(params.arguments or {}))

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=CAPABILITIES_URI.format(platform=platform),
                    name=f"{platform} capabilities",
                    description=f"What {platform} accepts: content types, text and media limits, metrics.",
                    mime_type="application/json",
                )
                for platform in table
            ]
        )

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        platform = next((p for p in table if CAPABILITIES_URI.format(platform=p) == uri), None)
        if platform is None:
            raise ValueError(f"unknown resource {uri}")
        contents: list[types.TextResourceContents | types.BlobResourceContents] = [
            types.TextResourceContents(uri=uri, text=json.dumps(table[platform]), mime_type="application/json")
        ]
        return types.ReadResourceResult(contents=contents)

    server: Server[Any] = Server(
        "crosspost",
        version=__version__,
        instructions="Schedule, publish and measure social posts on twelve platforms through Crosspost.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
    return server, app, client


def serve(
    settings: Settings, *, http: bool = False, host: str = "127.0.0.1", port: int = 8765, fd: int | None = None
) -> None:
    """Serve over stdio, or streamable HTTP on ``host:port`` (or on the listening socket inherited
    as file descriptor ``fd``: socket activation, or a caller that bound the port first)."""
    server, _, client = build_server(settings)
    if http:
        import uvicorn

        uvicorn.run(server.streamable_http_app(host=host), host=host, port=port, fd=fd, log_level="warning")
        return

    async def run_stdio() -> None:
        try:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
        finally:
            await client.aclose()

    anyio.run(run_stdio)
