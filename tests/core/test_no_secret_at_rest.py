"""After every call that mints or receives a secret, no table holds one in the clear (issue 28,
"secrets at rest"): every column of every table of the database is read, sessions decoded, and
no secret occurs in them, not even as a substring."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterator
from io import StringIO
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.core.management import call_command
from django.db import connection
from oauth2_provider.models import get_application_model
from rest_framework.test import APIClient

from accounts.models import ConnectAttempt, SocialAccount
from platforms.base import Platform
from tests.factories import MembershipFactory, UserFactory
from webhooks.models import Webhook
from workspaces.models import Workspace
from workspaces.services import api_key_create, organization_key_create

pytestmark = pytest.mark.django_db(transaction=True)

CALLBACK = "http://127.0.0.1:8765/callback"


@pytest.fixture
def site(live_server: Any, settings: Any) -> str:
    """The connect pages and the simulators over real HTTP."""
    settings.PUBLIC_BASE_URL = live_server.url
    settings.SANDBOX_BASE_URL = f"{live_server.url}/sandbox"
    return str(live_server.url)


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tasks connecting enqueues are not this test's concern: none reaches a broker."""
    from celery.app.task import Task

    from config.celery import app

    monkeypatch.setattr(app, "send_task", lambda *args, **kwargs: None)
    monkeypatch.setattr(Task, "apply_async", lambda *args, **kwargs: None)


@pytest.fixture
def public_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    real = socket.getaddrinfo

    def fake(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "hooks.example.com":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)


def _bearer(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def _api_keys(workspace: Workspace) -> Iterator[str]:
    yield api_key_create(workspace=workspace, name="service", role="admin").plaintext
    out = StringIO()
    call_command("create_api_key", "--workspace", workspace.name, "--role", "editor", stdout=out)
    yield out.getvalue().strip().splitlines()[-1]
    staff = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw-for-tests-only")
    admin = APIClient()
    admin.force_login(staff)
    added = admin.post(
        "/admin/workspaces/apikey/add/",
        {"workspace": workspace.pk, "name": "from admin", "role": "viewer", "expires_at_0": "", "expires_at_1": ""},
    )
    shown = re.search(r'<code id="new-api-key">(cpk_[^<]+)</code>', added.content.decode())
    assert added.status_code == 200 and shown is not None
    yield shown[1]


def _organization_made_keys(workspace: Workspace) -> Iterator[str]:
    """Issue 31: an organization key, and the workspace keys it mints through the API (plain and
    with an Idempotency-Key, whose stored answer carries the key)."""
    organization_key = organization_key_create(
        organization=workspace.organization, name="builder", role="admin", permissions=["keys.manage"]
    ).plaintext
    yield organization_key
    builder = _bearer(organization_key)
    path = f"/api/v1/workspaces/{workspace.id}/api-keys"
    for headers in ({}, {"Idempotency-Key": "k1"}):
        minted = builder.post(path, {"name": "minted", "role": "viewer"}, format="json", headers=headers)
        assert minted.status_code == 201, minted.json()
        yield minted.json()["key"]


def _webhook_secrets(api: APIClient) -> Iterator[str]:
    created = api.post("/api/v1/webhooks", {"url": "https://hooks.example.com/a"}, format="json")
    yield created.json()["secret"]
    keyed = api.post(
        "/api/v1/webhooks", {"url": "https://hooks.example.com/b"}, format="json", headers={"Idempotency-Key": "w1"}
    )
    yield keyed.json()["secret"]
    for headers in ({}, {"Idempotency-Key": "r1"}):
        rotated = api.post(f"/api/v1/webhooks/{keyed.json()['id']}/rotate-secret", {}, format="json", headers=headers)
        yield rotated.json()["secret"]


def _connect_tokens(api: APIClient) -> Iterator[str]:
    for headers in ({}, {"Idempotency-Key": "c1"}):
        body = api.post("/api/v1/connect-links", {}, format="json", headers=headers).json()
        yield body["token"]
        yield body["url"]


def _platform_tokens(api: APIClient, workspace: Workspace) -> Iterator[str]:
    """Every platform connected through a connect link and its simulator: the tokens the
    platforms gave (read back decrypted), the link tokens and PKCE verifiers of the attempts."""
    link = api.post("/api/v1/connect-links", {}, format="json").json()
    yield link["token"]
    for platform in Platform:
        response = requests.get(f"{link['url']}/{platform.value}", timeout=30)
        assert response.status_code == 200, (platform, response.text[:300])
    accounts = list(SocialAccount.objects.filter(workspace=workspace))
    assert {account.platform for account in accounts} == {platform.value for platform in Platform}
    for account in accounts:
        yield account.access_token
        if account.refresh_token:
            yield account.refresh_token
    for attempt in ConnectAttempt.objects.all():
        yield from (value for value in (attempt.code_verifier, attempt.link_token) if value)


def _member_oauth_tokens(workspace: Workspace) -> Iterator[str]:
    """A member's sign-in through /oauth/authorize and /oauth/token, then a refresh."""
    user: Any = UserFactory(username="member")
    MembershipFactory(user=user, workspace=workspace, role="editor", is_default=True)
    application = get_application_model().objects.create(
        name="cli",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris=CALLBACK,
        skip_authorization=True,
        user=user,
    )
    confidential_secret = "confidential-client-secret-0123456789"
    get_application_model().objects.create(
        name="server app",
        client_type="confidential",
        authorization_grant_type="authorization-code",
        redirect_uris=CALLBACK,
        client_secret=confidential_secret,
        user=user,
    )
    yield confidential_secret
    verifier = "member-pkce-verifier-" + "v" * 40
    yield verifier
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    browser = APIClient()
    browser.force_login(user)
    authorized = browser.get(
        "/oauth/authorize/",
        {
            "response_type": "code",
            "client_id": application.client_id,
            "redirect_uri": CALLBACK,
            "scope": "api",
            "state": "s1",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        },
    )
    code = parse_qs(urlsplit(authorized["Location"]).query)["code"][0]
    yield code
    issued = (
        APIClient()
        .post(
            "/oauth/token/",
            {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": CALLBACK,
                "client_id": application.client_id,
                "code_verifier": verifier,
            },
        )
        .json()
    )
    yield issued["access_token"]
    yield issued["refresh_token"]
    assert _bearer(issued["access_token"]).get("/api/v1/me").status_code == 200
    refreshed = (
        APIClient()
        .post(
            "/oauth/token/",
            {
                "grant_type": "refresh_token",
                "refresh_token": issued["refresh_token"],
                "client_id": application.client_id,
            },
        )
        .json()
    )
    yield refreshed["access_token"]
    yield refreshed["refresh_token"]


def _everything_stored() -> str:
    """Every column of every table as PostgreSQL holds it, and every session decoded."""
    parts = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f"SELECT row_to_json(t)::text FROM {connection.ops.quote_name(table)} t")  # noqa: S608
            parts += [row[0] for row in cursor.fetchall()]
        cursor.execute("SELECT session_data FROM django_session")
        parts += [repr(SessionStore().decode(row[0])) for row in cursor.fetchall()]
    return "\n".join(parts)


def test_no_table_holds_a_secret_minted_or_received_by_any_call(
    site: str, workspace: Workspace, public_dns: None
) -> None:
    keys = [*_api_keys(workspace), *_organization_made_keys(workspace)]
    api = _bearer(keys[0])
    secrets = [
        *keys,
        *_webhook_secrets(api),
        *_connect_tokens(api),
        *_platform_tokens(api, workspace),
        *_member_oauth_tokens(workspace),
    ]
    assert len(secrets) > 40 and all(len(secret) >= 16 for secret in secrets), secrets
    assert Webhook.objects.count() == 2
    stored = _everything_stored()
    assert "whsec_" not in stored  # no webhook secret, not even one this test did not see
    leaked = [secret for secret in secrets if secret in stored]
    assert not leaked, leaked
    # The secret parts of the keys too, on their own.
    assert not [key for key in keys if key.rsplit("_", 1)[1] in stored]
