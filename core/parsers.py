"""JSON parsing that refuses what a database or a platform would choke on later."""

from __future__ import annotations

import json
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import JSONParser

MAX_DEPTH = 32  # far deeper than any request body of this API; keeps later recursion safe
MAX_SHOWN_KEY = 100  # characters of a duplicate key an error message repeats


def _problem_in(document: Any) -> str | None:
    """Walk the document without recursion: a NUL character anywhere, or nesting beyond MAX_DEPTH."""
    stack: list[tuple[Any, int]] = [(document, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            if "\x00" in value:
                return "NUL characters are not allowed"
        elif isinstance(value, dict | list):
            if depth >= MAX_DEPTH:
                return f"nested deeper than {MAX_DEPTH} levels"
            items = value.items() if isinstance(value, dict) else ((None, v) for v in value)
            for key, item in items:
                if key is not None:
                    stack.append((key, depth + 1))
                stack.append((item, depth + 1))
    return None


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _object_without_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # A repeated key is ambiguous (Python's json keeps the last one, other parsers the first), so
    # the body is refused; the common case costs one dict and a length comparison.
    document = dict(pairs)
    if len(document) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return document


def _refuse_constant(name: str) -> Any:
    # Python's json module accepts NaN and Infinity; JSON (RFC 8259) does not.
    raise ValueError(f"{name} is not valid JSON")


class StrictJSONParser(JSONParser):
    """JSON only, UTF-8 only, no NUL characters and no key repeated in an object, anywhere in
    the document."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        raw = stream.read() if stream is not None else b""
        if not raw.strip():
            return {}
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ParseError("body is not valid UTF-8")
        try:
            data = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_object_without_duplicate_keys)
        except _DuplicateKey as exc:
            shown = exc.key if len(exc.key) <= MAX_SHOWN_KEY else exc.key[:MAX_SHOWN_KEY] + "..."
            raise ParseError(f"duplicate key {json.dumps(shown)} in a JSON object")
        except json.JSONDecodeError as exc:
            raise ParseError(f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})")
        except ValueError as exc:  # NaN / Infinity
            raise ParseError(f"invalid JSON ({exc})")
        except RecursionError:
            raise ParseError("invalid JSON (nested too deeply)")
        problem = _problem_in(data)
        if problem is not None:
            raise ParseError(problem)
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
