"""The synchronous and asynchronous clients: retries, uploads, waiting, pagination."""

from __future__ import annotations

import asyncio
import mimetypes
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

import httpx

from crosspost._http import (
    PreparedRequest,
    Settings,
    note_rate_limit,
    pause_before_request,
    prepare,
    result_of,
    retry_delay,
)
from crosspost.errors import TransportError, WaitTimeout
from crosspost.models import Post
from crosspost.operations import Operations, path_of

FINAL_STATUSES = frozenset({"COMPLETED", "PARTIAL_FAILURE", "FAILED"})
Progress = Callable[[int, int], None]
# (list method, key of the items in its answer, how it pages: "offset", "page" or "cursor")
PAGINATED: dict[str, tuple[str, str]] = {
    "list_comments": ("comments", "cursor"),
    "list_posts": ("posts", "offset"),
    "list_recurring_posts": ("recurringPosts", "offset"),
    "list_webhook_deliveries": ("deliveries", "offset"),
    "list_analytics_posts": ("posts", "page"),
}
_CHUNK = 64 * 1024


def guess_mime_type(path: Path) -> str:
    mime, _ = mimetypes.guess_type(path.name)
    if not mime:
        raise ValueError(f"cannot tell the media type of {path.name}; pass mime_type=")
    return mime


def _next_page(style: str, params: dict[str, Any], answer: Mapping[str, Any], items: list[Any]) -> bool:
    """Advance ``params`` to the next page; False when this was the last one."""
    if not items or not answer.get("hasMore"):
        return False
    if style == "offset":
        params["offset"] = int(params.get("offset") or 0) + len(items)
    elif style == "cursor":
        params["after"] = answer.get("nextCursor")
    else:
        params["page"] = int(params.get("page") or 1) + 1
    return True


class Client(Operations[Any]):
    """``Client(api_key=..., base_url="https://host/api/v1", workspace_id=None)``; arguments
    left out come from ``CROSSPOST_API_KEY``, ``CROSSPOST_BASE_URL``, ``CROSSPOST_WORKSPACE_ID``.
    Pass ``token=`` instead of ``api_key=`` for an OAuth access token."""

    def __init__(
        self,
        api_key: str | None = None,
        *,
        token: str | None = None,
        base_url: str | None = None,
        workspace_id: str | None = None,
        http: httpx.Client | None = None,
        upload_http: httpx.Client | None = None,
        **options: Any,
    ) -> None:
        self.settings = Settings.resolve(api_key or token, base_url, workspace_id, **options)
        self._http = http or httpx.Client(timeout=self.settings.timeout)
        # Upload URLs are pre-signed: a client of its own, so our Authorization never goes there.
        self._upload_http = upload_http or httpx.Client(timeout=max(self.settings.timeout, 300))

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()
        self._upload_http.close()

    def _call(
        self,
        name: str,
        *,
        path: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        idempotency_key: str | None = None,
    ) -> Any:
        method, url_path = path_of(name, path)
        request = prepare(self.settings, method, url_path, params=params, json=json, idempotency_key=idempotency_key)
        return result_of(self._send_with_retries(request))

    def _send_with_retries(self, request: PreparedRequest) -> httpx.Response:
        attempt = 0
        while True:
            time.sleep(pause_before_request(self.settings))
            try:
                response: httpx.Response | None = self._http.request(
                    request.method, request.url, params=request.params, json=request.json, headers=request.headers
                )
                error: httpx.TransportError | None = None
            except httpx.TransportError as exc:
                response, error = None, exc
            if response is not None:
                note_rate_limit(self.settings, response)
            delay = retry_delay(self.settings, attempt, response)
            if delay is None:
                if response is None:
                    raise TransportError(f"{request.method} {request.url}: {error}") from error
                return response
            time.sleep(delay)
            attempt += 1

    # helpers -------------------------------------------------------------------------------
    def fetch_openapi(self) -> dict[str, Any]:
        """The service's OpenAPI description (``/openapi.json`` under the API base)."""
        request = prepare(self.settings, "GET", "/openapi.json")
        return dict(result_of(self._send_with_retries(request)))

    def paginate(self, method: str, *args: Any, **params: Any) -> Iterator[dict[str, Any]]:
        """Every item of a paginated list, e.g. ``paginate("list_posts", statuses=["FAILED"])``."""
        key, style = PAGINATED[method]
        while True:
            answer = getattr(self, method)(*args, **params)
            items = list(answer.get(key) or [])
            yield from items
            if not _next_page(style, params, answer, items):
                return

    def iter_posts(self, **params: Any) -> Iterator[dict[str, Any]]:
        return self.paginate("list_posts", **params)

    def iter_recurring_posts(self, **params: Any) -> Iterator[dict[str, Any]]:
        return self.paginate("list_recurring_posts", **params)

    def iter_webhook_deliveries(self, webhook_id: str, **params: Any) -> Iterator[dict[str, Any]]:
        return self.paginate("list_webhook_deliveries", webhook_id, **params)

    def iter_analytics_posts(self, **params: Any) -> Iterator[dict[str, Any]]:
        return self.paginate("list_analytics_posts", **params)

    def iter_comments(self, **params: Any) -> Iterator[dict[str, Any]]:
        """Every comment matching the filters, newest first, following ``nextCursor``."""
        return self.paginate("list_comments", **params)

    def upload(self, path: str | Path, *, mime_type: str | None = None, progress: Progress | None = None) -> str:
        """Mint an upload URL, PUT the file with its exact Content-Type, return its public URL."""
        file = Path(path)
        mime = mime_type or guess_mime_type(file)
        item = self.create_upload_urls([{"fileName": file.name, "mimeType": mime}])["urls"][0]
        size = file.stat().st_size
        response = self._upload_http.put(
            item["uploadUrl"],
            content=_chunks(file, size, progress),
            headers={"Content-Type": mime, "Content-Length": str(size)},
        )
        result_of(response)
        return str(item["publicUrl"])

    def wait_for(
        self,
        post_id: str,
        *,
        timeout: float = 300,
        interval: float = 2.0,
        on_poll: Callable[[Post], None] | None = None,
    ) -> Post:
        """Poll the post until it is COMPLETED, PARTIAL_FAILURE or FAILED; return it. ``on_poll``
        is called with the post as each poll answers (the CLI shows progress with it)."""
        deadline = time.monotonic() + timeout
        while True:
            post = cast(Post, self.get_post(post_id))
            if on_poll is not None:
                on_poll(post)
            if post.get("status") in FINAL_STATUSES:
                return post
            if time.monotonic() >= deadline:
                raise WaitTimeout(f"post {post_id} is still {post.get('status')} after {timeout:g} s", post)
            time.sleep(interval)


def _chunks(file: Path, size: int, progress: Progress | None) -> Iterator[bytes]:
    sent = 0
    with open(file, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            sent += len(chunk)
            if progress:
                progress(sent, size)
            yield chunk


class AsyncClient(Operations[Awaitable[Any]]):
    """The asynchronous twin of :class:`Client` (``await client.get_post(id)``)."""

    def __init__(
        self,
        api_key: str | None = None,
        *,
        token: str | None = None,
        base_url: str | None = None,
        workspace_id: str | None = None,
        http: httpx.AsyncClient | None = None,
        **options: Any,
    ) -> None:
        self.settings = Settings.resolve(api_key or token, base_url, workspace_id, **options)
        self._http = http or httpx.AsyncClient(timeout=self.settings.timeout)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(  # type: ignore[override]
        self,
        name: str,
        *,
        path: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        idempotency_key: str | None = None,
    ) -> Any:
        method, url_path = path_of(name, path)
        request = prepare(self.settings, method, url_path, params=params, json=json, idempotency_key=idempotency_key)
        return result_of(await self._send_with_retries(request))

    async def _send_with_retries(self, request: PreparedRequest) -> httpx.Response:
        attempt = 0
        while True:
            await asyncio.sleep(pause_before_request(self.settings))
            try:
                response: httpx.Response | None = await self._http.request(
                    request.method, request.url, params=request.params, json=request.json, headers=request.headers
                )
                error: httpx.TransportError | None = None
            except httpx.TransportError as exc:
                response, error = None, exc
            if response is not None:
                note_rate_limit(self.settings, response)
            delay = retry_delay(self.settings, attempt, response)
            if delay is None:
                if response is None:
                    raise TransportError(f"{request.method} {request.url}: {error}") from error
                return response
            await asyncio.sleep(delay)
            attempt += 1

    async def fetch_openapi(self) -> dict[str, Any]:
        request = prepare(self.settings, "GET", "/openapi.json")
        return dict(result_of(await self._send_with_retries(request)))

    async def paginate(self, method: str, *args: Any, **params: Any) -> AsyncIterator[dict[str, Any]]:
        key, style = PAGINATED[method]
        while True:
            answer = await getattr(self, method)(*args, **params)
            items = list(answer.get(key) or [])
            for item in items:
                yield item
            if not _next_page(style, params, answer, items):
                return

    def iter_posts(self, **params: Any) -> AsyncIterator[dict[str, Any]]:
        return self.paginate("list_posts", **params)

    def iter_recurring_posts(self, **params: Any) -> AsyncIterator[dict[str, Any]]:
        return self.paginate("list_recurring_posts", **params)

    def iter_webhook_deliveries(self, webhook_id: str, **params: Any) -> AsyncIterator[dict[str, Any]]:
        return self.paginate("list_webhook_deliveries", webhook_id, **params)

    def iter_analytics_posts(self, **params: Any) -> AsyncIterator[dict[str, Any]]:
        return self.paginate("list_analytics_posts", **params)

    def iter_comments(self, **params: Any) -> AsyncIterator[dict[str, Any]]:
        return self.paginate("list_comments", **params)

    async def upload(self, path: str | Path, *, mime_type: str | None = None) -> str:
        file = Path(path)
        mime = mime_type or guess_mime_type(file)
        item = (await self.create_upload_urls([{"fileName": file.name, "mimeType": mime}]))["urls"][0]
        async with httpx.AsyncClient(timeout=max(self.settings.timeout, 300)) as plain:
            response = await plain.put(item["uploadUrl"], content=file.read_bytes(), headers={"Content-Type": mime})
        result_of(response)
        return str(item["publicUrl"])

    async def wait_for(
        self,
        post_id: str,
        *,
        timeout: float = 300,
        interval: float = 2.0,
        on_poll: Callable[[Post], None] | None = None,
    ) -> Post:
        deadline = time.monotonic() + timeout
        while True:
            post = cast(Post, await self.get_post(post_id))
            if on_poll is not None:
                on_poll(post)
            if post.get("status") in FINAL_STATUSES:
                return post
            if time.monotonic() >= deadline:
                raise WaitTimeout(f"post {post_id} is still {post.get('status')} after {timeout:g} s", post)
            await asyncio.sleep(interval)
