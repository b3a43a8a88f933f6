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

from media.models import MediaFile, ProbeStatus
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
from tests.factories.posts import uploaded
from tests.pipeline.helpers import events_of, fake_account, make_post, queued_publish_tasks, targets_of

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
        self.processing = False  # a media edit answers done=False first (a video being processed)

    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        self.texts[f"r-{request.target_id}"] = request.text
        return PublishResult(
            done=True, platform_post_id=f"r-{request.target_id}", url=f"https://x.test/{request.target_id}"
        )

    def edit(self, creds: Credentials, request: EditRequest) -> EditResult:
        self.edits.append(request)
        if self.steps:
            raise self.steps.pop(0)
        if request.media and self.processing and not request.state:
            # new media the platform processes: nothing changed yet, ask again with the upload's state
            return EditResult(done=False, state={"uploaded": [m.url for m in request.media]}, poll_after=2.0)
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
    unknown = api.patch(f"/api/v1/social-posts/{post_id}", {"scheduledAt": None}, format="json")
    assert unknown.status_code == 400 and "scheduledAt" in str(unknown.json()["message"])
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
    media_edit = {"contentType": "IMAGE", "mediaUrls": [uploaded(workspace)]}
    for call in (
        lambda c: c.patch(f"/api/v1/social-posts/{post_id}", {"text": "x"}, format="json"),
        lambda c: c.patch(f"/api/v1/social-posts/{post_id}", media_edit, format="json"),
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


# --- media edits ---------------------------------------------------------------------------------


def _published_with_media(
    workspace: Any, *platforms: Platform, content_type: str, media_urls: list[str], text: str = "Look at this"
) -> tuple[str, list[PostTarget]]:
    accounts = [fake_account(workspace, p, p.value.lower()) for p in platforms]
    post = make_post(workspace, accounts, text=text)
    Post.objects.filter(id=post.id).update(content_type=content_type, media_urls=media_urls)
    assert publish_targets([t.id for t in targets_of(post)]) == len(platforms)
    return post.id, targets_of(post)


def _outcomes(body: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {e["platform"]: (e["outcome"], e["reason"]) for e in body["editReport"]["entries"]}


def test_a_media_edit_goes_to_the_platforms_that_change_media_and_answers_the_others(api, workspace, platform) -> None:
    old, new = uploaded(workspace), uploaded(workspace)
    post_id, targets = _published_with_media(
        workspace,
        Platform.MASTODON,
        Platform.TELEGRAM,
        Platform.GOOGLE_BUSINESS,
        Platform.FACEBOOK,
        Platform.TWITTER,
        content_type="IMAGE",
        media_urls=[old],
    )
    response = api.patch(
        f"/api/v1/social-posts/{post_id}", {"mediaUrls": [new], "mediaAltTexts": ["The new picture"]}, format="json"
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert _outcomes(body) == {
        "MASTODON": ("QUEUED", None),
        "TELEGRAM": ("QUEUED", None),
        "GOOGLE_BUSINESS": ("QUEUED", None),
        "FACEBOOK": ("SKIPPED", "FACEBOOK does not let its API change the media of a published post"),
        "TWITTER": ("SKIPPED", "TWITTER does not let its API edit a published post"),
    }
    assert all(e["fields"] == ["media"] for e in body["editReport"]["entries"])
    # the post has the new media at once; every entry keeps what is live on its platform for now
    assert (body["contentType"], body["mediaUrls"], body["mediaAltTexts"]) == ("IMAGE", [new], ["The new picture"])
    assert {e["platform"]: (e["mediaUrls"], e["contentType"]) for e in body["platforms"]} == {
        p: ([old], "IMAGE") for p in ("MASTODON", "TELEGRAM", "GOOGLE_BUSINESS", "FACEBOOK", "TWITTER")
    }
    assert MediaFile.objects.get(public_url=new).keep_until is not None  # kept while the edits may send it
    queued = _open_actions(post_id)
    assert len(queued) == 3
    assert after_publishing.run_actions(queued) == 3
    assert after_publishing.run_actions(queued) == 0  # run twice: no second call
    sent = {request.target_id: request for request in platform.edits}
    assert set(sent) == {t.id for t in targets[:3]}
    for request in sent.values():
        [item] = request.media or ()
        assert (item.url, item.kind, item.alt_text) == (new, "image", "The new picture")
        assert request.text == "Look at this"  # the caption that goes with the media stays
        assert (request.content_type, request.title) == ("IMAGE", None)
    record = api.get(f"/api/v1/social-posts/{post_id}").json()
    entries = {e["platform"]: e for e in record["platforms"]}
    for name in ("MASTODON", "TELEGRAM", "GOOGLE_BUSINESS"):
        entry = entries[name]
        assert entry["mediaUrls"] == [new] and entry["mediaAltTexts"] == ["The new picture"]
        assert "contentType" not in entry  # follows the post's media again
        [edit] = entry["edits"]
        assert (edit["status"], edit["fields"]) == ("DONE", ["media"])
        assert edit["changes"] == {
            "media": {"contentType": "IMAGE", "mediaUrls": [new], "mediaAltTexts": ["The new picture"]}
        }
        assert edit["previous"] == {"media": {"contentType": "IMAGE", "mediaUrls": [old], "mediaAltTexts": []}}
    for name in ("FACEBOOK", "TWITTER"):  # still what their platforms show
        assert (entries[name]["mediaUrls"], entries[name]["contentType"]) == ([old], "IMAGE")
        assert entries[name]["edits"][0]["status"] == "SKIPPED"
    [event] = events_of(post_id, "post.updated")
    assert {e["platform"]: (e["status"], e["fields"]) for e in event["data"]["entries"]} == {
        "MASTODON": ("DONE", ["media"]),
        "TELEGRAM": ("DONE", ["media"]),
        "GOOGLE_BUSINESS": ("DONE", ["media"]),
        "FACEBOOK": ("SKIPPED", ["media"]),
        "TWITTER": ("SKIPPED", ["media"]),
    }
    again = api.patch(f"/api/v1/social-posts/{post_id}", {"mediaAltTexts": ["The new picture"]}, format="json").json()
    assert [_outcomes(again)[p][0] for p in ("MASTODON", "TELEGRAM", "GOOGLE_BUSINESS")] == ["UNCHANGED"] * 3
    assert _open_actions(post_id) == []


def test_a_media_change_a_platform_cannot_make_in_place_is_skipped_with_the_reason(api, workspace, platform) -> None:
    image, video = uploaded(workspace), uploaded(workspace, "video")
    post_id, _ = _published_with_media(
        workspace, Platform.MASTODON, Platform.TELEGRAM, content_type="IMAGE", media_urls=[image]
    )
    removed = api.patch(f"/api/v1/social-posts/{post_id}", {"contentType": "TEXT", "mediaUrls": []}, format="json")
    assert removed.status_code == 200, removed.json()
    assert _outcomes(removed.json()) == {
        "MASTODON": ("QUEUED", None),
        "TELEGRAM": ("SKIPPED", "TELEGRAM cannot remove the media of a published post, only replace them"),
    }

    album, _ = _published_with_media(
        workspace, Platform.TELEGRAM, content_type="CAROUSEL", media_urls=[uploaded(workspace), uploaded(workspace)]
    )
    one = api.patch(f"/api/v1/social-posts/{album}", {"contentType": "IMAGE", "mediaUrls": [image]}, format="json")
    assert _outcomes(one.json())["TELEGRAM"] == (
        "SKIPPED",
        "TELEGRAM replaces the media of a post with at most 1 media item(s) in place; this one went out with 2",
    )

    text_only, _ = _published(workspace, Platform.MASTODON, Platform.TELEGRAM, Platform.GOOGLE_BUSINESS)
    to_video = api.patch(
        f"/api/v1/social-posts/{text_only}", {"contentType": "VIDEO", "mediaUrls": [video]}, format="json"
    )
    assert to_video.status_code == 200, to_video.json()
    assert _outcomes(to_video.json()) == {
        "MASTODON": ("QUEUED", None),
        "TELEGRAM": ("QUEUED", None),  # editMessageMedia adds media to a text message
        "GOOGLE_BUSINESS": (
            "SKIPPED",
            "GOOGLE_BUSINESS does not take VIDEO posts (only TEXT, IMAGE), so it cannot become one",
        ),
    }
    [mastodon, telegram] = [
        a.changes for a in PostTargetAction.objects.filter(target__post_id=text_only, status="PENDING")
    ]
    assert mastodon == telegram == {"media": {"contentType": "VIDEO", "mediaUrls": [video], "mediaAltTexts": []}}


def test_a_media_edit_is_checked_as_publishing_checks_media_and_nothing_is_queued(api, workspace, platform) -> None:
    image = uploaded(workspace)
    post_id, _ = _published_with_media(
        workspace, Platform.MASTODON, Platform.TELEGRAM, content_type="IMAGE", media_urls=[image]
    )

    def patch(body: dict[str, Any]) -> dict[str, Any]:
        response = api.patch(f"/api/v1/social-posts/{post_id}", body, format="json")
        assert response.status_code == 400, response.json()
        return dict(response.json())

    missing = patch({"mediaUrls": ["https://media.example.com/never-uploaded.jpg"]})
    assert (
        missing["code"] == "media_not_found"
        and "mediaUrls: https://media.example.com/never-uploaded.jpg" in (missing["message"][0])
    )
    broken = uploaded(workspace)
    MediaFile.objects.filter(public_url=broken).update(
        probe_status=ProbeStatus.UNUSABLE, probe_error="moov atom not found"
    )
    unusable = patch({"mediaUrls": [broken]})
    assert unusable["code"] == "media_unusable"
    assert {m.split(" takes ")[0] for m in unusable["message"]} == {"mediaUrls: MASTODON", "mediaUrls: TELEGRAM"}
    assert all(broken in m and "moov atom not found" in m for m in unusable["message"])
    wrong_type = patch({"mediaUrls": [uploaded(workspace, "video")]})  # still an IMAGE post
    assert wrong_type["message"] == ["mediaUrls: every media item of a IMAGE post must be a image"]
    too_many = patch({"mediaAltTexts": ["one", "two"]})
    assert too_many["message"] == ["mediaAltTexts: must not have more items than mediaUrls"]
    five = patch({"contentType": "CAROUSEL", "mediaUrls": [uploaded(workspace) for _ in range(5)]})
    assert five["message"] == ["MASTODON accepts at most 4 images", "MASTODON accepts at most 4 media items"]
    bad_value = patch({"contentType": "GIF"})
    assert "contentType" in str(bad_value["message"])
    assert PostTargetAction.objects.count() == 0
    post = Post.objects.get(id=post_id)
    assert (post.content_type, post.media_urls) == ("IMAGE", [image])  # unchanged

    long_text, _ = _published(workspace, Platform.TELEGRAM, text="x" * 2000)  # a text message: up to 4096
    captioned = api.patch(
        f"/api/v1/social-posts/{long_text}", {"contentType": "IMAGE", "mediaUrls": [image]}, format="json"
    )
    assert captioned.status_code == 400
    assert captioned.json()["message"] == ["TELEGRAM text is 2000 characters; the limit is 1024"]  # as a caption
    assert PostTargetAction.objects.count() == 0


def test_a_video_the_platform_still_processes_is_asked_again_and_sent_once(api, workspace, platform) -> None:
    video = uploaded(workspace, "video")
    post_id, targets = _published(workspace, Platform.MASTODON)
    platform.processing = True
    api.patch(f"/api/v1/social-posts/{post_id}", {"contentType": "VIDEO", "mediaUrls": [video]}, format="json")
    [action_id] = _open_actions(post_id)
    assert after_publishing.run_actions([action_id]) == 1
    waiting = PostTargetAction.objects.get(id=action_id)
    assert (waiting.status, waiting.attempts, waiting.sending) == (ActionStatus.PENDING, 0, "")  # not an attempt
    assert waiting.state == {"uploaded": [video]} and waiting.due_at > timezone.now()
    assert after_publishing.run_actions([action_id]) == 0  # not due yet
    _due_now(action_id)
    assert after_publishing.run_actions([action_id]) == 1
    assert after_publishing.run_actions([action_id]) == 0  # run twice: nothing more
    first, second = platform.edits
    assert (first.state, second.state) == ({}, {"uploaded": [video]})  # resumed, not uploaded again
    assert platform.reads == []  # the answer changed nothing: no lookup before asking again
    assert PostTargetAction.objects.get(id=action_id).status == ActionStatus.DONE
    entry = api.get(f"/api/v1/social-posts/{post_id}").json()["platforms"][0]
    assert entry["mediaUrls"] == [video] and "contentType" not in entry
    [event] = events_of(post_id, "post.updated")
    assert [(e["status"], e["fields"]) for e in event["data"]["entries"]] == [("DONE", ["media"])]


def test_a_media_edit_whose_answer_was_lost_is_sent_again_after_the_lookup(api, workspace, platform) -> None:
    """A read of the post does not show its media, so the lookup cannot find the edit made:
    setting the same media again is harmless, and it is sent once more."""
    image = uploaded(workspace)
    post_id, targets = _published(workspace, Platform.MASTODON)
    api.patch(f"/api/v1/social-posts/{post_id}", {"contentType": "IMAGE", "mediaUrls": [image]}, format="json")
    [edit_id] = _open_actions(post_id)
    platform.lost = [UnknownOutcome("timeout after sending")]
    after_publishing.run_actions([edit_id])
    assert PostTargetAction.objects.get(id=edit_id).status == ActionStatus.PENDING
    _due_now(edit_id)
    after_publishing.run_actions([edit_id])
    after_publishing.run_actions([edit_id])
    assert PostTargetAction.objects.get(id=edit_id).status == ActionStatus.DONE
    assert platform.reads == [targets[0].platform_post_id] and len(platform.edits) == 2
    assert [item.url for request in platform.edits for item in request.media or ()] == [image, image]


def test_a_text_edit_after_a_skipped_media_edit_is_checked_with_the_media_live_there(api, workspace, platform) -> None:
    """Facebook keeps the photo it has; a later text edit is checked against that (the post now
    has no media), and the files a finished post no longer keeps are taken as their type says."""
    image = uploaded(workspace, "video")
    post_id, _ = _published_with_media(
        workspace, Platform.TELEGRAM, Platform.FACEBOOK, content_type="VIDEO", media_urls=[image]
    )
    MediaFile.objects.filter(public_url=image).delete()  # collected since the post finished
    long = "y" * 1500  # beyond Telegram's caption limit, within its text limit
    response = api.patch(f"/api/v1/social-posts/{post_id}", {"text": long}, format="json")
    assert response.status_code == 400
    assert response.json()["message"] == ["TELEGRAM text is 1500 characters; the limit is 1024"]


def test_an_action_run_before_its_time_is_queued_again_for_it_and_one_far_off_is_left_to_the_sweeper(
    api, workspace, platform, settings
) -> None:
    post_id, targets = _published(workspace, Platform.MASTODON)
    api.patch(f"/api/v1/social-posts/{post_id}", {"text": "not yet"}, format="json")
    [edit_id] = _open_actions(post_id)
    PostTargetAction.objects.filter(id=edit_id).update(due_at=timezone.now() + dt.timedelta(seconds=40))
    assert after_publishing.run_actions([edit_id]) == 0  # not due: nothing sent
    assert platform.edits == []
    again = [t for t in queued_publish_tasks([edit_id]) if t[0] == "posts.run_platform_actions" and t[2] is not None]
    assert len(again) == 1 and 38 <= (again[0][2] or 0) <= 41
    settings.PUBLISH_MAX_COUNTDOWN_SECONDS = 30
    assert after_publishing.run_actions([edit_id]) == 0
    assert len([t for t in queued_publish_tasks([edit_id]) if t[2] is not None]) == 1  # nothing more queued
