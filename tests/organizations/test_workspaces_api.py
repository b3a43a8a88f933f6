"""Workspaces through the API (issue 31 item 3): an organization key holding workspaces.manage
creates, reads, changes, deletes and restores the workspaces of its organization; the deletion
is a job (step one run twice changes the world once), restorable until its grace period ends,
then purged by the beat task."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import AccountStatus, SocialAccount
from audit.models import AuditEvent
from core.fields import format_instant
from posts.models import Post, PostStatus, RecurringPost, RecurringStatus
from tests.factories import OrganizationFactory, WorkspaceFactory
from tests.factories.accounts import SocialAccountFactory
from tests.organizations.conftest import API, bearer
from workspaces.lifecycle import workspace_deactivate, workspaces_purge
from workspaces.models import DeletionStatus, Organization, Workspace, WorkspaceDeletion
from workspaces.services import api_key_create

pytestmark = pytest.mark.django_db


def test_create_answers_the_workspace_whole_and_records_it(builder: APIClient, organization: Organization) -> None:
    response = builder.post(
        f"{API}/workspaces", {"name": "Acme", "externalId": "acme-42", "metadata": {"tier": "gold"}}, format="json"
    )
    assert response.status_code == 201, response.json()
    workspace = Workspace.objects.get(external_id="acme-42")
    assert response.json() == {
        "id": workspace.id,
        "name": "Acme",
        "externalId": "acme-42",
        "metadata": {"tier": "gold"},
        "organization": {"id": organization.id, "name": "Builder"},
        "createdAt": format_instant(workspace.created_at),
        "updatedAt": format_instant(workspace.updated_at),
        "deletedAt": None,
        "deletion": None,
    }
    event = AuditEvent.objects.get(action="workspace.create")
    assert (event.organization_id, event.workspace_ref, event.target_id) == (
        organization.id,
        workspace.id,
        workspace.id,
    )
    assert event.actor_type == "api_key" and event.request_id and event.source_address == "127.0.0.1"
    # The organization key acts in it at once; its list shows it.
    listed = builder.get(f"{API}/workspaces").json()["workspaces"]
    assert [(w["id"], w["externalId"], w["metadata"]) for w in listed] == [(workspace.id, "acme-42", {"tier": "gold"})]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"name": "Acme", "externalId": "other"}, "name"),
        ({"name": "Other", "externalId": "acme-42"}, "externalId"),
    ],
)
def test_a_taken_name_or_external_id_is_a_409_within_the_organization_only(
    builder: APIClient, organization: Organization, body: dict[str, Any], message: str
) -> None:
    WorkspaceFactory(organization=organization, name="Acme", external_id="acme-42")
    WorkspaceFactory(organization=OrganizationFactory(), name="Elsewhere", external_id="taken-elsewhere")
    response = builder.post(f"{API}/workspaces", body, format="json")
    assert (response.status_code, response.json()["code"]) == (409, "conflict")
    assert message in response.json()["message"]
    again = builder.post(f"{API}/workspaces", {"name": "Elsewhere", "externalId": "taken-elsewhere"}, format="json")
    assert again.status_code == 201  # another organization's names and ids are no concern of this one


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"name": ""},
        {"name": "x", "metadata": [1]},
        {"name": "x", "metadata": {"k": {"deep": 1}}},
        {"name": "x", "metadata": {str(i): i for i in range(51)}},
        {"name": "x", "externalId": 5},
    ],
)
def test_invalid_bodies_are_400_naming_the_field(builder: APIClient, body: dict[str, Any]) -> None:
    response = builder.post(f"{API}/workspaces", body, format="json")
    assert (response.status_code, response.json()["code"]) == (400, "validation_error"), response.json()


def test_who_may_not(org_key: Callable[..., str], organization: Organization, anon: APIClient) -> None:
    workspace = WorkspaceFactory(organization=organization)
    assert anon.post(f"{API}/workspaces", {"name": "x"}, format="json").status_code == 401
    lacking = bearer(org_key(permissions=["keys.manage"]))
    refused = lacking.post(f"{API}/workspaces", {"name": "x"}, format="json").json()
    assert (refused["code"], refused["requiredPermission"]) == ("permission_denied", "workspaces.manage")
    assert lacking.get(f"{API}/workspaces/{workspace.id}").json()["requiredPermission"] == "workspaces.manage"
    own_key = bearer(api_key_create(workspace=workspace, name="w", role="admin").plaintext)
    by_workspace_key = own_key.post(f"{API}/workspaces", {"name": "x"}, format="json")
    assert (by_workspace_key.status_code, by_workspace_key.json()["code"]) == (403, "permission_denied")
    assert own_key.get(f"{API}/workspaces/{workspace.id}").status_code == 403
    other = bearer(org_key(org=OrganizationFactory()))
    for method, path in [
        ("get", f"/workspaces/{workspace.id}"),
        ("patch", f"/workspaces/{workspace.id}"),
        ("delete", f"/workspaces/{workspace.id}"),
        ("post", f"/workspaces/{workspace.id}/restore"),
    ]:
        response = getattr(other, method)(f"{API}{path}", {"name": "y"} if method == "patch" else None, format="json")
        assert (response.status_code, response.json()["code"]) == (404, "not_found"), (method, path)
    assert Workspace.objects.get(pk=workspace.pk).deleted_at is None


def test_update_changes_what_is_sent_and_records_before_and_after(
    builder: APIClient, organization: Organization
) -> None:
    workspace = WorkspaceFactory(organization=organization, name="Old", metadata={"a": 1})
    response = builder.patch(f"{API}/workspaces/{workspace.id}", {"name": "New", "externalId": "n-1"}, format="json")
    assert response.status_code == 200
    assert (response.json()["name"], response.json()["externalId"], response.json()["metadata"]) == (
        "New",
        "n-1",
        {"a": 1},
    )
    event = AuditEvent.objects.get(action="workspace.update")
    assert event.changes == {
        "before": {"name": "Old", "external_id": None},
        "after": {"name": "New", "external_id": "n-1"},
    }
    empty = builder.patch(f"{API}/workspaces/{workspace.id}", {}, format="json")
    assert empty.status_code == 400


def _world(workspace: Workspace, client: APIClient) -> dict[str, str]:
    """An account with tokens, a scheduled post and a recurring series in the workspace."""
    account = SocialAccountFactory(workspace=workspace, platform="MASTODON", refresh_token="refresh-secret")
    later = format_instant(timezone.now() + dt.timedelta(days=2))
    body = {
        "contentType": "TEXT",
        "text": "hello",
        "timezone": "UTC",
        "platforms": ["MASTODON"],
        "mastodonConnectionIds": [account.id],
        "scheduledAt": later,
    }
    post = client.post(f"{API}/social-posts", body, format="json")
    series = client.post(
        f"{API}/social-posts", {**body, "recurrence": {"frequency": "DAILY", "maxOccurrences": 3}}, format="json"
    )
    assert post.status_code == series.status_code == 201, (post.json(), series.json())
    return {"account": account.id, "post": post.json()["postId"], "series": series.json()["recurringPostId"]}


def test_delete_is_a_job_step_one_run_twice_acts_once_and_restore_brings_it_back(
    builder: APIClient, organization: Organization, org_key: Callable[..., str], settings: Any
) -> None:
    workspace = WorkspaceFactory(organization=organization)
    own_key = api_key_create(workspace=workspace, name="w", role="admin").plaintext
    world = _world(workspace, bearer(org_key(), workspace.id))

    response = builder.delete(f"{API}/workspaces/{workspace.id}")
    assert response.status_code == 202
    job = response.json()
    deletion = WorkspaceDeletion.objects.get()
    assert response["Location"] == job["statusUrl"] == f"/api/v1/workspace-deletions/{deletion.id}"
    assert (job["status"], job["workspaceId"]) == ("pending", workspace.id)
    assert job["purgeAfter"] == format_instant(deletion.requested_at + dt.timedelta(days=30))
    # Inactive at once: its own key and the organization key acting in it are told why.
    for client in (bearer(own_key), bearer(org_key(), workspace.id)):
        refused = client.get(f"{API}/social-posts")
        assert (refused.status_code, refused.json()["code"]) == (403, "workspace_inactive")
    # Deleting again answers the same job.
    assert builder.delete(f"{API}/workspaces/{workspace.id}").json()["id"] == deletion.id

    assert workspace_deactivate(deletion_id=deletion.id) is True
    assert workspace_deactivate(deletion_id=deletion.id) is False  # the second run changes nothing
    account = SocialAccount.objects.get(pk=world["account"])
    assert (account.access_token, account.refresh_token, account.status) == ("", "", AccountStatus.DISCONNECTED)
    assert Post.objects.get(pk=world["post"]).status == PostStatus.DRAFT
    series = RecurringPost.objects.get(pk=world["series"])
    assert series.status == RecurringStatus.PAUSED
    assert not Post.objects.filter(workspace=workspace, status=PostStatus.SCHEDULED).exists()
    status = builder.get(job["statusUrl"].removeprefix("/api/v1").join([API, ""])).json()
    assert (status["status"], status["accountsDisconnected"], status["postsCancelled"], status["seriesStopped"]) == (
        "deactivated",
        1,
        1,
        1,
    )
    detail = builder.get(f"{API}/workspaces/{workspace.id}").json()
    assert detail["deletedAt"] is not None and detail["deletion"]["id"] == deletion.id

    restored = builder.post(f"{API}/workspaces/{workspace.id}/restore", {}, format="json")
    assert restored.status_code == 200 and restored.json()["deletedAt"] is None
    assert bearer(own_key).get(f"{API}/social-posts").status_code == 200  # its key works again
    assert WorkspaceDeletion.objects.get().status == DeletionStatus.RESTORED
    assert workspace_deactivate(deletion_id=deletion.id) is False  # a late step one does nothing now
    assert workspaces_purge(now=timezone.now() + dt.timedelta(days=31)) == 0
    assert Workspace.objects.filter(pk=workspace.pk).exists()
    actions = list(
        AuditEvent.objects.filter(workspace_ref=workspace.id).order_by("created_at").values_list("action", flat=True)
    )
    # Step one disconnected the account as DELETE /social-accounts/{id} does, recorded as the system's.
    assert actions[-3:] == ["workspace.delete", "account.disconnect", "workspace.restore"]


def test_after_the_grace_period_restore_is_refused_and_the_purge_removes_the_data_once(
    builder: APIClient, organization: Organization, settings: Any
) -> None:
    settings.WORKSPACE_DELETION_GRACE_DAYS = 7
    workspace = WorkspaceFactory(organization=organization)
    SocialAccountFactory(workspace=workspace)
    job = builder.delete(f"{API}/workspaces/{workspace.id}").json()
    deletion = WorkspaceDeletion.objects.get(pk=job["id"])
    assert deletion.purge_after - deletion.requested_at == dt.timedelta(days=7)
    assert workspaces_purge(now=timezone.now() + dt.timedelta(days=6)) == 0  # step one redone, nothing purged
    assert WorkspaceDeletion.objects.get().status == DeletionStatus.DEACTIVATED
    WorkspaceDeletion.objects.update(purge_after=timezone.now() - dt.timedelta(seconds=1))
    late = builder.post(f"{API}/workspaces/{workspace.id}/restore", {}, format="json")
    assert (late.status_code, late.json()["code"]) == (409, "restore_period_over")
    assert workspaces_purge() == 1
    assert workspaces_purge() == 0  # run twice: nothing more
    assert not Workspace.objects.filter(pk=workspace.pk).exists()
    assert not SocialAccount.objects.filter(workspace_id=workspace.pk).exists()
    status = builder.get(f"{API}/workspace-deletions/{deletion.id}").json()
    assert status["status"] == "purged" and status["purgedAt"] is not None
    assert builder.get(f"{API}/workspaces/{workspace.id}").status_code == 404
    assert (
        AuditEvent.objects.filter(action="workspace.purge", workspace_ref=workspace.id, actor_type="system").count()
        == 1
    )


def test_a_deletion_of_another_organization_is_404(builder: APIClient, org_key: Callable[..., str]) -> None:
    other = OrganizationFactory()
    theirs = WorkspaceFactory(organization=other)
    job = bearer(org_key(org=other)).delete(f"{API}/workspaces/{theirs.id}").json()
    assert builder.get(f"{API}/workspace-deletions/{job['id']}").status_code == 404


def test_a_purged_workspaces_stored_files_are_collected_by_the_orphan_sweep(
    builder: APIClient, organization: Organization, settings: Any, tmp_path: Any
) -> None:
    """The purge deletes the workspace's rows; its files in storage are then named by no row, and
    the media orphan sweep (``media.collect_orphans``, every 6 hours) deletes them after its grace."""
    import io

    from media.lifecycle import ORPHAN_GRACE, collect_orphans
    from media.storage import get_media_storage
    from tests.factories.media import MediaFileFactory

    settings.STORAGE, settings.MEDIA_ROOT = "local", str(tmp_path / "media")
    workspace = WorkspaceFactory(organization=organization)
    stored = MediaFileFactory(workspace=workspace, uploaded=True)
    get_media_storage().save(stored.key, io.BytesIO(b"\xff\xd8 a photo"), content_type="image/jpeg")
    job = builder.delete(f"{API}/workspaces/{workspace.id}").json()
    assert workspace_deactivate(deletion_id=job["id"]) is True  # step one, as its task runs it
    WorkspaceDeletion.objects.update(purge_after=timezone.now() - dt.timedelta(seconds=1))
    assert workspaces_purge() == 1
    later = timezone.now() + ORPHAN_GRACE + dt.timedelta(hours=1)
    assert collect_orphans(now=later) == 1
    assert collect_orphans(now=later) == 0
    assert not list((tmp_path / "media").rglob("*.jpg"))
