from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection

from posts.models import Post, PostTarget
from posts.rendering import post_record
from tests.factories.posts import PostFactory, PostTargetFactory, account
from tests.posts.conftest import events, future, iso

URL = "/api/v1/social-posts"


@pytest.fixture
def masto(workspace: Any) -> Any:
    return account(workspace, "MASTODON", display_name="Masto")


def draft(api: Any, masto: Any, **extra: Any) -> Post:
    response = api.post(
        URL,
        {
            "contentType": "TEXT",
            "timezone": "UTC",
            "text": "Hi",
            "platforms": ["MASTODON"],
            "mastodonConnectionIds": [masto.id],
            "saveAsDraft": True,
            **extra,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    return Post.objects.get(id=response.json()["postId"])


# --- publish ------------------------------------------------------------------------------


def test_publish_now(api: Any, masto: Any, enqueued: list, commit: Any) -> None:
    post = draft(api, masto)
    response = commit(lambda: api.post(f"{URL}/{post.id}/publish", {}, format="json"))
    assert response.status_code == 201, response.json()
    assert response.json() == {
        "postId": post.id,
        "queuedPlatforms": ["MASTODON"],
        "isScheduled": False,
        "scheduledAt": None,
    }
    post.refresh_from_db()
    assert post.status == "PENDING" and enqueued == [post.targets.get().id]


def test_publish_scheduled_and_dated_draft(api: Any, workspace: Any, masto: Any, enqueued: list, commit: Any) -> None:
    when = future(120)
    post = draft(api, masto, scheduledAt=iso(when))
    response = commit(lambda: api.post(f"{URL}/{post.id}/publish", format="json"))
    assert response.json() == {
        "postId": post.id,
        "queuedPlatforms": [],  # queued at its time, not now
        "isScheduled": True,
        "scheduledAt": iso(when),
    }
    post.refresh_from_db()
    assert post.status == "SCHEDULED" and enqueued == []
    [event] = events(workspace.id, "post.scheduled")
    assert event["data"]["post"] == post_record(post)
    other = draft(api, masto)
    later = future(30)
    response = api.post(
        f"{URL}/{other.id}/publish", {"scheduledAt": iso(later), "timezone": "Asia/Tokyo"}, format="json"
    )
    assert response.json()["scheduledAt"] == iso(later)
    assert Post.objects.get(id=other.id).timezone == "Asia/Tokyo"


def test_publish_runs_create_validation(api: Any, workspace: Any, enqueued: list) -> None:
    tiktok = account(workspace, "TIKTOK")
    post = draft(api, tiktok, platforms=["TIKTOK"], tiktokConnectionIds=[tiktok.id], mastodonConnectionIds=[])
    response = api.post(f"{URL}/{post.id}/publish", {}, format="json")
    assert response.status_code == 400
    assert "Privacy level is required for TikTok posts" in response.json()["message"]
    assert Post.objects.get(id=post.id).status == "DRAFT"


def test_publish_refuses_unauthorized_account(api: Any, masto: Any, enqueued: list) -> None:
    post = draft(api, masto)
    masto.status = "unauthorized"
    masto.save()
    response = api.post(f"{URL}/{post.id}/publish", {}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "account_unauthorized"


def test_publish_neither_a_draft_nor_scheduled(api: Any, workspace: Any) -> None:
    post = PostFactory(workspace=workspace, status="COMPLETED")
    response = api.post(f"{URL}/{post.id}/publish", {}, format="json")
    assert response.json() == {
        "statusCode": 400,
        "error": "Bad Request",
        "message": "Post is not a draft or scheduled post (its status is COMPLETED)",
        "code": "post_not_draft",
    }


def test_publish_permissions(client_for: Any, api: Any, masto: Any) -> None:
    post = draft(api, masto)
    contributor = client_for("contributor")
    response = contributor.post(f"{URL}/{post.id}/publish", {}, format="json")
    assert response.status_code == 403 and response.json()["requiredPermission"] == "posts.publish"
    response = contributor.post(f"{URL}/{post.id}/publish", {"scheduledAt": iso(future())}, format="json")
    assert response.status_code == 403 and response.json()["requiredPermission"] == "posts.schedule"
    response = client_for("viewer").post(f"{URL}/{post.id}/publish", {}, format="json")
    assert response.json()["requiredPermission"] == "posts.draft"
    assert Post.objects.get(id=post.id).status == "DRAFT"


def test_publish_idempotent(api: Any, masto: Any, enqueued: list, commit: Any) -> None:
    post = draft(api, masto)
    first = commit(lambda: api.post(f"{URL}/{post.id}/publish", {}, format="json", HTTP_IDEMPOTENCY_KEY="p1"))
    second = commit(lambda: api.post(f"{URL}/{post.id}/publish", {}, format="json", HTTP_IDEMPOTENCY_KEY="p1"))
    assert first.json() == second.json() and second.status_code == 201 and len(enqueued) == 1


# --- unschedule -----------------------------------------------------------------------------


def test_unschedule(api: Any, workspace: Any, masto: Any, enqueued: list) -> None:
    post = PostFactory(workspace=workspace, status="SCHEDULED", scheduled_at=future())
    PostTargetFactory(post=post)
    response = api.post(f"{URL}/{post.id}/unschedule", {}, format="json")
    post.refresh_from_db()
    assert response.status_code == 200 and response.json() == post_record(post)
    assert post.status == "DRAFT" and post.scheduled_at is None
    again = api.post(f"{URL}/{post.id}/unschedule", format="json")
    assert again.status_code == 200 and again.json()["status"] == "DRAFT"
    dated = draft(api, masto, scheduledAt=iso(future()))
    assert api.post(f"{URL}/{dated.id}/unschedule", {}, format="json").json()["scheduledAt"] is None


@pytest.mark.parametrize("status", ["PENDING", "PUBLISHING", "COMPLETED", "FAILED"])
def test_unschedule_refused(api: Any, workspace: Any, status: str, client_for: Any) -> None:
    post = PostFactory(workspace=workspace, status=status)
    response = api.post(f"{URL}/{post.id}/unschedule", {}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "post_not_unschedulable"
    assert client_for("viewer").post(f"{URL}/{post.id}/unschedule").json()["requiredPermission"] == "posts.draft"


# --- retry ----------------------------------------------------------------------------------


@pytest.fixture
def failed_post(workspace: Any) -> tuple[Post, PostTarget, PostTarget, PostTarget]:
    post = PostFactory(workspace=workspace, status="PARTIAL_FAILURE")
    ok = PostTargetFactory(post=post, platform="MASTODON", status="PUBLISHED", platform_post_id="1")
    bad1 = PostTargetFactory(
        post=post, platform="BLUESKY", status="FAILED", error_message="x", error_code="duplicate", attempts=5
    )
    bad2 = PostTargetFactory(
        post=post, platform="TWITTER", status="FAILED", error_message="y", error_code="rate_limited", attempts=3
    )
    return post, ok, bad1, bad2


def test_retry_all_failed(api: Any, failed_post: Any, enqueued: list, commit: Any) -> None:
    post, ok, bad1, bad2 = failed_post
    response = commit(lambda: api.post(f"{URL}/{post.id}/retry", {}, format="json"))
    assert response.status_code == 201
    assert response.json() == {"postId": post.id, "queuedPlatforms": ["BLUESKY", "TWITTER"], "isScheduled": False}
    for target in (bad1, bad2):
        target.refresh_from_db()
        assert (target.status, target.error_message, target.error_code, target.attempts) == ("PENDING", "", "", 0)
    post.refresh_from_db()
    assert post.status == "PENDING" and sorted(enqueued) == sorted([bad1.id, bad2.id])


def test_retry_by_name_and_id(api: Any, failed_post: Any, enqueued: list, commit: Any) -> None:
    post, ok, bad1, bad2 = failed_post
    response = commit(lambda: api.post(f"{URL}/{post.id}/retry", {"platformIds": ["bluesky"]}, format="json"))
    assert response.json()["queuedPlatforms"] == ["BLUESKY"] and enqueued == [bad1.id]
    response = commit(lambda: api.post(f"{URL}/{post.id}/retry", {"platformIds": [bad2.id, ok.id]}, format="json"))
    assert response.json()["queuedPlatforms"] == ["TWITTER"] and enqueued == [bad1.id, bad2.id]


def test_retry_errors(api: Any, failed_post: Any, workspace: Any, client_for: Any) -> None:
    post, ok, bad1, bad2 = failed_post
    response = api.post(f"{URL}/{post.id}/retry", {"platformIds": ["nope"]}, format="json")
    assert response.json() == {
        "statusCode": 400,
        "error": "Bad Request",
        "message": "platformIds: nope matches no platform entry of this post",
        "code": "unknown_retry_target",
    }
    response = api.post(f"{URL}/{post.id}/retry", {"platformIds": ["MASTODON"]}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "no_failed_platforms"
    response = api.post(f"{URL}/{post.id}/retry", {"platformIds": ["TELEGRAM"]}, format="json")
    assert response.json()["code"] == "unknown_retry_target"
    response = client_for("contributor").post(f"{URL}/{post.id}/retry", {}, format="json")
    assert response.status_code == 403 and response.json()["requiredPermission"] == "posts.publish"
    for garbage in ({"platformIds": "BLUESKY"}, {"platformIds": [{}]}, [], "x"):
        assert api.post(f"{URL}/{post.id}/retry", garbage, format="json").status_code == 400
    assert PostTarget.objects.get(id=bad1.id).status == "FAILED"


@pytest.mark.django_db(transaction=True)
def test_concurrent_retries_queue_each_entry_once(client_for: Any, workspace: Any, monkeypatch: Any) -> None:
    post = PostFactory(workspace=workspace, status="FAILED")
    targets = [PostTargetFactory(post=post, platform=p, status="FAILED") for p in ("BLUESKY", "TWITTER")]
    sent: list[str] = []
    lock = threading.Lock()

    def record(ids: Any, **kwargs: Any) -> None:
        with lock:
            sent.extend(ids)

    monkeypatch.setattr("posts.services.transitions.enqueue_targets", record)
    clients = [client_for("admin") for _ in range(6)]
    statuses: list[int] = []
    barrier = threading.Barrier(len(clients))

    def run(client: Any) -> None:
        barrier.wait()
        try:
            statuses.append(client.post(f"{URL}/{post.id}/retry", {}, format="json").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(c,)) for c in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [201] + [400] * 5
    assert sorted(sent) == sorted(t.id for t in targets)


def test_actions_accept_an_empty_json_body(api: Any, failed_post: Any, masto: Any, enqueued: list) -> None:
    post, _, bad1, bad2 = failed_post
    response = api.generic("POST", f"{URL}/{post.id}/retry", "", content_type="application/json")
    assert response.status_code == 201, response.json()
    assert response.json() == {"postId": post.id, "queuedPlatforms": ["BLUESKY", "TWITTER"], "isScheduled": False}
    dated = draft(api, masto, scheduledAt=iso(future()))
    response = api.generic("POST", f"{URL}/{dated.id}/unschedule", "", content_type="application/json")
    assert response.status_code == 200 and response.json()["scheduledAt"] is None
    response = api.generic("POST", f"{URL}/{dated.id}/publish", "", content_type="application/json")
    assert response.status_code == 201 and response.json()["queuedPlatforms"] == ["MASTODON"]


def test_patch_after_the_dispatcher_claim_is_refused(api: Any, workspace: Any, masto: Any, enqueued: list) -> None:
    from posts.pipeline.dispatcher import dispatch_due

    response = api.post(
        URL,
        {
            "contentType": "TEXT",
            "timezone": "UTC",
            "text": "soon",
            "platforms": ["MASTODON"],
            "mastodonConnectionIds": [masto.id],
            "scheduledAt": iso(future(1)),
        },
        format="json",
    )
    post_id = response.json()["postId"]
    Post.objects.filter(id=post_id).update(scheduled_at=future(0))
    assert dispatch_due() == 1
    response = api.patch(f"{URL}/{post_id}", {"text": "too late"}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "post_not_editable"
    assert api.post(f"{URL}/{post_id}/unschedule", {}, format="json").json()["code"] == "post_not_unschedulable"
    assert PostTarget.objects.get(post_id=post_id).text == "soon"


def test_retry_and_unschedule_replay_their_first_answer(api: Any, failed_post: Any, masto: Any, enqueued: list) -> None:
    post, _, bad1, bad2 = failed_post
    first = api.post(f"{URL}/{post.id}/retry", {}, format="json", HTTP_IDEMPOTENCY_KEY="r-1")
    second = api.post(f"{URL}/{post.id}/retry", {}, format="json", HTTP_IDEMPOTENCY_KEY="r-1")
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json() and second["Idempotent-Replayed"] == "true"
    # without the key the same call finds nothing failed any more
    assert api.post(f"{URL}/{post.id}/retry", {}, format="json").json()["code"] == "no_failed_platforms"
    dated = draft(api, masto, scheduledAt=iso(future()))
    first = api.post(f"{URL}/{dated.id}/unschedule", {}, format="json", HTTP_IDEMPOTENCY_KEY="u-1")
    second = api.post(f"{URL}/{dated.id}/unschedule", {}, format="json", HTTP_IDEMPOTENCY_KEY="u-1")
    assert first.json() == second.json() and second["Idempotent-Replayed"] == "true"
