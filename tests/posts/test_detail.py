from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from posts.models import Post, PostTarget
from posts.rendering import post_record
from tests.factories.posts import PostFactory, PostTargetFactory, account, uploaded
from tests.posts.conftest import future, iso

URL = "/api/v1/social-posts"


def create(api: Any, **payload: Any) -> Post:
    response = api.post(URL, {"contentType": "TEXT", "timezone": "UTC", "text": "Hello", **payload}, format="json")
    assert response.status_code == 201, response.json()
    return Post.objects.get(id=response.json()["postId"])


@pytest.fixture
def masto(workspace: Any) -> Any:
    return account(workspace, "MASTODON", display_name="Masto")


def test_get_and_404s(api: Any, workspace: Any, other_workspace: Any, client_for: Any, anon: Any) -> None:
    post = PostFactory(workspace=workspace)
    PostTargetFactory(post=post)
    assert api.get(f"{URL}/{post.id}").json() == post_record(post)
    assert client_for("viewer").get(f"{URL}/{post.id}").status_code == 200
    response = api.generic("GET", f"{URL}/{post.id}", "", content_type="application/json")
    assert response.status_code == 200
    foreign = PostFactory(workspace=other_workspace)
    for path in (f"{URL}/{foreign.id}", f"{URL}/{foreign.id}/results", f"{URL}/nope"):
        response = api.get(path)
        assert response.status_code == 404
        assert response.json() == {
            "statusCode": 404,
            "error": "Not Found",
            "message": "Post not found or access denied",
            "code": "not_found",
        }
    assert api.patch(f"{URL}/{foreign.id}", {"text": "x"}, format="json").status_code == 404
    assert api.delete(f"{URL}/{foreign.id}").status_code == 404
    assert anon.get(f"{URL}/{post.id}").status_code == 401


def test_results(api: Any, workspace: Any) -> None:
    post = PostFactory(workspace=workspace, status="PARTIAL_FAILURE")
    ok = PostTargetFactory(
        post=post,
        platform="MASTODON",
        status="PUBLISHED",
        platform_post_id="m1",
        published_at=dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
    )
    bad = PostTargetFactory(
        post=post, platform="TIKTOK", status="FAILED", error_message="nope", error_code="content_rejected"
    )
    assert api.get(f"{URL}/{post.id}/results").json() == {
        "postId": post.id,
        "status": "PARTIAL_FAILURE",
        "results": [
            {
                "platformId": ok.id,
                "platform": "MASTODON",
                "accountName": ok.account_name,
                "status": "PUBLISHED",
                "platformPostId": "m1",
                "errorMessage": None,
                "tiktokDraftFallback": False,
                "publishedAt": "2026-01-02T03:04:05.000Z",
            },
            {
                "platformId": bad.id,
                "platform": "TIKTOK",
                "accountName": bad.account_name,
                "status": "FAILED",
                "platformPostId": None,
                "errorMessage": "nope",
                "tiktokDraftFallback": False,
                "publishedAt": None,
            },
        ],
    }


def test_patch_text_keeps_targets(api: Any, workspace: Any, masto: Any, enqueued: list) -> None:
    bsky = account(workspace, "BLUESKY")
    post = create(
        api,
        platforms=["MASTODON", "BLUESKY"],
        mastodonConnectionIds=[masto.id],
        blueskyConnectionIds=[bsky.id],
        platformTexts=[{"platform": "BLUESKY", "text": "sky only"}],
        saveAsDraft=True,
    )
    before = {t.platform: t.id for t in post.targets.all()}
    response = api.patch(f"{URL}/{post.id}", {"text": "Changed", "mediaUrls": ["ignored"]}, format="json")
    assert response.status_code == 200, response.json()
    post.refresh_from_db()
    assert response.json() == post_record(post)
    entries = {e["platform"]: e for e in response.json()["platforms"]}
    assert {p: e["id"] for p, e in entries.items()} == before
    # MASTODON has no override (null): it sends the post's new text
    assert entries["MASTODON"]["text"] is None and entries["BLUESKY"]["text"] == "sky only"
    assert dict(post.targets.values_list("platform", "text")) == {"MASTODON": "Changed", "BLUESKY": "sky only"}
    assert response.json()["mediaUrls"] == []


def test_patch_platforms_rebuilds(api: Any, workspace: Any, masto: Any, enqueued: list) -> None:
    post = create(api, platforms=["MASTODON"], mastodonConnectionIds=[masto.id], scheduledAt=iso(future()))
    tiktok = account(workspace, "TIKTOK")
    video = uploaded(workspace, "video")
    response = api.patch(
        f"{URL}/{post.id}",
        {
            "platforms": ["TIKTOK"],
            "tiktokConnectionIds": [tiktok.id],
            "contentType": "VIDEO",
            "mediaUrls": [video],
            "tiktokConfigs": [{"privacyLevel": "PUBLIC_TO_EVERYONE"}],
        },
        format="json",
    )
    assert response.status_code == 200, response.json()
    [entry] = response.json()["platforms"]
    assert entry["platform"] == "TIKTOK" and entry["tiktokPrivacyLevel"] == "PUBLIC_TO_EVERYONE"
    assert response.json()["mediaUrls"] == [video] and response.json()["status"] == "SCHEDULED"
    assert PostTarget.objects.filter(post=post).count() == 1
    # a scheduled post keeps passing the full validation
    response = api.patch(f"{URL}/{post.id}", {"tiktokConfigs": [{"privacyLevel": None}]}, format="json")
    assert response.status_code == 400 and "Privacy level is required for TikTok posts" in response.json()["message"]


def test_patch_schedule_time_rules(api: Any, masto: Any, enqueued: list) -> None:
    post = create(api, platforms=["MASTODON"], mastodonConnectionIds=[masto.id], scheduledAt=iso(future()))
    past = timezone.now() - dt.timedelta(minutes=5)
    response = api.patch(f"{URL}/{post.id}", {"scheduledAt": iso(past)}, format="json")
    assert response.status_code == 400
    assert response.json()["message"] == "The new scheduled time is in the past"
    later = future(300)
    response = api.patch(f"{URL}/{post.id}", {"scheduledAt": iso(later)}, format="json")
    assert response.status_code == 200 and response.json()["scheduledAt"] == iso(later)
    just_now = timezone.now() - dt.timedelta(seconds=20)
    assert api.patch(f"{URL}/{post.id}", {"scheduledAt": iso(just_now)}, format="json").status_code == 200


# COMPLETED and PARTIAL_FAILURE posts are edited on their platforms (tests/posts/test_after_publishing.py).
@pytest.mark.parametrize("status", ["PENDING", "PUBLISHING", "FAILED"])
def test_patch_refused_outside_draft_and_scheduled(api: Any, workspace: Any, status: str) -> None:
    post = PostFactory(workspace=workspace, status=status)
    response = api.patch(f"{URL}/{post.id}", {"text": "x"}, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "statusCode": 400,
        "error": "Bad Request",
        "message": "Cannot edit post in current state",
        "code": "post_not_editable",
    }


def test_patch_permissions_and_garbage(client_for: Any, api: Any, workspace: Any) -> None:
    post = PostFactory(workspace=workspace)
    PostTargetFactory(post=post)
    response = client_for("viewer").patch(f"{URL}/{post.id}", {"text": "x"}, format="json")
    assert response.status_code == 403 and response.json()["requiredPermission"] == "posts.draft"
    for value in (None, 1, [], {}, "x", [None]):
        for field in (
            "text",
            "platforms",
            "scheduledAt",
            "contentType",
            "timezone",
            "platformTexts",
            "tiktokConfigs",
            "firstComment",
            "platformFirstComments",
        ):
            response = api.patch(f"{URL}/{post.id}", {field: value}, format="json")
            assert response.status_code in (200, 400), (field, value, response.content)


def test_delete(api: Any, workspace: Any, client_for: Any) -> None:
    post = PostFactory(workspace=workspace, status="SCHEDULED", scheduled_at=future())
    PostTargetFactory(post=post)
    assert client_for("viewer").delete(f"{URL}/{post.id}").json()["requiredPermission"] == "posts.draft"
    response = api.generic("DELETE", f"{URL}/{post.id}", "", content_type="application/json")
    assert response.status_code == 200 and response.json() == {"deleted": True}
    assert not Post.objects.filter(id=post.id).exists()
    assert api.delete(f"{URL}/{post.id}").status_code == 404


def test_delete_conflict_while_publishing(api: Any, workspace: Any) -> None:
    post = PostFactory(workspace=workspace, status="PUBLISHING")
    PostTargetFactory(post=post, status="PUBLISHING")
    PostTargetFactory(post=post, platform="BLUESKY", status="PUBLISHED", platform_post_id="x")
    response = api.delete(f"{URL}/{post.id}")
    assert response.status_code == 409
    assert response.json() == {
        "statusCode": 409,
        "error": "Conflict",
        "message": "Post is being published and cannot be deleted now",
        "code": "conflict",
    }
    assert Post.objects.filter(id=post.id).exists()


@pytest.mark.parametrize("action", ["publish", "unschedule", "retry"])
def test_actions_on_other_workspace_are_404(api: Any, other_workspace: Any, anon: Any, action: str) -> None:
    foreign = PostFactory(workspace=other_workspace, status="DRAFT")
    PostTargetFactory(post=foreign, status="FAILED")
    response = api.post(f"{URL}/{foreign.id}/{action}", {}, format="json")
    assert response.status_code == 404 and response.json()["message"] == "Post not found or access denied"
    assert anon.post(f"{URL}/{foreign.id}/{action}", {}, format="json").status_code == 401
    assert Post.objects.get(id=foreign.id).status == "DRAFT"


def test_patch_facebook_config_by_the_page_id_the_client_used(api: Any, workspace: Any, enqueued: list) -> None:
    """A page is named by its ``pageId`` (or account id) in ``pageIds`` and ``facebookConfigs``; a
    change naming the page the same way it was created reaches that entry."""
    fb = account(workspace, "FACEBOOK", page_id="pg-88", display_name="Page")
    post = create(
        api,
        platforms=["FACEBOOK"],
        pageIds=["pg-88"],
        facebookConfigs=[{"pageId": "pg-88", "postType": "FEED", "videoTitle": "Before"}],
        scheduledAt=iso(future()),
    )
    for reference in ("pg-88", fb.id):
        response = api.patch(
            f"{URL}/{post.id}", {"facebookConfigs": [{"pageId": reference, "videoTitle": reference}]}, format="json"
        )
        assert response.status_code == 200, response.json()
        [entry] = response.json()["platforms"]
        assert (entry["pageId"], entry["facebookVideoTitle"]) == ("pg-88", reference)
    response = api.patch(f"{URL}/{post.id}", {"facebookConfigs": [{"pageId": "pg-other"}]}, format="json")
    assert response.status_code == 400
    assert response.json()["message"] == ["facebookConfigs[0].pageId: pg-other is not among pageIds"]
    # the same page named both ways in one create
    mixed = create(
        api,
        platforms=["FACEBOOK"],
        pageIds=[fb.id],
        facebookConfigs=[{"pageId": "pg-88", "postType": "REEL"}],
        saveAsDraft=True,
    )
    assert mixed.targets.get().config == {"postType": "REEL"}
