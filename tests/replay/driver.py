"""Replays ``corpus.json`` through the real Django stack in a fixed world and answers, per
corpus entry, each request sent and its response (status and body text, normalized).

The world: workspace ``ws_replayhome`` (the admin key's) and ``ws_replayother`` (where rows of
another workspace go). Everything an entry does happens in a savepoint rolled back after it,
with the clock frozen at the instant the request was recorded and Redis emptied before it, so
entries never see each other and the order they run in does not matter.

Per entry, in that savepoint: the rows its body names (``rows`` of the corpus, see
``recorder.py``) are created with fixed ids (``acc_replay000``, ``med_replay001``…) and the
placeholders of the body replaced by them; then

* ``create``, ``validate``, ``bulk``: the body is POSTed to its endpoint;
* ``update``: the post the recorded PATCH changed is made again (its create payload POSTed as
  a draft, then given the status it had; see :func:`_changed_post`) and the body PATCHed onto
  it (onto ``post_missing`` when the recorded request named no post of its workspace);

and after a 2xx every post the answer names (``postId``, the changed post) is read back with
GET, and a recurring series (``recurringPostId``) with GET of the series: the records are what
an optional field added to posts would change.

Normalized is only what would differ between two runs of the same code: the ids minted during
the entry (``post_…``, ``pt_…``: ``<prefix>_`` and 24 hex digits), each replaced by
``<prefix>#n`` in order of first appearance within the entry. They are counted, not random,
while replaying (:class:`_CountingIds`), for the order of rows created at one frozen instant;
numbering them as they appear keeps a row the answer does not show (made on the way) from
renumbering the others. Instants need nothing: the clock is frozen.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import time_machine
from django.db import transaction
from rest_framework.test import APIClient

from core.redis import get_redis
from posts.models import Post
from tests.factories.accounts import SocialAccountFactory
from tests.factories.media import UPLOADED_SIZE, MediaFileFactory
from workspaces.models import Organization, Workspace
from workspaces.services import api_key_create

HERE = Path(__file__).parent
CORPUS = HERE / "corpus.json"
GOLDEN = HERE / "golden.json"

POSTS = "/api/v1/social-posts"
SERIES = "/api/v1/recurring-posts"
ENDPOINTS = {
    "create": ("POST", POSTS),
    "validate": ("POST", f"{POSTS}/validate"),
    "bulk": ("POST", f"{POSTS}/bulk"),
}
HOME, OTHER = "ws_replayhome", "ws_replayother"
MISSING_POST = "post_missing"
# The instant the world is made at: before every recorded request.
WORLD_INSTANT = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
# Public base URL of the media files while replaying, whatever PORT / PUBLIC_BASE_URL say.
PUBLIC_BASE_URL = "http://media.replay.test"

MINTED_ID = re.compile(r"\b([a-z]+)_[0-9a-f]{24}\b")
PLACEHOLDER = re.compile(r"^@@(account|page|media):(\d+)$")
INSTANT_COLUMNS = {"token_expires_at", "uploaded_at", "upload_claimed_at", "first_referenced_at", "keep_until"}

Exchange = dict[str, Any]


def load_corpus() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]
    return entries


def load_golden() -> list[list[Exchange]]:
    golden: list[list[Exchange]] = json.loads(GOLDEN.read_text(encoding="utf-8"))["entries"]
    return golden


@dataclass
class World:
    client: APIClient  # an admin of the home workspace
    workspaces: dict[str, Workspace]  # HOME and OTHER, by id


def build_world() -> World:
    """The two workspaces and an admin client of the home one."""
    with time_machine.travel(WORLD_INSTANT, tick=False):
        # Each in an organization of its own, as the migration gave every workspace of 26fc3dc.
        home = Workspace.objects.create(id=HOME, name="Replay", organization=Organization.objects.create(name="Replay"))
        other_name = "Replay (another workspace)"
        other = Workspace.objects.create(
            id=OTHER, name=other_name, organization=Organization.objects.create(name=other_name)
        )
        key = api_key_create(workspace=home, name="replay", role="admin").plaintext
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return World(client=client, workspaces={HOME: home, OTHER: other})


def _instant(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value)


def _make_rows(rows: dict[str, dict[str, Any]], workspaces: dict[str, Workspace]) -> dict[str, Any]:
    """Create the rows an entry's body names; number → the created model instance. (Given its
    workspace, a factory makes none of its own: a workspace and an organization per row, rolled
    back unseen, were two thirds of the rows' queries.)"""
    made: dict[str, Any] = {}
    for number, described in sorted(rows.items(), key=lambda item: int(item[0])):
        columns = dict(described)
        workspace_id = HOME if columns.pop("home") else OTHER
        workspace = workspaces[workspace_id]
        table = columns.pop("table")
        for name in INSTANT_COLUMNS & columns.keys():
            if columns[name] is not None:
                columns[name] = _instant(columns[name])
        if table == "account":
            made[number] = SocialAccountFactory(id=f"acc_replay{int(number):03}", workspace=workspace, **columns)
        else:
            key = f"{workspace_id}/replay{int(number):03}/{columns['file_name']}"
            if columns["preview_key"]:
                columns["preview_key"] = f"{key}.preview.webp"
            # 26fc3dc's rows were 1,234 bytes, under the minimum sizes the media rules now hold
            # (issue 34): the world's files are the factory's realistic size instead; no answer of
            # the corpus shows a file's size.
            if columns.get("size") is not None:
                columns["size"] = max(columns["size"], UPLOADED_SIZE)
            made[number] = MediaFileFactory(
                id=f"med_replay{int(number):03}",
                workspace=workspace,
                key=key,
                public_url=f"{PUBLIC_BASE_URL}/media/{key}",
                **columns,
            )
    return made


def _substitute(value: Any, made: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        return {key: _substitute(item, made) for key, item in value.items()}
    if isinstance(value, list):
        return [_substitute(item, made) for item in value]
    if isinstance(value, str) and (match := PLACEHOLDER.match(value)):
        kind, number = match.groups()
        row = made[number]
        if kind == "media":
            return row.public_url
        return row.page_id if kind == "page" else row.id
    return value


def _posts_named(body: Any) -> list[tuple[str, str]]:
    """(path prefix, id) of every post and series an answer names, in order, once each."""
    named: list[tuple[str, str]] = []
    if isinstance(body, dict):
        for key, value in body.items():
            if key == "postId" and isinstance(value, str):
                named.append((POSTS, value))
            elif key == "recurringPostId" and isinstance(value, str):
                named.append((SERIES, value))
            else:
                named.extend(_posts_named(value))
    elif isinstance(body, list):
        for item in body:
            named.extend(_posts_named(item))
    return list(dict.fromkeys(named))


def _exchange(client: APIClient, method: str, path: str, body: Any = None) -> tuple[Exchange, Any]:
    if body is None:
        response = client.generic(method, path)
    else:
        response = client.generic(method, path, json.dumps(body), content_type="application/json")
    text = response.content.decode()
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    return {"request": f"{method} {path}", "status": response.status_code, "body": text}, parsed


def _normalize(exchanges: list[Exchange]) -> list[Exchange]:
    names: dict[str, str] = {}
    counts: dict[str, int] = {}

    def name(match: re.Match[str]) -> str:
        minted = match.group(0)
        if minted not in names:
            prefix = match.group(1)
            counts[prefix] = counts.get(prefix, 0) + 1
            names[minted] = f"{prefix}#{counts[prefix]}"
        return names[minted]

    return [
        {key: MINTED_ID.sub(name, value) if key != "status" else value for key, value in exchange.items()}
        for exchange in exchanges
    ]


def _changed_post(
    client: APIClient, post: dict[str, Any] | None, made: dict[str, Any], exchanges: list[Exchange]
) -> str | None:
    """The id of the post an ``update`` entry changes: the recorded post, created as a draft
    from its payload (that exchange is compared too) and then given its recorded status (made
    directly when it had no platform entries); a missing post's id when the recorded
    request named none of the workspace's. None when the payload is refused (the entry then
    ends with that answer)."""
    if post is None:
        return MISSING_POST
    payload = post["payload"]
    if not payload["platforms"]:
        # A post with no entries (made by a factory): the API cannot make one.
        fields = {"contentType": "content_type", "text": "text", "timezone": "timezone"}
        made_post = Post.objects.create(
            workspace_id=HOME, status=post["status"], **{column: payload[key] for key, column in fields.items()}
        )
        return made_post.id
    created, answer = _exchange(client, "POST", POSTS, {**_substitute(post["payload"], made), "saveAsDraft": True})
    exchanges.append(created)
    if created["status"] != 201:
        return None
    post_id: str = answer["postId"]
    Post.objects.filter(id=post_id).update(status=post["status"])
    return post_id


class _CountingIds:
    """Stands in for ``core.ids.new_id`` during an entry: ``<prefix>_`` and the prefix's count,
    in 24 hex digits. Rows created together (a post's entries) share ``created_at`` under the
    frozen clock, so their order (``created_at, id``) falls to the id: counted ids keep it the
    order they were created in, as distinct instants do when the clock runs."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def __call__(self, prefix: str) -> str:
        self.counts[prefix] = self.counts.get(prefix, 0) + 1
        return f"{prefix}_{self.counts[prefix]:024x}"


def replay_entry(world: World, entry: dict[str, Any]) -> list[Exchange]:
    client = world.client
    exchanges: list[Exchange] = []
    savepoint = transaction.savepoint()
    try:
        with time_machine.travel(_instant(entry["now"]), tick=False), mock.patch("core.ids.new_id", _CountingIds()):
            get_redis().flushdb()
            made = _make_rows(entry["rows"], world.workspaces)
            body = _substitute(entry["body"], made)
            read_back: list[tuple[str, str]] = []
            if entry["operation"] == "update":
                post_id = _changed_post(client, entry["post"], made, exchanges)
                if post_id is None:
                    return _normalize(exchanges)
                sent, answer = _exchange(client, "PATCH", f"{POSTS}/{post_id}", body)
                read_back.append((POSTS, post_id))
            else:
                method, path = ENDPOINTS[entry["operation"]]
                sent, answer = _exchange(client, method, path, body)
            exchanges.append(sent)
            if 200 <= sent["status"] < 300:
                for prefix, named_id in dict.fromkeys([*read_back, *_posts_named(answer)]):
                    exchanges.append(_exchange(client, "GET", f"{prefix}/{named_id}")[0])
    finally:
        transaction.savepoint_rollback(savepoint)
    return _normalize(exchanges)


def replay(entries: list[dict[str, Any]]) -> list[list[Exchange]]:
    """Every entry's exchanges, in corpus order. Needs the database (inside a test's atomic
    block) and ``settings.PUBLIC_BASE_URL`` set to :data:`PUBLIC_BASE_URL`."""
    world = build_world()
    return [replay_entry(world, entry) for entry in entries]
