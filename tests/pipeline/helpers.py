"""Building blocks of the pipeline tests: accounts connected through the simulators, posts and
targets as the posts service would write them, a look into the broker, a scripted client."""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Callable, Iterable
from typing import Any

from django.utils import timezone

from accounts.models import SocialAccount
from accounts.services import accounts_connect
from config.celery import app
from platforms.base import (
    Credentials,
    Platform,
    PlatformClient,
    PublishRequest,
    PublishResult,
)
from posts.models import Post, PostStatus, PostTarget
from tests.platforms.conftest import connect_sandbox_account
from webhooks.models import Event
from workspaces.models import Workspace


def connect_account(workspace: Workspace, platform: Platform | str) -> SocialAccount:
    """A new simulated account connected through the simulator's own flow (real HTTP)."""
    identities = connect_sandbox_account(platform)
    return accounts_connect(workspace_id=workspace.id, platform=platform, identities=identities[:1])[0]


def fake_account(workspace: Workspace, platform: Platform | str, name: str = "acct") -> SocialAccount:
    """An account row for tests whose client is scripted (no platform ever sees its token)."""
    return SocialAccount.objects.create(
        workspace=workspace,
        platform=Platform(platform).value,
        external_id=f"{name}-{SocialAccount.objects.count()}",
        display_name=name,
        access_token="scripted-token",
    )


def make_post(
    workspace: Workspace,
    accounts: list[SocialAccount],
    *,
    text: str = "Hello from the pipeline",
    texts: dict[str, str] | None = None,
    status: str = PostStatus.PENDING,
    scheduled_at: dt.datetime | None = None,
) -> Post:
    """A post and one PENDING target per account, as the posts service creates them."""
    post = Post.objects.create(
        workspace=workspace, status=status, content_type="TEXT", text=text, scheduled_at=scheduled_at
    )
    for account in accounts:
        PostTarget.objects.create(
            post=post,
            platform=account.platform,
            account=account,
            account_name=account.display_name,
            text=(texts or {}).get(account.id, text),
        )
    return post


def targets_of(post: Post) -> list[PostTarget]:
    return list(PostTarget.objects.filter(post=post).order_by("created_at", "id"))


def events_of(post_or_workspace_id: str, name_prefix: str = "") -> list[dict[str, Any]]:
    """Envelopes of the events recorded in the outbox mentioning this post (or workspace)."""
    found = []
    for event in Event.objects.order_by("created_at", "id"):
        envelope = json.loads(event.payload)
        post = envelope["data"].get("post") or {}
        mentions = post_or_workspace_id in (post.get("id"), event.workspace_id)
        if mentions and envelope["event"].startswith(name_prefix):
            found.append(envelope)
    return found


def _broker_messages(queue: str = "publish") -> list[bytes]:
    # The broker's own connection: kombu reads the database of a redis+socket URL differently
    # from redis-py, so the broker may not live in the database get_redis() points at.
    with app.connection_for_write() as connection:
        return list(connection.default_channel.client.lrange(queue, 0, -1))


def empty_publish_queue() -> None:
    """Drop every message of the publish queue (nothing consumes it in these tests)."""
    with app.connection_for_write() as connection:
        connection.default_channel.client.delete("publish")


def queued_publish_tasks(target_ids: Iterable[str]) -> list[tuple[str, list[str], float | None]]:
    """(task name, target ids, countdown seconds or None) of the messages in the publish queue
    that name any of ``target_ids`` (other test runs may share the broker database)."""
    wanted = set(target_ids)
    messages = []
    for raw in _broker_messages():
        message = json.loads(raw)
        headers = message["headers"]
        body = json.loads(base64.b64decode(message["body"]))
        args = body[0]
        ids = args[0] if isinstance(args[0], list) else [args[0]]
        eta = headers.get("eta")
        countdown = None
        if eta:
            countdown = (dt.datetime.fromisoformat(eta) - timezone.now()).total_seconds()
        if wanted & set(ids):
            messages.append((headers["task"], ids, countdown))
    return messages


def queued_target_ids(target_ids: Iterable[str]) -> list[str]:
    """Each queued mention of one of ``target_ids`` (duplicates included)."""
    wanted = set(target_ids)
    return [t for _, ids, _ in queued_publish_tasks(wanted) for t in ids if t in wanted]


def make_due(target: PostTarget) -> None:
    """Pretend the backoff has elapsed."""
    PostTarget.objects.filter(id=target.id).update(next_attempt_at=timezone.now() - dt.timedelta(seconds=1))


def sandbox_publishes(platform: Platform | str) -> list[dict[str, Any]]:
    """The simulator's log entries of publish calls that created something."""
    from platforms.sandbox.store import SandboxStore

    return [
        entry
        for entry in SandboxStore(Platform(platform).slug).requests()
        if entry.get("publish") and 200 <= int(entry.get("status", 0)) < 300 and not entry.get("repeat")
    ]


class ScriptedClient(PlatformClient):
    """A client of the platform interface whose answers a test scripts: each ``publish`` call
    pops the next step (a PublishResult to return or an exception to raise)."""

    def __init__(
        self,
        platform: Platform,
        steps: list[PublishResult | BaseException],
        lookup: PublishResult | None | BaseException = None,
        on_publish: Callable[[], None] | None = None,
    ) -> None:
        self.platform = platform
        self.steps = list(steps)
        self.lookup_answer = lookup
        self.publish_calls: list[tuple[PublishRequest, dict[str, Any]]] = []
        self.lookup_calls = 0
        self.on_publish = on_publish

    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        self.publish_calls.append((request, dict(state)))
        if self.on_publish is not None:
            self.on_publish()
        step = self.steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        return step

    def lookup(self, creds: Credentials, request: PublishRequest) -> PublishResult | None:
        self.lookup_calls += 1
        if isinstance(self.lookup_answer, BaseException):
            raise self.lookup_answer
        return self.lookup_answer


def done(remote_id: str = "remote-1") -> PublishResult:
    return PublishResult(done=True, platform_post_id=remote_id, url=f"https://example.test/p/{remote_id}")
