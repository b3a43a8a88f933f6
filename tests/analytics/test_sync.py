"""Import on connect, refresh, tracking of published targets, sync and its cooldown — against
the Pinterest simulator over real HTTP."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from accounts.disconnect import account_disconnect
from accounts.services import accounts_connect
from analytics import services
from analytics.models import AccountSyncState, FollowerSnapshot, TrackedPost
from audit.actors import system_actor
from core.fields import format_instant as iso
from platforms.base import MediaItem, Platform, PublishRequest
from platforms.registry import get_client
from posts.models import Post, PostTarget
from tests.platforms.conftest import connect_sandbox_account

TEST_ACTOR = system_actor("tests")

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def pinterest(sandbox, workspace, media_server):
    identities = connect_sandbox_account(Platform.PINTEREST)
    account = accounts_connect(workspace_id=workspace.id, platform=Platform.PINTEREST, identities=identities)[0]
    client = get_client(Platform.PINTEREST)
    board = client.list_boards(account.credentials())[0]
    remote_ids = []
    for index in range(3):
        result = client.publish(
            account.credentials(),
            PublishRequest(
                target_id=f"pt_seed{index}",
                content_type="IMAGE",
                text=f"seed pin {index}",
                media=(MediaItem(url=f"{media_server}/sample.jpg", kind="image", mime_type="image/jpeg"),),
                options={"boardId": board.id, "title": f"Seed {index}"},
            ),
            {},
        )
        remote_ids.append(result.platform_post_id)
    return account, remote_ids


def test_import_brings_the_history_with_figures_and_followers(pinterest):
    account, remote_ids = pinterest
    outcome = services.import_account_history(account_id=account.id)
    assert outcome is not None and outcome.posts >= 3
    rows = TrackedPost.objects.filter(account=account)
    assert set(remote_ids) <= set(rows.values_list("platform_post_id", flat=True))
    row = rows.get(platform_post_id=remote_ids[0])
    assert row.post_id is None and row.target_id is None  # discovered, not published through us
    assert row.views is not None and row.likes is not None
    assert row.refresh_until == row.published_at + dt.timedelta(days=180)
    assert FollowerSnapshot.objects.filter(account=account, day=timezone.now().date()).count() == 1
    state = AccountSyncState.objects.get(account=account)
    assert state.status == "IDLE" and state.history_imported_at is not None

    again = services.import_account_history(account_id=account.id)
    assert again is not None
    assert TrackedPost.objects.filter(account=account).count() == rows.count()
    assert FollowerSnapshot.objects.filter(account=account).count() == 1


def test_posts_report_carries_pinterest_titles_saves_clicks_and_impressions(pinterest, api, workspace):
    account, remote_ids = pinterest
    post = Post.objects.create(workspace=workspace, status="COMPLETED", content_type="IMAGE", text="seed pin 2")
    target = PostTarget.objects.create(
        post=post,
        platform="PINTEREST",
        account=account,
        status="PUBLISHED",
        platform_post_id=remote_ids[2],
        published_at=timezone.now(),
        text="seed pin 2",
        config={"boardId": "b", "title": "Our own title"},
    )
    services.track_published_target(target_id=target.id)
    services.import_account_history(account_id=account.id)
    today = timezone.now().date()
    window = f"from={today - dt.timedelta(days=1)}&to={today + dt.timedelta(days=1)}"
    rows = {
        r["permalink"].rstrip("/").rsplit("/", 1)[-1]: r
        for r in api.get(f"/api/v1/analytics/posts?{window}").json()["posts"]
    }
    discovered, ours = rows[remote_ids[0]], rows[remote_ids[2]]
    assert discovered["title"] == "Seed 0"  # the pin's own title, from the listing
    assert ours["title"] == "Our own title"  # the title we published it with
    for row in (discovered, ours):
        metrics = row["metrics"]
        assert metrics["saves"] is not None and metrics["clicks"] is not None
        assert metrics["impressions"] == metrics["views"] and metrics["impressions"] is not None
        assert metrics["reach"] is None  # Pinterest does not report reach


def test_refresh_updates_rows_inside_their_window_only(pinterest):
    account, remote_ids = pinterest
    services.import_account_history(account_id=account.id)
    old = TrackedPost.objects.get(account=account, platform_post_id=remote_ids[0])
    TrackedPost.objects.filter(pk=old.pk).update(refresh_until=timezone.now() - dt.timedelta(days=1), views=-1)
    outcome = services.refresh_account(account_id=account.id)
    assert outcome is not None and outcome.posts >= 2
    old.refresh_from_db()
    assert old.views == -1  # past its 180 days: keeps its last numbers
    fresh = TrackedPost.objects.get(account=account, platform_post_id=remote_ids[1])
    assert fresh.last_refreshed_at is not None


def test_published_target_is_tracked_once(pinterest, workspace):
    account, remote_ids = pinterest
    post = Post.objects.create(workspace=workspace, status="COMPLETED", content_type="IMAGE", text="ours")
    target = PostTarget.objects.create(
        post=post,
        platform="PINTEREST",
        account=account,
        status="PUBLISHED",
        platform_post_id=remote_ids[2],
        published_at=timezone.now(),
        text="ours",
    )
    services.track_published_target(target_id=target.id)
    services.track_published_target(target_id=target.id)
    row = TrackedPost.objects.get(account=account, platform_post_id=remote_ids[2])
    assert (row.post_id, row.target_id, row.views) == (post.id, target.id, None)
    services.import_account_history(account_id=account.id)
    row.refresh_from_db()
    assert row.target_id == target.id and row.views is not None  # the import keeps the link


def test_sync_endpoint_cooldown_and_status(pinterest, api):
    first = api.post("/api/v1/analytics/sync", {}, format="json")
    assert first.status_code == 202
    assert first.json() == {"queued": True, "message": "Refresh queued", "cooldownSecondsRemaining": None}
    second = api.post("/api/v1/analytics/sync", {}, format="json")
    assert second.status_code == 202
    body = second.json()
    assert body["queued"] is False and 1 <= body["cooldownSecondsRemaining"] <= 600
    status = api.get("/api/v1/analytics/sync-status").json()
    account, _ = pinterest
    assert status == {
        "accountGroupId": account.workspace_id,
        "syncInProgress": True,
        "lastSyncedAt": None,
        "historyHorizonAt": None,
        "platforms": [
            {
                "platform": "PINTEREST",
                "connectionId": account.id,
                "accountName": account.display_name,
                "status": "QUEUED",
                "lastSyncedAt": None,
                "lastErrorMessage": None,
                "historyHorizonAt": None,
                "lastDiscoveryAt": None,
                "needsAnalyticsReconnect": False,
            }
        ],
        "accounts": [
            {
                "accountId": account.id,
                "platform": "PINTEREST",
                "status": "QUEUED",
                "lastSyncedAt": None,
                "lastErrorMessage": None,
            }
        ],
    }
    services.import_account_history(account_id=account.id)
    state = AccountSyncState.objects.get(account=account)
    horizon = iso(state.history_imported_at - dt.timedelta(days=180))
    status = api.get("/api/v1/analytics/sync-status").json()
    assert status["syncInProgress"] is False and status["lastSyncedAt"] is not None
    assert status["historyHorizonAt"] == horizon
    assert status["platforms"][0] | {"lastSyncedAt": None} == {
        "platform": "PINTEREST",
        "connectionId": account.id,
        "accountName": account.display_name,
        "status": "IDLE",
        "lastSyncedAt": None,
        "lastErrorMessage": None,
        "historyHorizonAt": horizon,
        "lastDiscoveryAt": iso(state.history_imported_at),
        "needsAnalyticsReconnect": False,
    }
    assert status["platforms"][0]["lastSyncedAt"] == iso(state.last_synced_at)


def test_disconnect_keeps_the_accounts_analytics(pinterest, workspace, api):
    """Issue 31: a disconnected account keeps its history and analytics (its row stays, status
    disconnected); only its tokens go, so nothing refreshes it any more."""
    account, _ = pinterest
    today = timezone.now().date()
    window = f"from={today - dt.timedelta(days=200)}&to={today + dt.timedelta(days=1)}"
    services.import_account_history(account_id=account.id)
    tracked = TrackedPost.objects.filter(account=account).count()
    assert tracked >= 3
    before = api.get(f"/api/v1/analytics/overview?{window}").json()
    assert before["postsCount"]["value"] >= 3 and before["followers"]["value"] is not None
    account_disconnect(workspace_id=workspace.id, account_id=account.id, actor=TEST_ACTOR)
    assert TrackedPost.objects.filter(account_id=account.id).count() == tracked
    assert FollowerSnapshot.objects.filter(account_id=account.id).exists()
    after = api.get(f"/api/v1/analytics/overview?{window}").json()
    assert after["postsCount"] == before["postsCount"] and after["followers"] == before["followers"]
    assert services.refresh_account(account_id=account.id) is None  # no token: nothing is asked of the platform


def test_revoked_account_fails_the_sync_and_is_marked(pinterest, sandbox):
    import requests

    account, _ = pinterest
    requests.post(
        f"{sandbox}/_control/pinterest/accounts/{account.external_id}/revoke", json={"revoked": True}, timeout=10
    )
    assert services.refresh_account(account_id=account.id) is None
    account.refresh_from_db()
    assert account.status == "unauthorized"
    assert AccountSyncState.objects.get(account=account).status == "FAILED"


def test_refresh_reads_figures_in_batches_and_only_for_rows_inside_180_days(pinterest, monkeypatch):
    account, remote_ids = pinterest
    services.import_account_history(account_id=account.id)
    TrackedPost.objects.filter(account=account, platform_post_id=remote_ids[0]).update(
        refresh_until=timezone.now() - dt.timedelta(seconds=1)
    )
    inside = set(
        TrackedPost.objects.filter(account=account, refresh_until__gt=timezone.now()).values_list(
            "platform_post_id", flat=True
        )
    )
    assert len(inside) >= 3
    asked: list[list[str]] = []
    real_get_client = services.get_client

    class Spy:
        def __init__(self, platform):
            self.client = real_get_client(platform)

        def fetch_post_metrics(self, creds, ids):
            asked.append(list(ids))
            return self.client.fetch_post_metrics(creds, ids)

        def __getattr__(self, name):
            return getattr(self.client, name)

    monkeypatch.setattr(services, "get_client", Spy)
    monkeypatch.setattr(services, "METRICS_BATCH", 2)
    outcome = services.refresh_account(account_id=account.id)
    assert outcome is not None and outcome.posts == len(inside)
    assert all(len(batch) <= 2 for batch in asked) and len(asked) == (len(inside) + 1) // 2
    assert sorted(i for batch in asked for i in batch) == sorted(inside)  # never the row past its 180 days


def test_refresh_twice_is_idempotent(pinterest):
    """Twice: the same rows, one follower count per day, the state back to IDLE. (The simulated
    figures keep growing between reads, so only their direction is compared.)"""
    account, _ = pinterest
    services.import_account_history(account_id=account.id)
    rows = TrackedPost.objects.filter(account=account)
    services.refresh_account(account_id=account.id)
    first = dict(rows.values_list("id", "views"))
    services.refresh_account(account_id=account.id)
    second = dict(rows.values_list("id", "views"))
    assert set(second) == set(first)
    assert all(second[key] >= first[key] for key in first)
    assert FollowerSnapshot.objects.filter(account=account).count() == 1
    assert AccountSyncState.objects.get(account=account).status == "IDLE"


def test_discovered_posts_are_the_imports_posts_not_published_through_us(pinterest, api, workspace):
    account, remote_ids = pinterest
    post = Post.objects.create(workspace=workspace, status="COMPLETED", content_type="IMAGE", text="seed pin 2")
    target = PostTarget.objects.create(
        post=post,
        platform="PINTEREST",
        account=account,
        status="PUBLISHED",
        platform_post_id=remote_ids[2],
        published_at=timezone.now(),
        text="seed pin 2",
    )
    services.import_account_history(account_id=account.id)
    services.track_published_target(target_id=target.id)  # published after the import found it: linked now
    today = timezone.now().date()
    window = f"from={today - dt.timedelta(days=1)}&to={today + dt.timedelta(days=1)}"
    body = api.get(f"/api/v1/analytics/discovered-posts?{window}&platforms=PINTEREST").json()
    found = {row["permalink"].rstrip("/").rsplit("/", 1)[-1]: row for row in body["posts"]}
    assert remote_ids[0] in found and remote_ids[1] in found and remote_ids[2] not in found
    row = TrackedPost.objects.get(account=account, platform_post_id=remote_ids[0])
    assert found[remote_ids[0]] == {
        "id": row.id,
        "platform": "PINTEREST",
        "publishedAt": iso(row.published_at),
        "text": row.text,
        "thumbnailUrl": row.thumbnail_url,
        "permalink": row.permalink,
        "accountName": account.display_name or account.username,
    }
    assert [r["publishedAt"] for r in body["posts"]] == sorted((r["publishedAt"] for r in body["posts"]), reverse=True)
