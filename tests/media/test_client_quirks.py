"""CONTRACT.md §1 as the AI caption endpoints see it, sent the way the published clients send
it: the MCP server posts its tool input as is (optional fields left out, an empty
``partialText`` when a partly written caption is empty), with a charset on the JSON content
type, the harmless headers every client adds, and an Idempotency-Key when it retries."""

from __future__ import annotations

import json
from typing import Any

import pytest

from media.models import AiUsage

pytestmark = pytest.mark.django_db

CLIENT_HEADERS = {
    "Accept": "application/json",
    "User-Agent": "crosspost-mcp/1.4.0 node/22",
    "X-Language": "en",
    "X-Request-Id": "req-caption-1",
}


def _post(api: Any, path: str, body: dict[str, Any], **headers: str) -> Any:
    return api.generic(
        "POST",
        path,
        json.dumps(body),
        content_type="application/json; charset=utf-8",
        headers={**CLIENT_HEADERS, **headers},
    )


def test_generate_caption_as_the_mcp_tool_sends_it(api: Any) -> None:
    body = {"prompt": "launch", "platform": "TWITTER"}
    first = _post(api, "/api/v1/ai/captions", body, **{"Idempotency-Key": "mcp-gen-1"})
    assert first.status_code == 201, first.json()
    assert first.json() == {"caption": "Launch. More soon."}
    assert first["X-Request-Id"] == "req-caption-1"
    retried = _post(api, "/api/v1/ai/captions", body, **{"Idempotency-Key": "mcp-gen-1"})
    assert (retried.status_code, retried.json()) == (201, first.json())
    assert list(AiUsage.objects.values_list("calls", flat=True)) == [1]


def test_refine_caption_as_the_mcp_tool_sends_it(api: Any) -> None:
    response = _post(
        api, "/api/v1/ai/captions/refine", {"prompt": "shorter", "originalText": "a long caption", "partialText": ""}
    )
    assert response.status_code == 201, response.json()
    assert response.json() == {"caption": "a long caption"}
    response = _post(api, "/api/v1/ai/captions/refine", {"prompt": "shorter", "originalText": "a long caption"})
    assert response.json() == {"caption": "a long caption"}
