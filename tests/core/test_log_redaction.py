"""One redaction rule for every URL path that carries a capability token (issue 28 item 3): the
connect pages, ``DELETE /api/v1/connect-links/<token>`` (refused calls too), Telegram's bot paths;
and a walk of the URL configuration that fails for a new such route the rule does not cover."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.urls.resolvers import RoutePattern
from rest_framework.test import APIClient

from accounts.connect import connect_link_create
from core.logs import MASK, LogContextFilter, RedactingJsonFormatter, log_access, redact

TOKEN = "4242424242:CanaryCapability_Token-x9"  # any capability's shape, a bot token's included
CAPABILITY_KWARGS = {"token", "secret"}


def _access_line(method: str, path: str, query: str = "", status: str = "200") -> str:
    atoms = {"h": "127.0.0.1", "m": method, "U": path, "q": query, "s": status, "B": 0, "D": 1000}
    return access_line(atoms)


def access_line(atoms: dict[str, Any]) -> str:
    """The access-log line the front writes for ``atoms``, through the service's handler set-up."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(LogContextFilter())
    handler.setFormatter(RedactingJsonFormatter())
    logger = logging.getLogger("tests.access")
    logger.propagate, logger.level = False, logging.INFO
    logger.addHandler(handler)
    try:
        log_access(logger, atoms)
    finally:
        logger.removeHandler(handler)
    return stream.getvalue()


@pytest.mark.parametrize(
    ("method", "path", "kept"),
    [
        ("GET", f"/connect/{TOKEN}", f"/connect/{MASK}"),
        ("GET", f"/connect/{TOKEN}/MASTODON", f"/connect/{MASK}/MASTODON"),
        ("POST", f"/connect/{TOKEN}/BLUESKY", f"/connect/{MASK}/BLUESKY"),
        ("DELETE", f"/api/v1/connect-links/{TOKEN}", f"/api/v1/connect-links/{MASK}"),
        ("POST", f"/sandbox/telegram/bot{TOKEN}/sendMessage", f"/sandbox/telegram/bot{MASK}/sendMessage"),
    ],
)
@pytest.mark.parametrize("status", ["200", "204", "302", "401", "404", "410"])  # refused calls alike
def test_the_access_log_masks_the_token_of_every_capability_path(
    method: str, path: str, kept: str, status: str
) -> None:
    line = json.loads(_access_line(method, path, status=status))
    assert TOKEN not in json.dumps(line)
    assert (line["method"], line["path"], line["status"]) == (method, kept, status)


def test_capabilities_in_the_query_are_masked_and_the_paths_around_them_kept() -> None:
    callback = json.loads(_access_line("GET", "/connect/callback/MASTODON", f"code={TOKEN}&state={TOKEN}", "302"))
    assert (callback["path"], callback["query"]) == ("/connect/callback/MASTODON", f"code={MASK}&state={MASK}")
    upload = json.loads(_access_line("PUT", "/uploads/ws_1/ab12/clip.mp4", f"expires=1&signature={TOKEN}", "403"))
    assert (upload["path"], upload["query"]) == ("/uploads/ws_1/ab12/clip.mp4", f"expires=1&signature={MASK}")


@pytest.mark.parametrize(
    "text",
    [
        f"Not Found: /api/v1/connect-links/{TOKEN}",
        f'"DELETE /api/v1/connect-links/{TOKEN} HTTP/1.1" 404',
        f"https://app.example.com/connect/{TOKEN}?ref=mail",
        f"link {{'url': 'https://app.example.com/connect/{TOKEN}'}}",
        f"GET https://api.telegram.org/bot{TOKEN}/getMe failed",
    ],
)
def test_the_token_is_masked_wherever_the_path_is_quoted(text: str) -> None:
    assert TOKEN not in redact(text) and MASK in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "/api/v1/connect-links",  # the create call: no token yet
        "/connect/callback/MASTODON",
        "/api/v1/social-posts/post_1/bottles",
        "/sandbox/telegram/bots-and-more",
    ],
)
def test_paths_without_a_token_are_left_whole(text: str) -> None:
    assert redact(text) == text


# --- every route of the URL configuration ------------------------------------------------------


def _leaf_routes(resolver: URLResolver, prefix: list[Any]) -> Iterator[list[Any]]:
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            yield from _leaf_routes(entry, [*prefix, entry.pattern])
        elif isinstance(entry, URLPattern):
            yield [*prefix, entry.pattern]


def _kwarg_names(pattern: Any) -> set[str]:
    if isinstance(pattern, RoutePattern):  # path("…/<str:token>")
        return set(pattern.converters)
    return set(pattern.regex.groupindex)


def _fill_group(regex: str, start: int) -> int:
    """The index just after the group opened at ``start``."""
    depth, index, in_class = 0, start, False
    while index < len(regex):
        char = regex[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    raise AssertionError(f"unbalanced group in {regex!r}")


def _example_path(patterns: list[Any]) -> str:
    """A path of the route with ``TOKEN`` for its capability arguments and ``x1`` for the others."""
    path = "/"
    for pattern in patterns:
        text = str(pattern)
        if isinstance(pattern, RoutePattern):
            text = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: TOKEN if m[1] in CAPABILITY_KWARGS else "x1", text)
        else:
            text = text.removeprefix("^").removesuffix("$").removesuffix("\\Z")
            while (found := re.search(r"\(\?P<(\w+)>", text)) is not None:
                value = TOKEN if found[1] in CAPABILITY_KWARGS else "x1"
                text = text[: found.start()] + value + text[_fill_group(text, found.start()) :]
            text = text.replace("\\", "")
        path += text
    return path


def _capability_routes() -> list[tuple[str, list[Any]]]:
    routes = []
    for patterns in _leaf_routes(get_resolver(), []):
        names = set().union(*(_kwarg_names(pattern) for pattern in patterns))
        if names & CAPABILITY_KWARGS:
            routes.append((_example_path(patterns), patterns))
    return routes


def test_every_route_with_a_token_in_its_path_is_masked_by_the_one_rule() -> None:
    routes = _capability_routes()
    found = {path for path, _ in routes}
    # The walk finds the routes we know of (so a broken walk cannot pass by finding none).
    assert {f"/connect/{TOKEN}", f"/connect/{TOKEN}/x1", f"/api/v1/connect-links/{TOKEN}"} <= found, found
    for path, _ in routes:
        match = resolve(path)  # the example is a real path of the route, with the token where it goes
        assert CAPABILITY_KWARGS & {name for name, value in match.kwargs.items() if value == TOKEN}, path
        for quoted in (path, f"https://app.example.com{path}?x=1", f"Not Found: {path}"):
            assert TOKEN not in redact(quoted), quoted
            assert TOKEN not in _access_line("DELETE", path, status="404"), path


# --- a refused call through the service -------------------------------------------------------


@pytest.mark.django_db
def test_a_refused_delete_of_a_connect_link_logs_no_token(client_for: Any, other_workspace: Any, caplog: Any) -> None:
    token = connect_link_create(workspace_id=other_workspace.id).token
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="django.request")  # its "Not Found: <path>" too (ERROR by default)
    refused = client_for("admin").delete(f"/api/v1/connect-links/{token}")  # another workspace's link
    assert refused.status_code == 404
    assert APIClient().delete(f"/api/v1/connect-links/{token}").status_code == 401
    assert any(token in record.getMessage() for record in caplog.records)  # the path was logged...
    formatter = RedactingJsonFormatter()
    written = "\n".join(formatter.format(record) for record in caplog.records)
    assert token not in written and f"/api/v1/connect-links/{MASK}" in written  # ...and is written masked
