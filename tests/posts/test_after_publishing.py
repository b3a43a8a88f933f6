"""After publishing, through the API and the work engine: PATCH of a published post edits each entry
whose platform can take it (the others answered with the reason), POST /unpublish removes the
platform copies and keeps the record, each as a platform step (claimed once, fenced, retried,
unknown outcomes never re-sent blindly), with one event per request naming every entry's outcome.
The platforms are a scripted double of the client interface (the simulators' edit and delete
endpoints come with the platform clients' branch; the end-to-end test drives those)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from platforms import registry
from platforms.base import (
    Credentials,
    EditRequest,
    EditResult,
    NotSupported,
    Platform,
    PlatformClient,
    PublishRequest,
    PublishResult,
    RemotePost,
    Transient,
    UnknownOutcome,
)
from posts.models import ActionStatus, Post, PostTarget, PostTargetAction
from posts.pipeline import after_publishing
from posts.pipeline.publisher import publish_targets
from posts.pipeline.sweeper import sweep
from tests.pipeline.helpers import events_of, fake_account, make_post, targets_of

pytestmark = pytest.mark.django_db(transaction=True)


class AfterClient(PlatformClient):
    """Publishes at once; ``edit`` and ``delete`` pop scripted steps (an exception to raise before
    the change is made) and ``lost`` ones (raised after it is made: the answer was lost), and record
    every call; ``fetch_post`` reads what the platform has (``reads`` records it; NotSupported when
    ``readable`` is False)."""

    def __init__(self) -> None:
        self.edits: list[EditRequest] = []
        self.deletes: list[str] = []
        self.reads: list[str] = []
        self.steps: list[BaseException] = []
        self.lost: list[BaseException] = []
        self.gone: set[str] = set()
        self.texts: dict[str, str] = {}  # what the platform shows of each post
        self.readable = True
        self.read_steps: list[BaseException] = []  # raised by the next reads

    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        self.texts[f"r-{request.target_id}"] = request.text
        return PublishResult(
            done=True, platform_post_id=f"r-{request.target_id}", url=f"https://x.test/{request.target_id}"
        )

    def edit(self, creds: Credentials, request: EditRequest) -> EditResult:
        self.edits.append(request)
        if self.steps:
            raise self.steps.pop(0)
        if request.text is not None:
            self.texts[request.platform_post_id] = request.text
        if self.lost:
            raise self.lost.pop(0)
        return EditResult(url=f"https://x.test/{request.target_id}?edited", edited_at=timezone.now())

    def delete(self, creds: Credentials, platform_post_id: str) -> None:
        self.deletes.append(platform_post_id)
        if self.steps:
            raise self.steps.pop(0)
        self.gone.add(platform_post_id)  # a second delete of a gone post returns normally too
        if self.lost:
            raise self.lost.pop(0)

    def fetch_post(self, creds: Credentials, platform_post_id: str) -> RemotePost | None:
        if not self.readable:
            raise NotSupported
        self.reads.append(platform_post_id)
        if self.read_steps:
            raise self.read_steps.pop(0)
        if platform_post_id in self.gone:
            return None
        return RemotePost(
            platform_post_id=platform_post_id,
            published_at=timezone.now(),
            text=self.texts.get(platform_post_id, ""),
            permalink=f"https://x.test/{platform_post_id}",
        )


@pytest.fixture
def platform(monkeypatch: pytest.MonkeyPatch) -> AfterClient:
    client = AfterClient()
    monkeypatch.setattr(registry, "get_client", lambda name: client)
    return client


def _published(
    workspace: Any, *platforms: Platform, text: str = "Hello after publishing"
) -> tuple[str, list[PostTarget]]:
    accounts = [fake_account(workspace, p, p.value.lower()) for p in platforms]
    post = make_post(workspace, accounts, text=text)
    assert publish_targets([t.id for t in targets_of(post)]) == len(platforms)
    return post.id, targets_of(post)


def _open_actions(post_id: str) -> list[str]:
    return list(
        PostTargetAction.objects.filter(target__post_id=post_id, status=ActionStatus.PENDING)
        .order_by("created_at", "id")
        .values_list("id", flat=True)
    )


def test_an_edit_goes_to_the_entries_that_can_take_it_and_reports_the_others(api, workspace, platform) -> None:
    post_id, targets = _published(workspace, Platform.MASTODON, Platform.TWITTER, Platform.TIKTOK)
    response = api.patch(f"/api/v1/social-posts/{post_id}", {"text": "Fixed typo"}, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["text"] == "Fixed typo" and body["status"] == "COMPLETED"
    report = body["editReport"]
    assert report["entries"] == [
        {"platformId": targets[0].id, "platform": "MASTODON", "outcome": "QUEUED", "fields": ["text"], "reason": None},
        {
            "platformId": targets[1].id,
            "platform": "TWITTER",
            "outcome": "SKIPPED",
            "fields": ["text"],
            "reason": "TWITTER does not let its API edit a published post",
        },
        {
            "platformId": targets[2].id,
            "platform": "TIKTOK",
            "outcome": "SKIPPED",
            "fields": ["text"],
            "reason": "TIKTOK does not let its API edit a published post",
        },
    ]
    [action_id] = _open_actions(post_id)
    assert events_of(post_id, "post.updated") == []  # not before the queued edit has its outcome
    assert after_publishing.run_actions([action_id]) == 1
    assert after_publishing.run_actions([action_id]) == 0  # run twice: no second call
    assert [(e.platform_post_id, e.text) for e in platform.edits] == [(targets[0].platform_post_id, "Fixed typo")]
    record = api.get(f"/api/v1/social-posts/{post_id}").json()
    mastodon, twitter, tiktok = record["platforms"]
    assert mastodon["text"] is None  # the entry follows the post's new text
    [edit] = mastodon["edits"]
    assert (edit["status"], edit["fields"], edit["changes"], edit["previous"]) == (
        "DONE",
        ["text"],
        {"text": "Fixed typo"},
        {"text": "Hello after publishing"},
    )
    assert edit["requestId"] == report["requestId"] and edit["finishedAt"] is not None
    assert twitter["text"] == "Hello after publishing"  # its platform still shows the old text
    assert twitter["edits"][0]["status"] == "SKIPPED" and twitter["edits"][0]["reason"]
    [event] = events_of(post_id, "post.updated")
    assert event["data"]["requestId"] == report["requestId"]
    assert [(e["platform"], e["status"]) for e in event["data"]["entries"]] == [
        ("MASTODON", "DONE"),
        ("TWITTER", "SKIPPED"),
        ("TIKTOK", "SKIPPED"),
    ]


def test_an_edit_is_checked_with_the_publishing_validation(api, workspace, platform) -> None:
    post_id, _ = _published(workspace, Platform.MASTODON)
    response = api.patch(f"/api/v1/social-posts/{post_id}", {"text": "x" * 501}, format="json")
    assert response.status_code == 400
    assert response.json()["message"] == ["MASTODON text is 501 characters; the limit is 500"]
    assert PostTargetAction.objects.count() == 0
    unknown = api.patch(f"/api/v1/social-posts/{post_id}", {"mediaUrls": []}, format="json")
    assert unknown.status_code == 400 and "mediaUrls" in str(unknown.json()["message"])
    empty = api.patch(f"/api/v1/social-posts/{post_id}", {}, format="json")
    assert empty.status_code == 400


def test_a_post_that_is_not_published_cannot_be_edited_or_unpublished(api, workspace, platform) -> None:
    account = fake_account(workspace, Platform.MASTODON)
    post = make_post(workspace, [account])  # PENDING
    edited = api.patch(f"/api/v1/social-posts/{post.id}", {"text": "no"}, format="json")
    assert edited.status_code == 400 and edited.json()["code"] == "post_not_editable"
    removed = api.post(f"/api/v1/social-posts/{post.id}/unpublish", {}, format="json")
    assert removed.status_code == 400 and removed.json()["code"] == "post_not_published"


def test_after_publishing_needs_posts_publish_and_stays_in_its_workspace(
    api, anon, client_for, workspace, other_workspace, platform
) -> None:
    post_id, _ = _published(workspace, Platform.MASTODON)
    for call in (
        lambda c: c.patch(f"/api/v1/social-posts/{post_id}", {"text": "x"}, format="json"),
        lambda c: c.post(f"/api/v1/social-posts/{post_id}/unpublish", {}, format="json"),
    ):
        assert call(anon).status_code == 401
        denied = call(client_for("contributor"))
        assert denied.status_code == 403
        assert denied.json()["code"] == "permission_denied" and denied.json()["requiredPermission"] == "posts.publish"
        assert call(client_for("admin", other_workspace)).status_code == 404
    assert PostTargetAction.objects.count() == 0


def test_unpublish_removes_the_copies_keeps_the_record_and_is_idempotent(api, workspace, platform) -> None:
    post_id, targets = _published(workspace, Platform.MASTODON, Platform.TIKTOK)
    response = api.post(f"/api/v1/social-posts/{post_id}/unpublish", {}, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "COMPLETED" and body["unpublishedAt"]
    assert [(e["platform"], e["outcome"]) for e in body["unpublishReport"]["entries"]] == [
        ("MASTODON", "QUEUED"),
        ("TIKTOK", "SKIPPED"),
    ]
    [action_id] = _open_actions(post_id)
    again = api.post(f"/api/v1/social-posts/{post_id}/unpublish", {}, format="json").json()
    assert [e["outcome"] for e in again["unpublishReport"]["entries"]] == ["UNCHANGED", "SKIPPED"]
    assert _open_actions(post_id) == [action_id]  # asking again queued nothing more
    platform.steps = [Transient("try later")]
    assert after_publishing.run_actions([action_id]) == 1
    action = PostTargetAction.objects.get(id=action_id)
    assert action.status == ActionStatus.PENDING and action.error_code == "platform_unavailable"
    PostTargetAction.objects.filter(id=action_id).update(due_at=timezone.now())
    assert after_publishing.run_actions([action_id]) == 1
    assert platform.deletes == [targets[0].platform_post_id] * 2  # the retry after the transient error
    record = api.get(f"/api/v1/social-posts/{post_id}").json()
    mastodon = record["platforms"][0]
    assert mastodon["status"] == "PUBLISHED" and mastodon["platformPostId"] == targets[0].platform_post_id
    assert mastodon["unpublishedAt"] and mastodon["unpublish"]["status"] == "DONE"
    assert record["platforms"][1]["unpublish"]["status"] == "SKIPPED"
    events = events_of(post_id, "post.unpublished")
    assert len(events) == 2  # the second request (nothing queued) answered at once, the first at its end
    assert [(e["platform"], e["status"]) for e in events[-1]["data"]["entries"]] == [
        ("MASTODON", "DONE"),
        ("TIKTOK", "SKIPPED"),
    ]
    edit = api.patch(f"/api/v1/social-posts/{post_id}", {"text": "too late"}, format="json")
    assert edit.status_code == 400 and edit.json()["code"] == "post_not_editable"
    assert api.delete(f"/api/v1/social-posts/{post_id}").status_code == 200  # today's DELETE: record only


def test_a_telegram_album_is_not_half_deleted(api, workspace, platform) -> None:
    """An album is one Telegram message per item and deleteMessage removes one: the entry is
    answered SKIPPED with the reason rather than left half live."""
    post_id, _ = _published(workspace, Platform.TELEGRAM)
    Post.objects.filter(id=post_id).update(
        content_type="CAROUSEL", media_urls=["https://cdn.example/a.jpg", "https://cdn.example/b.jpg"]
    )
    body = api.post(f"/api/v1/social-posts/{post_id}/unpublish", {}, format="json").json()
    [entry] = body["unpublishReport"]["entries"]
    assert entry["outcome"] == "SKIPPED" and "album of 2" in entry["reason"]
    assert _open_actions(post_id) == [] and platform.deletes == []


def _due_now(action_id: str) -> None:
    PostTargetAction.objects.filter(id=action_id).update(due_at=timezone.now())


def test_an_unknown_outcome_is_looked_up_and_settled_without_sending_again(api, workspace, platform) -> None:
    post_id, targets = _published(workspace, Platform.MASTODON)
    api.patch(f"/api/v1/social-posts/{post_id}", {"text": "edited, answer lost"}, format="json")
    [edit_id] = _open_actions(post_id)
    platform.lost = [UnknownOutcome("timeout after sending")]  # the edit was made, its answer lost
    after_publishing.run_actions([edit_id])
    assert PostTargetAction.objects.get(id=edit_id).status == ActionStatus.PENDING  # to be looked up
    _due_now(edit_id)
    assert after_publishing.run_actions([edit_id]) == 1
    assert after_publishing.run_actions([edit_id]) == 0  # run twice: nothing more
    edit = PostTargetAction.objects.get(id=edit_id)
    assert (edit.status, edit.error_code) == (ActionStatus.DONE, "")
    assert len(platform.edits) == 1 and platform.reads == [targets[0].platform_post_id]  # looked up, not re-sent
    assert PostTarget.objects.get(id=targets[0].id).text == "edited, answer lost"
    assert [e["data"]["entries"][0]["status"] for e in events_of(post_id, "post.updated")] == ["DONE"]

    api.post(f"/api/v1/social-posts/{post_id}/unpublish", {}, format="json")
    [delete_id] = _open_actions(post_id)
    platform.lost = [UnknownOutcome("timeout after sending")]  # deleted, its answer lost
    after_publishing.run_actions([delete_id])
    assert PostTargetAction.objects.get(id=delete_id).status == ActionStatus.PENDING
    _due_now(delete_id)
    after_publishing.run_actions([delete_id])
    after_publishing.run_actions([delete_id])
    assert PostTargetAction.objects.get(id=delete_id).status == ActionStatus.DONE
    assert platform.deletes == [targets[0].platform_post_id]  # the lookup found it gone: not sent again
    assert PostTarget.objects.get(id=targets[0].id).unpublished_at is not None
    assert [e["data"]["entries"][0]["status"] for e in events_of(post_id, "post.unpublished")] == ["DONE"]


def test_a_lookup_that_finds_the_change_not_made_sends_it_once(api, workspace, platform) -> None:
    post_id, targets = _published(workspace, Platform.MASTODON)
    api.patch(f"/api/v1/social-posts/{post_id}", {"text": "maybe"}, format="json")
    [edit_id] = _open_actions(post_id)
    platform.steps = [UnknownOutcome("timeout after sending")]  # lost before the platform made it
    after_publishing.run_actions([edit_id])
    _due_now(edit_id)
    after_publishing.run_actions([edit_id])
    after_publishing.run_actions([edit_id])
    assert PostTargetAction.objects.get(id=edit_id).status == ActionStatus.DONE
    assert [e.text for e in platform.edits] == ["maybe", "maybe"]  # the lost one, then once after the lookup
    assert platform.texts[targets[0].platform_post_id] == "maybe"
    api.post(f"/api/v1/social-posts/{post_id}/unpublish", {}, format="json")
    [delete_id] = _open_actions(post_id)
    platform.steps = [UnknownOutcome("timeout after sending")]
    after_publishing.run_actions([delete_id])
    _due_now(delete_id)
    after_publishing.run_actions([delete_id])
    after_publishing.run_actions([delete_id])
    assert PostTargetAction.objects.get(id=delete_id).status == ActionStatus.DONE
    assert platform.deletes == [targets[0].platform_post_id] * 2  # still there after the lost one: sent once more
    assert len(platform.reads) == 2


def test_a_lookup_that_fails_transiently_is_retried_before_anything_is_sent(api, workspace, platform) -> None:
    post_id, targets = _published(workspace, Platform.MASTODON)
    api.post(f"/api/v1/social-posts/{post_id}/unpublish", {}, format="json")
    [delete_id] = _open_actions(post_id)
    platform.lost = [UnknownOutcome("timeout after sending")]  # deleted, its answer lost
    after_publishing.run_actions([delete_id])
    platform.read_steps = [Transient("503 from the read")]
    _due_now(delete_id)
    after_publishing.run_actions([delete_id])
    action = PostTargetAction.objects.get(id=delete_id)
    assert (action.status, action.error_code) == (ActionStatus.PENDING, "platform_unavailable")  # retried
    _due_now(delete_id)
    after_publishing.run_actions([delete_id])
    after_publishing.run_actions([delete_id])
    assert PostTargetAction.objects.get(id=delete_id).status == ActionStatus.DONE
    assert platform.deletes == [targets[0].platform_post_id]  # the second read found it gone: never re-sent
    assert len(platform.reads) == 2


def test_without_a_lookup_an_unknown_edit_fails_and_a_delete_is_sent_again(api, workspace, platform) -> None:
    post_id, targets = _published(workspace, Platform.TELEGRAM)  # the Bot API reads no message
    platform.readable = False
    api.patch(f"/api/v1/social-posts/{post_id}", {"text": "maybe"}, format="json")
    [edit_id] = _open_actions(post_id)
    platform.steps = [UnknownOutcome("timeout after sending")]
    after_publishing.run_actions([edit_id])
    edit = PostTargetAction.objects.get(id=edit_id)
    assert (edit.status, edit.error_code) == (ActionStatus.FAILED, "unknown_outcome")
    assert len(platform.edits) == 1
    api.post(f"/api/v1/social-posts/{post_id}/unpublish", {}, format="json")
    [delete_id] = _open_actions(post_id)
    platform.lost = [UnknownOutcome("timeout after sending")]
    after_publishing.run_actions([delete_id])
    assert PostTargetAction.objects.get(id=delete_id).status == ActionStatus.PENDING  # safe to send again
    _due_now(delete_id)
    after_publishing.run_actions([delete_id])
    assert PostTargetAction.objects.get(id=delete_id).status == ActionStatus.DONE
    assert platform.deletes == [targets[0].platform_post_id] * 2


def test_a_write_after_the_lease_was_taken_over_changes_nothing(api, workspace, platform, monkeypatch) -> None:
    post_id, _ = _published(workspace, Platform.MASTODON)
    api.patch(f"/api/v1/social-posts/{post_id}", {"text": "fenced"}, format="json")
    [action_id] = _open_actions(post_id)
    [claim] = after_publishing.ACTION_STEP.claim([action_id], now=timezone.now())
    assert after_publishing.ACTION_STEP.claim([action_id], now=timezone.now()) == []  # claimed once
    # The lease runs out (the worker stalled) and the sweeper takes the row over: nothing was sent.
    later = timezone.now() + dt.timedelta(hours=1)
    monkeypatch.setattr(timezone, "now", lambda: later)
    assert sweep().actions_requeued == [action_id]
    # The first holder's write is fenced out.
    assert after_publishing._write(claim, ActionStatus.DONE) is False
    assert PostTargetAction.objects.get(id=action_id).status == ActionStatus.PENDING
    assert events_of(post_id, "post.updated") == []


def _lost_mid_call(action_id: str, monkeypatch: pytest.MonkeyPatch) -> dt.datetime:
    """Claim ``action_id``, record that its call started, and let its lease run out (the worker
    died mid-call); returns the time it is now."""
    [claim] = after_publishing.ACTION_STEP.claim([action_id], now=timezone.now())
    assert after_publishing.step.record_start(after_publishing.COLUMNS, claim)
    later = timezone.now() + dt.timedelta(hours=1)
    monkeypatch.setattr(timezone, "now", lambda: later)
    return later


def test_the_sweeper_fails_an_edit_lost_mid_call_where_the_platform_reads_no_post(
    api, workspace, platform, monkeypatch
) -> None:
    post_id, _ = _published(workspace, Platform.TELEGRAM)
    api.patch(f"/api/v1/social-posts/{post_id}", {"text": "lost"}, format="json")
    [edit_id] = _open_actions(post_id)
    _lost_mid_call(edit_id, monkeypatch)
    report = sweep()
    assert report.actions_failed == [edit_id]
    edit = PostTargetAction.objects.get(id=edit_id)
    assert (edit.status, edit.error_code) == (ActionStatus.FAILED, "unknown_outcome")
    assert platform.edits == []  # never sent again
    assert [e["data"]["entries"][0]["status"] for e in events_of(post_id, "post.updated")] == ["FAILED"]


def test_the_sweeper_requeues_a_lost_edit_and_delete_and_the_lookup_settles_them(
    api, workspace, platform, monkeypatch
) -> None:
    post_id, targets = _published(workspace, Platform.MASTODON)
    remote_id = targets[0].platform_post_id
    api.patch(f"/api/v1/social-posts/{post_id}", {"text": "lost"}, format="json")
    [edit_id] = _open_actions(post_id)
    _lost_mid_call(edit_id, monkeypatch)
    platform.texts[remote_id] = "lost"  # the platform made the edit before the worker died
    assert sweep().actions_requeued == [edit_id]
    assert after_publishing.run_actions([edit_id]) == 1
    assert after_publishing.run_actions([edit_id]) == 0  # run twice
    assert PostTargetAction.objects.get(id=edit_id).status == ActionStatus.DONE
    assert platform.edits == [] and platform.reads == [remote_id]  # looked up, never sent again
    assert [e["data"]["entries"][0]["status"] for e in events_of(post_id, "post.updated")] == ["DONE"]

    api.post(f"/api/v1/social-posts/{post_id}/unpublish", {}, format="json")
    [delete_id] = _open_actions(post_id)
    _lost_mid_call(delete_id, monkeypatch)
    platform.gone.add(remote_id)  # the platform deleted it before the worker died
    assert sweep().actions_requeued == [delete_id]
    after_publishing.run_actions([delete_id])
    after_publishing.run_actions([delete_id])
    assert PostTargetAction.objects.get(id=delete_id).status == ActionStatus.DONE
    assert platform.deletes == []  # looked up, found gone: never sent again
    assert PostTarget.objects.get(id=targets[0].id).unpublished_at is not None
