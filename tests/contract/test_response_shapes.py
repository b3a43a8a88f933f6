"""Every body of every operation matches the schema the OpenAPI description documents for it.

One representative request per operation of ``/api/v1/openapi.json`` (its success body), plus
its error bodies: anonymous (401), an id that does not exist (404) where the path has one, a
viewer key lacking the permission (403) where the operation needs one the viewer lacks, and a
validation error (400) where a body or a query is read. Each response is validated with
``jsonschema`` against the documented response of its status code, made strict: an object
documented with ``properties`` may carry no other key, so a body that drifts from its schema in
either direction fails. ``test_every_operation_has_a_case`` fails when the description gains an
operation this module does not drive.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import pytest
from django.utils import timezone
from jsonschema import Draft4Validator
from rest_framework.test import APIClient

from audit.actors import system_actor
from core.fields import format_instant
from engagement.models import Comment
from posts.models import Post, PostStatus, PostTarget, TargetStatus
from tests.factories.accounts import SocialAccountFactory
from tests.factories.engagement import CommentFactory
from tests.factories.media import MediaFileFactory
from tests.factories.posts import PostFactory, PostTargetFactory
from tests.factories.webhooks import WebhookFactory
from tests.pipeline.helpers import connect_account
from webhooks.events import emit_event
from webhooks.models import Delivery, Event
from workspaces.lifecycle import workspace_delete
from workspaces.models import Workspace
from workspaces.roles import ORGANIZATION_PERMISSIONS, ROLE_PERMISSIONS
from workspaces.services import api_key_create, organization_key_create

API = "/api/v1"
METHODS = ("get", "post", "put", "patch", "delete")


def _strict(node: Any) -> Any:
    """The OpenAPI 3.0 schema as JSON Schema: ``nullable`` admits null, and an object with
    declared properties admits no other key (unless it says what others it admits)."""
    if isinstance(node, list):
        return [_strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: _strict(value) for key, value in node.items() if key != "nullable"}
    if "properties" in node and "additionalProperties" not in node:
        converted["additionalProperties"] = False
    if node.get("nullable"):
        converted = {"anyOf": [converted, {"type": "null"}]}
    return converted


_description: dict[str, Any] = {}


def description() -> dict[str, Any]:
    if not _description:
        response = APIClient().get(f"{API}/openapi.json")
        assert response.status_code == 200
        _description.update(json.loads(response.content))
    return _description


def operations() -> dict[str, tuple[str, str, dict[str, Any]]]:
    """operationId → (method, path, operation) of every operation of the description."""
    found = {}
    for path, item in description()["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                found[operation["operationId"]] = (method, path, operation)
    return found


def schema_errors(operation: dict[str, Any], status: int, body: Any) -> list[str]:
    responses = operation["responses"]
    assert str(status) in responses, f"status {status} is not documented (documented: {sorted(responses)})"
    response = responses[str(status)]
    components = description()["components"]
    if "$ref" in response:
        response = components["responses"][response["$ref"].rsplit("/", 1)[-1]]
    schema = response.get("content", {}).get("application/json", {}).get("schema")
    assert schema is not None, f"status {status} documents no JSON body"
    document = _strict({**schema, "components": components})
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in Draft4Validator(document).iter_errors(body)]


@dataclass
class Ctx:
    workspace: Workspace
    api: APIClient
    accounts: dict[str, str] = field(default_factory=dict)
    _org: APIClient | None = None
    _org_key_id: str = ""

    @property
    def org(self) -> APIClient:
        """An organization key of the workspace's organization (admin role, every organization
        permission): the caller of the organization operations."""
        if self._org is None:
            issued = organization_key_create(
                organization=self.workspace.organization,
                name="shapes org",
                role="admin",
                permissions=list(ORGANIZATION_PERMISSIONS),
            )
            self._org, self._org_key_id = APIClient(), issued.api_key.id
            self._org.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.plaintext}")
        return self._org

    def org_key_id(self) -> str:
        """The id of :attr:`org`'s key: the organization's only key holding keys.manage."""
        assert self.org is not None
        return self._org_key_id

    def organization_key(self) -> str:
        """Another key of the organization, holding no organization permission (one to read or revoke)."""
        return str(
            organization_key_create(
                organization=self.workspace.organization, name="listed org", role="viewer", permissions=[]
            ).api_key.id
        )

    def deletion(self) -> str:
        return str(
            workspace_delete(
                organization=self.workspace.organization, workspace_id=self.workspace.id, actor=system_actor("t")
            ).id
        )

    def workspace_key(self) -> str:
        return str(api_key_create(workspace=self.workspace, name="listed", role="viewer").api_key.id)

    def post_body(self, **extra: Any) -> dict[str, Any]:
        return {
            "contentType": "TEXT",
            "text": "Shapes",
            "timezone": "UTC",
            "platforms": ["BLUESKY"],
            "blueskyConnectionIds": [self.accounts["BLUESKY"]],
            **extra,
        }

    def created_post(self, **extra: Any) -> str:
        response = self.api.post(f"{API}/social-posts", self.post_body(**extra), format="json")
        assert response.status_code == 201, response.json()
        return str(response.json()["postId"])

    def series(self) -> str:
        start = format_instant(timezone.now() + dt.timedelta(days=2))
        response = self.api.post(
            f"{API}/social-posts",
            self.post_body(
                platforms=["MASTODON"],
                blueskyConnectionIds=[],
                mastodonConnectionIds=[self.accounts["MASTODON"]],
                scheduledAt=start,
                recurrence={"frequency": "DAILY", "maxOccurrences": 3},
            ),
            format="json",
        )
        assert response.status_code == 201, response.json()
        return str(response.json()["recurringPostId"])

    def failed_post(self) -> str:
        post = PostFactory(workspace=self.workspace, status=PostStatus.FAILED)
        PostTargetFactory(
            post=post,
            platform="BLUESKY",
            account_id=self.accounts["BLUESKY"],
            status=TargetStatus.FAILED,
            error_message="rejected",
            error_code="content_rejected",
        )
        return str(post.id)

    def published_post(self, platform: str = "INSTAGRAM") -> str:
        """A COMPLETED post on one platform (INSTAGRAM by default: it neither edits nor deletes, so an edit or an
        unpublish of it answers at once, never queuing a platform call)."""
        post = PostFactory(workspace=self.workspace, status=PostStatus.COMPLETED, text="Live")
        PostTargetFactory(
            post=post,
            platform=platform,
            account_id=self.accounts[platform],
            status=TargetStatus.PUBLISHED,
            platform_post_id="remote-1",
            text="Live",
        )
        return str(post.id)

    def webhook(self) -> str:
        return str(WebhookFactory(workspace=self.workspace, url="http://127.0.0.1:9/closed").id)

    def comment(self, platform: str = "FACEBOOK", **extra: Any) -> str:
        """Someone's comment (and a reply to it) under a published post of the workspace's ``platform``
        account, as a sync stores them. FACEBOOK's API takes every comment action; MASTODON hides
        none and deletes only the account's own, INSTAGRAM likes none."""
        target = PostTargetFactory(
            post=PostFactory(workspace=self.workspace, status=PostStatus.COMPLETED, text="Live"),
            platform=platform,
            account_id=self.accounts[platform],
            status=TargetStatus.PUBLISHED,
            platform_post_id=f"remote-{platform.lower()}",
        )
        comment = CommentFactory(target=target, **extra)
        CommentFactory(target=target, parent=comment, parent_platform_id=comment.platform_comment_id)
        return str(comment.id)


Call = tuple[Any, ...]  # (method, path, body) and optionally a dict of headers
Cases = Callable[[Ctx], list[Call]]


def _later(days: int = 3) -> str:
    return format_instant(timezone.now() + dt.timedelta(days=days)) or ""


def _delivery(ctx: Ctx) -> list[Call]:
    webhook = ctx.webhook()
    emit_event(workspace_id=ctx.workspace.id, name="post.published", data={"post": {"id": "post_x"}})
    delivery = Delivery.objects.get(webhook_id=webhook)
    return [
        ("post", f"/webhooks/{webhook}/deliveries/{delivery.id}/redeliver", None),
        ("post", f"/webhooks/{webhook}/deliveries/dlv_missing/redeliver", None),
    ]


def _events(ctx: Ctx) -> list[Call]:
    image = {"jobId": "aij_1", "sessionId": None, "prompt": "a fox", "error": "refused"}
    emit_event(workspace_id=ctx.workspace.id, name="image.failed", data={"image": image})
    Event.objects.filter(workspace=ctx.workspace).update(created_at=timezone.now() - dt.timedelta(minutes=1))
    return [
        ("get", "/events", None),
        ("get", "/events?type=image.failed&limit=1", None),
        ("get", "/events?limit=0", None),
    ]


def _ai_image(ctx: Ctx) -> list[Call]:
    job = ctx.api.post(f"{API}/ai/images", {"prompt": "a red fox"}, format="json").json()["jobId"]
    return [("get", f"/ai/images/{job}", None)]


def _media_file(ctx: Ctx) -> list[Call]:
    probe = {"type": "image", "width": 4, "height": 3, "displayWidth": 4, "displayHeight": 3, "frameCount": 1}
    probe |= {"durationSeconds": None, "format": "PNG", "orientation": 1, "colorMode": "RGB", "animated": False}
    ready = MediaFileFactory(workspace=ctx.workspace, uploaded=True, probe_status="ready", probe=probe)
    broken = MediaFileFactory(workspace=ctx.workspace, uploaded=True, probe_status="unusable", probe_error="broken")
    return [
        ("get", f"/media-files?{urlencode({'url': ready.public_url})}", None),
        ("get", f"/media-files?{urlencode({'url': broken.public_url})}", None),
        ("get", "/media-files?url=https://elsewhere.example/x.png", None),
        ("get", "/media-files", None),
    ]


def _connect_link(ctx: Ctx) -> list[Call]:
    token = ctx.api.post(f"{API}/connect-links", {}, format="json").json()["token"]
    return [("delete", f"/connect-links/{token}", None)]


QUEUE = {"timezone": "Europe/Berlin", "slots": [{"day": "MON", "time": "09:30"}]}


def _queued(ctx: Ctx) -> str:
    """The MASTODON account, given a posting queue."""
    account = ctx.accounts["MASTODON"]
    assert ctx.api.put(f"{API}/social-accounts/{account}/queue", QUEUE, format="json").status_code == 200
    return account


# operationId → the requests that show its bodies (success first, then its own error cases).
CASES: dict[str, Cases] = {
    "generateCaption": lambda c: [
        ("post", "/ai/captions", {"prompt": "launch", "platform": "TWITTER"}),
        ("post", "/ai/captions", {"prompt": ""}),
    ],
    "refineCaption": lambda c: [
        ("post", "/ai/captions/refine", {"prompt": "shorter", "originalText": "a long caption"}),
        ("post", "/ai/captions/refine", {"prompt": "shorter"}),
    ],
    "createAiImage": lambda c: [
        ("post", "/ai/images", {"prompt": "a lighthouse", "aspectRatio": "16:9"}),
        ("post", "/ai/images", {"prompt": 5}),
    ],
    "getAiImage": _ai_image,
    "getMediaFile": _media_file,
    "getAnalyticsOverview": lambda c: [
        ("get", "/analytics/overview?from=2026-01-01&to=2026-01-31", None),
        ("get", "/analytics/overview?x=1", None),
    ],
    "getAnalyticsPlatformBreakdown": lambda c: [
        ("get", "/analytics/platform-breakdown?from=2026-01-01&to=2026-01-31", None),
        ("get", "/analytics/platform-breakdown?x=1", None),
    ],
    "listAnalyticsPosts": lambda c: [
        ("get", "/analytics/posts?from=2026-01-01&to=2026-01-31", None),
        ("get", "/analytics/posts?limit=0", None),
    ],
    "listTopAnalyticsPosts": lambda c: [
        ("get", "/analytics/top-posts?from=2026-01-01&to=2026-01-31", None),
        ("get", "/analytics/top-posts?limit=51", None),
    ],
    "listDiscoveredAnalyticsPosts": lambda c: [
        ("get", "/analytics/discovered-posts?from=2026-01-01&to=2026-01-31", None),
        ("get", "/analytics/discovered-posts?limit=1001", None),
    ],
    "requestAnalyticsSync": lambda c: [("post", "/analytics/sync", {})],
    "getAnalyticsSyncStatus": lambda c: [("get", "/analytics/sync-status", None)],
    "getAnalyticsTimeseries": lambda c: [
        ("get", "/analytics/timeseries?from=2026-01-01&to=2026-01-31", None),
        ("get", "/analytics/timeseries?granularity=HOURLY", None),
    ],
    "createConnectLink": lambda c: [
        ("post", "/connect-links", {}),
        ("post", "/connect-links", {"redirectUrl": "https://93.184.215.14/done", "platforms": ["MASTODON"]}),
        ("post", "/connect-links", {"redirectUrl": "ftp://nowhere"}),
    ],
    "getConnectBranding": lambda c: [("get", "/connect-branding", None), ("get", "/connect-branding?x=1", None)],
    "setConnectBranding": lambda c: [
        ("put", "/connect-branding", {"displayName": "Acme", "accentColor": "#f60", "platforms": ["MASTODON"]}),
        ("put", "/connect-branding", {"accentColor": "orange"}),
        ("put", "/connect-branding", {"logoUrl": "https://elsewhere.example/logo.png"}),
    ],
    "deleteConnectLink": _connect_link,
    "getMe": lambda c: [("get", "/me", None)],
    "listRecurringPosts": lambda c: [c.series() and ("get", "/recurring-posts", None)],
    "getRecurringPost": lambda c: [("get", f"/recurring-posts/{c.series()}", None)],
    "deleteRecurringPost": lambda c: [("delete", f"/recurring-posts/{c.series()}", None)],
    "listRecurringPostOccurrences": lambda c: [("get", f"/recurring-posts/{c.series()}/occurrences", None)],
    "pauseRecurringPost": lambda c: [("post", f"/recurring-posts/{c.series()}/pause", {})],
    "resumeRecurringPost": lambda c: [
        ("post", f"/recurring-posts/{(series := c.series())}/pause", {}),
        ("post", f"/recurring-posts/{series}/resume", {}),
    ],
    "listSocialAccounts": lambda c: [("get", "/social-accounts", None), ("get", "/social-accounts?limit=5", None)],
    "getSocialAccount": lambda c: [
        ("get", f"/social-accounts/{c.accounts['MASTODON']}", None),
        ("get", f"/social-accounts/{c.accounts['MASTODON']}?x=1", None),
    ],
    "disconnectSocialAccount": lambda c: [
        ("delete", f"/social-accounts/{c.accounts['MASTODON']}", None),
        ("delete", f"/social-accounts/{c.accounts['MASTODON']}", None),  # a repeat: the same answer
    ],
    "checkSocialAccount": lambda c: [
        ("post", f"/social-accounts/{c.accounts['FACEBOOK']}/check", {}),
        ("post", f"/social-accounts/{c.accounts['BLUESKY']}/check", {}),
    ],
    "searchInstagramAudio": lambda c: [
        ("get", f"/social-accounts/{c.accounts['INSTAGRAM']}/instagram-audio?audioType=music&searchQuery=summer", None),
        ("get", f"/social-accounts/{c.accounts['INSTAGRAM']}/instagram-audio?x=1", None),
    ],
    "listPinterestBoards": lambda c: [
        ("get", f"/social-accounts/{c.accounts['PINTEREST']}/pinterest-boards", None),
        ("get", f"/social-accounts/{c.accounts['PINTEREST']}/pinterest-boards?x=1", None),
    ],
    "listPosts": lambda c: [
        c.created_post(scheduledAt=_later()) and ("get", "/social-posts", None),
        ("get", "/social-posts?limit=0", None),
    ],
    "createPost": lambda c: [
        ("post", "/social-posts", c.post_body(saveAsDraft=True)),
        ("post", "/social-posts", c.post_body(scheduledAt=_later())),
        ("post", "/social-posts", c.post_body(platforms=["NOWHERE"])),
    ],
    "getPost": lambda c: [("get", f"/social-posts/{c.created_post(scheduledAt=_later())}", None)],
    "updatePost": lambda c: [
        ("patch", f"/social-posts/{(post := c.created_post(saveAsDraft=True))}", {"text": "Changed"}),
        ("patch", f"/social-posts/{post}", {"text": 5}),
        ("patch", f"/social-posts/{c.published_post()}", {"text": "Edited"}),  # a published post: editReport
    ],
    "deletePost": lambda c: [("delete", f"/social-posts/{c.created_post(saveAsDraft=True)}", None)],
    "publishPost": lambda c: [
        ("post", f"/social-posts/{(post := c.created_post(saveAsDraft=True))}/publish", {"scheduledAt": _later()}),
        ("post", f"/social-posts/{post}/publish", {}),  # a scheduled post: now
        ("post", f"/social-posts/{post}/publish", {}),  # no longer a draft nor scheduled: 400 post_not_draft
    ],
    "getPostResults": lambda c: [("get", f"/social-posts/{c.failed_post()}/results", None)],
    "retryPost": lambda c: [
        ("post", f"/social-posts/{c.failed_post()}/retry", {}),
        ("post", f"/social-posts/{c.failed_post()}/retry", {"platformIds": ["MASTODON"]}),
    ],
    "unpublishPost": lambda c: [
        ("post", f"/social-posts/{c.published_post()}/unpublish", {}),
        ("post", f"/social-posts/{c.failed_post()}/unpublish", {}),  # never published: 400 post_not_published
    ],
    "unschedulePost": lambda c: [
        ("post", f"/social-posts/{c.created_post(scheduledAt=_later())}/unschedule", {}),
    ],
    "bulkCreatePosts": lambda c: [
        (
            "post",
            "/social-posts/bulk",
            {
                "platforms": ["BLUESKY"],
                "timezone": "UTC",
                "blueskyConnectionIds": [c.accounts["BLUESKY"]],
                "posts": [
                    {"contentType": "TEXT", "text": "One", "scheduledAt": _later()},
                    {"contentType": "TEXT", "text": "", "scheduledAt": _later()},
                ],
            },
        ),
        ("post", "/social-posts/bulk", {"posts": []}),
    ],
    "validatePost": lambda c: [
        ("post", "/social-posts/validate", c.post_body()),
        ("post", "/social-posts/validate", {"contentType": "TEXT"}),
    ],
    "createUploadUrls": lambda c: [
        ("post", "/upload-urls", {"files": [{"fileName": "photo.jpg", "mimeType": "image/jpeg"}]}),
        ("post", "/upload-urls", {"files": []}),
    ],
    "listWebhooks": lambda c: [c.webhook() and ("get", "/webhooks", None)],
    "createWebhook": lambda c: [
        ("post", "/webhooks", {"url": "http://127.0.0.1:9/created"}),
        ("post", "/webhooks", {"url": "not a url"}),
    ],
    "getWebhook": lambda c: [("get", f"/webhooks/{c.webhook()}", None)],
    "updateWebhook": lambda c: [
        ("patch", f"/webhooks/{(hook := c.webhook())}", {"active": False}),
        ("patch", f"/webhooks/{hook}", {"active": "maybe"}),
    ],
    "deleteWebhook": lambda c: [("delete", f"/webhooks/{c.webhook()}", None)],
    "listWebhookDeliveries": lambda c: [
        ("get", f"/webhooks/{(hook := c.webhook())}/deliveries", None),
        ("get", f"/webhooks/{hook}/deliveries?limit=0", None),
    ],
    "redeliverWebhookDelivery": _delivery,
    "testWebhook": lambda c: [("post", f"/webhooks/{c.webhook()}/test", {})],
    "rotateWebhookSecret": lambda c: [
        ("post", f"/webhooks/{(hook := c.webhook())}/rotate-secret", {"graceSeconds": 60}),
        ("post", f"/webhooks/{hook}/rotate-secret", {"graceSeconds": "soon"}),
    ],
    "listEvents": _events,
    "listWorkspaces": lambda c: [("get", "/workspaces", None)],
    "getAccountQueue": lambda c: [
        ("get", f"/social-accounts/{_queued(c)}/queue", None),
        ("get", f"/social-accounts/{c.accounts['BLUESKY']}/queue", None),
        ("get", f"/social-accounts/{c.accounts['BLUESKY']}/queue?x=1", None),
    ],
    "setAccountQueue": lambda c: [
        ("put", f"/social-accounts/{c.accounts['MASTODON']}/queue", QUEUE),
        ("put", f"/social-accounts/{c.accounts['MASTODON']}/queue", {"timezone": "UTC", "slots": [{"day": "X"}]}),
    ],
    "listAccountQueueSlots": lambda c: [
        ("get", f"/social-accounts/{_queued(c)}/queue/next?count=3", None),
        ("get", f"/social-accounts/{c.accounts['MASTODON']}/queue/next?count=0", None),
    ],
    "listComments": lambda c: [
        c.comment() and ("get", "/comments", None),
        ("get", "/comments?unanswered=true&platforms=FACEBOOK&q=buy&limit=1", None),
        ("get", "/comments?unanswered=maybe", None),
        ("get", "/comments?after=not-a-cursor", None),
    ],
    "getComment": lambda c: [
        ("get", f"/comments/{(comment := c.comment())}", None),
        ("get", f"/comments/{comment}?x=1", None),
    ],
    "requestCommentSync": lambda c: [("post", "/comments/sync", {}), ("post", "/comments/sync", {})],
    "replyToComment": lambda c: [
        ("post", f"/comments/{(comment := c.comment())}/replies", {"text": "Thanks, it ships next week!"}),
        ("post", f"/comments/{comment}/replies", {"text": " "}),
        ("post", f"/comments/{comment}/replies", {"text": "x" * 8001}),  # FACEBOOK's comment limit is 8000
    ],
    "hideComment": lambda c: [
        ("post", f"/comments/{c.comment()}/hide", {}),
        ("post", f"/comments/{c.comment('MASTODON')}/hide", {}),  # 400 comment_action_not_supported
    ],
    "unhideComment": lambda c: [("post", f"/comments/{c.comment(hidden=True)}/unhide", {})],
    "likeComment": lambda c: [
        ("post", f"/comments/{c.comment()}/like", {}),
        ("post", f"/comments/{c.comment('INSTAGRAM')}/like", {}),  # 400 comment_action_not_supported
    ],
    "deleteComment": lambda c: [
        ("delete", f"/comments/{c.comment()}", None),
        ("delete", f"/comments/{c.comment('MASTODON')}", None),  # another's: 400 comment_action_not_supported
    ],
    "listPostComments": lambda c: [
        ("get", f"/social-posts/{Comment.objects.get(id=c.comment()).post_id}/comments", None),
        ("get", f"/social-posts/{c.published_post()}/comments?x=1", None),
    ],
    "listPlatforms": lambda c: [("get", "/platforms", None), ("get", "/platforms?x=1", None)],
    "getUsage": lambda c: [("get", "/usage", None), ("get", "/usage?x=1", None)],
    # Organization operations (ORGANIZATION_OPERATIONS: sent by an organization key of the workspace's own).
    "createWorkspace": lambda c: [
        ("post", "/workspaces", {"name": "Shapes customer", "externalId": "acme-42", "metadata": {"tier": "gold"}}),
        ("post", "/workspaces", {"name": "Shapes customer"}),  # 409: the name is taken
        ("post", "/workspaces", {"name": 5}),
    ],
    "getWorkspace": lambda c: [("get", f"/workspaces/{c.workspace.id}", None)],
    "updateWorkspace": lambda c: [
        ("patch", f"/workspaces/{c.workspace.id}", {"externalId": "cust-1", "metadata": {"n": 1}}),
        ("patch", f"/workspaces/{c.workspace.id}", {"metadata": [1]}),
    ],
    "deleteWorkspace": lambda c: [("delete", f"/workspaces/{c.workspace.id}", None)],
    "restoreWorkspace": lambda c: [c.deletion() and ("post", f"/workspaces/{c.workspace.id}/restore", {})],
    "getWorkspaceDeletion": lambda c: [("get", f"/workspace-deletions/{c.deletion()}", None)],
    "listWorkspaceApiKeys": lambda c: [c.workspace_key() and ("get", f"/workspaces/{c.workspace.id}/api-keys", None)],
    "createWorkspaceApiKey": lambda c: [
        ("post", f"/workspaces/{c.workspace.id}/api-keys", {"name": "made", "role": "editor"}),
        ("post", f"/workspaces/{c.workspace.id}/api-keys", {"name": "made", "role": "owner"}),
    ],
    "revokeWorkspaceApiKey": lambda c: [("delete", f"/workspaces/{c.workspace.id}/api-keys/{c.workspace_key()}", None)],
    "listAuditEvents": lambda c: [
        c.workspace_key() and ("get", "/audit-events", None),
        ("get", "/audit-events?limit=0", None),
    ],
    "listOrganizationApiKeys": lambda c: [
        c.organization_key() and ("get", "/organization-keys", None),
        ("get", "/organization-keys?limit=0", None),
    ],
    "createOrganizationApiKey": lambda c: [
        ("post", "/organization-keys", {"name": "made", "role": "editor", "permissions": ["usage.read"]}),
        ("post", "/organization-keys", {"name": "made", "role": "owner", "permissions": []}),
    ],
    "getOrganizationApiKey": lambda c: [("get", f"/organization-keys/{c.organization_key()}", None)],
    "revokeOrganizationApiKey": lambda c: [
        ("delete", f"/organization-keys/{c.organization_key()}", None),
        ("delete", f"/organization-keys/{c.org_key_id()}", None),  # its last key managing keys: 409
    ],
}
# Operations on the organization: only an organization key reaches them.
ORGANIZATION_OPERATIONS = {
    "createWorkspace",
    "getWorkspace",
    "updateWorkspace",
    "deleteWorkspace",
    "restoreWorkspace",
    "getWorkspaceDeletion",
    "listWorkspaceApiKeys",
    "createWorkspaceApiKey",
    "revokeWorkspaceApiKey",
    "listAuditEvents",
    "listOrganizationApiKeys",
    "createOrganizationApiKey",
    "getOrganizationApiKey",
    "revokeOrganizationApiKey",
}


def _seed(workspace: Workspace, operation_id: str) -> dict[str, str]:
    """Accounts of the workspace; those whose operations call their platform are connected to
    the simulators through their own flow, so that the call succeeds."""
    accounts = {}
    for platform in ("FACEBOOK", "INSTAGRAM", "PINTEREST", "BLUESKY", "MASTODON"):
        if operation_id in SIMULATED.get(platform, ()):
            accounts[platform] = str(connect_account(workspace, platform).id)
        else:
            accounts[platform] = str(SocialAccountFactory(workspace=workspace, platform=platform).id)
    return accounts


SIMULATED = {
    "FACEBOOK": {"checkSocialAccount"},
    "INSTAGRAM": {"searchInstagramAudio"},
    "PINTEREST": {"listPinterestBoards"},
}


def _missing(path: str) -> str:
    parts = [("zz_missing" if part.startswith("{") else part) for part in path.split("/")]
    return "/".join(parts)


def _send(client: APIClient, method: str, path: str, body: Any) -> Any:
    kwargs: dict[str, Any] = {"format": "json"} if body is not None else {}
    return getattr(client, method)(f"{API}{path}", body, **kwargs)


def test_every_operation_has_a_case(db: Any) -> None:
    documented = set(operations())
    assert documented - set(CASES) == set(), "operations of the description without a case here"
    assert set(CASES) - documented == set(), "cases of operations the description no longer has"


@pytest.fixture
def shapes_settings(settings: Any, tmp_path: Any, sandbox: str) -> None:
    settings.STORAGE = "local"
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.PUBLIC_BASE_URL = "https://media.example.test"
    settings.AI_IMAGE_PROVIDER = "offline"
    settings.AI_CAPTION_PROVIDER = "offline"
    settings.AI_MONTHLY_UNITS = None
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 1.0


@pytest.mark.parametrize("operation_id", sorted(CASES))
def test_bodies_match_the_description(
    operation_id: str, workspace: Workspace, client_for: Callable[..., APIClient], shapes_settings: None
) -> None:
    method, path, operation = operations()[operation_id]
    ctx = Ctx(workspace=workspace, api=client_for("admin"), accounts=_seed(workspace, operation_id))
    caller = ctx.org if operation_id in ORGANIZATION_OPERATIONS else ctx.api
    calls = [(caller, *call) for call in CASES[operation_id](ctx)]
    calls.append((APIClient(), method, path.replace("{", "").replace("}", ""), None))  # anonymous: 401
    if "{" in path:
        calls.append((caller, method, _missing(path), {} if method == "post" else None))  # 404
    permission = operation.get("x-required-permission")
    if permission and permission not in ROLE_PERMISSIONS["viewer"]:
        calls.append((client_for("viewer"), method, _missing(path), {} if method == "post" else None))  # 403
    statuses = []
    for client, call_method, call_path, body in calls:
        response = _send(client, call_method, call_path, body)
        assert response.status_code < 500, (call_method, call_path, response.content)
        errors = schema_errors(operation, response.status_code, response.json())
        assert not errors, (call_method, call_path, response.status_code, response.json(), errors)
        statuses.append((response.status_code, call_path, response.json()))
    assert any(200 <= status < 300 for status, _, _ in statuses), statuses  # the success body was shown
    assert any(400 <= status < 500 for status, _, _ in statuses), statuses


def test_post_records_show_the_documented_fields_in_their_order(workspace: Workspace, api: APIClient) -> None:
    """The post record and ``PostOutput`` come from one declaration (``posts.rendering``); a body's
    keys are the documented fields in their documented order: the post's, then in each entry its
    fixed fields, its platform's config values (and their client aliases), then its media; a post
    with a late policy adds its keys, one with a thread ``thread`` last, and its entries ``threadItems`` last, one
    with a first comment ``firstComment`` after those, in the post and in each entry, and one with
    per-platform first comments ``platformFirstComments`` last (documented, in order)."""
    from posts.rendering import (
        ENTRY,
        ENTRY_CONFIG,
        ENTRY_FIRST_COMMENT,
        ENTRY_MEDIA,
        ENTRY_THREAD,
        LATE,
        POST,
        POST_FIRST_COMMENT,
        POST_PLATFORM_FIRST_COMMENTS,
        POST_THREAD,
        POST_UNPUBLISHED,
        PlatformEntryOutput,
        PostOutput,
    )

    post = PostFactory(workspace=workspace, status=PostStatus.SCHEDULED, scheduled_at=timezone.now())
    for platform in ("INSTAGRAM", "TIKTOK", "YOUTUBE", "BLUESKY"):
        PostTargetFactory(post=post, platform=platform, config={"postType": "REELS", "tags": ["a"]})
    record = api.get(f"{API}/social-posts/{post.id}").json()
    assert list(record) == list(POST.keys)
    assert list(PostOutput().fields) == (
        list(POST.keys)
        + list(LATE.keys)
        + list(POST_THREAD.keys)
        + list(POST_FIRST_COMMENT.keys)
        + list(POST_PLATFORM_FIRST_COMMENTS.keys)
        + list(POST_UNPUBLISHED.keys)
    )
    documented = list(PlatformEntryOutput().fields)
    assert len(record["platforms"]) == 4
    for entry in record["platforms"]:
        config = list(ENTRY_CONFIG[entry["platform"]].keys) if entry["platform"] in ENTRY_CONFIG else []
        assert list(entry) == list(ENTRY.keys) + config + list(ENTRY_MEDIA.keys)
        assert [key for key in documented if key in entry] == list(entry)
    Post.objects.filter(id=post.id).update(thread=[{"text": "reply", "mediaUrls": []}])
    threaded = api.get(f"{API}/social-posts/{post.id}").json()
    assert list(threaded) == list(POST.keys) + list(POST_THREAD.keys)
    assert threaded["thread"] == [{"text": "reply", "mediaUrls": []}]
    Post.objects.filter(id=post.id).update(late_policy="skip", max_lateness_seconds=60)
    Post.objects.filter(id=post.id).update(
        first_comment={"text": "first!", "delaySeconds": 5}, unpublished_at=timezone.now()
    )
    PostTarget.objects.filter(post=post, platform="BLUESKY").update(first_comment_text="sky's own")
    every = api.get(f"{API}/social-posts/{post.id}").json()
    assert list(every) == list(PostOutput().fields)  # every optional key, in the documented order
    assert every["firstComment"] == {"text": "first!", "delaySeconds": 5}
    assert every["platformFirstComments"] == [{"platform": "BLUESKY", "text": "sky's own"}]
    for entry in threaded["platforms"]:
        assert list(entry)[-1] == "threadItems" and entry["threadItems"] == []
        assert [key for key in documented if key in entry] == list(entry)
    for entry in every["platforms"]:
        assert list(entry)[-2:] == ["threadItems", "firstComment"]
        assert entry["firstComment"] == {"status": "PENDING", "platformCommentId": None}
        assert [key for key in documented if key in entry] == list(entry)
    assert list(ENTRY_THREAD.keys) == ["threadItems"]
    assert list(ENTRY_FIRST_COMMENT.keys) == ["firstComment"]
    tiktok = next(entry for entry in record["platforms"] if entry["platform"] == "TIKTOK")
    assert tiktok["tiktokBrandedOwnBrand"] is None and "instagramPostType" not in tiktok
    youtube = next(entry for entry in record["platforms"] if entry["platform"] == "YOUTUBE")
    assert youtube["youtubeTags"] == ["a"] and youtube["youtubePostType"] == "REELS"
