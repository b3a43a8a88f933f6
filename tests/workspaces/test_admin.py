from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages

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
        follow=True,
    )
    assert response.status_code == 200
    shown = [str(m) for m in get_messages(response.wsgi_request) if "New API key" in str(m)]
    assert len(shown) == 1
    plaintext = shown[0].rsplit(": ", 1)[1]
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
