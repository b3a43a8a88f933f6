from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from posts.models import Post
from tests.factories.posts import account, uploaded
from tests.posts.conftest import future, iso

URL = "/api/v1/social-posts"


@pytest.fixture
def masto(workspace: Any) -> Any:
    return account(workspace, "MASTODON")


def batch(masto: Any, *items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "platforms": ["MASTODON"],
        "mastodonConnectionIds": [masto.id],
        "timezone": "UTC",
        "posts": list(items),
        **extra,
    }


def test_bulk_items_independent(api: Any, workspace: Any, masto: Any, enqueued: list, commit: Any) -> None:
    t1, t2 = future(60), future(120)
    payload = batch(
        masto,
        {"contentType": "TEXT", "text": "one", "scheduledAt": iso(t1)},
        {"contentType": "TEXT", "text": "x" * 600, "scheduledAt": iso(t2)},
        {"contentType": "DOCUMENT", "scheduledAt": iso(t2)},
        {"contentType": "TEXT", "text": "now", "scheduledAt": iso(timezone.now() - dt.timedelta(hours=1))},
        "garbage",
    )
    response = commit(lambda: api.post(f"{URL}/bulk", payload, format="json"))
    assert response.status_code == 201, response.json()
    first, now_post = (Post.objects.get(text=t) for t in ("one", "now"))
    assert response.json() == {
        "totalScheduled": 2,
        "totalFailed": 3,
        "results": [
            {"postId": first.id, "success": True, "isScheduled": True, "scheduledAt": iso(t1), "errorMessage": None},
            {
                "postId": None,
                "success": False,
                "isScheduled": False,
                "scheduledAt": iso(t2),
                "errorMessage": "MASTODON text is 600 characters; the limit is 500",
            },
            {
                "postId": None,
                "success": False,
                "isScheduled": False,
                "scheduledAt": None,
                "errorMessage": response.json()["results"][2]["errorMessage"],
            },
            {"postId": now_post.id, "success": True, "isScheduled": False, "scheduledAt": None, "errorMessage": None},
            {
                "postId": None,
                "success": False,
                "isScheduled": False,
                "scheduledAt": None,
                "errorMessage": response.json()["results"][4]["errorMessage"],
            },
        ],
    }
    assert "contentType" in response.json()["results"][2]["errorMessage"]
    assert first.status == "SCHEDULED" and now_post.status == "PENDING"
    assert enqueued == [now_post.targets.get().id]


def test_bulk_item_configs_replace_batch(api: Any, workspace: Any, enqueued: list) -> None:
    tiktok = account(workspace, "TIKTOK")
    video = uploaded(workspace, "video")
    payload = {
        "platforms": ["TIKTOK"],
        "tiktokConnectionIds": [tiktok.id],
        "timezone": "UTC",
        "tiktokConfigs": [{"privacyLevel": "SELF_ONLY"}],
        "posts": [
            {"contentType": "VIDEO", "mediaUrls": [video], "scheduledAt": iso(future())},
            {
                "contentType": "VIDEO",
                "mediaUrls": [video],
                "scheduledAt": iso(future()),
                "tiktokConfigs": [{"privacyLevel": "PUBLIC_TO_EVERYONE"}],
            },
            {"contentType": "VIDEO", "mediaUrls": [video], "scheduledAt": iso(future()), "tiktokConfigs": []},
        ],
    }
    results = api.post(f"{URL}/bulk", payload, format="json").json()["results"]
    assert [r["success"] for r in results] == [True, True, False]
    assert results[2]["errorMessage"] == "Privacy level is required for TikTok posts"
    levels = [Post.objects.get(id=r["postId"]).targets.get().config["privacyLevel"] for r in results[:2]]
    assert levels == ["SELF_ONLY", "PUBLIC_TO_EVERYONE"]


def test_bulk_item_idempotency_key(api: Any, masto: Any, enqueued: list) -> None:
    item = {"contentType": "TEXT", "text": "once", "scheduledAt": iso(future()), "idempotencyKey": "item-1"}
    first = api.post(f"{URL}/bulk", batch(masto, item), format="json").json()
    second = api.post(
        f"{URL}/bulk", batch(masto, item, {**item, "idempotencyKey": "item-2", "text": "two"}), format="json"
    ).json()
    assert second["results"][0] == first["results"][0] and second["totalScheduled"] == 2
    assert Post.objects.filter(text="once").count() == 1
    reused = api.post(f"{URL}/bulk", batch(masto, {**item, "text": "changed"}), format="json").json()
    assert reused["results"][0]["success"] is False and reused["totalFailed"] == 1


def test_bulk_permissions_and_batch_errors(client_for: Any, api: Any, masto: Any, enqueued: list) -> None:
    scheduled = {"contentType": "TEXT", "text": "a", "scheduledAt": iso(future())}
    due = {"contentType": "TEXT", "text": "b", "scheduledAt": "2020-01-01"}
    response = client_for("contributor").post(f"{URL}/bulk", batch(masto, scheduled), format="json")
    assert response.status_code == 403 and response.json()["requiredPermission"] == "posts.schedule"
    editor_only_schedule = client_for("editor").post(f"{URL}/bulk", batch(masto, scheduled, due), format="json")
    assert editor_only_schedule.status_code == 201
    for bad in (
        {"posts": []},
        {"posts": [scheduled] * 101},
        {"timezone": "Mars/Base"},
        {"platforms": []},
        {"posts": "x"},
    ):
        response = api.post(f"{URL}/bulk", {**batch(masto, scheduled), **bad}, format="json")
        assert response.status_code == 400, bad
    assert (
        api.post(f"{URL}/bulk", {**batch(masto, scheduled), "linkedinConfigs": [{}]}, format="json").status_code == 201
    )


def test_validate_reports_without_creating(api: Any, workspace: Any, masto: Any, client_for: Any) -> None:
    tiktok = account(workspace, "TIKTOK")
    payload = {
        "contentType": "TEXT",
        "timezone": "UTC",
        "text": "x" * 501,
        "platforms": ["MASTODON", "TIKTOK", "BLUESKY"],
        "mastodonConnectionIds": [masto.id],
        "tiktokConnectionIds": [tiktok.id],
    }
    response = api.post(f"{URL}/validate", payload, format="json")
    assert response.status_code == 200
    assert response.json() == {
        "valid": False,
        "issues": [
            {"platform": "MASTODON", "field": "text", "message": "MASTODON text is 501 characters; the limit is 500"},
            {"platform": "TIKTOK", "message": "TIKTOK does not accept TEXT posts"},
            {"platform": "TIKTOK", "message": "TIKTOK requires media"},
            {
                "platform": "TIKTOK",
                "field": "tiktokConfigs.privacyLevel",
                "message": "Privacy level is required for TikTok posts",
            },
        ],
        "skippedPlatforms": [{"platform": "BLUESKY", "reason": "No valid connection found"}],
    }
    ok = api.post(f"{URL}/validate", {**payload, "text": "fine", "platforms": ["MASTODON"]}, format="json")
    assert ok.json() == {"valid": True, "issues": [], "skippedPlatforms": []}
    shape = api.post(f"{URL}/validate", {"contentType": "NOPE"}, format="json").json()
    assert (
        shape["valid"] is False
        and {"platform": None, "field": "platforms", "message": "platforms: This field is required."} in shape["issues"]
    )
    assert Post.objects.count() == 0
    assert (
        client_for("viewer").post(f"{URL}/validate", payload, format="json").json()["requiredPermission"]
        == "posts.draft"
    )


def test_validate_runs_the_series_rules_of_create_without_creating(api: Any, workspace: Any, masto: Any) -> None:
    from posts.models import RecurringPost
    from webhooks.models import Event

    payload = {
        "contentType": "TEXT",
        "timezone": "UTC",
        "text": "every day",
        "platforms": ["MASTODON"],
        "mastodonConnectionIds": [masto.id],
        "scheduledAt": iso(future()),
        "recurrence": {"frequency": "DAILY"},
    }
    assert api.post(f"{URL}/validate", payload, format="json").json() == {
        "valid": True,
        "issues": [],
        "skippedPlatforms": [],
    }
    for broken, message, field in (
        (
            {"saveAsDraft": True},
            "recurrence: a recurring series cannot be saved as a draft (saveAsDraft)",
            "recurrence",
        ),
        (
            {"scheduledAt": None},
            "scheduledAt: a recurring series needs a future scheduledAt (its first occurrence)",
            "scheduledAt",
        ),
    ):
        answer = api.post(f"{URL}/validate", {**payload, **broken}, format="json").json()
        assert answer == {
            "valid": False,
            "issues": [{"platform": None, "field": field, "message": message}],
            "skippedPlatforms": [],
        }
        created = api.post(URL, {**payload, **broken}, format="json")  # create refuses the same way
        assert created.status_code == 400 and created.json()["message"] == [message]
    assert Post.objects.count() == 0 and RecurringPost.objects.count() == 0
    assert Event.objects.count() == 0


def test_bulk_replays_the_whole_batch_with_the_same_key(api: Any, masto: Any, enqueued: list) -> None:
    payload = batch(masto, {"contentType": "TEXT", "text": "batch", "scheduledAt": iso(future())})
    first = api.post(f"{URL}/bulk", payload, format="json", HTTP_IDEMPOTENCY_KEY="b-1")
    second = api.post(f"{URL}/bulk", payload, format="json", HTTP_IDEMPOTENCY_KEY="b-1")
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json() and second["Idempotent-Replayed"] == "true"
    assert Post.objects.filter(text="batch").count() == 1


def test_validate_replays_its_first_answer_with_the_same_key(api: Any, workspace: Any, masto: Any) -> None:
    payload = {
        "contentType": "TEXT",
        "timezone": "UTC",
        "text": "x" * 501,
        "platforms": ["MASTODON"],
        "mastodonConnectionIds": [masto.id],
    }
    first = api.post(f"{URL}/validate", payload, format="json", HTTP_IDEMPOTENCY_KEY="v-1")
    second = api.post(f"{URL}/validate", payload, format="json", HTTP_IDEMPOTENCY_KEY="v-1")
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json() and first.json()["valid"] is False
    assert second["Idempotent-Replayed"] == "true"
    changed = api.post(f"{URL}/validate", {**payload, "text": "ok"}, format="json", HTTP_IDEMPOTENCY_KEY="v-1")
    assert changed.status_code == 422
    assert Post.objects.count() == 0
