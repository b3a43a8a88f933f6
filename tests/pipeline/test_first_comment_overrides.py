"""``platformFirstComments`` through the pipeline: a post created by the create service (the path
the API takes) sends each entry's comment to the simulator with its own platform's text, or the
post's ``firstComment`` text where none is given, and no comment at all under an entry that has
neither; with overrides alone the comment is due at once (delay 0)."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from platforms.base import Platform
from platforms.sandbox.store import SandboxStore
from posts.models import CommentStatus, Post, PostTarget, TargetStatus
from posts.payloads import PostCreateInput
from posts.pipeline import first_comment
from posts.pipeline.publisher import publish_targets
from posts.services.creation import post_create
from posts.validation import build_plan
from tests.pipeline.helpers import connect_account

pytestmark = pytest.mark.django_db(transaction=True)


def _create(workspace: Any, **fields: Any) -> tuple[Post, dict[str, PostTarget]]:
    """A post due now on a simulated MASTODON and TWITTER account, made by the create service."""
    masto, x = connect_account(workspace, Platform.MASTODON), connect_account(workspace, Platform.TWITTER)
    payload = {
        "contentType": "TEXT",
        "timezone": "UTC",
        "text": "The post itself",
        "platforms": ["MASTODON", "TWITTER"],
        "mastodonConnectionIds": [masto.id],
        "twitterConnectionIds": [x.id],
        **fields,
    }
    serializer = PostCreateInput(data=payload)
    assert serializer.is_valid(), serializer.errors
    plan = build_plan(workspace_id=workspace.id, data=dict(serializer.validated_data), full=True)
    post = post_create(workspace_id=workspace.id, plan=plan)
    return post, {t.platform: t for t in PostTarget.objects.filter(post=post)}


def _comments_sent(platform: Platform) -> list[tuple[str, str]]:
    """(the post replied to, the text) of each comment the simulator created."""
    return [
        (e["inReplyTo"], e["text"])
        for e in SandboxStore(platform.slug).requests()
        if 200 <= int(e["status"]) < 300 and e.get("inReplyTo") and not e.get("repeat")
    ]


def _publish_and_comment(targets: dict[str, PostTarget]) -> dict[str, PostTarget]:
    ids = [t.id for t in targets.values()]
    assert publish_targets(ids) == len(ids)
    first_comment.send_first_comments(ids)
    return {t.platform: t for t in PostTarget.objects.filter(id__in=ids)}


def test_each_entry_is_sent_its_platforms_text_or_the_posts(sandbox: str, workspace: Any) -> None:
    post, targets = _create(
        workspace,
        firstComment={"text": "The post's comment", "delaySeconds": 0},
        platformFirstComments=[{"platform": "TWITTER", "text": "X's own comment"}],
    )
    done = _publish_and_comment(targets)
    assert {p: (t.status, t.comment_status) for p, t in done.items()} == {
        "MASTODON": (TargetStatus.PUBLISHED, CommentStatus.PUBLISHED),
        "TWITTER": (TargetStatus.PUBLISHED, CommentStatus.PUBLISHED),
    }
    assert _comments_sent(Platform.MASTODON) == [(done["MASTODON"].platform_post_id, "The post's comment")]
    assert _comments_sent(Platform.TWITTER) == [(done["TWITTER"].platform_post_id, "X's own comment")]
    assert first_comment.send_first_comments([t.id for t in done.values()]) == 0  # run twice: nothing more


def test_overrides_alone_comment_at_once_and_only_under_their_entries(sandbox: str, workspace: Any) -> None:
    post, targets = _create(workspace, platformFirstComments=[{"platform": "MASTODON", "text": "Masto only"}])
    assert post.first_comment == {}
    ids = [t.id for t in targets.values()]
    before = timezone.now()
    assert publish_targets(ids) == 2
    scheduled = {t.platform: t for t in PostTarget.objects.filter(id__in=ids)}
    assert scheduled["TWITTER"].comment_status == ""  # neither a text of its own nor the post's
    due = scheduled["MASTODON"].comment_due_at
    assert scheduled["MASTODON"].comment_status == CommentStatus.PENDING and due is not None
    assert before <= due <= timezone.now()  # delaySeconds 0: due at once
    assert first_comment.send_first_comments(ids) == 1
    masto = PostTarget.objects.get(id=targets["MASTODON"].id)
    assert _comments_sent(Platform.MASTODON) == [(masto.platform_post_id, "Masto only")]
    assert _comments_sent(Platform.TWITTER) == []
