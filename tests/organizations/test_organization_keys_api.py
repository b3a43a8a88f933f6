"""Organization keys through the API (issue 31 item 2): an organization key holding keys.manage
mints (secret shown once, hashed at rest, never more than its own role and permissions), lists
(cursor-paged), reads and revokes its organization's own keys; a revocation is refused by every
process from the next request; the organization never revokes its last key able to manage keys;
every mint and revoke is in the audit log with its actor."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from audit.actors import system_actor
from audit.models import AuditEvent
from core.errors import Conflict
from core.fields import format_instant
from tests.concurrency import run_concurrently
from tests.factories import OrganizationFactory, WorkspaceFactory
from tests.organizations.conftest import API, bearer
from workspaces.models import ApiKey, Organization
from workspaces.roles import ORGANIZATION_PERMISSIONS
from workspaces.services import api_key_create, hash_secret, organization_key_create, organization_key_revoke

pytestmark = pytest.mark.django_db

KEYS = f"{API}/organization-keys"


def _key_of(plaintext: str) -> ApiKey:
    return ApiKey.objects.get(lookup=plaintext.split("_")[1])


def test_a_key_is_shown_once_hashed_at_rest_works_and_is_recorded_with_its_actor(
    organization: Organization, org_key: Callable[..., str]
) -> None:
    plaintext = org_key()
    caller, builder = _key_of(plaintext), bearer(plaintext)
    expires = format_instant(timezone.now() + dt.timedelta(days=10))
    response = builder.post(
        KEYS,
        {"name": "reporting", "role": "viewer", "permissions": ["audit.read", "usage.read"], "expiresAt": expires},
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    made = ApiKey.objects.get(pk=body["id"])
    assert body == {
        "id": made.id,
        "name": "reporting",
        "publicPart": made.public_part,
        "organizationId": organization.id,
        "role": "viewer",
        "permissions": ["usage.read", "audit.read"],  # the canonical order, whatever was sent
        "status": "active",
        "createdAt": format_instant(made.created_at),
        "expiresAt": expires,
        "lastUsedAt": None,
        "revokedAt": None,
        "key": body["key"],
    }
    assert made.public_part.startswith("cpo_") and made.workspace_id is None
    assert body["key"].startswith(f"{made.public_part}_") and made.secret_hash == hash_secret(
        body["key"].rsplit("_", 1)[1]
    )
    me = bearer(body["key"]).get(f"{API}/me").json()
    assert (me["organizationId"], me["organizationPermissions"], me["role"]["key"]) == (
        organization.id,
        ["usage.read", "audit.read"],
        "viewer",
    )
    # Read back and listed, never with the secret.
    made.refresh_from_db()
    assert made.last_used_at is not None  # by the /me above
    shown = builder.get(f"{KEYS}/{made.id}").json()
    assert shown == {k: v for k, v in body.items() if k != "key"} | {"lastUsedAt": format_instant(made.last_used_at)}
    listed = builder.get(KEYS).json()["organizationKeys"]
    assert [k["id"] for k in listed] == [made.id, caller.id] and all("key" not in k for k in listed)
    event = AuditEvent.objects.get(action="api_key.create", target_id=made.id)
    assert (event.organization_id, event.workspace_ref, event.actor_type, event.actor_id) == (
        organization.id,
        "",
        "api_key",
        caller.id,
    )
    assert body["key"] not in str(event.changes) and made.secret_hash not in str(event.changes)
    assert event.changes["organizationPermissions"] == ["usage.read", "audit.read"]


def test_an_idempotent_retry_answers_the_same_key_and_makes_none(builder: APIClient) -> None:
    request = {"name": "retry", "role": "editor", "permissions": []}
    first = builder.post(KEYS, request, format="json", HTTP_IDEMPOTENCY_KEY="mint-1")
    again = builder.post(KEYS, request, format="json", HTTP_IDEMPOTENCY_KEY="mint-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    assert ApiKey.objects.filter(name="retry").count() == 1
    other = builder.post(KEYS, {**request, "name": "changed"}, format="json", HTTP_IDEMPOTENCY_KEY="mint-1")
    assert (other.status_code, other.json()["code"]) == (422, "idempotency_key_reused")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"role": "viewer", "permissions": []}, "name"),
        ({"name": "k", "permissions": []}, "role"),
        ({"name": "k", "role": "owner", "permissions": []}, "role"),
        ({"name": "k", "role": "viewer"}, "permissions"),
        ({"name": "k", "role": "viewer", "permissions": "usage.read"}, "permissions"),
        ({"name": "k", "role": "viewer", "permissions": ["posts.read"]}, "permissions"),
        ({"name": "k", "role": "viewer", "permissions": ["usage.read", "usage.read"]}, "permissions"),
        ({"name": "k", "role": "viewer", "permissions": [], "expiresAt": "2001-01-01"}, "expiresAt"),
    ],
)
def test_invalid_bodies_are_400_naming_the_field(builder: APIClient, body: dict[str, Any], field: str) -> None:
    before = ApiKey.objects.count()
    response = builder.post(KEYS, body, format="json")
    assert (response.status_code, response.json()["code"]) == (400, "validation_error"), response.json()
    assert any(field in message for message in response.json()["message"]), response.json()
    assert ApiKey.objects.count() == before


def test_anonymous_and_revoked_callers_are_401(builder: APIClient, anon: APIClient) -> None:
    for method, path in [("get", KEYS), ("post", KEYS), ("get", f"{KEYS}/key_x"), ("delete", f"{KEYS}/key_x")]:
        response = getattr(anon, method)(path)
        assert (response.status_code, response.json()["code"]) == (401, "unauthorized"), (method, path)


def test_without_keys_manage_or_an_organization_key_it_is_403_naming_the_permission(
    org_key: Callable[..., str], organization: Organization
) -> None:
    target = _key_of(org_key(permissions=[]))
    lacking = bearer(org_key(permissions=["workspaces.manage", "usage.read", "audit.read"]))
    workspace_key = bearer(
        api_key_create(workspace=WorkspaceFactory(organization=organization), name="w", role="admin").plaintext
    )
    calls = [
        ("get", KEYS, None),
        ("post", KEYS, {"name": "k", "role": "viewer", "permissions": []}),
        ("get", f"{KEYS}/{target.id}", None),
        ("delete", f"{KEYS}/{target.id}", None),
    ]
    for client in (lacking, workspace_key):
        for method, path, body in calls:
            response = getattr(client, method)(path, body, format="json")
            assert response.status_code == 403, (method, path, response.json())
            assert (response.json()["code"], response.json()["requiredPermission"]) == (
                "permission_denied",
                "keys.manage",
            )
    assert ApiKey.objects.filter(revoked_at__isnull=False).count() == 0
    assert not ApiKey.objects.filter(name="k").exists()


@pytest.mark.parametrize(
    ("caller_role", "caller_permissions", "body", "missing"),
    [
        ("viewer", ["keys.manage"], {"role": "admin", "permissions": []}, "posts.draft"),
        ("editor", ["keys.manage"], {"role": "admin", "permissions": []}, "accounts.manage"),
        ("admin", ["keys.manage"], {"role": "viewer", "permissions": ["workspaces.manage"]}, "workspaces.manage"),
        (
            "admin",
            ["keys.manage", "usage.read"],
            {"role": "admin", "permissions": ["usage.read", "audit.read"]},
            "audit.read",
        ),
    ],
)
def test_a_key_never_grants_more_than_its_issuer_holds(
    org_key: Callable[..., str], caller_role: str, caller_permissions: list[str], body: dict[str, Any], missing: str
) -> None:
    caller = bearer(org_key(role=caller_role, permissions=caller_permissions))
    before = ApiKey.objects.count()
    response = caller.post(KEYS, {"name": "more", **body}, format="json")
    assert response.status_code == 403, response.json()
    assert (response.json()["code"], response.json()["requiredPermission"]) == ("permission_denied", missing)
    assert ApiKey.objects.count() == before
    assert not AuditEvent.objects.filter(action="api_key.create", changes__name="more").exists()
    # Within its own role and permissions it may.
    within = caller.post(KEYS, {"name": "same", "role": caller_role, "permissions": caller_permissions}, format="json")
    assert within.status_code == 201, within.json()


def test_another_organizations_keys_and_workspace_keys_are_404_and_never_listed(
    builder: APIClient, organization: Organization, org_key: Callable[..., str]
) -> None:
    theirs = _key_of(org_key(org=OrganizationFactory()))
    workspace_key = api_key_create(workspace=WorkspaceFactory(organization=organization), name="w", role="admin")
    for key_id in (theirs.id, workspace_key.api_key.id, "key_missing"):
        for method in ("get", "delete"):
            response = getattr(builder, method)(f"{KEYS}/{key_id}")
            assert (response.status_code, response.json()["code"]) == (404, "not_found"), (method, key_id)
    assert not ApiKey.objects.filter(revoked_at__isnull=False).exists()
    listed = {k["id"] for k in builder.get(KEYS).json()["organizationKeys"]}
    assert theirs.id not in listed and workspace_key.api_key.id not in listed


def test_revocation_is_refused_at_once_idempotent_and_recorded(org_key: Callable[..., str]) -> None:
    manager = org_key()
    builder = bearer(manager)
    plaintext = org_key(permissions=["usage.read"])
    target = _key_of(plaintext)
    client = bearer(plaintext)
    assert client.get(f"{API}/usage").status_code == 200  # now kept by this process
    first = builder.delete(f"{KEYS}/{target.id}")
    assert first.status_code == 200, first.json()
    assert (first.json()["status"], first.json()["id"]) == ("revoked", target.id)
    refused = client.get(f"{API}/usage")
    assert (refused.status_code, refused.json()["code"]) == (401, "unauthorized")
    again = builder.delete(f"{KEYS}/{target.id}")
    assert again.status_code == 200 and again.json()["revokedAt"] == first.json()["revokedAt"]
    events = AuditEvent.objects.filter(action="api_key.revoke", target_id=target.id)
    assert [(e.actor_type, e.actor_id) for e in events] == [("api_key", _key_of(manager).id)]


def test_the_last_key_able_to_manage_keys_cannot_revoke_itself(
    organization: Organization, org_key: Callable[..., str]
) -> None:
    own = org_key(permissions=["keys.manage"])
    me = _key_of(own)
    client = bearer(own)
    # Keys that cannot manage keys now do not count: one without keys.manage, a revoked one, an expired one.
    org_key(permissions=["workspaces.manage"])
    revoked = _key_of(org_key(permissions=["keys.manage"]))
    ApiKey.objects.filter(pk=revoked.pk).update(revoked_at=timezone.now())
    organization_key_create(
        organization=organization,
        name="expired",
        role="admin",
        permissions=["keys.manage"],
        expires_at=timezone.now() - dt.timedelta(minutes=1),
    )
    refused = client.delete(f"{KEYS}/{me.id}")
    assert (refused.status_code, refused.json()["code"]) == (409, "last_key_manager")
    assert "keys.manage" in refused.json()["message"]
    assert ApiKey.objects.get(pk=me.pk).revoked_at is None
    assert client.get(KEYS).status_code == 200
    # With another working manager, it may revoke itself, and is refused from the next request.
    other = client.post(KEYS, {"name": "successor", "role": "admin", "permissions": ["keys.manage"]}, format="json")
    assert other.status_code == 201, other.json()
    revoked_self = client.delete(f"{KEYS}/{me.id}")
    assert revoked_self.status_code == 200 and revoked_self.json()["status"] == "revoked"
    assert client.get(KEYS).status_code == 401
    # The successor is now the last one.
    successor = bearer(other.json()["key"])
    last = successor.delete(f"{KEYS}/{other.json()['id']}")
    assert (last.status_code, last.json()["code"]) == (409, "last_key_manager")


def test_the_list_is_cursor_paged_newest_first_in_a_fixed_number_of_queries(
    builder: APIClient, organization: Organization
) -> None:
    for n in range(5):
        organization_key_create(organization=organization, name=f"k{n}", role="viewer", permissions=[])
    expected = list(
        ApiKey.objects.filter(organization=organization).order_by("-created_at", "-id").values_list("id", flat=True)
    )
    assert len(expected) == 6
    seen: list[str] = []
    after: str | None = None
    pages = []
    while True:
        query = "limit=4" + (f"&after={after}" if after else "")
        page = builder.get(f"{KEYS}?{query}").json()
        pages.append((len(page["organizationKeys"]), page["hasMore"]))
        seen += [k["id"] for k in page["organizationKeys"]]
        after = page["nextCursor"]
        if not page["hasMore"]:
            break
    assert seen == expected and pages == [(4, True), (2, False)]
    # Caught up: the last cursor answers an empty page and keeps itself.
    tail = builder.get(f"{KEYS}?after={after}").json()
    assert (tail["organizationKeys"], tail["nextCursor"], tail["hasMore"]) == ([], after, False)

    def queries(limit: int) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert builder.get(f"{KEYS}?limit={limit}").status_code == 200
        return len(captured)

    assert queries(1) == queries(100)


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("limit=0", "validation_error"),
        ("limit=101", "validation_error"),
        ("after=not*a*cursor", "validation_error"),
        ("after=bm90IGEgY3Vyc29y", "validation_error"),  # base64 of text that is no cursor
        ("x=1", "unknown_parameter"),
    ],
)
def test_a_wrong_query_is_400(builder: APIClient, query: str, code: str) -> None:
    response = builder.get(f"{KEYS}?{query}")
    assert (response.status_code, response.json()["code"]) == (400, code), response.json()


def test_every_permission_may_be_passed_on_by_a_key_holding_them_all(builder: APIClient) -> None:
    response = builder.post(
        KEYS, {"name": "twin", "role": "admin", "permissions": list(ORGANIZATION_PERMISSIONS)}, format="json"
    )
    assert response.status_code == 201 and response.json()["permissions"] == list(ORGANIZATION_PERMISSIONS)


def _a_session_waits_on_a_lock() -> bool:
    with connection.cursor() as cursor:
        # A transaction sees pg_stat_activity as it was at its first look unless told to look again.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock')"
        )
        return bool(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)
def test_two_last_managers_revoking_themselves_at_once_leave_one(organization: Organization) -> None:
    """The organization's row is locked while the last manager is counted: of two keys holding
    keys.manage revoking themselves at once, one is refused. The first revocation stays
    uncommitted until the second one either waits on a lock or has finished, so both orders of
    events are forced rather than hoped for."""
    first, second = (
        organization_key_create(organization=organization, name=f"m{n}", role="admin", permissions=["keys.manage"])
        for n in range(2)
    )
    first_revoked, second_done = threading.Event(), threading.Event()

    def revoke_first() -> ApiKey:
        with transaction.atomic():
            revoked = organization_key_revoke(
                organization=organization, key_id=first.api_key.id, actor=system_actor("race")
            )
            first_revoked.set()
            for _ in range(6000):  # a bound for a broken run only: the first check that holds ends it
                if second_done.wait(0.01) or _a_session_waits_on_a_lock():
                    break
            else:
                raise AssertionError("the second revocation neither waited on a lock nor finished")
        return revoked

    def revoke_second() -> ApiKey:
        assert first_revoked.wait(30)
        try:
            return organization_key_revoke(
                organization=organization, key_id=second.api_key.id, actor=system_actor("race")
            )
        finally:
            second_done.set()

    results = run_concurrently([revoke_first, revoke_second])
    assert isinstance(results[0], ApiKey), results
    assert isinstance(results[1], Conflict) and results[1].code == "last_key_manager", results
    assert ApiKey.objects.filter(organization=organization, revoked_at__isnull=True).get().pk == second.api_key.pk
