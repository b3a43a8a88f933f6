"""Beat tasks: the twice-daily FACEBOOK page check and the proactive token refresh. Each task
run twice changes the world once."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.utils import timezone

from accounts import tasks
from accounts.models import SocialAccount
from accounts.schedule import BEAT_SCHEDULE
from config.celery import collect_beat_schedule
from platforms.base import Platform
from platforms.capabilities import CAPABILITIES
from platforms.sandbox.store import SandboxStore
from tests.accounts.conftest import revoke, unauthorized_events
from tests.factories.accounts import SocialAccountFactory
from workspaces.models import Workspace


def test_the_schedule_is_registered() -> None:
    schedule = collect_beat_schedule()
    for name in ("accounts.check_facebook_pages", "accounts.refresh_expiring_tokens"):
        assert schedule[name]["task"] == name
        assert name in BEAT_SCHEDULE
    assert schedule["accounts.check_facebook_pages"]["schedule"].hour == {5, 17}


@pytest.mark.django_db
def test_check_facebook_pages_queues_one_check_per_page(
    workspace: Workspace, other_workspace: Workspace, enqueued: list[tuple[str, list[Any]]]
) -> None:
    pages = [
        SocialAccountFactory(workspace=workspace, platform="FACEBOOK"),
        SocialAccountFactory(workspace=other_workspace, platform="FACEBOOK", status="unauthorized"),
    ]
    SocialAccountFactory(workspace=workspace, platform="INSTAGRAM")

    assert tasks.check_facebook_pages() == 2

    assert sorted(enqueued) == sorted(("accounts.check_account", [p.id]) for p in pages)


@pytest.mark.django_db(transaction=True)
def test_check_account_marks_and_clears_once_per_transition(
    site: str, workspace: Workspace, connect_account: Callable[..., SocialAccount]
) -> None:
    account = connect_account("FACEBOOK", workspace)
    revoke(site, Platform.FACEBOOK, account.page_id)

    tasks.check_account(account.id)
    tasks.check_account(account.id)

    account.refresh_from_db()
    assert account.status == "unauthorized"
    assert account.last_checked_at is not None
    assert len(unauthorized_events(workspace.id)) == 1

    revoke(site, Platform.FACEBOOK, account.page_id, revoked=False)
    tasks.check_account(account.id)
    tasks.check_account(account.id)
    account.refresh_from_db()
    assert (account.status, account.unauthorized_reason) == ("active", "")
    assert len(unauthorized_events(workspace.id)) == 1


@pytest.mark.django_db(transaction=True)
def test_check_account_tolerates_an_unreachable_platform_and_a_deleted_account(
    site: str, workspace: Workspace, connect_account: Callable[..., SocialAccount], monkeypatch: pytest.MonkeyPatch
) -> None:
    account = connect_account("FACEBOOK", workspace)
    monkeypatch.setitem(settings.PLATFORM_APP_ENV, "PLATFORM_FACEBOOK_BASE_URL", "http://127.0.0.1:9")
    tasks.check_account(account.id)
    account.refresh_from_db()
    assert account.status == "active"
    assert unauthorized_events(workspace.id) == []
    tasks.check_account("acc_gone")


@pytest.mark.django_db
def test_refresh_expiring_tokens_queues_only_active_refreshable_tokens_near_expiry(
    workspace: Workspace, enqueued: list[tuple[str, list[Any]]]
) -> None:
    soon = timezone.now() + dt.timedelta(minutes=10)
    due = SocialAccountFactory(workspace=workspace, platform="PINTEREST", token_expires_at=soon)
    SocialAccountFactory(workspace=workspace, platform="PINTEREST", token_expires_at=soon + dt.timedelta(hours=2))
    SocialAccountFactory(workspace=workspace, platform="MASTODON", token_expires_at=soon)  # no refresh tokens
    SocialAccountFactory(workspace=workspace, platform="PINTEREST", token_expires_at=soon, status="unauthorized")
    SocialAccountFactory(workspace=workspace, platform="PINTEREST", token_expires_at=None)

    assert tasks.refresh_expiring_tokens() == 1

    assert enqueued == [("accounts.refresh_account_token", [due.id])]


@pytest.mark.django_db(transaction=True)
def test_refresh_account_token_twice_refreshes_once(
    site: str, workspace: Workspace, connect_account: Callable[..., SocialAccount]
) -> None:
    account = connect_account("PINTEREST", workspace)
    SocialAccount.objects.filter(id=account.id).update(token_expires_at=timezone.now() + dt.timedelta(minutes=20))
    SandboxStore("pinterest").clear_requests()

    tasks.refresh_account_token(account.id)
    first = SocialAccount.objects.get(id=account.id).access_token
    tasks.refresh_account_token(account.id)

    assert SocialAccount.objects.get(id=account.id).access_token == first != account.access_token
    refreshes = [r for r in SandboxStore("pinterest").requests() if r["path"].endswith("/oauth/token")]
    assert len(refreshes) == 1
    tasks.refresh_account_token("acc_gone")


@pytest.mark.django_db
def test_purge_expired_connect_links_keeps_recent_ones(workspace: Workspace) -> None:
    from accounts.models import ConnectLink
    from tests.factories.accounts import make_connect_link

    old, _ = make_connect_link(workspace, expires_in=-dt.timedelta(days=8))
    recent, _ = make_connect_link(workspace, expires_in=-dt.timedelta(days=1))
    live, _ = make_connect_link(workspace)

    assert tasks.purge_expired_connect_links() == 1
    assert tasks.purge_expired_connect_links() == 0
    assert set(ConnectLink.objects.values_list("id", flat=True)) == {recent.id, live.id}
    assert old.id


@pytest.mark.django_db(transaction=True)
def test_refresh_account_token_leaves_the_account_active_when_the_platform_is_unreachable(
    site: str, workspace: Workspace, connect_account: Callable[..., SocialAccount], monkeypatch: pytest.MonkeyPatch
) -> None:
    account = connect_account("PINTEREST", workspace)
    for expires_in in (dt.timedelta(minutes=20), -dt.timedelta(minutes=1)):  # about to expire, then expired
        SocialAccount.objects.filter(id=account.id).update(token_expires_at=timezone.now() + expires_in)
        monkeypatch.setitem(
            settings.PLATFORM_APP_ENV, "PLATFORM_PINTEREST_BASE_URL", "http://127.0.0.1:9"
        )  # connection refused

        tasks.refresh_account_token(account.id)
        tasks.refresh_account_token(account.id)

        account.refresh_from_db()
        assert (account.status, account.unauthorized_reason) == ("active", "")
        assert unauthorized_events(workspace.id) == []
    # The platform is back: the next beat run refreshes the token.
    monkeypatch.delitem(settings.PLATFORM_APP_ENV, "PLATFORM_PINTEREST_BASE_URL", raising=False)
    before = SocialAccount.objects.get(id=account.id).access_token
    tasks.refresh_account_token(account.id)
    account.refresh_from_db()
    assert account.access_token != before
    assert account.token_expires_at is not None and account.token_expires_at > timezone.now() + dt.timedelta(days=1)


@pytest.fixture
def failing_server() -> Any:
    """A local HTTP server answering every request with 503 (a platform having a bad minute);
    ``hits`` counts the requests it answered."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def _fail(self) -> None:
            hits.append(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            body = b'{"error": {"message": "Service temporarily unavailable"}}'
            self.send_response(503)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _fail  # noqa: N815

        def log_message(self, format: str, *args: Any) -> None:
            pass

    hits: list[str] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.hits = hits  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("platform", [p.value for p in Platform if CAPABILITIES[p].refreshable_token])
def test_a_platform_answering_503_to_the_refresh_never_marks_the_account(
    platform: str,
    site: str,
    workspace: Workspace,
    connect_account: Callable[..., SocialAccount],
    monkeypatch: pytest.MonkeyPatch,
    failing_server: Any,
) -> None:
    account = connect_account(platform, workspace)
    SocialAccount.objects.filter(id=account.id).update(token_expires_at=timezone.now() + dt.timedelta(minutes=10))
    monkeypatch.setitem(
        settings.PLATFORM_APP_ENV,
        f"PLATFORM_{platform}_BASE_URL",
        f"http://127.0.0.1:{failing_server.server_address[1]}",
    )

    assert tasks.refresh_expiring_tokens() == 1
    tasks.refresh_account_token(account.id)
    tasks.refresh_account_token(account.id)

    after = SocialAccount.objects.get(id=account.id)
    assert (after.status, after.access_token) == ("active", account.access_token)
    assert unauthorized_events(workspace.id) == []
    assert len(failing_server.hits) >= 2  # both runs really asked the platform
