"""Staff admin: the accounts list, its filters and search, and the check-now and disconnect actions."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.test import Client

from accounts.models import SocialAccount
from platforms.base import Platform
from tests.accounts.conftest import revoke, unauthorized_events
from tests.factories.accounts import SocialAccountFactory
from workspaces.models import Workspace

CHANGELIST = "/admin/accounts/socialaccount/"


@pytest.fixture
def staff(db: object) -> Client:
    user = get_user_model().objects.create_superuser("root", "root@example.com", "pw-123456789")
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_list_filters_and_search_never_show_tokens(
    staff: Client, workspace: Workspace, other_workspace: Workspace
) -> None:
    page = SocialAccountFactory(
        workspace=workspace,
        platform="FACEBOOK",
        display_name="Bakery Page",
        status="unauthorized",
        access_token="tok-1",
    )
    other = SocialAccountFactory(workspace=other_workspace, platform="MASTODON", display_name="Chess Club")

    everything = staff.get(CHANGELIST)
    assert everything.status_code == 200
    text = everything.content.decode()
    assert "Bakery Page" in text and "Chess Club" in text and "tok-1" not in text

    for query, shown, hidden in (
        ({"status__exact": "unauthorized"}, "Bakery Page", "Chess Club"),
        ({"platform__exact": "MASTODON"}, "Chess Club", "Bakery Page"),
        ({"workspace__id__exact": other_workspace.id}, "Chess Club", "Bakery Page"),
        ({"q": "bakery"}, "Bakery Page", "Chess Club"),
    ):
        text = staff.get(CHANGELIST, query).content.decode()
        assert shown in text and hidden not in text, query

    detail = staff.get(f"{CHANGELIST}{quote(page.id)}/change/").content.decode()
    assert "Bakery Page" in detail and "tok-1" not in detail
    assert other.id


@pytest.mark.django_db
def test_disconnect_action(staff: Client, workspace: Workspace) -> None:
    gone, kept = SocialAccountFactory(workspace=workspace), SocialAccountFactory(workspace=workspace)
    response = staff.post(CHANGELIST, {"action": "disconnect", "_selected_action": [gone.id]}, follow=True)
    assert response.status_code == 200
    statuses = dict(SocialAccount.objects.values_list("id", "status"))
    assert statuses == {gone.id: "disconnected", kept.id: "active"}


@pytest.mark.django_db(transaction=True)
def test_check_now_action(
    site: str, staff: Client, workspace: Workspace, connect_account: Callable[..., SocialAccount]
) -> None:
    account = connect_account("FACEBOOK", workspace)
    revoke(site, Platform.FACEBOOK, account.page_id)

    response = staff.post(CHANGELIST, {"action": "check_now", "_selected_action": [account.id]}, follow=True)

    assert response.status_code == 200
    assert "unauthorized" in response.content.decode()
    account.refresh_from_db()
    assert account.status == "unauthorized"
    assert len(unauthorized_events(workspace.id)) == 1


@pytest.mark.django_db
def test_posting_queues_are_shown_read_only(staff: Client, workspace: Workspace) -> None:
    import datetime as dt

    from accounts.models import PostingQueue, QueueSlot

    account = SocialAccountFactory(workspace=workspace, platform=Platform.MASTODON, display_name="Masto")
    queue = PostingQueue.objects.create(account=account, timezone="Europe/Berlin")
    QueueSlot.objects.create(queue=queue, weekday=0, local_time=dt.time(9, 30))
    listing = staff.get("/admin/accounts/postingqueue/")
    assert listing.status_code == 200 and "Europe/Berlin" in listing.content.decode()
    detail = staff.get(f"/admin/accounts/postingqueue/{quote(account.id)}/change/")
    assert detail.status_code == 200 and "09:30" in detail.content.decode()
    assert staff.get("/admin/accounts/postingqueue/add/").status_code == 403
    staff.post(f"/admin/accounts/postingqueue/{quote(account.id)}/change/", {"timezone": "UTC"})
    assert PostingQueue.objects.get().timezone == "Europe/Berlin"
