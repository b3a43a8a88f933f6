"""The beat's refresh task and the sync request: what they queue, that a second run queues
nothing new, that a lost or failed refresh comes due again, and the per-workspace cooldown."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from analytics import services, tasks
from analytics.models import AccountSyncState
from analytics.schedule import BEAT_SCHEDULE
from core.redis import get_redis
from tests.factories.analytics import SocialAccountFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Account ids handed to the broker (``analytics.refresh_account``), in order."""
    sent: list[str] = []
    monkeypatch.setattr(services, "queue_refresh", sent.append)
    return sent


def _state(account: Any, status: str, *, synced_ago: dt.timedelta | None, updated_ago: dt.timedelta) -> None:
    now = timezone.now()
    AccountSyncState.objects.create(
        account=account,
        workspace=account.workspace,
        status=status,
        last_synced_at=None if synced_ago is None else now - synced_ago,
    )
    AccountSyncState.objects.filter(account=account).update(updated_at=now - updated_ago)


def test_the_beat_runs_the_refresh_task():
    assert BEAT_SCHEDULE["analytics.refresh_due"]["task"] == tasks.refresh_due.name


def test_refresh_due_queues_each_due_account_once(
    workspace, other_workspace, queued, django_capture_on_commit_callbacks
):
    hours = dt.timedelta(hours=1)
    never = SocialAccountFactory(workspace=workspace, platform="YOUTUBE")
    stale = SocialAccountFactory(workspace=workspace, platform="FACEBOOK")
    _state(stale, "IDLE", synced_ago=7 * hours, updated_ago=7 * hours)
    fresh = SocialAccountFactory(workspace=workspace, platform="FACEBOOK")
    _state(fresh, "IDLE", synced_ago=hours, updated_ago=hours)
    failed = SocialAccountFactory(workspace=workspace, platform="BLUESKY")
    _state(failed, "FAILED", synced_ago=None, updated_ago=hours)
    waiting = SocialAccountFactory(workspace=workspace, platform="PINTEREST")
    _state(waiting, "QUEUED", synced_ago=None, updated_ago=dt.timedelta(minutes=10))
    stuck = SocialAccountFactory(workspace=workspace, platform="LINKEDIN")
    _state(stuck, "SYNCING", synced_ago=8 * hours, updated_ago=2 * hours)  # its worker died
    SocialAccountFactory(workspace=workspace, platform="TWITTER", status="unauthorized")
    SocialAccountFactory(workspace=workspace, platform="MASTODON")  # no analytics
    elsewhere = SocialAccountFactory(workspace=other_workspace, platform="THREADS")

    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.refresh_due() == 5
    expected = sorted(a.id for a in (never, stale, failed, stuck, elsewhere))
    assert sorted(queued) == expected
    assert set(AccountSyncState.objects.filter(status="QUEUED").values_list("account_id", flat=True)) == {
        *expected,
        waiting.id,
    }

    # Run twice: everything due is already queued, nothing is sent again.
    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.refresh_due() == 0
    assert sorted(queued) == expected


def test_a_queued_refresh_lost_for_an_hour_comes_due_again(workspace, queued, django_capture_on_commit_callbacks):
    account = SocialAccountFactory(workspace=workspace, platform="YOUTUBE")
    _state(account, "QUEUED", synced_ago=None, updated_ago=dt.timedelta(minutes=59))
    assert services.accounts_due_for_refresh(older_than=dt.timedelta(hours=6)) == []
    AccountSyncState.objects.filter(account=account).update(updated_at=timezone.now() - dt.timedelta(minutes=61))
    assert services.accounts_due_for_refresh(older_than=dt.timedelta(hours=6)) == [account.id]


class _Broken:
    """A client whose follower read fails in a way no platform error describes."""

    def fetch_post_metrics(self, creds: Any, ids: list[str]) -> dict[str, Any]:
        return {}

    def fetch_followers(self, creds: Any) -> int:
        raise RuntimeError("boom")


def test_an_unexpected_failure_marks_the_account_failed_and_due(workspace, monkeypatch):
    account = SocialAccountFactory(workspace=workspace, platform="YOUTUBE")
    monkeypatch.setattr(services, "get_client", lambda platform: _Broken())
    with pytest.raises(RuntimeError):
        services.refresh_account(account_id=account.id)
    state = AccountSyncState.objects.get(account=account)
    assert (state.status, state.last_error_message) == ("FAILED", "The refresh failed unexpectedly")
    assert "boom" not in state.last_error_message
    assert services.accounts_due_for_refresh(older_than=dt.timedelta(hours=6)) == [account.id]


def test_a_refresh_of_a_disconnected_account_does_nothing(workspace):
    account = SocialAccountFactory(workspace=workspace, platform="YOUTUBE")
    account_id = account.id
    account.delete()
    assert services.refresh_account(account_id=account_id) is None
    assert services.import_account_history(account_id=account_id) is None
    assert not AccountSyncState.objects.filter(account_id=account_id).exists()


def test_sync_cooldown_is_per_workspace_and_counts_down(
    client_for, workspace, other_workspace, queued, django_capture_on_commit_callbacks
):
    mine = SocialAccountFactory(workspace=workspace, platform="YOUTUBE")
    SocialAccountFactory(workspace=workspace, platform="MASTODON")  # nothing to refresh there
    theirs = SocialAccountFactory(workspace=other_workspace, platform="FACEBOOK")
    api, stranger = client_for("viewer"), client_for("viewer", ws=other_workspace)

    with django_capture_on_commit_callbacks(execute=True):
        first = api.post("/api/v1/analytics/sync", {}, format="json")
    assert first.status_code == 202
    assert first.json() == {"queued": True, "message": "Refresh queued", "cooldownSecondsRemaining": None}
    assert queued == [mine.id]

    get_redis().expire(f"analytics:sync-cooldown:{workspace.id}", 42)  # 558 s later
    with django_capture_on_commit_callbacks(execute=True):
        again = api.post("/api/v1/analytics/sync", {}, format="json")
    assert again.status_code == 202
    assert again.json() == {
        "queued": False,
        "message": "A refresh was requested recently; try again in 42 seconds",
        "cooldownSecondsRemaining": 42,
    }
    assert queued == [mine.id]

    # Another workspace's cooldown is its own.
    with django_capture_on_commit_callbacks(execute=True):
        assert stranger.post("/api/v1/analytics/sync", {}, format="json").json()["queued"] is True
    assert queued == [mine.id, theirs.id]

    # Once the cooldown has passed, a new request is queued.
    get_redis().delete(f"analytics:sync-cooldown:{workspace.id}")
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post("/api/v1/analytics/sync", {}, format="json").json()["queued"] is True
    assert queued == [mine.id, theirs.id, mine.id]
    status = api.get("/api/v1/analytics/sync-status").json()
    assert status["syncInProgress"] is True
    assert [(a["accountId"], a["status"]) for a in status["accounts"]] == [(mine.id, "QUEUED")]
