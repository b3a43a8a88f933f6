from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from workspaces.models import ApiKey, Workspace

pytestmark = pytest.mark.django_db


def _create(*args: str) -> str:
    out = StringIO()
    call_command("create_api_key", *args, stdout=out)
    return out.getvalue().strip().splitlines()[-1]


def _me(key: str):
    return APIClient().get("/api/v1/me", headers={"Authorization": f"Bearer {key}"})


def test_create_api_key_prints_a_working_key_last():
    key = _create("--workspace", "Acme", "--role", "editor", "--create-workspace", "--rate-limit", "7")
    response = _me(key)
    assert response.status_code == 200
    assert response.json()["workspace"]["name"] == "Acme"
    assert response["RateLimit-Limit"] == "7"
    assert response["RateLimit-Policy"] == "7;w=60"
    again = _create("--workspace", "Acme", "--role", "viewer", "--create-workspace")
    assert Workspace.objects.filter(name="Acme").count() == 1
    assert _me(again).json()["role"]["key"] == "viewer"


def test_create_api_key_needs_an_existing_workspace_without_the_flag():
    with pytest.raises(CommandError):
        _create("--workspace", "Nope", "--role", "admin")


def test_expiring_key():
    key = _create("--workspace", "Exp", "--role", "admin", "--create-workspace", "--expires-in-days", "3")
    assert _me(key).json()["expiresAt"].endswith("Z")


@pytest.mark.parametrize("form", ["whole", "public"])
def test_revoke_by_whole_key_or_public_part(form):
    key = _create("--workspace", "Rev", "--role", "admin", "--create-workspace")
    argument = (
        key if form == "whole" else key.rsplit("_", 1)[0] if key.count("_") == 2 else "_".join(key.split("_")[:2])
    )
    call_command("revoke_api_key", argument, stdout=StringIO())
    assert _me(key).status_code == 401
    assert ApiKey.objects.get().revoked_at is not None


def test_revoke_unknown_key():
    with pytest.raises(CommandError):
        call_command("revoke_api_key", "cpk_doesnotexist", stdout=StringIO())
