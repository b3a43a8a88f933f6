"""Tokens at rest (encrypted, rotatable) and token refresh (single flight, failure handling)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from cryptography.fernet import Fernet
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from accounts.models import ConnectAttempt, SocialAccount
from accounts.services import account_fresh_credentials, account_refresh_token
from platforms.base import AuthError, Platform, PlatformError
from platforms.sandbox.store import SandboxStore
from tests.accounts.conftest import revoke, unauthorized_events
from tests.concurrency import raised, run_concurrently
from tests.factories.accounts import SocialAccountFactory, make_connect_link
from workspaces.models import Workspace


def _raw(account_id: str) -> tuple[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT access_token, refresh_token FROM accounts_socialaccount WHERE id = %s", [account_id])
        row = cursor.fetchone()
    assert row is not None
    return row[0], row[1]


@pytest.mark.django_db
def test_token_columns_hold_no_plaintext(workspace: Workspace, settings: Any) -> None:
    account = SocialAccountFactory(
        workspace=workspace, access_token="plain-access-token-123", refresh_token="plain-refresh-token-456"
    )
    raw_access, raw_refresh = _raw(account.id)
    assert "plain-access" not in raw_access and "plain-refresh" not in raw_refresh
    fernet = Fernet(settings.FERNET_KEYS[0].encode())
    assert fernet.decrypt(raw_access.encode()) == b"plain-access-token-123"
    assert fernet.decrypt(raw_refresh.encode()) == b"plain-refresh-token-456"
    assert SocialAccount.objects.get(id=account.id).access_token == "plain-access-token-123"


@pytest.mark.django_db
def test_rotate_encryption_keys_re_encrypts_every_row_with_the_new_primary_key(
    workspace: Workspace, settings: Any
) -> None:
    old_key = settings.FERNET_KEYS[0]
    accounts = [
        SocialAccountFactory(workspace=workspace, access_token=f"access-{n}", refresh_token=f"refresh-{n}" if n else "")
        for n in range(3)
    ]
    link, _ = make_connect_link(workspace)
    attempt = ConnectAttempt.objects.create(
        link=link, platform="MASTODON", nonce="n", code_verifier="verifier-1", expires_at=link.expires_at
    )
    new_key = Fernet.generate_key().decode()
    settings.FERNET_KEYS = [new_key, old_key]

    call_command("rotate_encryption_keys", stdout=open("/dev/null", "w"))  # noqa: SIM115

    only_new = Fernet(new_key.encode())
    for n, account in enumerate(accounts):
        raw_access, raw_refresh = _raw(account.id)
        assert only_new.decrypt(raw_access.encode()) == f"access-{n}".encode()
        if n == 0:
            assert raw_refresh == ""
        else:
            assert only_new.decrypt(raw_refresh.encode()) == f"refresh-{n}".encode()
    settings.FERNET_KEYS = [new_key]  # the old key can go: every row still reads
    assert [SocialAccount.objects.get(id=a.id).access_token for a in accounts] == ["access-0", "access-1", "access-2"]
    assert ConnectAttempt.objects.get(id=attempt.id).code_verifier == "verifier-1"


def _expiring(account: SocialAccount, seconds: int = 60) -> None:
    SocialAccount.objects.filter(id=account.id).update(token_expires_at=timezone.now() + dt.timedelta(seconds=seconds))


def _refresh_calls() -> int:
    return sum(
        1
        for entry in SandboxStore("pinterest").requests()
        if entry["path"].endswith("/oauth/token") and entry["method"] == "POST"
    )


@pytest.mark.django_db(transaction=True)
def test_fresh_credentials_refresh_a_token_about_to_expire(
    site: str, workspace: Workspace, connect_account: Callable[..., SocialAccount]
) -> None:
    account = connect_account("PINTEREST", workspace)
    assert account.token_expires_at is not None
    original = account.access_token
    untouched = account_fresh_credentials(account_id=account.id)  # 30 days left: no refresh
    assert untouched.access_token == original

    _expiring(account)
    creds = account_fresh_credentials(account_id=account.id)

    account.refresh_from_db()
    assert creds.access_token != original
    assert creds.access_token == account.access_token
    assert account.token_expires_at is not None and account.token_expires_at > timezone.now() + dt.timedelta(days=1)
    assert account.refresh_token  # kept
    assert "sbx-" not in _raw(account.id)[0]


@pytest.mark.django_db(transaction=True)
def test_concurrent_callers_refresh_once(
    site: str, workspace: Workspace, connect_account: Callable[..., SocialAccount]
) -> None:
    account = connect_account("PINTEREST", workspace)
    _expiring(account)
    SandboxStore("pinterest").clear_requests()
    tokens = run_concurrently([lambda: account_fresh_credentials(account_id=account.id).access_token] * 5)
    assert raised(tokens) == []
    assert len(tokens) == 5 and len(set(tokens)) == 1
    assert _refresh_calls() == 1


@pytest.mark.django_db(transaction=True)
def test_a_rejected_refresh_marks_the_account_once_and_re_raises(
    site: str, workspace: Workspace, connect_account: Callable[..., SocialAccount]
) -> None:
    account = connect_account("PINTEREST", workspace)
    _expiring(account)
    revoke(site, Platform.PINTEREST, account.external_id)

    with pytest.raises(AuthError):
        account_fresh_credentials(account_id=account.id)

    account.refresh_from_db()
    assert account.status == "unauthorized"
    assert account.unauthorized_reason
    assert len(unauthorized_events(workspace.id)) == 1
    # An unauthorized account is not refreshed again (it must be reconnected): no second event.
    assert account_fresh_credentials(account_id=account.id).access_token == account.access_token
    assert len(unauthorized_events(workspace.id)) == 1


@pytest.mark.django_db(transaction=True)
def test_a_transient_refresh_failure_never_marks_the_account(
    site: str, workspace: Workspace, connect_account: Callable[..., SocialAccount], monkeypatch: pytest.MonkeyPatch
) -> None:
    account = connect_account("PINTEREST", workspace)
    _expiring(account)
    monkeypatch.setitem(
        settings.PLATFORM_APP_ENV, "PLATFORM_PINTEREST_BASE_URL", "http://127.0.0.1:9"
    )  # nothing listens: connection refused

    still_valid = account_fresh_credentials(account_id=account.id)
    assert still_valid.access_token == account.access_token  # the current token is still good for a minute

    _expiring(account, seconds=-10)
    with pytest.raises(PlatformError):
        account_refresh_token(account_id=account.id)
    with pytest.raises(PlatformError):
        account_fresh_credentials(account_id=account.id)  # expired and not refreshable now: the caller retries
    account.refresh_from_db()
    assert account.status == "active"
    assert unauthorized_events(workspace.id) == []
