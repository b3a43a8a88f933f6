"""Account services that need no platform: connecting plain identities, the unauthorized mark,
disconnecting, and the selectors' workspace scoping."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction

from accounts.disconnect import account_disconnect
from accounts.errors import AccountNotFound
from accounts.models import SocialAccount
from accounts.selectors import account_by_page_id, account_get, account_list, accounts_by_ids
from accounts.services import account_mark_unauthorized, accounts_connect
from audit.actors import system_actor
from platforms.base import AccountProfile, ConnectedIdentity, Credentials
from tests.accounts.conftest import unauthorized_events
from tests.factories.accounts import SocialAccountFactory
from workspaces.models import Workspace

TEST_ACTOR = system_actor("tests")


def _identity(external_id: str, name: str = "Page", token: str = "tok") -> ConnectedIdentity:
    return ConnectedIdentity(
        profile=AccountProfile(external_id=external_id, display_name=name, page_id=external_id),
        credentials=Credentials(access_token=token, external_id=external_id),
        scopes=("pages_manage_posts",),
    )


@pytest.mark.django_db(transaction=True)
def test_connect_enqueues_the_history_import_only_after_commit(
    workspace: Workspace, enqueued: list[tuple[str, list[Any]]]
) -> None:
    with transaction.atomic():
        accounts = accounts_connect(
            workspace_id=workspace.id, platform="FACEBOOK", identities=[_identity("61"), _identity("62")]
        )
        assert enqueued == []
    assert enqueued == [("analytics.import_account_history", [a.id]) for a in accounts]
    assert [(a.page_id, a.scopes) for a in accounts] == [("61", ["pages_manage_posts"]), ("62", ["pages_manage_posts"])]

    enqueued.clear()
    with pytest.raises(RuntimeError), transaction.atomic():
        accounts_connect(workspace_id=workspace.id, platform="FACEBOOK", identities=[_identity("63")])
        raise RuntimeError("rolled back")
    assert enqueued == []
    assert not SocialAccount.objects.filter(external_id="63").exists()


@pytest.mark.django_db(transaction=True)
def test_reconnect_updates_tokens_in_place(workspace: Workspace, other_workspace: Workspace) -> None:
    (first,) = accounts_connect(workspace_id=workspace.id, platform="FACEBOOK", identities=[_identity("61", "Old")])
    account_mark_unauthorized(account_id=first.id, reason="Session expired")
    (again,) = accounts_connect(
        workspace_id=workspace.id, platform="FACEBOOK", identities=[_identity("61", "New", token="tok2")]
    )
    (elsewhere,) = accounts_connect(workspace_id=other_workspace.id, platform="FACEBOOK", identities=[_identity("61")])

    again.refresh_from_db()
    assert again.id == first.id != elsewhere.id
    assert (again.display_name, again.access_token, again.status, again.unauthorized_reason) == (
        "New",
        "tok2",
        "active",
        "",
    )
    assert again.connected_at == first.connected_at


@pytest.mark.django_db
def test_mark_unauthorized_emits_once_per_transition(workspace: Workspace) -> None:
    page = SocialAccountFactory(workspace=workspace, platform="FACEBOOK", page_id="61", external_id="61")
    other = SocialAccountFactory(workspace=workspace, platform="MASTODON")

    assert account_mark_unauthorized(account_id=page.id, reason="Error validating access token") is True
    assert account_mark_unauthorized(account_id=page.id, reason="again") is False
    assert account_mark_unauthorized(account_id=other.id, reason="") is True
    assert account_mark_unauthorized(account_id="acc_missing", reason="x") is False

    page.refresh_from_db()
    assert page.unauthorized_reason == "Error validating access token"
    assert unauthorized_events(workspace.id) == [
        {
            "account": {
                "id": page.id,
                "platform": "FACEBOOK",
                "displayName": page.display_name,
                "pageId": "61",
                "status": "unauthorized",
                "reason": "Error validating access token",
            }
        },
        {
            "account": {
                "id": other.id,
                "platform": "MASTODON",
                "displayName": other.display_name,
                "status": "unauthorized",
                "reason": "The platform rejected the token",
            }
        },
    ]


@pytest.mark.django_db
def test_selectors_and_disconnect_are_scoped_to_the_workspace(workspace: Workspace, other_workspace: Workspace) -> None:
    mine = SocialAccountFactory(workspace=workspace, platform="FACEBOOK", page_id="61", external_id="61")
    theirs = SocialAccountFactory(workspace=other_workspace, platform="FACEBOOK", page_id="62", external_id="62")

    assert list(account_list(workspace_id=workspace.id)) == [mine]
    assert account_get(workspace_id=workspace.id, account_id=mine.id) == mine
    with pytest.raises(AccountNotFound):
        account_get(workspace_id=workspace.id, account_id=theirs.id)
    assert accounts_by_ids(workspace_id=workspace.id, ids=[mine.id, theirs.id, "nope"]) == {mine.id: mine}
    assert account_by_page_id(workspace_id=workspace.id, page_id="61") == mine
    assert account_by_page_id(workspace_id=workspace.id, page_id="62") is None

    with pytest.raises(AccountNotFound):
        account_disconnect(workspace_id=workspace.id, account_id=theirs.id, actor=TEST_ACTOR)
    account_disconnect(workspace_id=workspace.id, account_id=mine.id, actor=TEST_ACTOR)
    # The row stays (history), out of every selector but account_get_any.
    assert SocialAccount.objects.get(id=mine.id).status == "disconnected"
    assert list(account_list(workspace_id=workspace.id)) == []
    with pytest.raises(AccountNotFound):
        account_get(workspace_id=workspace.id, account_id=mine.id)
    assert accounts_by_ids(workspace_id=workspace.id, ids=[mine.id]) == {}
    assert account_by_page_id(workspace_id=workspace.id, page_id="61") is None
