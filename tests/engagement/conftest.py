"""The inbox against the simulators over real HTTP: accounts connected through each simulator's
own flow, posts published by the real pipeline, and what each simulator's audience writes under
them predicted with ``platforms.sandbox.audience`` (ids rendered as that simulator renders them)."""

from __future__ import annotations

import datetime as dt
import importlib
import json
from dataclasses import dataclass
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import SocialAccount
from engagement.models import CommentSource
from platforms.base import Platform
from platforms.sandbox import audience
from platforms.sandbox.store import SandboxStore
from posts.models import Post, PostTarget, TargetStatus
from posts.pipeline.publisher import publish_targets
from tests.pipeline.helpers import connect_account, make_post, targets_of
from webhooks.models import Event
from workspaces.models import Workspace

# The store kind under which each simulator keeps a published post (its creation time).
POST_KINDS = {Platform.FACEBOOK: "post", Platform.THREADS: "thread"}


@dataclass
class Live:
    """A post published on a simulator through the pipeline, with its account and entry."""

    platform: Platform
    account: SocialAccount
    post: Post
    target: PostTarget

    @property
    def slug(self) -> str:
        return self.platform.slug

    @property
    def remote_id(self) -> str:
        return self.target.platform_post_id

    def _doc(self) -> dict[str, Any]:
        doc = SandboxStore(self.slug).get(POST_KINDS[self.platform], self.remote_id)
        assert doc is not None
        return doc

    @property
    def published_at(self) -> float:
        return float(self._doc()["created"])

    def expected(self, *, now: float | None = None) -> list[dict[str, Any]]:
        """What the audience has written under the post by ``now``, oldest first."""
        return audience.expected(self.slug, self.remote_id, self.published_at, now=now)

    def wire(self, neutral: str, parent: str = "") -> str:
        simulator = importlib.import_module(f"platforms.sandbox.{self.slug}")
        return str(simulator.platform_comment_id(neutral, parent))

    def wired(self, *, now: float | None = None) -> dict[str, dict[str, Any]]:
        """The expected comments by their platform id."""
        return {self.wire(c["id"], c["parentId"]): c for c in self.expected(now=now)}

    def age(self, seconds: float) -> None:
        """Pretend the post was published ``seconds`` earlier (the audience has written more)."""
        SandboxStore(self.slug).update(POST_KINDS[self.platform], self.remote_id, created=self.published_at - seconds)


def publish_live(workspace: Workspace, platform: Platform, *, text: str = "Our spring collection is here") -> Live:
    account = connect_account(workspace, platform)
    post = make_post(workspace, [account], text=text)
    [target] = targets_of(post)
    assert publish_targets([target.id]) == 1
    target.refresh_from_db()
    assert target.status == TargetStatus.PUBLISHED, target.error_message
    return Live(platform, account, post, target)


def publish_until(workspace: Workspace, platform: Platform, wanted: Any, tries: int = 12) -> Live:
    """A published post whose audience (written whole) meets ``wanted`` (the audience differs per
    post id, which the simulator draws)."""
    for _ in range(tries):
        live = publish_live(workspace, platform)
        if wanted(live.expected(now=10**12)):
            return live
        live.post.delete()  # our record only: the inbox never sees that post
    raise AssertionError(f"no {platform} post with the wanted audience in {tries} posts")


def with_a_thread(comments: list[dict[str, Any]]) -> bool:
    """Two comments under the post at least, and a reply under one of them."""
    return sum(1 for c in comments if not c["parentId"]) >= 2 and any(c["parentId"] for c in comments)


def due_now() -> dt.datetime:
    """Every source due now; returns that instant (a read plans its next from it)."""
    now = timezone.now()
    CommentSource.objects.update(next_due_at=now)
    return now


def received(workspace: Workspace) -> list[dict[str, Any]]:
    """The data of every comment.received event of the workspace, oldest first."""
    events = Event.objects.filter(workspace=workspace, name="comment.received").order_by("created_at", "id")
    return [json.loads(e.payload)["data"] for e in events]


def events_named(workspace: Workspace, name: str) -> list[dict[str, Any]]:
    events = Event.objects.filter(workspace=workspace, name=name).order_by("created_at", "id")
    return [json.loads(e.payload)["data"] for e in events]


@pytest.fixture
def facebook(workspace: Workspace, sandbox: str) -> Live:
    """A Facebook page's post with two comments and a reply at least, all written already."""
    return publish_until(workspace, Platform.FACEBOOK, with_a_thread)


def queued_syncs() -> list[str]:
    """The account ids of the ``engagement.sync_account`` tasks waiting in the broker."""
    import base64

    from config.celery import app

    found = []
    with app.connection_for_write() as connection:
        for raw in connection.default_channel.client.lrange("analytics", 0, -1):
            message = json.loads(raw)
            if message["headers"]["task"] == "engagement.sync_account":
                found.append(json.loads(base64.b64decode(message["body"]))[0][0])
    return found


def queued_sync_etas() -> list[tuple[str, str | None]]:
    """``(account id, eta)`` of each ``engagement.sync_account`` task waiting in the broker (eta
    None: due at once)."""
    import base64

    from config.celery import app

    found = []
    with app.connection_for_write() as connection:
        for raw in connection.default_channel.client.lrange("analytics", 0, -1):
            message = json.loads(raw)
            if message["headers"]["task"] == "engagement.sync_account":
                account_id = json.loads(base64.b64decode(message["body"]))[0][0]
                found.append((account_id, message["headers"].get("eta")))
    return found
