"""No API key or OAuth token ever reaches a log line, whatever happens to the request."""

from __future__ import annotations

import logging
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from rest_framework.test import APIClient

from tests.factories import MembershipFactory, UserFactory
from tests.workspaces.test_auth import _oauth_client
from workspaces.services import api_key_create, api_key_revoke

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.core.urls")]


def _everything_logged(caplog: pytest.LogCaptureFixture) -> str:
    parts = [caplog.text]
    for record in caplog.records:
        parts += [record.getMessage(), repr(record.args), repr(record.__dict__)]
    return "\n".join(parts)


def test_keys_and_tokens_never_reach_the_logs(caplog, workspace, other_workspace, client):
    caplog.set_level(logging.DEBUG)
    out = StringIO()
    call_command("create_api_key", "--workspace", workspace.name, "--role", "viewer", stdout=out)
    from_command = out.getvalue().strip().splitlines()[-1]
    admin_key = api_key_create(workspace=workspace, name="admin", role="admin").plaintext
    revoked = api_key_create(workspace=workspace, name="gone", role="admin").plaintext
    api_key_revoke(key_or_public_part=revoked)
    user = UserFactory()
    MembershipFactory(user=user, workspace=workspace, is_default=True)
    oauth = _oauth_client(user)
    oauth_token = oauth._credentials["HTTP_AUTHORIZATION"].split(" ", 1)[1]

    secrets = [from_command, admin_key, revoked, oauth_token]
    for key in (from_command, admin_key, revoked):
        bearer = APIClient()
        bearer.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        bearer.get("/api/v1/me")
        bearer.get("/api/v1/me", headers={"X-Workspace-Id": other_workspace.id})
        bearer.get("/api/v1/_test/needs/accounts.manage")
        bearer.get("/api/v1/_test/boom")  # a 500 with its traceback logged
        bearer.post("/api/v1/_test/out-of-range", {"value": 10**9}, format="json")
        bearer.get("/api/v1/social-posts/%00")
        bearer.get("/api/v1/nowhere")
        wrong = APIClient()
        wrong.credentials(HTTP_AUTHORIZATION=f"Bearer {key[:-4]}abcd")
        wrong.get("/api/v1/me")
    oauth.get("/api/v1/me")
    oauth.get("/api/v1/_test/boom")

    staff = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw-for-tests-only")
    client.force_login(staff)
    client.post(
        "/admin/workspaces/apikey/add/",
        {"workspace": workspace.pk, "name": "from admin", "role": "editor", "expires_at_0": "", "expires_at_1": ""},
        follow=True,
    )

    logged = _everything_logged(caplog)
    assert "Internal Server Error" in logged  # the 500s were logged, so the check below means something
    for secret in secrets:
        lookup, _, secret_part = (
            secret.partition("_")[2].partition("_") if secret.startswith("cpk_") else ("", "", secret)
        )
        assert secret_part not in logged
        assert secret not in logged
