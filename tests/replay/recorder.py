"""Pytest plugin that records the request bodies the suite sends to the posts endpoints.

Not loaded by the suite: it is how ``corpus.json`` was made (see ``test_replay.py`` for the
exact commands). ``-p tests.replay.recorder`` with ``REPLAY_RECORD_TO=<file>`` appends one JSON
line per request that reaches one of :data:`ROUTES` with a JSON object body, through a middleware
added at the end of ``MIDDLEWARE`` (so it sees exactly what the view gets, whichever test client
sent it).

A body names rows of the test that sent it (account ids, Facebook page ids, media URLs), which
the replay has to recreate. Each such string is replaced by a placeholder (``@@account:0``,
``@@page:0``, ``@@media:1``: the row's number in this request, in order of appearance, then
which of its values the body used) and the row is described next to the body (its columns as they were when the request came in, and whether it
belonged to the requesting workspace), together with the instant the request came in
(``timezone.now()``, so a test's frozen or travelled clock counts), since "future" and "past"
in a body are relative to it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable
from typing import Any

import pytest
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

# (method, URL name) → the operation's name in the corpus.
ROUTES = {
    ("POST", "social-posts-list"): "create",
    ("POST", "social-posts-validate"): "validate",
    ("POST", "social-posts-bulk"): "bulk",
    ("PATCH", "social-posts-detail"): "update",
}

ACCOUNT_COLUMNS = [
    "platform",
    "external_id",
    "page_id",
    "display_name",
    "username",
    "avatar_url",
    "status",
    "unauthorized_reason",
    "supports_instagram_audio",
    "scopes",
    "token_expires_at",
    "credentials_extra",
]
MEDIA_COLUMNS = [
    "file_name",
    "mime_type",
    "kind",
    "source",
    "size",
    "uploaded_at",
    "upload_claimed_at",
    "first_referenced_at",
    "keep_until",
    "preview_status",
    "preview_key",
]


def _column(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat()
    return value


class _Request:
    """The rows one body names. Row ``n`` is described under ``rows["n"]``; the body names it as
    ``@@account:n`` (its id), ``@@page:n`` (its Facebook page id) or ``@@media:n`` (its URL)."""

    def __init__(self, workspace_id: str | None) -> None:
        self.workspace_id = workspace_id
        self.rows: dict[str, dict[str, Any]] = {}
        self.numbers: dict[tuple[str, str], int] = {}

    def placeholder(self, kind: str, row: Any, columns: list[str]) -> str:
        table = "media" if kind == "media" else "account"
        key = (table, row.id)
        if key not in self.numbers:
            self.numbers[key] = len(self.numbers)
            described = {column: _column(getattr(row, column)) for column in columns}
            described["table"] = table
            described["home"] = row.workspace_id == self.workspace_id
            self.rows[str(self.numbers[key])] = described
        return f"@@{kind}:{self.numbers[key]}"

    def account(self, value: str, parent_key: str) -> str | None:
        from accounts.models import SocialAccount  # the plugin loads before Django is set up

        if value.startswith("acc_"):
            row = SocialAccount.objects.filter(id=value).first()
            if row is not None:
                return self.placeholder("account", row, ACCOUNT_COLUMNS)
        if parent_key in ("pageIds", "pageId") and value:
            pages = SocialAccount.objects.filter(platform="FACEBOOK", page_id=value)
            row = pages.filter(workspace_id=self.workspace_id).first() or pages.first()
            if row is not None:
                return self.placeholder("page", row, ACCOUNT_COLUMNS)
        return None

    def media(self, value: str) -> str | None:
        from media.models import MediaFile

        if "/media/" in value:
            rows = MediaFile.objects.filter(public_url=value)
            row = rows.filter(workspace_id=self.workspace_id).first() or rows.first()
            if row is not None:
                return self.placeholder("media", row, MEDIA_COLUMNS)
        return None

    def rewrite(self, value: Any, parent_key: str = "") -> Any:
        if isinstance(value, dict):
            return {key: self.rewrite(item, key) for key, item in value.items()}
        if isinstance(value, list):
            return [self.rewrite(item, parent_key) for item in value]
        if isinstance(value, str):
            replaced = self.account(value, parent_key)
            if replaced is None:
                replaced = self.media(value)
            return value if replaced is None else replaced
        return value


def _changed_post(post_id: str, rows: _Request) -> dict[str, Any] | None:
    """The post a PATCH changes, as the create payload that rebuilds it (``payload_of``, what a
    change is merged into) and its status; None when the requesting workspace has no such post."""
    from posts.models import Post
    from posts.services.creation import payload_of

    post = Post.objects.filter(id=post_id, workspace_id=rows.workspace_id).first()
    if post is None:
        return None
    payload = {key: _column(value) for key, value in payload_of(post).items() if value is not None}
    return {"status": post.status, "payload": rows.rewrite(payload)}


def _workspace_of(request: HttpRequest) -> str | None:
    principal = getattr(request, "principal", None)
    api_key = getattr(principal, "api_key", None)
    return getattr(api_key, "workspace_id", None)


class RecordingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view: Any, args: Any, kwargs: Any) -> None:
        match = request.resolver_match
        operation = ROUTES.get((request.method or "", (match.url_name or "") if match else ""))
        target = os.environ.get("REPLAY_RECORD_TO")
        if operation is None or not target or request.content_type != "application/json":
            return
        try:
            body = json.loads(request.body)
        except ValueError:
            return
        if not isinstance(body, dict):
            return
        rows = _Request(_workspace_of(request))
        entry = {
            "operation": operation,
            "now": timezone.now().astimezone(dt.UTC).isoformat(),
            "body": rows.rewrite(body),
            "test": os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0],
        }
        if operation == "update":
            entry["post"] = _changed_post(kwargs.get("id", ""), rows)
        entry["rows"] = rows.rows
        with open(target, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry, sort_keys=True) + "\n")


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """Before any test module is imported: the in-process WSGI application of the contract
    tests loads its middleware when imported, the test clients at their first request."""
    from django.conf import settings

    settings.MIDDLEWARE = [*settings.MIDDLEWARE, f"{__name__}.RecordingMiddleware"]


def dump_entries(header: dict[str, Any], entries: list[Any]) -> str:
    """``{..header, "entries": [...]}`` with one entry per line: diffs of the file stay readable."""
    head = json.dumps(header, ensure_ascii=False, sort_keys=True)[:-1]
    lines = ",\n".join(json.dumps(entry, ensure_ascii=False, sort_keys=True) for entry in entries)
    return f'{head}{", " if header else ""}"entries": [\n{lines}\n]}}\n'


# Columns that only tell rows apart (factory sequences): two requests whose bodies and rows
# differ in nothing else are one corpus entry.
IDENTITY_COLUMNS = {"external_id", "display_name", "username", "avatar_url"}
GENERATED_BY = "tests/contract/test_api_fuzz.py"


def _shape(value: Any) -> Any:
    """A body's structure: its keys, and the JSON type of each value (which row a placeholder
    names, the kind of row it is)."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return sorted({json.dumps(_shape(item), sort_keys=True) for item in value})
    if isinstance(value, str) and value.startswith("@@"):
        return value.split(":")[0]
    return type(value).__name__


def build_corpus(recorded: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The recorded requests, in recording order, once each: a request is a repeat when its
    operation, body and rows (but their identity columns) are an earlier one's. The instant and
    the test of the first one are kept.

    The property-based contract tests (:data:`GENERATED_BY`) send some 1,700 generated bodies,
    more than all the other tests together, mostly refused for the same few reasons, some with
    strings of 100,000 characters; of those only the smallest body of each shape
    (:func:`_shape`) is kept, at the place of the first: every combination of fields and value
    types they tried stays, the replay takes half the time and the corpus a third of the room."""
    kept: dict[str, dict[str, Any]] = {}
    for entry in recorded:
        rows = {n: {k: v for k, v in row.items() if k not in IDENTITY_COLUMNS} for n, row in entry["rows"].items()}
        if entry["test"].startswith(GENERATED_BY):
            key = json.dumps(
                ["shape", entry["operation"], _shape(entry["body"]), rows, entry.get("post")], sort_keys=True
            )
            first = kept.get(key)
            if first is None or len(json.dumps(entry["body"])) < len(json.dumps(first["body"])):
                kept[key] = entry
        else:
            key = json.dumps([entry["operation"], entry["body"], rows, entry.get("post")], sort_keys=True)
            kept.setdefault(key, entry)
    return list(kept.values())


def main(argv: list[str]) -> None:
    """``python -m tests.replay.recorder RECORDED.jsonl CORPUS.json``"""
    with open(argv[0], encoding="utf-8") as lines:
        recorded = [json.loads(line) for line in lines]
    corpus = build_corpus(recorded)
    header = {"source": "tests/replay/recorder.py at 26fc3dc; see tests/replay/test_replay.py"}
    with open(argv[1], "w", encoding="utf-8") as out:
        out.write(dump_entries(header, corpus))
    print(f"{len(recorded)} requests recorded, {len(corpus)} in the corpus")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
