"""Issue 31's "done when", against real processes (web, sandbox, worker, beat) over HTTP only: a
builder's organization key onboards its customer ``acme-42`` (a workspace, its key, a branded
connect page), the customer's account connects through the link and ends on the builder's
redirect, posts publish through the worker, staff put the organization on a plan whose post limit
then answers ``403 subscription_required``, the account is disconnected, the workspace is deleted
(the worker deactivates it) and restored within the grace period, and the audit log lists every
step with its actor. The builder uses the Python SDK (``clients/python``); plain HTTP only where
the SDK does not show what is checked (a status code, a header, the pages, the admin)."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from crosspost import Client
from crosspost.errors import Conflict, PermissionDenied
from django.contrib.admin.utils import quote

from tests.e2e.harness import PYTHON, ROOT, E2EStack, start_stack, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

LOGO = ROOT / "tests" / "fixtures" / "sample.png"
ORGANIZATION_PERMISSIONS = ("workspaces.manage", "keys.manage", "usage.read", "audit.read")
POSTS_BEFORE_THE_LIMIT = 2


# --- the admin, as a staff member's browser uses it -------------------------------------------


class _PostForm(HTMLParser):
    """What a browser submits from a page's POST form (the admin's change form; not its logout
    form): inputs, checked boxes, each select's selected option (with every option's label)."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, str] = {}
        self.options: dict[str, dict[str, str]] = {}  # select name -> {label: value}
        self._in_form = False
        self._select: str | None = None
        self._option: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = {name: value or "" for name, value in attrs}
        if tag == "form":
            self._in_form = attr.get("method", "").lower() == "post" and attr.get("id") != "logout-form"
        if not self._in_form:
            return
        name = attr.get("name", "")
        if tag == "input" and name:
            kind = attr.get("type", "text").lower()
            if kind in ("checkbox", "radio"):
                if "checked" in attr:
                    self.fields[name] = attr.get("value") or "on"
            elif kind not in ("submit", "button", "file", "image", "reset"):
                self.fields[name] = attr.get("value", "")
        elif tag == "select" and name:
            self._select = name
            self.fields.setdefault(name, "")
            self.options[name] = {}
        elif tag == "option" and self._select is not None:
            self._option = attr.get("value", "")
            if "selected" in attr:
                self.fields[self._select] = self._option

    def handle_data(self, data: str) -> None:
        if self._select is not None and self._option is not None and data.strip():
            self.options[self._select][data.strip()] = self._option

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._in_form = False
        elif tag == "select":
            self._select = None
        elif tag == "option":
            self._option = None


def _form(page: requests.Response) -> _PostForm:
    assert page.status_code == 200, (page.url, page.status_code, page.text[:300])
    parser = _PostForm()
    parser.feed(page.text)
    return parser


@pytest.fixture(scope="module")
def e2e_admin() -> Iterator[E2EStack]:
    """A stack of its own whose web processes serve what collectstatic wrote (DEBUG is off, as in
    a deployment: the admin's pages need the static manifest, as test_operations' stack does)."""
    outside = Path(tempfile.mkdtemp(prefix="crosspost-builder-"))
    static_root = outside / "static"
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "TEST_"))}
    subprocess.run(
        [PYTHON, "manage.py", "collectstatic", "--no-input", "-v", "0"],
        cwd=ROOT,
        env={**environ, "STATIC_ROOT": str(static_root), "DEBUG": "0", "TESTING": "0"},
        check=True,
    )
    try:
        with start_stack(STATIC_ROOT=str(static_root)) as running:
            yield running
    finally:
        shutil.rmtree(outside, ignore_errors=True)


@dataclass
class Staff:
    session: requests.Session
    username: str


@pytest.fixture
def staff(e2e_admin: E2EStack) -> Iterator[Staff]:
    """A staff member signed in to the admin (a superuser made with ``manage.py createsuperuser``)."""
    username, password = f"staff-{secrets.token_hex(3)}", secrets.token_urlsafe(16)
    e2e_admin.manage(
        "createsuperuser",
        "--noinput",
        "--username",
        username,
        "--email",
        f"{username}@example.com",
        env={**e2e_admin.env, "DJANGO_SUPERUSER_PASSWORD": password},
    )
    session = requests.Session()
    login = _form(session.get(f"{e2e_admin.web_url}/admin/login/", timeout=30))
    signed_in = session.post(
        f"{e2e_admin.web_url}/admin/login/?next=/admin/",
        data={**login.fields, "username": username, "password": password, "next": "/admin/"},
        timeout=30,
    )
    assert signed_in.status_code == 200 and signed_in.url == f"{e2e_admin.web_url}/admin/", signed_in.text[:500]
    yield Staff(session, username)
    session.close()


def _admin_save(session: requests.Session, url: str, **changes: str) -> requests.Response:
    """Open an admin form, change some fields, press Save; the admin answers 302 on success."""
    form = _form(session.get(url, timeout=30))
    saved = session.post(url, data={**form.fields, **changes, "_save": "Save"}, allow_redirects=False, timeout=30)
    assert saved.status_code == 302, saved.text[:2000]
    return saved


# --- the flow, step by step -----------------------------------------------------------------


def _audit_trail(builder: Client) -> list[dict[str, Any]]:
    """Every audit event of the organization, oldest first (the API pages newest first)."""
    events: list[dict[str, Any]] = []
    params: dict[str, Any] = {"limit": 100}
    while True:
        page = builder.list_audit_events(**params)
        events += page["events"]
        if not page["hasMore"]:
            return events[::-1]
        params["after"] = page["nextCursor"]


def _brand_and_connect(e2e: E2EStack, builder_in_acme: Client, acme: Client) -> str:
    """3. The builder brands Acme's connect page (a logo uploaded through the upload URLs), Acme's
    backend makes a link back to the builder's own page, and the customer connects Mastodon
    through it. Returns the new account's id."""
    logo_url = builder_in_acme.upload(LOGO)
    served = requests.get(logo_url, timeout=30)
    assert (served.status_code, served.content) == (200, LOGO.read_bytes()), logo_url
    branding = builder_in_acme.set_connect_branding(
        display_name="Acme Scheduler",
        logo_url=logo_url,
        accent_color="#0a7",
        support_url="https://help.acme.example/",
        platforms=["MASTODON", "BLUESKY"],
    )
    assert {k: v for k, v in branding.items() if k != "updatedAt"} == {
        "displayName": "Acme Scheduler",
        "logoUrl": logo_url,
        "accentColor": "#00aa77",
        "supportUrl": "https://help.acme.example/",
        "platforms": ["BLUESKY", "MASTODON"],
    }
    assert branding["updatedAt"] and acme.get_connect_branding() == branding

    back_to = f"{e2e.web_url}/healthz?from=acme-42"  # the builder's own page: any page that answers
    link = acme.create_connect_link(redirect_url=back_to)
    assert (link["redirectUrl"], link["platforms"]) == (back_to, ["BLUESKY", "MASTODON"])
    page = requests.get(link["url"], timeout=30)
    assert page.status_code == 200
    assert "<title>Connect your accounts · Acme Scheduler</title>" in page.text
    assert f'<img src="{logo_url}" alt="Acme Scheduler">' in page.text
    assert 'href="https://help.acme.example/"' in page.text

    # The customer picks Mastodon: our page, the platform's consent (the sandbox approves), our
    # callback, then 303 to the builder's page with the outcome.
    connected = requests.get(f"{link['url']}/MASTODON", timeout=60)
    assert connected.status_code == 200 and connected.history[-1].status_code == 303, connected.history
    landed = urlsplit(connected.url)
    assert f"{landed.scheme}://{landed.netloc}{landed.path}" == f"{e2e.web_url}/healthz"
    outcome = parse_qs(landed.query)
    account_id = outcome["accountId"][0]
    assert outcome == {
        "from": ["acme-42"],
        "outcome": ["connected"],
        "platform": ["MASTODON"],
        "accountId": [account_id],
        "accountIds": [account_id],
    }
    account = acme.get_account(account_id)
    assert (account["platform"], account["status"], account["disconnectedAt"]) == ("MASTODON", "active", None)
    assert [a["id"] for a in acme.list_accounts()["accounts"]] == [account_id]
    return account_id


def _post(acme: Client, account_id: str, text: str) -> dict[str, Any]:
    return dict(
        acme.create_post(
            content_type="TEXT", text=text, timezone="UTC", platforms=["MASTODON"], mastodon_connection_ids=[account_id]
        )
    )


def _publish_up_to_the_limit(
    e2e: E2EStack, builder: Client, acme: Client, staff: Staff, account_id: str
) -> tuple[str, str]:
    """4. Posts publish with Acme's key (the worker sends them). 5. Staff put the organization on
    a plan whose post limit is what it used: the next post is refused, naming the limit and the
    plan; GET /usage shows the count. A deleted post stays counted. Returns (the organization's
    id, the deleted post's id)."""
    published = []
    for n in range(POSTS_BEFORE_THE_LIMIT):
        created = _post(acme, account_id, f"Acme's post {n + 1}")
        post = acme.wait_for(created["postId"], timeout=90, interval=0.3)
        assert post["status"] == "COMPLETED", post
        [entry] = post["platforms"]
        assert (entry["platform"], entry["status"], entry["connectionId"]) == ("MASTODON", "PUBLISHED", account_id)
        published.append(post["id"])
    usage = builder.get_usage()
    assert (usage["plan"]["name"], usage["limits"]["postsPerMonth"]) == ("Default", None)
    assert usage["usage"]["postsPerMonth"] == POSTS_BEFORE_THE_LIMIT

    # Staff (the admin): a Starter plan allowing what the organization used, chosen for it.
    _admin_save(
        staff.session,
        f"{e2e.web_url}/admin/workspaces/plan/add/",
        name="Starter",
        max_posts_per_month=str(POSTS_BEFORE_THE_LIMIT),
    )
    organization_id = usage["organizationId"]
    change = f"{e2e.web_url}/admin/workspaces/organization/{quote(organization_id)}/change/"
    starter = _form(staff.session.get(change, timeout=30)).options["plan"]["Starter"]
    _admin_save(staff.session, change, plan=starter)

    expected = {
        "statusCode": 403,
        "error": "Forbidden",
        "message": (
            f"The Starter plan allows {POSTS_BEFORE_THE_LIMIT} posts this month; {POSTS_BEFORE_THE_LIMIT} are used. "
            "Ask for a plan with a higher limit."
        ),
        "code": "subscription_required",
        "limit": "postsPerMonth",
        "plan": "Starter",
        "max": POSTS_BEFORE_THE_LIMIT,
        "used": POSTS_BEFORE_THE_LIMIT,
    }
    with pytest.raises(PermissionDenied) as refused:
        _post(acme, account_id, "One too many")
    assert refused.value.body == expected
    usage = builder.get_usage()
    assert (usage["plan"]["name"], usage["limits"]["postsPerMonth"]) == ("Starter", POSTS_BEFORE_THE_LIMIT)
    assert usage["usage"]["postsPerMonth"] == POSTS_BEFORE_THE_LIMIT
    [acme_usage] = [w for w in usage["workspaces"] if w["externalId"] == "acme-42"]
    assert (acme_usage["postsPerMonth"], acme_usage["connectedAccounts"]) == (POSTS_BEFORE_THE_LIMIT, 1)

    acme.delete_post(published[0])  # recorded in the audit log; the month's count keeps it
    with pytest.raises(PermissionDenied) as still:
        _post(acme, account_id, "Still one too many")
    assert still.value.body == expected
    return organization_id, published[0]


def _disconnect(acme: Client, account_id: str) -> None:
    """6. Acme's key disconnects the account: it answers disconnected, and account.disconnected is
    in the event feed."""
    answer = acme.disconnect_account(account_id)
    assert (answer["id"], answer["status"]) == (account_id, "disconnected") and answer["disconnectedAt"]
    account = acme.get_account(account_id)
    assert (account["status"], account["tokenRevocation"]) == ("disconnected", "revoked"), account
    assert acme.list_accounts()["accounts"] == []

    def disconnected_events() -> list[dict[str, Any]]:
        events = acme.list_events(limit=100)["events"]
        return [e for e in events if e["event"] == "account.disconnected"]

    [event] = wait_for(disconnected_events, timeout=30, what="account.disconnected in GET /events")
    assert (event["data"]["account"]["id"], event["data"]["account"]["status"]) == (account_id, "disconnected")


def _delete_and_restore(
    e2e: E2EStack, builder: Client, builder_in_acme: Client, acme: Client, workspace_id: str
) -> None:
    """7. The builder deletes Acme's workspace: 202 with the job's status URL; every call in it is
    refused at once; the worker deactivates it; restored within the grace period, it works again."""
    deleted = requests.delete(
        f"{e2e.web_url}/api/v1/workspaces/{workspace_id}",
        headers={"Authorization": f"Bearer {builder.settings.api_key}"},
        timeout=30,
    )
    assert deleted.status_code == 202, deleted.text
    job = deleted.json()
    assert deleted.headers["Location"] == job["statusUrl"] == f"/api/v1/workspace-deletions/{job['id']}"
    assert (job["workspaceId"], job["status"], job["restoredAt"]) == (workspace_id, "pending", None)
    for caller in (acme, builder_in_acme):
        with pytest.raises(PermissionDenied) as refused:
            caller.list_posts()
        assert refused.value.code == "workspace_inactive"

    def deactivated() -> dict[str, Any] | None:
        status = requests.get(
            f"{e2e.web_url}{job['statusUrl']}",
            headers={"Authorization": f"Bearer {builder.settings.api_key}"},
            timeout=30,
        ).json()
        return status if status["status"] == "deactivated" else None

    status = wait_for(deactivated, timeout=60, what="the worker to deactivate the workspace")
    assert status["deactivatedAt"] and status["purgeAfter"] == job["purgeAfter"]
    assert (status["accountsDisconnected"], status["postsCancelled"], status["seriesStopped"]) == (0, 0, 0)
    assert builder.get_workspace(workspace_id)["deletedAt"] is not None
    with pytest.raises(PermissionDenied) as still:
        acme.get_me()
    assert still.value.code == "workspace_inactive"

    restored = builder.restore_workspace(workspace_id)
    assert (restored["id"], restored["deletedAt"]) == (workspace_id, None)
    assert builder.get_workspace_deletion(job["id"])["status"] == "restored"
    assert acme.get_me()["workspace"]["id"] == workspace_id  # its key works again
    assert [p["text"] for p in acme.list_posts()["posts"]] == ["Acme's post 2"]


def test_a_builder_runs_its_customer_from_onboarding_to_restore(e2e_admin: E2EStack, staff: Staff) -> None:
    api = f"{e2e_admin.web_url}/api/v1"
    permissions = [arg for permission in ORGANIZATION_PERMISSIONS for arg in ("--permission", permission)]
    organization_name = f"Builder {secrets.token_hex(3)}"
    printed = e2e_admin.manage(
        "create_organization_key",
        "--organization",
        organization_name,
        "--create-organization",
        "--role",
        "admin",
        "--name",
        "builder backend",
        *permissions,
    )
    org_key = printed.strip().splitlines()[-1].strip()
    assert org_key.startswith("cpo_")

    with Client(org_key, base_url=api, max_retries=0) as builder:
        # 1. The organization key creates the customer's workspace; its externalId is its own.
        workspace = builder.create_workspace(name="Acme", external_id="acme-42", metadata={"tier": "gold"})
        workspace_id = workspace["id"]
        assert (workspace["externalId"], workspace["metadata"], workspace["deletedAt"]) == (
            "acme-42",
            {"tier": "gold"},
            None,
        )
        with pytest.raises(Conflict) as taken:
            builder.create_workspace(name="Acme again", external_id="acme-42")
        assert taken.value.code == "conflict" and "externalId" in taken.value.message

        # 2. It mints the workspace's key: the secret is in this answer only.
        minted = builder.create_workspace_key(workspace_id, name="acme backend", role="admin")
        workspace_key = minted["key"]
        assert workspace_key.startswith("cpk_") and minted["workspaceId"] == workspace_id
        listed = builder.list_workspace_keys(workspace_id)
        assert [(k["id"], k["status"], k["role"]) for k in listed["apiKeys"]] == [(minted["id"], "active", "admin")]
        assert "key" not in listed["apiKeys"][0]
        assert workspace_key.rsplit("_", 1)[1] not in json.dumps(listed)

        with (
            Client(org_key, base_url=api, workspace_id=workspace_id, max_retries=0) as builder_in_acme,
            Client(workspace_key, base_url=api, max_retries=0) as acme,
        ):
            assert acme.get_me()["workspace"]["id"] == workspace_id
            account_id = _brand_and_connect(e2e_admin, builder_in_acme, acme)
            organization_id, deleted_post_id = _publish_up_to_the_limit(e2e_admin, builder, acme, staff, account_id)
            _disconnect(acme, account_id)
            _delete_and_restore(e2e_admin, builder, builder_in_acme, acme, workspace_id)

        # 8. The audit log lists every step with its actor, in order (the org key's own creation by
        # manage.py first: its target is the org key, the actor of the builder's steps).
        trail = _audit_trail(builder)
        org_key_id = trail[0]["target"]["id"]
        org_key_actor = ("api_key", org_key_id)
        acme_key_actor = ("api_key", minted["id"])
        steps = [(e["action"], (e["actor"]["type"], e["actor"]["id"]), e["workspaceId"]) for e in trail]
        assert steps == [
            ("api_key.create", ("system", "manage.py create_organization_key"), None),
            ("workspace.create", org_key_actor, workspace_id),
            ("api_key.create", org_key_actor, workspace_id),
            ("connect_branding.update", org_key_actor, workspace_id),
            ("organization.plan_change", ("staff", trail[4]["actor"]["id"]), None),
            ("post.delete", acme_key_actor, workspace_id),
            ("account.disconnect", acme_key_actor, workspace_id),
            ("workspace.delete", org_key_actor, workspace_id),
            ("workspace.restore", org_key_actor, workspace_id),
        ], json.dumps(trail, indent=1)
        targets = [(e["target"]["type"], e["target"]["id"]) for e in trail]
        assert targets == [
            ("api_key", org_key_id),
            ("workspace", workspace_id),
            ("api_key", minted["id"]),
            ("connect_branding", workspace_id),
            ("organization", organization_id),
            ("post", deleted_post_id),
            ("social_account", account_id),
            ("workspace", workspace_id),
            ("workspace", workspace_id),
        ]
        assert trail[4]["actor"]["name"] == staff.username
        assert trail[1]["changes"] == {"name": "Acme", "externalId": "acme-42"}
        assert trail[4]["changes"] == {"plan": "Starter"}
        public_part = "_".join(org_key.split("_")[:2])
        assert all(public_part in e["actor"]["name"] for e in trail if e["actor"]["id"] == org_key_id)
        assert all(e["requestId"] and e["sourceAddress"] == "127.0.0.1" for e in trail[1:]), trail
        recorded = json.dumps(trail)
        assert org_key.rsplit("_", 1)[1] not in recorded and workspace_key.rsplit("_", 1)[1] not in recorded
