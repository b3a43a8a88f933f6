"""GET /social-accounts, POST /social-accounts/{id}/check and the helper lookups."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from accounts.models import SocialAccount
from platforms.base import Platform
from platforms.sandbox.store import SandboxStore
from tests.accounts.conftest import revoke, unauthorized_events
from tests.factories.accounts import SocialAccountFactory
from workspaces.models import Workspace

LIST = "/api/v1/social-accounts"


def _denied(response: Any, permission: str, role: str) -> None:
    assert response.status_code == 403
    body = response.json()
    assert (body["code"], body["requiredPermission"], body["role"]) == ("permission_denied", permission, role)


# --- list ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_list_renders_every_account_and_never_a_token(
    api: APIClient, workspace: Workspace, other_workspace: Workspace
) -> None:
    mastodon = SocialAccountFactory(workspace=workspace, platform="MASTODON", username="alice", avatar_url="")
    page = SocialAccountFactory(
        workspace=workspace,
        platform="FACEBOOK",
        external_id="6100001",
        page_id="6100001",
        username="",
        avatar_url="https://cdn.example/p.jpg",
        status="unauthorized",
        unauthorized_reason="Error validating access token",
    )
    insta = SocialAccountFactory(workspace=workspace, platform="INSTAGRAM", supports_instagram_audio=True)
    SocialAccountFactory(workspace=other_workspace)

    response = api.get(LIST)

    assert response.status_code == 200

    def stamp(a: SocialAccount) -> str:
        return a.connected_at.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    assert response.json() == {
        "accounts": [
            {
                "id": mastodon.id,
                "platform": "MASTODON",
                "displayName": mastodon.display_name,
                "username": "alice",
                "avatarUrl": None,
                "status": "active",
                "unauthorizedReason": None,
                "pageId": None,
                "supportsInstagramAudio": False,
                "connectedAt": stamp(mastodon),
            },
            {
                "id": page.id,
                "platform": "FACEBOOK",
                "displayName": page.display_name,
                "username": None,
                "avatarUrl": "https://cdn.example/p.jpg",
                "status": "unauthorized",
                "unauthorizedReason": "Error validating access token",
                "pageId": "6100001",
                "supportsInstagramAudio": False,
                "connectedAt": stamp(page),
            },
            {
                "id": insta.id,
                "platform": "INSTAGRAM",
                "displayName": insta.display_name,
                "username": insta.username,
                "avatarUrl": None,
                "status": "active",
                "unauthorizedReason": None,
                "pageId": None,
                "supportsInstagramAudio": True,
                "connectedAt": stamp(insta),
            },
        ]
    }
    for account in (mastodon, page, insta):
        assert account.access_token not in response.content.decode()


@pytest.mark.django_db
def test_list_uses_a_fixed_number_of_queries(api: APIClient, workspace: Workspace) -> None:
    SocialAccountFactory(workspace=workspace)
    api.get(LIST)  # warm up (key lookup caches and the like)
    with CaptureQueriesContext(connection) as one:
        assert api.get(LIST).status_code == 200
    SocialAccountFactory.create_batch(6, workspace=workspace)
    with CaptureQueriesContext(connection) as seven:
        assert len(api.get(LIST).json()["accounts"]) == 7
    assert len(seven) == len(one)


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["admin", "editor", "contributor", "viewer"])
def test_every_role_may_list(client_for: Callable[..., APIClient], role: str) -> None:
    assert client_for(role).get(LIST).json() == {"accounts": []}


@pytest.mark.django_db
def test_list_errors(anon: APIClient, api: APIClient) -> None:
    assert anon.get(LIST).status_code == 401
    response = api.get(LIST, {"limit": "5"})
    assert response.status_code == 400
    assert response.json()["message"] == ["property limit should not exist"]


# --- check --------------------------------------------------------------------------------


def _check(client: APIClient, id_or_page_id: str) -> Any:
    return client.post(f"{LIST}/{id_or_page_id}/check", {}, format="json")


@pytest.mark.django_db(transaction=True)
def test_check_facebook_page_by_id_and_by_page_id_through_both_outcomes(
    site: str, api: APIClient, workspace: Workspace, connect_account: Callable[..., SocialAccount]
) -> None:
    account = connect_account("FACEBOOK", workspace)
    assert account.page_id

    ok = _check(api, account.id)
    assert ok.status_code == 200, ok.json()
    body = ok.json()
    assert body.pop("checkedAt").endswith("Z")
    assert body == {
        "id": account.id,
        "platform": "FACEBOOK",
        "displayName": account.display_name,
        "pageId": account.page_id,
        "status": "active",
        "unauthorizedReason": None,
    }

    revoke(site, Platform.FACEBOOK, account.page_id)
    rejected = _check(api, account.page_id)
    assert rejected.status_code == 200
    body = rejected.json()
    assert (body["id"], body["status"]) == (account.id, "unauthorized")
    assert body["unauthorizedReason"]
    assert _check(api, account.id).json()["status"] == "unauthorized"  # again: no second event
    account.refresh_from_db()
    assert unauthorized_events(workspace.id) == [
        {
            "account": {
                "id": account.id,
                "platform": "FACEBOOK",
                "displayName": account.display_name,
                "pageId": account.page_id,
                "status": "unauthorized",
                "reason": account.unauthorized_reason,
            }
        }
    ]
    listed = api.get(LIST).json()["accounts"][0]
    assert (listed["status"], listed["unauthorizedReason"]) == ("unauthorized", account.unauthorized_reason)

    revoke(site, Platform.FACEBOOK, account.page_id, revoked=False)
    cleared = _check(api, account.page_id).json()
    assert (cleared["id"], cleared["status"], cleared["unauthorizedReason"]) == (account.id, "active", None)
    assert len(unauthorized_events(workspace.id)) == 1

    revoke(site, Platform.FACEBOOK, account.page_id)  # a new transition emits again
    assert _check(api, account.id).json()["status"] == "unauthorized"
    assert len(unauthorized_events(workspace.id)) == 2


@pytest.mark.django_db
def test_check_refuses_other_platforms(api: APIClient, workspace: Workspace) -> None:
    account = SocialAccountFactory(workspace=workspace, platform="MASTODON")
    response = _check(api, account.id)
    assert response.status_code == 400
    assert response.json()["code"] == "not_facebook_page"


@pytest.mark.django_db
def test_check_not_found_anywhere_else(
    api: APIClient, anon: APIClient, client_for: Callable[..., APIClient], other_workspace: Workspace
) -> None:
    foreign = SocialAccountFactory(workspace=other_workspace, platform="FACEBOOK", page_id="777", external_id="777")
    for target in ("acc_missing", foreign.id, "777"):
        response = _check(api, target)
        assert response.status_code == 404
        assert response.json()["message"] == "Account not found"
    assert _check(anon, foreign.id).status_code == 401
    for role in ("editor", "contributor", "viewer"):
        _denied(_check(client_for(role), "acc_missing"), "accounts.manage", role)


# --- pinterest boards ---------------------------------------------------------------------


def _boards(client: APIClient, account_id: str, **params: str) -> Any:
    return client.get(f"{LIST}/{account_id}/pinterest-boards", params)


@pytest.mark.django_db(transaction=True)
def test_pinterest_boards_lists_every_board_secret_ones_included(
    site: str, client_for: Callable[..., APIClient], workspace: Workspace, connect_account: Callable[..., SocialAccount]
) -> None:
    account = connect_account("PINTEREST", workspace)
    store = SandboxStore("pinterest")
    user = store.get("user", account.external_id)
    assert user is not None
    expected = [
        {"id": b["id"], "name": b["name"], "description": b["description"], "privacy": b["privacy"]}
        for b in (store.get("board", board_id) for board_id in user["boards"])
        if b is not None
    ]
    assert "SECRET" in {b["privacy"] for b in expected}

    response = _boards(client_for("contributor"), account.id)

    assert response.status_code == 200
    assert response.json() == {"boards": expected}


@pytest.mark.django_db(transaction=True)
def test_pinterest_boards_refused_when_the_token_is_rejected(
    site: str, api: APIClient, workspace: Workspace, connect_account: Callable[..., SocialAccount]
) -> None:
    account = connect_account("PINTEREST", workspace)
    revoke(site, Platform.PINTEREST, account.external_id)

    response = _boards(api, account.id)

    assert response.status_code == 400
    assert response.json()["code"] == "account_unauthorized"
    account.refresh_from_db()
    assert account.status == "unauthorized"
    assert len(unauthorized_events(workspace.id)) == 1


@pytest.mark.django_db
def test_pinterest_boards_errors(
    api: APIClient,
    anon: APIClient,
    client_for: Callable[..., APIClient],
    workspace: Workspace,
    other_workspace: Workspace,
) -> None:
    mastodon = SocialAccountFactory(workspace=workspace, platform="MASTODON")
    foreign = SocialAccountFactory(workspace=other_workspace, platform="PINTEREST")
    for target in (mastodon.id, foreign.id, "acc_missing"):
        response = _boards(api, target)
        assert response.status_code == 404
        assert response.json()["message"] == "Account not found"
    assert _boards(anon, foreign.id).status_code == 401
    _denied(_boards(client_for("viewer"), mastodon.id), "posts.draft", "viewer")
    assert _boards(api, mastodon.id, x="1").status_code == 400


# --- instagram audio ----------------------------------------------------------------------


def _audio(client: APIClient, account_id: str, **params: str) -> Any:
    return client.get(f"{LIST}/{account_id}/instagram-audio", params)


@pytest.mark.django_db(transaction=True)
def test_instagram_audio_search(
    site: str, client_for: Callable[..., APIClient], workspace: Workspace, connect_account: Callable[..., SocialAccount]
) -> None:
    account = connect_account("INSTAGRAM", workspace)
    assert account.supports_instagram_audio  # connected through FACEBOOK login: audio search works
    editor = client_for("contributor")

    trending = _audio(editor, account.id, audioType="music")
    assert trending.status_code == 200, trending.json()
    items = trending.json()["audio"]
    assert items
    for item in items:
        assert set(item) == {"audioId", "title", "artist", "durationMs", "coverUrl", "audioType"}
        assert item["audioType"] == "music"
    found = _audio(editor, account.id, audioType="original_sound", searchQuery="sandbox")
    assert found.status_code == 200
    assert all(item["audioType"] == "original_sound" for item in found.json()["audio"])

    revoke(site, Platform.INSTAGRAM, account.external_id)
    rejected = _audio(editor, account.id, audioType="music")
    assert rejected.status_code == 400
    assert rejected.json()["code"] == "audio_search_rejected"


@pytest.mark.django_db
def test_instagram_audio_errors(
    api: APIClient,
    anon: APIClient,
    client_for: Callable[..., APIClient],
    workspace: Workspace,
    other_workspace: Workspace,
) -> None:
    insta = SocialAccountFactory(workspace=workspace, platform="INSTAGRAM", supports_instagram_audio=True)
    no_audio = SocialAccountFactory(workspace=workspace, platform="INSTAGRAM", supports_instagram_audio=False)
    mastodon = SocialAccountFactory(workspace=workspace, platform="MASTODON")
    foreign = SocialAccountFactory(workspace=other_workspace, platform="INSTAGRAM", supports_instagram_audio=True)

    for params, message in (
        ({}, "audioType: This field is required."),
        ({"audioType": "jazz"}, 'audioType: "jazz" is not a valid choice.'),
        (
            {"audioType": "music", "searchQuery": "x" * 101},
            "searchQuery: Ensure this field has no more than 100 characters.",
        ),
        ({"audioType": "music", "q": "x"}, "property q should not exist"),
    ):
        response = _audio(api, insta.id, **params)
        assert response.status_code == 400
        assert response.json()["message"] == [message]
    for account in (no_audio, mastodon):
        response = _audio(api, account.id, audioType="music")
        assert response.status_code == 400
        assert response.json()["code"] == "instagram_audio_unavailable"
    for target in (foreign.id, "acc_missing"):
        response = _audio(api, target, audioType="music")
        assert (response.status_code, response.json()["message"]) == (404, "Account not found")
    assert _audio(anon, insta.id, audioType="music").status_code == 401
    _denied(_audio(client_for("viewer"), insta.id, audioType="music"), "posts.draft", "viewer")


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_platform_is_a_502_that_changes_nothing(
    site: str,
    api: APIClient,
    workspace: Workspace,
    connect_account: Callable[..., SocialAccount],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = connect_account("FACEBOOK", workspace)
    pinner = connect_account("PINTEREST", workspace)
    reels = connect_account("INSTAGRAM", workspace)
    for platform in ("FACEBOOK", "PINTEREST", "INSTAGRAM"):
        monkeypatch.setitem(settings.PLATFORM_APP_ENV, f"PLATFORM_{platform}_BASE_URL", "http://127.0.0.1:9")

    for response, platform in (
        (_check(api, page.page_id), "FACEBOOK"),
        (_boards(api, pinner.id), "PINTEREST"),
        (_audio(api, reels.id, audioType="music"), "INSTAGRAM"),
    ):
        assert response.status_code == 502
        assert response.json() == {
            "statusCode": 502,
            "error": "Bad Gateway",
            "message": f"{platform} could not be reached; try again later",
            "code": "platform_unavailable",
        }
    assert set(SocialAccount.objects.values_list("status", flat=True)) == {"active"}
    assert unauthorized_events(workspace.id) == []


@pytest.fixture
def refusing_server() -> Any:
    """A local HTTP server refusing every request with 403 and a platform-style JSON body."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            body = json.dumps({"code": 29, "message": "You are not permitted to access that resource."}).encode()
            self.send_response(403)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.django_db(transaction=True)
def test_a_board_request_the_platform_refuses_is_a_400_that_keeps_the_account(
    site: str,
    api: APIClient,
    workspace: Workspace,
    connect_account: Callable[..., SocialAccount],
    monkeypatch: pytest.MonkeyPatch,
    refusing_server: str,
) -> None:
    account = connect_account("PINTEREST", workspace)
    monkeypatch.setitem(settings.PLATFORM_APP_ENV, "PLATFORM_PINTEREST_BASE_URL", refusing_server)

    response = _boards(api, account.id)

    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "board_request_refused"
    assert "not permitted" in body["message"]
    assert account.access_token not in response.content.decode()
    account.refresh_from_db()
    assert account.status == "active"
    assert unauthorized_events(workspace.id) == []


@pytest.mark.django_db(transaction=True)
def test_an_audio_search_the_platform_rejects_is_a_400_that_keeps_the_account(
    site: str, api: APIClient, workspace: Workspace, connect_account: Callable[..., SocialAccount]
) -> None:
    account = connect_account("INSTAGRAM", workspace)
    # The token stays valid, but the platform refuses the search for an account it does not know.
    SocialAccount.objects.filter(id=account.id).update(external_id="17841400000000000")

    response = _audio(api, account.id, audioType="music")

    assert response.status_code == 400
    assert response.json()["code"] == "audio_search_rejected"
    account.refresh_from_db()
    assert account.status == "active"
    assert unauthorized_events(workspace.id) == []
