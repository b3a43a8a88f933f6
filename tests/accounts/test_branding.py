"""Connect-page branding (issue 31): GET/PUT /connect-branding, what POST /connect-links adds
(redirectUrl checked as webhook URLs are, the platforms offered), the branded pages, and the flow
ending on the redirect with its outcome."""

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

from accounts.branding import KEEP_AS_LOGO, contrast_ratio, readable_text_on
from accounts.connect import connect_link_create
from accounts.models import ConnectLink, SocialAccount
from media.models import MediaFile
from platforms.base import Platform
from tests.factories.media import MediaFileFactory
from workspaces.models import Workspace

API = "/api/v1/connect-branding"
LINKS = "/api/v1/connect-links"
ALL = [p.value for p in Platform]
DEFAULTS = {
    "displayName": None,
    "logoUrl": None,
    "accentColor": None,
    "supportUrl": None,
    "platforms": ALL,
    "updatedAt": None,
}


def _logo(workspace: Workspace, **kwargs: Any) -> MediaFile:
    values = {"file_name": "logo.png", "mime_type": "image/png", "kind": "image", "uploaded": True, "size": 2048}
    return MediaFileFactory(workspace=workspace, **{**values, **kwargs})  # type: ignore[no-any-return]


def _denied(response: Any, permission: str, role: str) -> None:
    assert response.status_code == 403
    body = response.json()
    assert (body["code"], body["requiredPermission"], body["role"]) == ("permission_denied", permission, role)


# --- GET / PUT /connect-branding --------------------------------------------------------------


@pytest.mark.django_db
def test_defaults_then_a_full_branding_round_trip(api: APIClient, workspace: Workspace) -> None:
    assert api.get(API).json() == DEFAULTS
    logo = _logo(workspace)
    body = {
        "displayName": "  Acme Scheduler ",
        "logoUrl": logo.public_url,
        "accentColor": "#FA0",
        "supportUrl": "https://help.acme.example/connect",
        "platforms": ["MASTODON", "BLUESKY", "FACEBOOK"],
    }

    response = api.put(API, body, format="json")

    assert response.status_code == 200, response.json()
    answer = response.json()
    assert answer == {
        "displayName": "Acme Scheduler",
        "logoUrl": logo.public_url,
        "accentColor": "#ffaa00",
        "supportUrl": "https://help.acme.example/connect",
        "platforms": ["FACEBOOK", "BLUESKY", "MASTODON"],  # the usual order
        "updatedAt": answer["updatedAt"],
    }
    assert answer["updatedAt"] is not None
    assert api.get(API).json() == answer
    logo.refresh_from_db()
    assert logo.keep_until == KEEP_AS_LOGO  # the media lifecycle keeps it while it is the logo

    # Replaced whole: omitted fields go back to their defaults, the old logo gets the usual grace.
    cleared = api.put(API, {"displayName": "Acme"}, format="json").json()
    assert cleared == {**DEFAULTS, "displayName": "Acme", "updatedAt": cleared["updatedAt"]}
    logo.refresh_from_db()
    assert logo.keep_until is not None and logo.keep_until < timezone.now() + dt.timedelta(days=8)


@pytest.mark.django_db
def test_put_reports_every_problem_naming_its_field(api: APIClient, workspace: Workspace) -> None:
    video = _logo(workspace, file_name="clip.mp4", mime_type="video/mp4", kind="video")
    response = api.put(
        API,
        {
            "logoUrl": video.public_url,
            "accentColor": "blue",
            "supportUrl": "http://help.acme.example",
            "platforms": ["MASTODON", "MASTODON"],
        },
        format="json",
    )
    assert response.status_code == 400
    messages = response.json()["message"]
    assert any(m.startswith("accentColor") for m in messages)
    assert any(m.startswith("supportUrl") for m in messages)
    assert any(m.startswith("platforms") and "repeat" in m for m in messages)
    assert any(m.startswith("logoUrl") and "video/mp4" in m for m in messages)
    assert api.get(API).json() == DEFAULTS  # nothing was stored

    big = _logo(workspace, size=1024 * 1024 + 1)
    too_big = api.put(API, {"logoUrl": big.public_url}, format="json")
    assert too_big.status_code == 400 and "at most 1048576 bytes" in str(too_big.json()["message"])
    empty = api.put(API, {"platforms": []}, format="json")
    assert empty.status_code == 400 and "at least one platform" in str(empty.json()["message"])
    unknown = api.put(API, {"platforms": ["MYSPACE"]}, format="json")
    assert unknown.status_code == 400 and "platforms" in str(unknown.json()["message"])


@pytest.mark.django_db
def test_a_logo_of_another_workspace_or_not_uploaded_is_media_not_found(
    api: APIClient, workspace: Workspace, other_workspace: Workspace
) -> None:
    theirs = _logo(other_workspace)
    pending = MediaFileFactory(workspace=workspace, file_name="l.png", mime_type="image/png")  # never PUT
    for url in (theirs.public_url, pending.public_url, "https://elsewhere.example/logo.png"):
        response = api.put(API, {"logoUrl": url}, format="json")
        assert (response.status_code, response.json()["code"]) == (400, "media_not_found"), url
        assert response.json()["message"][0].startswith("logoUrl")


@pytest.mark.django_db
def test_permissions_and_workspace_scoping(
    client_for: Callable[..., APIClient], anon: APIClient, workspace: Workspace, other_workspace: Workspace
) -> None:
    _denied(client_for("editor").put(API, {"displayName": "X"}, format="json"), "accounts.manage", "editor")
    for role in ("viewer", "contributor", "editor"):
        assert client_for(role).get(API).status_code == 200
    assert (anon.get(API).status_code, anon.put(API, {}, format="json").status_code) == (401, 401)
    assert client_for("admin").put(API, {"displayName": "Mine"}, format="json").status_code == 200
    # Another workspace's key sees (and changes) only its own branding.
    theirs = client_for("admin", other_workspace)
    assert theirs.get(API).json() == DEFAULTS
    assert theirs.put(API, {"displayName": "Theirs"}, format="json").status_code == 200
    assert client_for("viewer").get(API).json()["displayName"] == "Mine"
    unknown = client_for("admin").get(f"{API}?x=1")
    assert unknown.status_code == 400


def test_button_text_contrast_holds_for_any_accent() -> None:
    for accent in ("#ffff00", "#000000", "#777777", "#1d4ed8", "#ffaa00", "#00ff00", "#ffffff", "#808080"):
        assert contrast_ratio(accent, readable_text_on(accent)) >= 4.5, accent


# --- POST /connect-links: redirectUrl and platforms -------------------------------------------


@pytest.mark.django_db
def test_link_with_redirect_and_platforms(api: APIClient, settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    response = api.post(
        LINKS, {"redirectUrl": "https://93.184.215.14/Done?x=1", "platforms": ["BLUESKY", "MASTODON"]}, format="json"
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["redirectUrl"], body["platforms"]) == ("https://93.184.215.14/Done?x=1", ["BLUESKY", "MASTODON"])
    link = ConnectLink.objects.get()
    assert (link.redirect_url, link.platforms) == ("https://93.184.215.14/Done?x=1", ["BLUESKY", "MASTODON"])
    plain = api.post(LINKS, format="json").json()  # an empty body still works
    assert (plain["redirectUrl"], plain["platforms"]) == (None, ALL)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/done",
        "http://10.0.0.7/done",
        "http://[::1]/done",
        "http://169.254.169.254/latest",
        "http://2130706433/",
        "https://user:pw@93.184.215.14/",
        "ftp://93.184.215.14/",
        "http://localhost/",
        "not a url",
    ],
)
def test_a_private_or_malformed_redirect_is_refused_as_webhook_urls_are(
    api: APIClient, settings: Any, url: str
) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False  # as in live mode
    response = api.post(LINKS, {"redirectUrl": url}, format="json")
    assert (response.status_code, response.json()["code"]) == (400, "invalid_redirect_url"), response.json()
    assert response.json()["message"][0].startswith("redirectUrl")
    assert not ConnectLink.objects.exists()


@pytest.mark.django_db
def test_loopback_redirect_is_admitted_only_where_webhooks_admit_it(api: APIClient, settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # sandbox, local testing
    assert api.post(LINKS, {"redirectUrl": "http://127.0.0.1:8000/done"}, format="json").status_code == 201


@pytest.mark.django_db
def test_link_platforms_must_be_offered_by_the_branding(api: APIClient, client_for: Callable[..., APIClient]) -> None:
    api.put(API, {"platforms": ["MASTODON", "BLUESKY"]}, format="json")
    refused = api.post(LINKS, {"platforms": ["TIKTOK"]}, format="json")
    assert (refused.status_code, refused.json()["code"]) == (400, "platform_not_offered")
    assert "TIKTOK" in refused.json()["message"][0]
    assert api.post(LINKS, format="json").json()["platforms"] == ["BLUESKY", "MASTODON"]
    _denied(client_for("editor").post(LINKS, {"platforms": ["BLUESKY"]}, format="json"), "accounts.manage", "editor")


# --- the pages -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_pages_wear_the_branding_and_offer_only_its_platforms(
    api: APIClient, workspace: Workspace, other_workspace: Workspace
) -> None:
    logo = _logo(workspace)
    api.put(
        API,
        {
            "displayName": "Acme <Scheduler>",
            "logoUrl": logo.public_url,
            "accentColor": "#ffd700",
            "supportUrl": "https://help.acme.example/",
            "platforms": ["MASTODON", "BLUESKY", "TIKTOK"],
        },
        format="json",
    )
    url = connect_link_create(workspace_id=workspace.id, platforms=["MASTODON", "BLUESKY"]).url
    path = urlsplit(url).path
    page = Client().get(path)
    html = page.content.decode()
    assert page.status_code == 200
    assert f'<img src="{logo.public_url}" alt="Acme &lt;Scheduler&gt;">' in html
    assert "--accent: #ffd700; --accent-text: #000000;" in html
    assert 'href="https://help.acme.example/"' in html
    assert re.findall(r'data-platform="([A-Z_]+)"', html) == ["BLUESKY", "MASTODON"]
    assert "<title>Connect your accounts · Acme &lt;Scheduler&gt;</title>" in html

    not_offered = Client().get(f"{path}/TIKTOK")
    assert not_offered.status_code == 404 and "Acme &lt;Scheduler&gt;" in not_offered.content.decode()
    unbranded = Client().get(urlsplit(connect_link_create(workspace_id=other_workspace.id).url).path)
    assert "<header" not in unbranded.content.decode() and unbranded.content.decode().count("data-platform=") == 12


# --- the flow ending on the redirect (real HTTP: pages, simulators) ------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("platform", ["MASTODON", "BLUESKY"])  # OAuth with a callback; credentials at once
def test_the_flow_ends_on_the_redirect_with_the_outcome_and_the_account_id(
    site: str, workspace: Workspace, settings: Any, platform: str
) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # the redirect target is this test's own server
    link = connect_link_create(workspace_id=workspace.id, redirect_url=f"{site}/healthz?from=builder&outcome=x")

    final = requests.get(f"{link.url}/{platform}", timeout=30)

    assert final.status_code == 200
    assert final.history[-1].status_code == 303
    target = urlsplit(final.url)
    assert f"{target.scheme}://{target.netloc}{target.path}" == f"{site}/healthz"
    account = SocialAccount.objects.get(workspace=workspace, platform=platform)
    assert parse_qs(target.query) == {
        "from": ["builder"],
        "outcome": ["connected"],  # ours replaces the builder's own parameter of that name
        "platform": [platform],
        "accountId": [account.id],
        "accountIds": [account.id],
    }


@pytest.mark.django_db(transaction=True)
def test_a_declined_consent_ends_on_the_redirect_with_an_error(site: str, workspace: Workspace, settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    link = connect_link_create(workspace_id=workspace.id, redirect_url=f"{site}/healthz")
    consent = requests.get(f"{link.url}/MASTODON", allow_redirects=False, timeout=30)
    assert consent.status_code == 302
    state = parse_qs(urlsplit(consent.headers["Location"]).query)["state"][0]

    declined = requests.get(
        f"{site}/connect/callback/MASTODON",
        params={"state": state, "error": "access_denied", "error_description": "The user said no"},
        allow_redirects=False,
        timeout=30,
    )

    assert declined.status_code == 303
    query = parse_qs(urlsplit(declined.headers["Location"]).query)
    assert query == {"outcome": ["error"], "error": ["connection_declined"], "platform": ["MASTODON"]}
    assert not SocialAccount.objects.filter(workspace=workspace).exists()
    # A platform the link does not offer: the same way back, error not_offered.
    narrowed = connect_link_create(workspace_id=workspace.id, redirect_url=f"{site}/healthz", platforms=["BLUESKY"])
    refused = requests.get(f"{narrowed.url}/MASTODON", allow_redirects=False, timeout=30)
    assert refused.status_code == 303
    assert parse_qs(urlsplit(refused.headers["Location"]).query)["error"] == ["not_offered"]


def test_a_link_body_may_be_left_out_but_not_sent_as_null_or_a_list(api: APIClient) -> None:
    assert api.post(LINKS).status_code == 201  # no body at all: every default
    assert api.post(LINKS, {}, format="json").status_code == 201
    for body in ("null", "[]", '"x"'):
        response = api.post(LINKS, body, content_type="application/json")
        assert response.status_code == 400, (body, response.json())
