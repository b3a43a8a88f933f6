"""Token refresh of every platform that has refresh tokens, through its real client against its
simulator, and single flight: two workers refreshing the same account at once make one refresh
call (a second would spend a rotated refresh token and could lock the account out)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import requests
from django.utils import timezone

from accounts.models import SocialAccount
from accounts.services import account_refresh_token
from platforms.base import Platform
from platforms.capabilities import CAPABILITIES
from platforms.registry import get_client
from tests.concurrency import raised, run_concurrently
from tests.factories.accounts import SocialAccountFactory
from tests.platforms.conftest import connect_sandbox_account

REFRESHABLE = [p for p in Platform if CAPABILITIES[p].refreshable_token]


def _log(sandbox: str, slug: str) -> list[dict[str, Any]]:
    return list(requests.get(f"{sandbox}/_control/{slug}/requests", timeout=10).json()["requests"])


def _clear(sandbox: str, slug: str) -> None:
    requests.delete(f"{sandbox}/_control/{slug}/requests", timeout=10)


def _expiring_account(platform: Platform, workspace: Any) -> SocialAccount:
    creds = connect_sandbox_account(platform)[0].credentials
    account: SocialAccount = SocialAccountFactory(
        workspace=workspace,
        platform=platform.value,
        external_id=creds.external_id,
        access_token=creds.access_token,
        refresh_token=creds.refresh_token,
        credentials_extra=dict(creds.extra),
        token_expires_at=timezone.now() + dt.timedelta(minutes=1),
    )
    return account


def test_every_refreshable_platform_is_in_the_table() -> None:
    assert set(REFRESHABLE) == {
        Platform.TWITTER,
        Platform.BLUESKY,
        Platform.THREADS,
        Platform.LINKEDIN,
        Platform.INSTAGRAM,
        Platform.TIKTOK,
        Platform.YOUTUBE,
        Platform.PINTEREST,
        Platform.GOOGLE_BUSINESS,
    }


@pytest.mark.parametrize("platform", REFRESHABLE, ids=[p.value for p in REFRESHABLE])
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_refreshers_make_one_refresh_and_share_a_working_token(
    platform: Platform, sandbox: str, workspace: Any
) -> None:
    client = get_client(platform)
    # How many calls one refresh of this platform takes (measured on an account of its own).
    solo = _expiring_account(platform, workspace)
    _clear(sandbox, platform.slug)
    refreshed = account_refresh_token(account_id=solo.id)
    calls_per_refresh = len(_log(sandbox, platform.slug))
    assert calls_per_refresh >= 1
    assert refreshed.access_token != solo.access_token
    assert refreshed.expires_at is not None and refreshed.expires_at > timezone.now() + dt.timedelta(minutes=30)
    assert client.check_token(refreshed).external_id

    account = _expiring_account(platform, workspace)
    _clear(sandbox, platform.slug)
    results = run_concurrently([lambda: account_refresh_token(account_id=account.id).access_token] * 2)
    assert raised(results) == []
    tokens = list(results)
    assert len(tokens) == 2 and tokens[0] == tokens[1] != account.access_token
    assert len(_log(sandbox, platform.slug)) == calls_per_refresh  # one refresh, not two
    account.refresh_from_db()
    assert account.access_token == tokens[0]
    assert client.check_token(account.credentials()).external_id
