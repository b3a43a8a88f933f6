"""First comments through the pipeline: scheduled with the PUBLISHED write (never holding back the
entry or the post's event), sent once after its delay (time shifted, not slept), fenced by its own
claim, an unknown outcome never re-sent blindly, a lost worker recovered by the sweeper, a task run
twice changing nothing, and exactly one event per comment."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from accounts.services import account_fresh_credentials
from platforms import registry
from platforms.base import (
    Credentials,
    Permanent,
    Platform,
    PlatformClient,
    PostRef,
    PublishRequest,
    PublishResult,
    ReplyTo,
    Transient,
    UnknownOutcome,
)
from platforms.sandbox.store import SandboxStore
from posts.models import CommentStatus, Post, PostStatus, PostTarget, TargetStatus
from posts.pipeline import first_comment
from posts.pipeline.publisher import publish_targets
from posts.pipeline.sweeper import sweep
from posts.rendering import post_record
from tests.pipeline.helpers import (
    connect_account,
    events_of,
    fake_account,
    make_post,
    queued_publish_tasks,
    targets_of,
)

pytestmark = pytest.mark.django_db(transaction=True)

COMMENT = "Links in this comment: https://example.com"


class ScriptedCommenter(PlatformClient):
    """Publishes at once; each ``comment`` call pops the next scripted step."""

    def __init__(self, platform: Platform, steps: list[PublishResult | BaseException]) -> None:
        self.platform = platform
        self.steps = list(steps)
        self.comment_calls: list[PublishRequest] = []

    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        return PublishResult(done=True, platform_post_id="post-1", url="https://example.test/p/post-1")

    def comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        self.comment_calls.append(request)
        step = self.steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        return step


def _post(workspace: Any, platform: Platform, *, delay: int = 0, fake: bool = False) -> tuple[Post, PostTarget]:
    account = fake_account(workspace, platform) if fake else connect_account(workspace, platform)
    post = make_post(workspace, [account], text="The post itself")
    Post.objects.filter(id=post.id).update(first_comment={"text": COMMENT, "delaySeconds": delay})
    return post, targets_of(post)[0]


def _later(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Shift the clock the pipeline reads ``seconds`` ahead."""
    shifted = timezone.now() + dt.timedelta(seconds=seconds)
    monkeypatch.setattr(timezone, "now", lambda: shifted)


def _use(monkeypatch: pytest.MonkeyPatch, client: PlatformClient) -> PlatformClient:
    monkeypatch.setattr(registry, "get_client", lambda platform: client)
    return client


def _comments_in(platform: Platform) -> list[dict[str, Any]]:
    return [
        e
        for e in SandboxStore(platform.slug).requests()
        if 200 <= int(e["status"]) < 300 and e.get("inReplyTo") and not e.get("repeat")
    ]


def test_the_comment_follows_the_published_entry_after_its_delay(
    sandbox: str, workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    post, target = _post(workspace, Platform.MASTODON, delay=30)
    assert publish_targets([target.id]) == 1
    target.refresh_from_db()
    post.refresh_from_db()
    # the entry and the post are final at once, with their event; the comment waits its delay
    assert (target.status, post.status) == (TargetStatus.PUBLISHED, PostStatus.COMPLETED)
    assert [e["event"] for e in events_of(post.id)] == ["post.published"]
    assert target.comment_status == CommentStatus.PENDING
    assert target.comment_due_at is not None
    assert 29 <= (target.comment_due_at - timezone.now()).total_seconds() <= 31
    tasks = [t for t in queued_publish_tasks([target.id]) if t[0] == "posts.send_first_comments"]
    assert len(tasks) == 1 and tasks[0][2] is not None and 28 <= tasks[0][2] <= 31
    assert first_comment.send_first_comments([target.id]) == 0  # not due yet: nothing sent
    assert _comments_in(Platform.MASTODON) == []
    # the early task put itself back for the comment's time
    again = [t for t in queued_publish_tasks([target.id]) if t[0] == "posts.send_first_comments"]
    assert len(again) == 2 and again[1][2] is not None and 28 <= again[1][2] <= 31
    _later(monkeypatch, 31)
    assert first_comment.send_first_comments([target.id]) == 1
    assert first_comment.send_first_comments([target.id]) == 0  # the task run twice: nothing more
    [sent] = _comments_in(Platform.MASTODON)
    assert sent["inReplyTo"] == target.platform_post_id and sent["text"] == COMMENT
    target.refresh_from_db()
    assert target.comment_status == CommentStatus.PUBLISHED
    entry = post_record(Post.objects.get(id=post.id))["platforms"][0]
    assert entry["firstComment"] == {"status": "PUBLISHED", "platformCommentId": sent["remoteId"]}
    assert post_record(Post.objects.get(id=post.id))["firstComment"] == {"text": COMMENT, "delaySeconds": 30}
    names = [e["event"] for e in events_of(post.id)]
    assert names == ["post.published", "post.first_comment.published"]
    data = events_of(post.id, "post.first_comment")[0]["data"]
    assert data["platformId"] == target.id and data["platform"] == "MASTODON"
    assert data["firstComment"] == entry["firstComment"]


def test_a_post_without_a_first_comment_schedules_nothing_and_renders_no_key(sandbox: str, workspace: Any) -> None:
    account = connect_account(workspace, Platform.MASTODON)
    post = make_post(workspace, [account])
    target = targets_of(post)[0]
    publish_targets([target.id])
    target.refresh_from_db()
    assert target.status == TargetStatus.PUBLISHED and target.comment_status == ""
    assert first_comment.send_first_comments([target.id]) == 0
    record = post_record(Post.objects.get(id=post.id))
    assert "firstComment" not in record and "firstComment" not in record["platforms"][0]
    assert [t for t in queued_publish_tasks([target.id]) if t[0] == "posts.send_first_comments"] == []


def test_a_failed_entry_sends_no_comment_and_answers_skipped(workspace: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    post, target = _post(workspace, Platform.LINKEDIN, fake=True)
    client = ScriptedCommenter(Platform.LINKEDIN, [])
    monkeypatch.setattr(client, "publish", lambda *a: (_ for _ in ()).throw(Permanent("refused")))
    _use(monkeypatch, client)
    publish_targets([target.id])
    target.refresh_from_db()
    assert target.status == TargetStatus.FAILED and target.comment_status == ""
    entry = post_record(Post.objects.get(id=post.id))["platforms"][0]
    assert entry["firstComment"] == {"status": "SKIPPED", "platformCommentId": None}
    assert client.comment_calls == []


def _published(workspace: Any, monkeypatch: pytest.MonkeyPatch, platform: Platform, steps: list[Any]) -> Any:
    post, target = _post(workspace, platform, fake=True)
    client = _use(monkeypatch, ScriptedCommenter(platform, steps))
    publish_targets([target.id])
    target.refresh_from_db()
    assert target.comment_status == CommentStatus.PENDING
    return post, target, client


def test_an_unknown_outcome_where_the_platform_has_no_key_fails_and_is_never_sent_again(
    workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    post, target, client = _published(workspace, monkeypatch, Platform.FACEBOOK, [UnknownOutcome("read timeout")])
    assert first_comment.send_first_comments([target.id]) == 1
    _later(monkeypatch, 3600)
    assert first_comment.send_first_comments([target.id]) == 0
    sweep()
    assert len(client.comment_calls) == 1
    target.refresh_from_db()
    assert target.comment_status == CommentStatus.FAILED
    entry = post_record(Post.objects.get(id=post.id))["platforms"][0]
    assert entry["firstComment"] == {"status": "FAILED", "platformCommentId": None, "errorCode": "unknown_outcome"}
    assert entry["status"] == "PUBLISHED"
    assert [e["event"] for e in events_of(post.id, "post.first_comment")] == ["post.first_comment.failed"]


def test_an_unknown_outcome_where_the_platform_dedupes_is_sent_again_under_the_same_key(
    workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok = PublishResult(done=True, platform_post_id="c-9")
    post, target, client = _published(workspace, monkeypatch, Platform.BLUESKY, [UnknownOutcome("timeout"), ok])
    first_comment.send_first_comments([target.id])
    target.refresh_from_db()
    assert target.comment_status == CommentStatus.PENDING and target.first_comment["lastErrorCode"] == "unknown_outcome"
    _later(monkeypatch, 700)
    first_comment.send_first_comments([target.id])
    keys = [r.target_id for r in client.comment_calls]
    assert keys == [f"{target.id}.comment"] * 2
    assert [r.reply_to.parent.platform_post_id for r in client.comment_calls if r.reply_to] == ["post-1"] * 2
    target.refresh_from_db()
    assert target.comment_status == CommentStatus.PUBLISHED and target.first_comment == {"platformCommentId": "c-9"}
    assert [e["event"] for e in events_of(post.id, "post.first_comment")] == ["post.first_comment.published"]


def test_a_transient_error_is_retried_with_backoff_and_a_permanent_one_fails(
    workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    post, target, client = _published(
        workspace, monkeypatch, Platform.INSTAGRAM, [Transient("503"), Permanent("comments are off")]
    )
    first_comment.send_first_comments([target.id])
    target.refresh_from_db()
    assert target.comment_status == CommentStatus.PENDING and target.comment_due_at is not None
    assert (target.comment_due_at - timezone.now()).total_seconds() >= 7  # the first backoff, 10 s ± 20 %
    assert first_comment.send_first_comments([target.id]) == 0  # not before its backoff
    _later(monkeypatch, 700)
    first_comment.send_first_comments([target.id])
    target.refresh_from_db()
    assert target.comment_status == CommentStatus.FAILED
    assert target.first_comment["errorCode"] == "content_rejected"
    assert len(client.comment_calls) == 2
    assert [e["event"] for e in events_of(post.id, "post.first_comment")] == ["post.first_comment.failed"]


def test_a_worker_lost_mid_comment_fails_it_unknown_where_there_is_no_key_and_writes_once(
    workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    post, target, client = _published(workspace, monkeypatch, Platform.LINKEDIN, [])
    [claim] = first_comment._claim([target.id], now=timezone.now())
    first_comment._start_sending(claim)  # the worker dies with its call on the way
    _later(monkeypatch, 3600)
    report = sweep()
    assert report.comments_failed == [target.id]
    assert sweep().comments_failed == []  # a second sweep finds nothing
    # the dead worker's late answer is fenced out: no second write, no second event
    assert first_comment.record_result(claim, PublishResult(done=True, platform_post_id="late")) is False
    target.refresh_from_db()
    assert target.comment_status == CommentStatus.FAILED and target.first_comment["errorCode"] == "unknown_outcome"
    assert client.comment_calls == []
    assert [e["event"] for e in events_of(post.id, "post.first_comment")] == ["post.first_comment.failed"]


def test_a_worker_lost_before_the_comment_left_sends_it_again_where_there_is_no_key(
    workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    post, target, client = _published(
        workspace, monkeypatch, Platform.LINKEDIN, [PublishResult(done=True, platform_post_id="c-1")]
    )
    first_comment._claim([target.id], now=timezone.now())  # the worker dies before the call leaves
    _later(monkeypatch, 3600)
    assert sweep().comments_requeued == [target.id]
    assert first_comment.send_first_comments([target.id]) == 1
    target.refresh_from_db()
    assert target.comment_status == CommentStatus.PUBLISHED and target.first_comment["platformCommentId"] == "c-1"
    assert len(client.comment_calls) == 1
    assert [e["event"] for e in events_of(post.id, "post.first_comment")] == ["post.first_comment.published"]


def test_a_worker_lost_mid_comment_on_mastodon_is_sent_again_and_the_platform_keeps_one(
    sandbox: str, workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    post, target = _post(workspace, Platform.MASTODON)
    publish_targets([target.id])
    # The dead worker's call reached the platform before it died: the comment exists already.
    [claim] = first_comment._claim([target.id], now=timezone.now())
    account = PostTarget.objects.select_related("account").get(id=target.id).account
    assert account is not None
    client = registry.get_client(Platform.MASTODON)
    target.refresh_from_db()
    on = PostRef(target.platform_post_id)
    request = PublishRequest(
        target_id=first_comment.comment_key(target.id),
        content_type="TEXT",
        text=COMMENT,
        reply_to=ReplyTo(root=on, parent=on),
    )
    creds = account_fresh_credentials(account_id=account.id)
    client.comment(creds, request, {})
    _later(monkeypatch, 3600)
    assert sweep().comments_requeued == [target.id]
    assert first_comment.send_first_comments([target.id]) == 1
    assert first_comment.fail(claim, "unknown_outcome", "late") is False  # fenced out
    assert len(_comments_in(Platform.MASTODON)) == 1
    target.refresh_from_db()
    assert target.comment_status == CommentStatus.PUBLISHED
    assert [e["event"] for e in events_of(post.id, "post.first_comment")] == ["post.first_comment.published"]


def test_a_comment_whose_task_was_lost_is_queued_again_by_the_sweeper(
    workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    post, target, _ = _published(workspace, monkeypatch, Platform.TWITTER, [])
    _later(monkeypatch, 120)
    report = sweep()
    assert report.comments_lost == [target.id]
    tasks = [t for t in queued_publish_tasks([target.id]) if t[0] == "posts.send_first_comments"]
    assert len(tasks) == 2  # the one queued at publish (lost, say) and the sweeper's


def test_a_threads_reply_flow_resumes_without_using_up_attempts(
    workspace: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    waiting = PublishResult(done=False, state={"step": "container", "container_id": "c1"}, poll_after=2.0)
    ok = PublishResult(done=True, platform_post_id="reply-1")
    post, target, client = _published(workspace, monkeypatch, Platform.THREADS, [waiting, ok])
    first_comment.send_first_comments([target.id])
    target.refresh_from_db()
    assert target.comment_status == CommentStatus.PENDING and target.comment_attempts == 0
    assert target.first_comment == {"state": {"step": "container", "container_id": "c1"}}
    _later(monkeypatch, 3)
    first_comment.send_first_comments([target.id])
    target.refresh_from_db()
    assert target.comment_status == CommentStatus.PUBLISHED
