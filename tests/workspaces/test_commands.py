from __future__ import annotations

import os
import subprocess
import sys
from io import StringIO
from urllib.parse import quote

import pytest
import requests
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection
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


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rate-limit", "0"], "--rate-limit must be at least 1"),
        (["--expires-in-days", "0"], "--expires-in-days must be at least 1"),
        (["--expires-in-days", "-3"], "--expires-in-days must be at least 1"),
    ],
)
def test_bad_numbers_are_refused_before_anything_is_written(args, message):
    with pytest.raises(CommandError, match=message):
        _create("--workspace", "Never", "--role", "admin", "--create-workspace", *args)
    assert not Workspace.objects.filter(name="Never").exists()
    assert not ApiKey.objects.exists()


def test_revoking_twice_keeps_the_first_time():
    key = _create("--workspace", "Twice", "--role", "viewer", "--create-workspace")
    call_command("revoke_api_key", key, stdout=StringIO())
    first = ApiKey.objects.get().revoked_at
    out = StringIO()
    call_command("revoke_api_key", key.rsplit("_", 1)[0] if key.count("_") == 2 else key, stdout=out)
    assert ApiKey.objects.get().revoked_at == first
    assert "revoked cpk_" in out.getvalue()


def test_printed_output_has_the_key_only_on_its_last_line():
    out = StringIO()
    call_command("create_api_key", "--workspace", "Out", "--role", "admin", "--create-workspace", stdout=out)
    lines = out.getvalue().strip().splitlines()
    assert lines[-1].startswith("cpk_") and all("cpk_" not in line for line in lines[:-1])


def _manage(*args: str) -> subprocess.CompletedProcess[str]:
    """``manage.py`` in its own process against this test's database and Redis, the way an
    operator runs it in a second shell while the web process serves requests."""
    database = connection.settings_dict
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "TEST_"))}
    env.update(
        DATABASE_URL=f"postgres://{database['USER']}@{quote(database['HOST'], safe='')}/{database['NAME']}",
        REDIS_URL=settings.REDIS_URL,
        PLATFORM_MODE="sandbox",
    )
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


@pytest.mark.django_db(transaction=True)
def test_commands_act_on_the_running_service(live_server):
    """create_api_key and revoke_api_key, run as separate processes while the service runs,
    change what the running service answers at once (no restart, no cache)."""
    created = _manage(
        "create_api_key", "--workspace", "Live", "--role", "editor", "--create-workspace", "--rate-limit", "9"
    )
    key = created.stdout.strip().splitlines()[-1]
    me = requests.get(f"{live_server.url}/api/v1/me", headers={"Authorization": f"Bearer {key}"}, timeout=30)
    assert me.status_code == 200
    assert me.json()["workspace"]["name"] == "Live" and me.json()["role"]["key"] == "editor"
    assert (me.headers["RateLimit-Limit"], me.headers["RateLimit-Policy"]) == ("9", "9;w=60")
    public_part = "_".join(key.split("_", 2)[:2])
    _manage("revoke_api_key", public_part)
    gone = requests.get(f"{live_server.url}/api/v1/me", headers={"Authorization": f"Bearer {key}"}, timeout=30)
    assert gone.status_code == 401


def test_a_workspace_name_two_organizations_use_needs_the_organization_or_the_id():
    from workspaces.models import Organization

    first = Organization.objects.create(name="Builder One")
    second = Organization.objects.create(name="Builder Two")
    a = Workspace.objects.create(organization=first, name="Acme")
    b = Workspace.objects.create(organization=second, name="Acme")
    with pytest.raises(CommandError, match="2 workspaces are named 'Acme'") as refused:
        _create("--workspace", "Acme", "--role", "admin")
    assert a.id in str(refused.value) and b.id in str(refused.value)
    assert not ApiKey.objects.filter(workspace__name="Acme").exists()  # nothing issued

    key = _create("--workspace", "Acme", "--organization", "Builder Two", "--role", "admin")
    assert ApiKey.objects.get(workspace=b).role == "admin" and not ApiKey.objects.filter(workspace=a).exists()
    assert _me(key).status_code == 200
    by_id = _create("--workspace", a.id, "--role", "viewer")
    assert ApiKey.objects.get(workspace=a).role == "viewer" and _me(by_id).status_code == 200


def test_creating_in_an_organization_never_takes_another_organizations_workspace_of_the_name():
    from workspaces.models import Organization

    theirs = Organization.objects.create(name="Theirs")
    Organization.objects.create(name="Ours")
    other = Workspace.objects.create(organization=theirs, name="Shop")
    _create("--workspace", "Shop", "--organization", "Ours", "--role", "admin", "--create-workspace")
    ours = Workspace.objects.get(organization__name="Ours", name="Shop")
    assert ours.id != other.id
    assert ApiKey.objects.filter(workspace=ours).count() == 1 and not ApiKey.objects.filter(workspace=other).exists()
    with pytest.raises(CommandError, match="no workspace named 'Nope' in organization 'Ours'"):
        _create("--workspace", "Nope", "--organization", "Ours", "--role", "admin")
