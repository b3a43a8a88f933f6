"""JSON parsing that refuses what a database or a platform would choke on later."""

from __future__ import annotations

import json
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import JSONParser


def _contains_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_contains_nul(k) or _contains_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_contains_nul(v) for v in value)
    return False


class StrictJSONParser(JSONParser):
    """JSON only, UTF-8 only, and no NUL characters anywhere in the document."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        raw = stream.read() if stream is not None else b""
        if not raw.strip():
            return {}
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ParseError("body is not valid UTF-8")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParseError(f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})")
        if _contains_nul(data):
            raise ParseError("NUL characters are not allowed")
        return data


class JSONOnlyNegotiation(BaseContentNegotiation):
    """Always answer JSON, whatever the client's Accept header says."""

    def select_parser(self, request: Any, parsers: Any) -> Any:
        content_type = (request.content_type or "").split(";")[0].strip().lower()
        for parser in parsers:
            if parser.media_type == content_type:
                return parser
        return None

    def select_renderer(self, request: Any, renderers: Any, format_suffix: Any = None) -> Any:
        renderer = renderers[0]
        return renderer, renderer.media_type
