"""The hosted connect flow over real HTTP: link → platform → (simulated consent) → callback."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.connect import connect_link_create
from accounts.models import ConnectAttempt, ConnectLink, SocialAccount
from accounts.services import account_mark_unauthorized
from platforms.base import Platform
from platforms.registry import get_client
from tests.accounts.conftest import require_platform
from tests.factories.accounts import make_connect_link
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("platform", [p.value for p in Platform])
def test_connect_one_account_of_every_platform(
    platform: str,
    connect_via_link: Callable[..., requests.Response],
    workspace: Workspace,
    enqueued: list[tuple[str, list[Any]]],
    make_key: Callable[..., str],
) -> None:
    response = connect_via_link(platform)

    assert response.status_code == 200, response.text[:500]
    assert "connected" in response.text
    accounts = list(SocialAccount.objects.filter(workspace=workspace))
    assert accounts  # one, or one per page/location the user manages (FACEBOOK, GOOGLE_BUSINESS)
    for account in accounts:
        assert account.platform == platform
        assert account.status == "active"
        assert account.connected_at is not None
        assert account.access_token and account.access_token not in response.text
        assert f'data-account-id="{account.id}"' in response.text
        assert account.page_id == (account.external_id if platform == "FACEBOOK" else "")
        assert ("analytics.import_account_history", [account.id]) in enqueued
    listed = APIClient()
    listed.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key('viewer', workspace)}")
    body = listed.get("/api/v1/social-accounts").json()
    assert [(a["id"], a["platform"], a["status"]) for a in body["accounts"]] == [
        (a.id, platform, "active") for a in sorted(accounts, key=lambda a: (a.connected_at, a.id))
    ]


def test_sandbox_oauth_goes_through_consent_and_callback(site: str, workspace: Workspace) -> None:
    require_platform(Platform.MASTODON)
    url = connect_link_create(workspace_id=workspace.id).url

    first = requests.get(f"{url}/MASTODON", allow_redirects=False, timeout=10)
    assert first.status_code == 302
    consent = urlsplit(first.headers["Location"])
    assert f"{consent.scheme}://{consent.netloc}{consent.path}".startswith(f"{site}/sandbox/mastodon/")
    query = parse_qs(consent.query)
    assert query["redirect_uri"] == [f"{site}/connect/callback/MASTODON"]
    assert query["code_challenge_method"] == ["S256"]
    state = query["state"][0]

    approved = requests.get(first.headers["Location"], allow_redirects=False, timeout=10)
    callback = approved.headers["Location"]
    assert callback.startswith(f"{site}/connect/callback/MASTODON?")
    done = requests.get(callback, timeout=10)
    assert done.status_code == 200
    assert SocialAccount.objects.filter(workspace=workspace, platform="MASTODON").count() == 1
    assert ConnectLink.objects.get(workspace=workspace).connections == 1
    assert ConnectAttempt.objects.get().used_at is not None

    # The state is single-use: replaying the callback is refused and connects nothing new.
    replay = requests.get(callback, timeout=10)
    assert replay.status_code == 409
    assert "already used" in replay.text
    assert "Traceback" not in replay.text
    # A tampered state is refused.
    tampered = requests.get(f"{site}/connect/callback/MASTODON", params={"code": "x", "state": state + "x"}, timeout=10)
    assert tampered.status_code == 400
    # A state of one platform is not accepted by another platform's callback.
    other = requests.get(f"{site}/connect/callback/PINTEREST", params={"code": "x", "state": state}, timeout=10)
    assert other.status_code == 400


def test_one_link_connects_several_platforms(
    connect_via_link: Callable[..., requests.Response], workspace: Workspace
) -> None:
    url = connect_link_create(workspace_id=workspace.id).url
    assert connect_via_link("MASTODON", url).status_code == 200
    assert connect_via_link("TELEGRAM", url).status_code == 200
    assert sorted(SocialAccount.objects.filter(workspace=workspace).values_list("platform", flat=True)) == [
        "MASTODON",
        "TELEGRAM",
    ]


def test_reconnecting_an_unauthorized_account_keeps_its_id_and_clears_the_mark(
    site: str, workspace: Workspace, enqueued: list[tuple[str, list[Any]]]
) -> None:
    require_platform(Platform.TELEGRAM)
    client = get_client(Platform.TELEGRAM)
    fields = client.sandbox_credentials()
    url = connect_link_create(workspace_id=workspace.id).url
    page = requests.get(f"{url}/TELEGRAM", params={"manual": "1"}, timeout=10)
    csrf = _csrf(page)
    session = requests.Session()
    session.cookies.update(page.cookies)

    first = session.post(
        f"{url}/TELEGRAM", data={**fields, "csrfmiddlewaretoken": csrf}, headers={"Referer": url}, timeout=10
    )
    assert first.status_code == 200, first.text[:400]
    account = SocialAccount.objects.get(workspace=workspace)
    connected_at = account.connected_at
    account_mark_unauthorized(account_id=account.id, reason="token revoked")

    again = session.post(
        f"{url}/TELEGRAM", data={**fields, "csrfmiddlewaretoken": csrf}, headers={"Referer": url}, timeout=10
    )
    assert again.status_code == 200
    account.refresh_from_db()
    assert SocialAccount.objects.filter(workspace=workspace).count() == 1
    assert (account.status, account.unauthorized_reason, account.connected_at) == ("active", "", connected_at)
    assert [t for t in enqueued if t[0] == "analytics.import_account_history"] == [
        ("analytics.import_account_history", [account.id]),
        ("analytics.import_account_history", [account.id]),
    ]


def _csrf(page: requests.Response) -> str:
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert match, page.text[:500]
    return match.group(1)


def test_credentials_form_shows_fields_and_reports_problems(site: str, workspace: Workspace) -> None:
    require_platform(Platform.TELEGRAM)
    url = connect_link_create(workspace_id=workspace.id).url
    session = requests.Session()
    page = session.get(f"{url}/TELEGRAM", params={"manual": "1"}, timeout=10)
    assert page.status_code == 200
    assert '<label for="field-botToken">' in page.text
    assert 'id="field-botToken" name="botToken" type="password"' in page.text
    assert 'name="chatId" type="text"' in page.text
    csrf = _csrf(page)

    missing = session.post(f"{url}/TELEGRAM", data={"csrfmiddlewaretoken": csrf, "chatId": "@chan"}, timeout=10)
    assert missing.status_code == 400
    assert "botToken is required" in missing.text
    assert 'value="@chan"' in missing.text  # what was typed (not secret) is kept

    refused = session.post(
        f"{url}/TELEGRAM", data={"csrfmiddlewaretoken": csrf, "botToken": "nonsense", "chatId": "@chan"}, timeout=10
    )
    assert refused.status_code == 400
    assert "refused these details" in refused.text
    assert "nonsense" not in refused.text  # a typed secret is never echoed back
    assert not SocialAccount.objects.exists()


def test_the_chooser_lists_the_twelve_platforms(site: str, workspace: Workspace) -> None:
    url = connect_link_create(workspace_id=workspace.id).url
    page = requests.get(url, timeout=10)
    assert page.status_code == 200
    assert '<meta name="viewport"' in page.text
    hrefs = re.findall(r'href="([^"]+)"', page.text)
    token = url.rsplit("/", 1)[1]
    assert hrefs == [f"/connect/{token}/{p.value}" for p in Platform]


def _page_status(url: str) -> tuple[int, str]:
    response = requests.get(url, timeout=10)
    assert "Traceback" not in response.text
    assert response.headers["Content-Type"].startswith("text/html")
    return response.status_code, response.text


def test_unknown_deleted_and_expired_links_answer_error_pages(site: str, workspace: Workspace, api: Any) -> None:
    assert _page_status(f"{site}/connect/nope")[0] == 404
    assert _page_status(f"{site}/connect/nope/MASTODON")[0] == 404

    link, token = make_connect_link(workspace, expires_in=dt.timedelta(seconds=-1))
    for path in ("", "/MASTODON", "/TELEGRAM"):
        status, text = _page_status(f"{site}/connect/{token}{path}")
        assert (status, "expired" in text) == (410, True)

    _, token = make_connect_link(workspace)
    assert _page_status(f"{site}/connect/{token}/NOT_A_PLATFORM")[0] == 404
    assert api.delete(f"/api/v1/connect-links/{token}").status_code == 200
    for path in ("", "/MASTODON"):
        status, text = _page_status(f"{site}/connect/{token}{path}")
        assert (status, "does not exist" in text) == (404, True)
    assert not SocialAccount.objects.exists()


def test_callback_after_the_link_expired_or_was_deleted(site: str, workspace: Workspace) -> None:
    require_platform(Platform.MASTODON)
    link, token = make_connect_link(workspace)
    start = requests.get(f"{site}/connect/{token}/MASTODON", allow_redirects=False, timeout=10)
    callback = requests.get(start.headers["Location"], allow_redirects=False, timeout=10).headers["Location"]
    ConnectLink.objects.filter(id=link.id).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    ConnectAttempt.objects.update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    assert _page_status(callback)[0] == 410

    link2, token2 = make_connect_link(workspace)
    start = requests.get(f"{site}/connect/{token2}/MASTODON", allow_redirects=False, timeout=10)
    callback = requests.get(start.headers["Location"], allow_redirects=False, timeout=10).headers["Location"]
    link2.delete()
    assert _page_status(callback)[0] == 404
    assert not SocialAccount.objects.exists()


def test_callback_reports_a_declined_consent_and_a_bad_code(site: str, workspace: Workspace) -> None:
    require_platform(Platform.MASTODON)
    _, token = make_connect_link(workspace)
    start = requests.get(f"{site}/connect/{token}/MASTODON", allow_redirects=False, timeout=10)
    state = parse_qs(urlsplit(start.headers["Location"]).query)["state"][0]
    declined = requests.get(
        f"{site}/connect/callback/MASTODON", params={"error": "access_denied", "state": state}, timeout=10
    )
    assert declined.status_code == 400
    assert "did not grant access" in declined.text

    start = requests.get(f"{site}/connect/{token}/MASTODON", allow_redirects=False, timeout=10)
    state = parse_qs(urlsplit(start.headers["Location"]).query)["state"][0]
    bad_code = requests.get(
        f"{site}/connect/callback/MASTODON", params={"code": "not-a-code", "state": state}, timeout=10
    )
    assert bad_code.status_code == 400  # the platform refused the code: the user's problem, not an outage
    assert "refused the connection" in bad_code.text
    assert "Traceback" not in bad_code.text
    assert requests.get(f"{site}/connect/callback/MASTODON", timeout=10).status_code == 400
    assert not SocialAccount.objects.exists()


def test_every_facebook_page_the_user_manages_becomes_an_account(site: str, workspace: Workspace) -> None:
    from platforms.sandbox.store import SandboxStore

    url = connect_link_create(workspace_id=workspace.id).url
    consent = requests.get(f"{url}/FACEBOOK", allow_redirects=False, timeout=10).headers["Location"]
    callback = requests.get(consent, allow_redirects=False, timeout=10).headers["Location"]
    # The simulated user manages a second page (besides the one it was created with).
    store = SandboxStore("facebook")
    (user,) = store.all("user")
    (first,) = store.all("page")
    second = {**first, "id": "6199990000001", "name": "Second Page", "username": "secondpage"}
    store.put("page", second["id"], second)
    store.update("user", user["id"], pages=[*user["pages"], second["id"]])

    done = requests.get(callback, timeout=10)

    assert done.status_code == 200, done.text[:300]
    accounts = SocialAccount.objects.filter(workspace=workspace).order_by("page_id")
    assert [(a.platform, a.page_id, a.external_id, a.display_name) for a in accounts] == [
        ("FACEBOOK", first["id"], first["id"], first["name"]),
        ("FACEBOOK", second["id"], second["id"], "Second Page"),
    ]
    assert accounts[0].access_token != accounts[1].access_token  # each page has its own page token
    for account in accounts:
        assert f'data-account-id="{account.id}"' in done.text


@pytest.mark.parametrize("platform", [p.value for p in Platform])
def test_live_mode_sends_the_user_to_the_real_consent_page_or_the_credentials_form(
    platform: str, workspace: Workspace, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.SANDBOX = False
    settings.PUBLIC_BASE_URL = "https://crosspost.example.com"
    monkeypatch.setitem(settings.PLATFORM_APP_ENV, f"PLATFORM_{platform}_CLIENT_ID", "live-client-id")
    monkeypatch.setitem(settings.PLATFORM_APP_ENV, f"PLATFORM_{platform}_CLIENT_SECRET", "live-client-secret")
    url = connect_link_create(workspace_id=workspace.id).url
    path = urlsplit(url).path

    response = Client().get(f"{path}/{platform}")

    if get_client(Platform(platform)).connect_method == "credentials":
        assert response.status_code == 200
        assert "<form" in response.content.decode()
    else:
        assert response.status_code == 302, response.content[:300]
        consent = urlsplit(response["Location"])
        assert consent.scheme == "https"
        assert consent.hostname and "sandbox" not in consent.geturl() and consent.hostname != "crosspost.example.com"
        query = parse_qs(consent.query)
        assert query["state"] and "live-client-id" in consent.query
        assert f"https://crosspost.example.com/connect/callback/{platform}" in consent.query.replace(
            "%3A", ":"
        ).replace("%2F", "/")
    assert not SocialAccount.objects.exists()


def test_instagram_connects_the_professional_account_linked_to_the_page(site: str, workspace: Workspace) -> None:
    """INSTAGRAM goes through Facebook Login; the account is the Instagram professional account
    linked to the user's page (not the Facebook user, not the page)."""
    from platforms.sandbox.store import SandboxStore

    url = connect_link_create(workspace_id=workspace.id).url
    consent = requests.get(f"{url}/INSTAGRAM", allow_redirects=False, timeout=10).headers["Location"]
    callback = requests.get(consent, allow_redirects=False, timeout=10).headers["Location"]
    store = SandboxStore("instagram")
    (user,) = store.all("user")
    (page,) = store.all("page")
    (professional,) = store.all("iguser")
    assert page["ig_id"] == professional["id"] and user["pages"] == [page["id"]]

    done = requests.get(callback, timeout=10)

    assert done.status_code == 200, done.text[:300]
    account = SocialAccount.objects.get(workspace=workspace)
    assert (
        account.platform,
        account.external_id,
        account.username,
        account.display_name,
        account.supports_instagram_audio,
        account.page_id,
        account.credentials_extra,
    ) == (
        "INSTAGRAM",
        professional["id"],
        professional["username"],
        professional["name"],
        True,
        "",
        {"page_id": page["id"]},
    )
    assert account.external_id not in (user["id"], page["id"])
    assert f'data-account-id="{account.id}"' in done.text
