from __future__ import annotations

import datetime as dt
import re

import pytest
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.contrib.sessions.models import Session

from workspaces.models import ApiKey

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):
    user = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw-for-tests-only")
    client.force_login(user)
    return client


def test_creating_a_key_in_the_admin_shows_it_once_and_stores_the_hash(staff, workspace, anon):
    response = staff.post(
        "/admin/workspaces/apikey/add/",
        {"workspace": workspace.pk, "name": "from admin", "role": "editor", "expires_at_0": "", "expires_at_1": ""},
    )
    # The key is on the page answering the add, and nowhere else: not in a message waiting in the
    # session (a database row) for a page to show it, nor in a messages cookie the browser keeps.
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    found = re.search(r'<code id="new-api-key">(cpk_[^<]+)</code>', response.content.decode())
    assert found is not None
    plaintext = found[1]
    assert not [m for m in get_messages(response.wsgi_request) if "cpk_" in str(m)]
    assert not staff.cookies.get("messages") or not staff.cookies["messages"].value
    stored_sessions = [s.get_decoded() for s in Session.objects.all()]
    assert stored_sessions and plaintext.split("_", 2)[2] not in repr(stored_sessions)
    key = ApiKey.objects.get(name="from admin")
    assert plaintext.split("_", 2)[2] not in key.secret_hash
    me = anon.get("/api/v1/me", headers={"Authorization": f"Bearer {plaintext}"})
    assert me.status_code == 200 and me.json()["role"]["key"] == "editor"


def test_revoke_action_and_search(staff, workspace, make_key, anon):
    plaintext = make_key("viewer", workspace)
    key = ApiKey.objects.get()
    staff.post("/admin/workspaces/apikey/", {"action": "revoke_keys", "_selected_action": [key.pk]})
    assert anon.get("/api/v1/me", headers={"Authorization": f"Bearer {plaintext}"}).status_code == 401
    listing = staff.get("/admin/workspaces/apikey/", {"q": workspace.name})
    assert listing.status_code == 200 and key.public_part in listing.content.decode()
    for path in (
        "/admin/workspaces/workspace/",
        "/admin/workspaces/membership/",
        "/admin/oauth2_provider/application/",
    ):
        assert staff.get(path).status_code == 200


def test_support_finds_a_key_by_what_the_customer_pastes(staff, workspace, make_key):
    wanted = make_key("viewer", workspace)
    make_key("viewer", workspace)
    key = ApiKey.objects.get(lookup=wanted.split("_")[1])
    public_part = "_".join(wanted.split("_", 2)[:2])
    for term in (wanted, public_part, f"  {public_part} "):
        page = staff.get("/admin/workspaces/apikey/", {"q": term})
        assert page.status_code == 200
        assert list(page.context["cl"].result_list) == [key], term
    assert staff.get("/admin/workspaces/apikey/", {"q": workspace.name}).context["cl"].result_count == 2


def test_key_status_filter(staff, workspace):
    from django.utils import timezone

    from workspaces.services import api_key_create, api_key_revoke

    active = api_key_create(workspace=workspace, name="active", role="admin").api_key
    expired = api_key_create(
        workspace=workspace, name="expired", role="admin", expires_at=timezone.now() - dt.timedelta(days=1)
    ).api_key
    revoked = api_key_create(workspace=workspace, name="revoked", role="admin")
    api_key_revoke(key_or_public_part=revoked.plaintext)
    for status, expected in (("active", active), ("expired", expired), ("revoked", revoked.api_key)):
        page = staff.get("/admin/workspaces/apikey/", {"status": status})
        assert [k.pk for k in page.context["cl"].result_list] == [expected.pk], status


def test_pages_never_show_a_secret_or_its_hash(staff, workspace, make_key):
    plaintext = make_key("admin", workspace)
    key = ApiKey.objects.get()
    secret = plaintext.split("_", 2)[2]
    for path in (
        "/admin/workspaces/apikey/",
        f"/admin/workspaces/apikey/{quote(key.pk)}/change/",
        f"/admin/workspaces/workspace/{quote(workspace.pk)}/change/",
    ):
        html = staff.get(path).content.decode()
        assert key.public_part in html, path
        assert secret not in html and key.secret_hash not in html, path


def test_workspace_list_counts_members_and_keys_and_users_show_their_workspaces(staff, workspace, make_key):
    from tests.factories import MembershipFactory, UserFactory

    member = UserFactory()
    MembershipFactory(user=member, workspace=workspace, role="editor", is_default=True)
    make_key("viewer", workspace)
    make_key("viewer", workspace)
    ApiKey.objects.filter(pk=ApiKey.objects.first().pk).update(revoked_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    listing = staff.get("/admin/workspaces/workspace/", {"q": member.username})
    row = listing.context["cl"].result_list[0]
    assert (row, row._members, row._active_keys) == (workspace, 1, 1)
    user_page = staff.get(f"/admin/auth/user/{member.pk}/change/").content.decode()
    assert "workspace memberships" in user_page.lower() and workspace.name in user_page
