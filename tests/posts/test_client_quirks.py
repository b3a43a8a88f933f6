"""CONTRACT.md §1 as the posts endpoints see it: the clients already written send
``Content-Type: application/json`` with an empty body on every method, ``{}`` to every action,
bracket-indexed arrays, ``status`` for ``statuses``, and bare dates. Then what the published CLI
and agent server read and send back elsewhere (§2, §3, §5 to §8): one test per answer they
needed changed."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from django.utils.dateparse import parse_datetime
from rest_framework.test import APIClient

from analytics.models import AccountSyncState
from core.fields import format_instant
from posts.models import Post
from posts.rendering import post_record
from tests.factories import MembershipFactory
from tests.factories.analytics import TrackedPostFactory
from tests.factories.posts import PostFactory, PostTargetFactory, account, uploaded
from tests.posts.conftest import future, iso
from workspaces.services import api_key_create

URL = "/api/v1/social-posts"


def _empty(api: Any, method: str, path: str) -> Any:
    return api.generic(method, path, "", content_type="application/json")


def test_empty_json_body_on_every_read_and_delete(api: Any, workspace: Any) -> None:
    post = PostFactory(workspace=workspace, status="DRAFT")
    PostTargetFactory(post=post, platform="MASTODON")
    response = _empty(api, "GET", URL)
    assert response.status_code == 200 and response.json()["posts"] == [post_record(post)]
    response = _empty(api, "GET", f"{URL}/{post.id}")
    assert response.status_code == 200 and response.json() == post_record(post)
    response = _empty(api, "GET", f"{URL}/{post.id}/results")
    assert response.status_code == 200 and response.json()["postId"] == post.id
    response = _empty(api, "DELETE", f"{URL}/{post.id}")
    assert response.status_code == 200 and response.json() == {"deleted": True}
    assert not Post.objects.filter(id=post.id).exists()


def test_empty_json_body_on_a_change_changes_nothing(api: Any, workspace: Any) -> None:
    post = PostFactory(workspace=workspace, status="SCHEDULED", scheduled_at=future())
    PostTargetFactory(post=post, platform="MASTODON", account=account(workspace, "MASTODON"))
    before = post_record(post)
    response = _empty(api, "PATCH", f"{URL}/{post.id}")
    assert response.status_code == 200, response.json()
    assert {k: v for k, v in response.json().items() if k != "updatedAt"} == {
        k: v for k, v in before.items() if k != "updatedAt"
    }
    for body in ("", "{}"):
        response = api.generic("PATCH", f"{URL}/{post.id}", body, content_type="application/json")
        assert response.status_code == 200 and response.json()["text"] == before["text"]


@pytest.mark.parametrize("path", ["", "/bulk"])
def test_empty_json_body_on_a_create_is_a_validation_error_naming_the_fields(api: Any, path: str) -> None:
    response = _empty(api, "POST", URL + path)
    assert response.status_code == 400
    body = response.json()
    assert (body["statusCode"], body["error"], body["code"]) == (400, "Bad Request", "validation_error")
    assert "platforms: This field is required." in body["message"]
    assert "timezone: This field is required." in body["message"]
    assert Post.objects.count() == 0


def test_empty_json_body_on_validate_reports_the_missing_fields(api: Any) -> None:
    response = _empty(api, "POST", f"{URL}/validate")
    assert response.status_code == 200
    assert response.json()["valid"] is False
    assert {"platform": None, "field": "timezone", "message": "timezone: This field is required."} in response.json()[
        "issues"
    ]


def test_bracket_arrays_with_the_status_alias_and_bare_dates(api: Any, workspace: Any) -> None:
    midnight = dt.datetime(2031, 8, 1, tzinfo=dt.UTC)
    at_midnight = PostFactory(workspace=workspace, status="SCHEDULED", scheduled_at=midnight)
    after = PostFactory(workspace=workspace, status="SCHEDULED", scheduled_at=midnight + dt.timedelta(seconds=1))
    before = PostFactory(workspace=workspace, status="DRAFT", scheduled_at=midnight - dt.timedelta(seconds=1))
    PostTargetFactory(post=at_midnight, platform="MASTODON")
    PostTargetFactory(post=after, platform="BLUESKY")

    def ids(query: str) -> set[str]:
        response = api.get(URL + query)
        assert response.status_code == 200, response.json()
        return {p["id"] for p in response.json()["posts"]}

    # a bare date is midnight UTC, and both bounds are inclusive
    assert ids("?endDate=2031-08-01") == {at_midnight.id, before.id}
    assert ids("?startDate=2031-08-01") == {at_midnight.id, after.id}
    assert ids("?startDate=2031-08-01&endDate=2031-08-01") == {at_midnight.id}
    assert ids("?status[0]=DRAFT") == {before.id}
    assert ids("?status[]=DRAFT&status[]=SCHEDULED&startDate=2031-08-01") == {at_midnight.id, after.id}
    assert ids("?statuses[1]=DRAFT&statuses[0]=SCHEDULED") == {at_midnight.id, after.id, before.id}
    assert ids("?platforms[0]=BLUESKY&platforms[1]=TIKTOK") == {after.id}
    assert ids(f"?endDate={iso(midnight - dt.timedelta(seconds=1))}") == {before.id}


def test_every_account_id_in_every_connection_array_picks_each_platforms_own(
    api: Any, workspace: Any, other_workspace: Any
) -> None:
    """Older published client scripts put every account id of the workspace into every
    ``*ConnectionIds`` array and into ``pageIds``: ids of other platforms are dropped first, then
    one account per platform applies to what is left (CONTRACT §4)."""
    masto = account(workspace, "MASTODON")
    bsky = account(workspace, "BLUESKY")
    page = account(workspace, "FACEBOOK")
    foreign = account(other_workspace, "TWITTER")
    every_id = [masto.id, bsky.id, page.id, page.page_id, foreign.id, "acc_nobody"]
    response = api.post(
        URL,
        {
            "contentType": "TEXT",
            "timezone": "UTC",
            "text": "to everything I have",
            "scheduledAt": iso(future()),
            "platforms": ["MASTODON", "BLUESKY", "FACEBOOK", "TWITTER"],
            "mastodonConnectionIds": every_id,
            "blueskyConnectionIds": every_id,
            "pageIds": every_id,
            "twitterConnectionIds": every_id,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["queuedPlatforms"] == []  # scheduled: queued at its time
    assert response.json()["skippedPlatforms"] == [{"platform": "TWITTER", "reason": "No valid connection found"}]
    post = Post.objects.get(id=response.json()["postId"])
    assert {(t.platform, t.account_id) for t in post.targets.all()} == {
        ("MASTODON", masto.id),
        ("BLUESKY", bsky.id),
        ("FACEBOOK", page.id),
    }


def test_two_accounts_of_one_platform_among_every_id_are_still_refused(api: Any, workspace: Any) -> None:
    first, second = account(workspace, "MASTODON"), account(workspace, "MASTODON")
    bsky = account(workspace, "BLUESKY")
    every_id = [first.id, second.id, bsky.id]
    response = api.post(
        URL,
        {
            "contentType": "TEXT",
            "timezone": "UTC",
            "text": "two of a kind",
            "platforms": ["MASTODON", "BLUESKY"],
            "mastodonConnectionIds": every_id,
            "blueskyConnectionIds": every_id,
        },
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["message"] == ["mastodonConnectionIds: one account per platform per post"]
    assert not Post.objects.exists()


def test_patch_with_alt_texts_alone_relabels_the_posts_media(api: Any, workspace: Any) -> None:
    """The published CLI edits alt text by sending ``mediaAltTexts`` alone: the rule relating it
    to ``mediaUrls`` is checked on the post as it will be, not on the request's fields."""
    masto = account(workspace, "MASTODON")
    media = [uploaded(workspace), uploaded(workspace)]
    created = api.post(
        URL,
        {
            "contentType": "IMAGE",
            "timezone": "UTC",
            "text": "two pictures",
            "mediaUrls": media,
            "scheduledAt": iso(future()),
            "platforms": ["MASTODON"],
            "mastodonConnectionIds": [masto.id],
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    path = f"{URL}/{created.json()['postId']}"
    response = api.patch(path, {"mediaAltTexts": ["a red door", ""]}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["mediaAltTexts"] == ["a red door", ""]
    assert response.json()["mediaUrls"] == media
    assert Post.objects.get().media_alt_texts == ["a red door", ""]
    too_many = api.patch(path, {"mediaAltTexts": ["one", "two", "three"]}, format="json")
    assert too_many.status_code == 400
    assert too_many.json()["message"] == ["mediaAltTexts: must not have more items than mediaUrls"]
    assert Post.objects.get().media_alt_texts == ["a red door", ""]


# --- what the published CLI and agent server read and send back (issue 22) ------------------


def test_cli_reads_sync_status_platforms_rows_and_the_top_level_horizon(api: Any, workspace: Any) -> None:
    # `analytics sync-status` and `sync --wait` walk `platforms` (they crashed on its absence).
    fb = account(workspace, "FACEBOOK", display_name="Page", scopes=["pages_show_list"])  # no read_insights
    yt = account(workspace, "YOUTUBE", display_name="Channel")
    account(workspace, "MASTODON")  # no analytics: no row
    imported = dt.datetime(2031, 3, 1, tzinfo=dt.UTC)
    AccountSyncState.objects.create(account=yt, workspace=workspace, history_imported_at=imported)
    body = _empty(api, "GET", "/api/v1/analytics/sync-status").json()
    assert (body["accountGroupId"], body["historyHorizonAt"]) == (workspace.id, iso(imported - dt.timedelta(days=180)))
    rows = {row["connectionId"]: row for row in body["platforms"]}
    assert len(body["platforms"]) == 2 and set(rows) == {fb.id, yt.id}
    assert rows[fb.id] == {
        "platform": "FACEBOOK",
        "connectionId": fb.id,
        "accountName": "Page",
        "status": "IDLE",
        "lastSyncedAt": None,
        "lastErrorMessage": None,
        "historyHorizonAt": None,
        "lastDiscoveryAt": None,
        "needsAnalyticsReconnect": True,
    }
    assert (rows[yt.id]["lastDiscoveryAt"], rows[yt.id]["needsAnalyticsReconnect"]) == (iso(imported), False)
    assert [row["accountId"] for row in body["accounts"]] == [row["connectionId"] for row in body["platforms"]]


def test_cli_waits_for_cooldown_seconds_only_when_the_sync_was_not_queued(api: Any, workspace: Any) -> None:
    account(workspace, "YOUTUBE")
    first = api.post("/api/v1/analytics/sync", {}, format="json").json()
    assert first == {"queued": True, "message": "Refresh queued", "cooldownSecondsRemaining": None}
    again = api.post("/api/v1/analytics/sync", {}, format="json").json()
    assert again["queued"] is False and 1 <= again["cooldownSecondsRemaining"] <= 600


def test_analytics_posts_rows_have_the_title_and_every_metric_the_clients_print(api: Any, workspace: Any) -> None:
    pin = account(workspace, "PINTEREST", display_name="Pins")
    published = dt.datetime(2031, 3, 2, tzinfo=dt.UTC)
    TrackedPostFactory(
        account=pin,
        published_at=published,
        text="A pin",
        title="Spring board",
        views=40,
        saves=3,
        clicks=7,
        impressions=40,
    )
    TrackedPostFactory(account=pin, published_at=published - dt.timedelta(hours=1), text="\n" + "x" * 150 + "\nmore")
    body = api.get("/api/v1/analytics/posts?from=2031-03-01&to=2031-03-03").json()
    titled, untitled = body["posts"]
    assert titled["title"] == "Spring board" and untitled["title"] == "x" * 100
    assert titled["metrics"] == {
        "views": 40,
        "likes": None,
        "comments": None,
        "shares": None,
        "saves": 3,
        "clicks": 7,
        "impressions": 40,
        "reach": None,
        "engagementRate": 0.0,
    }


def test_agent_server_groups_images_by_a_uuid_session_and_old_ids_keep_working(api: Any) -> None:
    created = api.post("/api/v1/ai/images", {"prompt": "a fox"}, format="json").json()
    session = created["sessionId"]
    assert str(uuid.UUID(session)) == session  # what the agent server validates before sending it back
    again = api.post("/api/v1/ai/images", {"prompt": "the same fox", "sessionId": session}, format="json").json()
    assert again["sessionId"] == session
    older = api.post("/api/v1/ai/images", {"prompt": "x", "sessionId": "sess_0123abcd"}, format="json").json()
    assert older["sessionId"] == "sess_0123abcd"


def test_a_401_carries_the_code_clients_branch_on(anon: Any) -> None:
    response = _empty(anon, "GET", URL)
    assert response.status_code == 401
    assert response.json() == {
        "statusCode": 401,
        "error": "Unauthorized",
        "message": "API key is invalid or missing",
        "code": "unauthorized",
    }


def test_cli_rebuilding_tiktok_targets_keeps_branded_own_brand(api: Any, workspace: Any) -> None:
    tok = account(workspace, "TIKTOK")
    video = uploaded(workspace, "video")
    payload = {
        "contentType": "VIDEO",
        "timezone": "UTC",
        "platforms": ["TIKTOK"],
        "tiktokConnectionIds": [tok.id],
        "mediaUrls": [video],
        "scheduledAt": iso(future()),
        "tiktokConfigs": [{"connectionId": tok.id, "privacyLevel": "SELF_ONLY", "brandedContentOwnBrand": True}],
    }
    created = api.post(URL, payload, format="json")
    assert created.status_code == 201, created.json()
    [entry] = api.get(f"{URL}/{created.json()['postId']}").json()["platforms"]
    assert entry["tiktokBrandedOwnBrand"] is True and entry["tiktokBrandedContentOwnBrand"] is True
    assert (entry["mediaUrls"], entry["previewUrls"]) == ([video], [])  # strings only, as the clients type it
    # The CLI rebuilds the targets from the entry it read, under the entry's name.
    rebuilt = {
        "platforms": ["TIKTOK"],
        "tiktokConnectionIds": [entry["connectionId"]],
        "mediaUrls": entry["mediaUrls"],
        "tiktokConfigs": [
            {
                "connectionId": entry["connectionId"],
                "privacyLevel": entry["tiktokPrivacyLevel"],
                "brandedOwnBrand": entry["tiktokBrandedOwnBrand"],
            }
        ],
    }
    changed = api.patch(f"{URL}/{created.json()['postId']}", rebuilt, format="json")
    assert changed.status_code == 200, changed.json()
    [entry] = changed.json()["platforms"]
    assert entry["tiktokBrandedOwnBrand"] is True and entry["tiktokBrandedContentOwnBrand"] is True


def test_a_video_without_a_still_frame_yet_lists_no_preview_never_null_nor_empty(api: Any, workspace: Any) -> None:
    masto = account(workspace, "MASTODON")
    video = uploaded(workspace, "video")
    payload = {
        "contentType": "VIDEO",
        "timezone": "UTC",
        "platforms": ["MASTODON"],
        "mastodonConnectionIds": [masto.id],
        "mediaUrls": [video],
        "saveAsDraft": True,
    }
    created = api.post(URL, payload, format="json")
    assert created.status_code == 201, created.json()
    record = api.get(f"{URL}/{created.json()['postId']}").json()
    assert record["previewUrls"] == [] and record["platforms"][0]["previewUrls"] == []


def test_user_id_names_the_member_behind_the_key_and_me_says_who_issued_it(workspace: Any) -> None:
    member = MembershipFactory(workspace=workspace, role="editor").user
    client = APIClient()
    key = api_key_create(workspace=workspace, name="cli", role="editor", created_by_id=member.id).plaintext
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    masto = account(workspace, "MASTODON")
    payload = {
        "contentType": "TEXT",
        "timezone": "UTC",
        "text": "hi",
        "platforms": ["MASTODON"],
        "mastodonConnectionIds": [masto.id],
        "scheduledAt": iso(future()),
        "recurrence": {"frequency": "DAILY"},
    }
    created = client.post(URL, payload, format="json").json()
    assert client.get(f"{URL}/{created['postId']}").json()["userId"] == str(member.id)
    assert client.get(f"/api/v1/recurring-posts/{created['recurringPostId']}").json()["userId"] == str(member.id)
    me = client.get("/api/v1/me").json()
    assert me["issuerRole"] == "editor" and me["summary"].startswith(f"In the workspace {workspace.name}, this Editor")


def test_pausing_and_resuming_a_series_counts_its_one_slot_once(api: Any, workspace: Any) -> None:
    masto = account(workspace, "MASTODON")
    payload = {
        "contentType": "TEXT",
        "timezone": "UTC",
        "text": "weekly",
        "platforms": ["MASTODON"],
        "mastodonConnectionIds": [masto.id],
        "scheduledAt": iso(future(60 * 24)),
        "recurrence": {"frequency": "WEEKLY", "maxOccurrences": 5},
    }
    series = f"/api/v1/recurring-posts/{api.post(URL, payload, format='json').json()['recurringPostId']}"
    assert api.post(f"{series}/pause", {}, format="json").json()["occurrenceCount"] == 0
    resumed = api.post(f"{series}/resume", {}, format="json").json()
    # the one slot is created again (the upcoming post); nextOccurrenceAt is the slot after it
    slot = parse_datetime(payload["scheduledAt"])
    assert list(Post.objects.filter(status="SCHEDULED").values_list("occurrence_at", flat=True)) == [slot]
    week_later = format_instant(slot + dt.timedelta(days=7))
    assert (resumed["status"], resumed["occurrenceCount"], resumed["nextOccurrenceAt"]) == ("ACTIVE", 1, week_later)
    assert len(api.get(f"{series}/occurrences").json()["occurrences"]) == 5  # all five still to come
