"""GET and DELETE /social-accounts/{id} (issue 31): the disconnect drops and revokes the tokens,
fails what was not sent (and only that: a worker's claim loses its fencing token, an attempt
already sending finishes), pauses series, drops the posting queue, emits account.disconnected
once, keeps the history, and answers the same when repeated."""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.disconnect import account_disconnect
from accounts.models import PostingQueue, QueueSlot, SocialAccount
from accounts.services import account_mark_unauthorized, accounts_connect
from audit.actors import system_actor
from platforms.base import Credentials, NotSupported, Platform, Transient
from posts.models import Post, PostStatus, PostTarget, RecurringPost, TargetStatus
from posts.pipeline import outcomes, publisher, step
from posts.pipeline.claims import claim_started_sending, claim_targets
from tests.factories.accounts import SocialAccountFactory
from tests.factories.posts import PostFactory, PostTargetFactory
from tests.pipeline.helpers import connect_account, make_post, sandbox_publishes, targets_of
from tests.platforms.conftest import connect_sandbox_account
from webhooks.models import Event
from workspaces.models import Workspace

TEST_ACTOR = system_actor("tests")

API = "/api/v1/social-accounts"


def _stamp(value: dt.datetime | None) -> str | None:
    return None if value is None else value.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _events(workspace: Workspace, name: str) -> list[dict[str, Any]]:
    rows = Event.objects.filter(workspace_id=workspace.id, name=name).order_by("created_at", "id")
    return [json.loads(row.payload)["data"] for row in rows]


def _stored_tokens(account_id: str) -> tuple[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT access_token, refresh_token FROM accounts_socialaccount WHERE id = %s", [account_id])
        return cursor.fetchone()  # type: ignore[return-value]


class _Revoker:
    """A platform client whose revoke call is scripted; it records the tokens it was given."""

    def __init__(self, raises: BaseException | None = None) -> None:
        self.raises = raises
        self.revoked: list[str] = []

    def revoke_token(self, creds: Credentials) -> None:
        self.revoked.append(creds.access_token)
        if self.raises is not None:
            raise self.raises


@pytest.fixture
def revoker(monkeypatch: pytest.MonkeyPatch) -> Callable[..., _Revoker]:
    def install(raises: BaseException | None = None) -> _Revoker:
        client = _Revoker(raises)
        monkeypatch.setattr("accounts.disconnect.get_client", lambda platform: client)
        return client

    return install


def _denied(response: Any, permission: str, role: str) -> None:
    assert response.status_code == 403
    body = response.json()
    assert (body["code"], body["requiredPermission"], body["role"]) == ("permission_denied", permission, role)


# --- GET ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_get_answers_the_account_whole(api: APIClient, workspace: Workspace) -> None:
    account = SocialAccountFactory(workspace=workspace, platform="MASTODON", username="alice", avatar_url="")
    response = api.get(f"{API}/{account.id}")
    assert response.status_code == 200
    assert response.json() == {
        "id": account.id,
        "platform": "MASTODON",
        "displayName": account.display_name,
        "username": "alice",
        "avatarUrl": None,
        "status": "active",
        "unauthorizedReason": None,
        "pageId": None,
        "supportsInstagramAudio": False,
        "connectedAt": _stamp(account.connected_at),
        "disconnectedAt": None,
        "tokenRevocation": None,
        "tokenRevocationErrorCode": None,
    }
    assert account.access_token not in response.content.decode()


@pytest.mark.django_db
def test_get_errors(api: APIClient, anon: APIClient, workspace: Workspace, other_workspace: Workspace) -> None:
    mine = SocialAccountFactory(workspace=workspace)
    theirs = SocialAccountFactory(workspace=other_workspace)
    missing = api.get(f"{API}/{theirs.id}")
    assert (missing.status_code, missing.json()["message"]) == (404, "Account not found")
    assert api.get(f"{API}/acc_nope").status_code == 404
    unknown = api.get(f"{API}/{mine.id}?verbose=1")
    assert unknown.status_code == 400 and "verbose" in str(unknown.json()["message"])
    anonymous = anon.get(f"{API}/{mine.id}")
    assert (anonymous.status_code, anonymous.json()["code"]) == (401, "unauthorized")


@pytest.mark.django_db
def test_every_role_may_read_an_account(client_for: Callable[..., APIClient], workspace: Workspace) -> None:
    # accounts.read belongs to every role (CONTRACT.md §2): no key of the workspace gets a 403 here.
    account = SocialAccountFactory(workspace=workspace)
    for role in ("viewer", "contributor", "editor", "admin"):
        assert client_for(role).get(f"{API}/{account.id}").status_code == 200


# --- DELETE: the answer, the errors, the repeat ---------------------------------------------


@pytest.mark.django_db
def test_disconnect_answers_the_disconnected_record_and_a_repeat_answers_the_same(
    api: APIClient, workspace: Workspace, revoker: Callable[..., _Revoker]
) -> None:
    client = revoker()
    account = SocialAccountFactory(workspace=workspace, platform="MASTODON", refresh_token="refresh-1")
    token = account.access_token

    first = api.delete(f"{API}/{account.id}")

    assert first.status_code == 200
    account.refresh_from_db()
    body = first.json()
    assert body["status"] == "disconnected"
    assert body["disconnectedAt"] == _stamp(account.disconnected_at) is not None
    assert (body["tokenRevocation"], body["tokenRevocationErrorCode"]) == ("revoked", None)
    assert client.revoked == [token]
    assert _stored_tokens(account.id) == ("", "")
    assert token not in first.content.decode()
    assert _events(workspace, "account.disconnected") == [
        {
            "account": {
                "id": account.id,
                "platform": "MASTODON",
                "displayName": account.display_name,
                "status": "disconnected",
                "disconnectedAt": body["disconnectedAt"],
            }
        }
    ]

    second = api.delete(f"{API}/{account.id}")

    assert (second.status_code, second.json()) == (200, body)
    assert client.revoked == [token]  # not revoked again
    assert len(_events(workspace, "account.disconnected")) == 1
    assert api.get(f"{API}/{account.id}").json() == body
    assert account.id not in {a["id"] for a in api.get(API).json()["accounts"]}


@pytest.mark.django_db
def test_disconnect_errors(
    client_for: Callable[..., APIClient], anon: APIClient, workspace: Workspace, other_workspace: Workspace
) -> None:
    mine = SocialAccountFactory(workspace=workspace)
    theirs = SocialAccountFactory(workspace=other_workspace)
    admin = client_for("admin")
    missing = admin.delete(f"{API}/{theirs.id}")
    assert (missing.status_code, missing.json()["message"]) == (404, "Account not found")
    assert SocialAccount.objects.get(id=theirs.id).status == "active"
    _denied(client_for("editor").delete(f"{API}/{mine.id}"), "accounts.manage", "editor")
    assert (anon.delete(f"{API}/{mine.id}").status_code, anon.delete(f"{API}/{mine.id}").json()["code"]) == (
        401,
        "unauthorized",
    )
    assert SocialAccount.objects.get(id=mine.id).status == "active"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("raises", "outcome", "code"),
    [
        (NotSupported(), "not_supported", None),
        (
            Transient("GET https://api.example/revoke?access_token=SECRET-IN-URL timed out"),
            "failed",
            "platform_unavailable",
        ),
        (RuntimeError("client bug with SECRET-IN-URL"), "failed", "platform_unavailable"),
    ],
)
def test_a_failed_or_missing_revoke_never_blocks_the_disconnect_and_leaks_no_secret(
    api: APIClient,
    workspace: Workspace,
    revoker: Callable[..., _Revoker],
    caplog: pytest.LogCaptureFixture,
    raises: BaseException,
    outcome: str,
    code: str | None,
) -> None:
    revoker(raises)
    account = SocialAccountFactory(workspace=workspace, access_token="SECRET-IN-URL")
    with caplog.at_level(logging.DEBUG):
        response = api.delete(f"{API}/{account.id}")
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["tokenRevocation"], body["tokenRevocationErrorCode"]) == (
        "disconnected",
        outcome,
        code,
    )
    assert _stored_tokens(account.id) == ("", "")
    assert "SECRET-IN-URL" not in response.content.decode()
    assert "SECRET-IN-URL" not in caplog.text


# --- what the disconnect does to posts, series, queues ---------------------------------------


@pytest.mark.django_db
def test_unsent_entries_fail_with_account_disconnected_and_their_posts_finish(
    api: APIClient, workspace: Workspace, revoker: Callable[..., _Revoker]
) -> None:
    revoker(NotSupported())
    gone = SocialAccountFactory(workspace=workspace, platform="MASTODON")
    kept = SocialAccountFactory(workspace=workspace, platform="BLUESKY")
    later = timezone.now() + dt.timedelta(days=1)
    alone = PostFactory(workspace=workspace, status=PostStatus.SCHEDULED, scheduled_at=later)
    alone_entry = PostTargetFactory(post=alone, platform="MASTODON", account=gone)
    shared = PostFactory(workspace=workspace, status=PostStatus.SCHEDULED, scheduled_at=later)
    shared_gone = PostTargetFactory(post=shared, platform="MASTODON", account=gone)
    shared_kept = PostTargetFactory(post=shared, platform="BLUESKY", account=kept)
    draft = PostFactory(workspace=workspace, status=PostStatus.DRAFT)
    draft_entry = PostTargetFactory(post=draft, platform="MASTODON", account=gone)
    done = PostFactory(workspace=workspace, status=PostStatus.COMPLETED)
    done_entry = PostTargetFactory(
        post=done, platform="MASTODON", account=gone, status=TargetStatus.PUBLISHED, platform_post_id="109"
    )

    assert api.delete(f"{API}/{gone.id}").status_code == 200

    def state(target: PostTarget) -> tuple[str, str]:
        target.refresh_from_db()
        return target.status, target.error_code

    assert state(alone_entry) == ("FAILED", "account_disconnected")
    assert state(shared_gone) == ("FAILED", "account_disconnected")
    assert state(shared_kept) == ("PENDING", "")
    assert state(draft_entry) == ("PENDING", "")  # a draft's entries are rebuilt when it is published
    assert state(done_entry) == ("PUBLISHED", "")  # history stays
    assert shared_gone.error_message == "The account was disconnected before this entry was sent"
    statuses = dict(Post.objects.filter(workspace=workspace).values_list("id", "status"))
    assert statuses == {alone.id: "FAILED", shared.id: "SCHEDULED", draft.id: "DRAFT", done.id: "COMPLETED"}
    failed = _events(workspace, "post.failed")
    assert [e["post"]["id"] for e in failed] == [alone.id]
    assert failed[0]["post"]["platforms"][0]["errorCode"] == "account_disconnected"
    # The posts keep naming the account; GET /social-posts/{id} renders the entry as before.
    record = api.get(f"/api/v1/social-posts/{done.id}").json()
    assert record["platforms"][0]["connectionId"] == gone.id

    # A repeat fails nothing more and emits nothing more.
    assert api.delete(f"{API}/{gone.id}").status_code == 200
    assert len(_events(workspace, "post.failed")) == 1


@pytest.mark.django_db
def test_series_pause_and_the_posting_queue_goes(api: APIClient, workspace: Workspace, revoker: Any) -> None:
    revoker(NotSupported())
    gone = SocialAccountFactory(workspace=workspace, platform="MASTODON")
    kept = SocialAccountFactory(workspace=workspace, platform="BLUESKY")
    start = (timezone.now() + dt.timedelta(days=2)).replace(microsecond=0)
    created = api.post(
        "/api/v1/social-posts",
        {
            "contentType": "TEXT",
            "text": "Every day",
            "timezone": "UTC",
            "platforms": ["MASTODON", "BLUESKY"],
            "mastodonConnectionIds": [gone.id],
            "blueskyConnectionIds": [kept.id],
            "scheduledAt": start.isoformat(),
            "recurrence": {"frequency": "DAILY"},
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    series_id = created.json()["recurringPostId"]
    queue = {"timezone": "Europe/Berlin", "slots": [{"day": "MON", "time": "09:30"}]}
    assert api.put(f"{API}/{gone.id}/queue", queue, format="json").status_code == 200

    assert api.delete(f"{API}/{gone.id}").status_code == 200

    series = RecurringPost.objects.get(id=series_id)
    assert (series.status, series.pause_reason) == ("PAUSED", "CONNECTION_REMOVED")
    assert not Post.objects.filter(recurring_post=series, status=PostStatus.SCHEDULED).exists()
    assert not PostingQueue.objects.filter(account_id=gone.id).exists() and not QueueSlot.objects.exists()
    # Every other account operation finds it no more; resuming the series drops it from the series.
    assert api.get(f"{API}/{gone.id}/queue").status_code == 404
    resumed = api.post(f"/api/v1/recurring-posts/{series_id}/resume", {}, format="json").json()
    assert resumed["status"] == "ACTIVE"
    [upcoming] = Post.objects.filter(recurring_post_id=series_id, status=PostStatus.SCHEDULED)
    assert [(t.platform, t.account_id) for t in upcoming.targets.all()] == [("BLUESKY", kept.id)]


@pytest.mark.django_db
def test_a_disconnected_account_is_no_target_and_is_never_marked_unauthorized(
    api: APIClient, workspace: Workspace, revoker: Any
) -> None:
    revoker(NotSupported())
    gone = SocialAccountFactory(workspace=workspace, platform="MASTODON")
    api.delete(f"{API}/{gone.id}")
    body = {"contentType": "TEXT", "text": "Hi", "timezone": "UTC", "platforms": ["MASTODON"]}
    created = api.post("/api/v1/social-posts", {**body, "mastodonConnectionIds": [gone.id]}, format="json")
    assert (created.status_code, created.json()["code"]) == (400, "connection_not_found")
    assert account_mark_unauthorized(account_id=gone.id, reason="rejected") is False
    assert SocialAccount.objects.get(id=gone.id).status == "disconnected"
    assert _events(workspace, "account.unauthorized") == []


# --- over real HTTP: the race with a worker, reconnecting -----------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_claimed_entry_not_yet_sending_fails_and_its_worker_sends_nothing(
    sandbox: str, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker has claimed the entry and read the token; the disconnect commits before its call
    leaves. The lease was its fencing token: its record of the start matches nothing, so the call
    never leaves, and nothing it writes afterwards changes the entry."""
    account = connect_account(workspace, Platform.MASTODON)
    post = make_post(workspace, [account], text="claimed before the disconnect")
    target = targets_of(post)[0]
    [claim] = claim_targets([target.id], now=timezone.now(), lease=dt.timedelta(seconds=180))
    original = publisher.claims_started_sending

    def disconnect_first(claims: list[Any]) -> list[bool]:
        account_disconnect(workspace_id=workspace.id, account_id=account.id, actor=TEST_ACTOR)
        return original(claims)

    monkeypatch.setattr(publisher, "claims_started_sending", disconnect_first)
    errors: list[BaseException] = []
    step.attempt(publisher.PUBLISH_STEP, [claim], width=1, errors=errors)
    assert errors == []

    target.refresh_from_db()
    post.refresh_from_db()
    assert (target.status, target.error_code, target.lease_until) == ("FAILED", "account_disconnected", None)
    assert post.status == PostStatus.FAILED
    assert sandbox_publishes(Platform.MASTODON) == []
    # The worker's later writes lose too: a record fenced by its lease changes nothing.
    published = outcomes.Published(claim, platform_post_id="1", url="https://x.example/1", published_at=None)
    assert outcomes.record([published]) == set()
    target.refresh_from_db()
    assert target.status == "FAILED"


@pytest.mark.django_db(transaction=True)
def test_an_entry_already_sending_is_left_to_its_worker(sandbox: str, workspace: Workspace) -> None:
    account = connect_account(workspace, Platform.MASTODON)
    post = make_post(workspace, [account], text="already on its way")
    target = targets_of(post)[0]
    [claim] = claim_targets([target.id], now=timezone.now(), lease=dt.timedelta(seconds=180))
    assert claim_started_sending(claim)

    account_disconnect(workspace_id=workspace.id, account_id=account.id, actor=TEST_ACTOR)

    target.refresh_from_db()
    assert (target.status, target.lease_until) == ("PUBLISHING", claim.lease_until)
    published = outcomes.Published(claim, platform_post_id="110", url="https://m.example/110", published_at=None)
    assert outcomes.record([published]) == {target.id}
    target.refresh_from_db()
    post.refresh_from_db()
    assert (target.status, post.status) == ("PUBLISHED", "COMPLETED")


@pytest.mark.django_db(transaction=True)
def test_reconnecting_brings_the_same_account_back(sandbox: str, workspace: Workspace) -> None:
    identities = connect_sandbox_account(Platform.MASTODON)
    [account] = accounts_connect(workspace_id=workspace.id, platform=Platform.MASTODON, identities=identities[:1])
    done = account_disconnect(workspace_id=workspace.id, account_id=account.id, actor=TEST_ACTOR)
    assert done.status == "disconnected" and done.token_revocation in {"revoked", "not_supported"}

    [again] = accounts_connect(workspace_id=workspace.id, platform=Platform.MASTODON, identities=identities[:1])

    again.refresh_from_db()
    assert again.id == account.id
    assert (again.status, again.disconnected_at, again.token_revocation) == ("active", None, "")
    assert again.access_token


@pytest.mark.django_db
def test_checks_and_credentials_skip_a_disconnected_account(workspace: Workspace, revoker: Any) -> None:
    from accounts.errors import AccountNotFound
    from accounts.services import account_credentials, account_verify
    from accounts.tasks import check_account, check_facebook_pages

    revoker(NotSupported())
    page = SocialAccountFactory(workspace=workspace, platform="FACEBOOK", page_id="61", external_id="61")
    account_disconnect(workspace_id=workspace.id, account_id=page.id, actor=TEST_ACTOR)
    page.refresh_from_db()
    with pytest.raises(AccountNotFound):
        account_verify(account_id=page.id)
    with pytest.raises(AccountNotFound) as caught:
        account_credentials(account=page)  # the pipeline's read of the token refuses it
    assert caught.value.code == "account_disconnected"
    check_account(page.id)  # the twice-daily check finds nothing to do, twice
    check_account(page.id)
    assert check_facebook_pages() == 0
    assert SocialAccount.objects.get(id=page.id).status == "disconnected"
