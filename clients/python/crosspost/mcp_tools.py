"""The MCP tools: which API operations an agent gets, and their input schemas taken from the
service's OpenAPI description (``/openapi.json`` under the API base)."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from crosspost.operations import OPERATIONS


@dataclass(frozen=True)
class ToolSpec:
    name: str
    operation: str  # SDK method of OPERATIONS, or "" for a helper with its own schema
    description: str


TOOLS: list[ToolSpec] = [
    ToolSpec("list_accounts", "list_accounts", "The connected social accounts (ids to aim posts at)."),
    ToolSpec("get_account", "get_account", "One social account by id, disconnected ones included."),
    ToolSpec(
        "disconnect_account",
        "disconnect_account",
        "Disconnect a social account: its token is revoked and dropped, its posts not yet sent fail with "
        "account_disconnected, its series pause; its history stays. Ask the person first: it cannot be undone "
        "but by connecting the account again.",
    ),
    ToolSpec("validate_post", "validate_post", "Check a post against every target platform's rules; creates nothing."),
    ToolSpec(
        "create_post",
        "create_post",
        "Create a post: publish now (no scheduledAt), schedule it (future scheduledAt), or save a draft.",
    ),
    ToolSpec("publish_post", "publish_post", "Publish a draft now, or schedule it with scheduledAt."),
    ToolSpec("update_post", "update_post", "Change a draft or scheduled post (e.g. reschedule it)."),
    ToolSpec(
        "edit_post",
        "update_post",
        "Edit a published post on its platforms (text, platformTexts, title, platformTitles, and its media: "
        "mediaUrls, mediaAltTexts, contentType when the type changes); answers per platform what will be done "
        "(QUEUED, SKIPPED with the reason, UNCHANGED).",
    ),
    ToolSpec("unschedule_post", "unschedule_post", "Turn a scheduled post back into an undated draft."),
    ToolSpec(
        "unpublish_post",
        "unpublish_post",
        "Remove a published post from its platforms (those whose API can delete), keeping the record; answers per "
        "platform what will be done. Cannot be undone: confirm with the user first.",
    ),
    ToolSpec("retry_post", "retry_post", "Retry the failed platforms of a post."),
    ToolSpec("get_post", "get_post", "One post with its per-platform status."),
    ToolSpec("list_posts", "list_posts", "Posts, newest first, filtered by status, platform or dates."),
    ToolSpec("get_post_results", "get_post_results", "Each platform's outcome of a post (ids, errors)."),
    ToolSpec("get_analytics_overview", "get_analytics_overview", "Totals for a period with the change."),
    ToolSpec("get_analytics_timeseries", "get_analytics_timeseries", "Figures per day, week or month."),
    ToolSpec("get_analytics_breakdown", "get_analytics_breakdown", "Figures per platform."),
    ToolSpec("list_analytics_posts", "list_analytics_posts", "Published posts with their figures."),
    ToolSpec(
        "delete_post", "delete_post", "Delete a post (refused with 409 while one of its platforms is being published)."
    ),
    ToolSpec(
        "list_platforms",
        "list_platforms",
        "What each platform accepts: content types, text limits, media kinds, counts and sizes, its settings.",
    ),
    ToolSpec(
        "create_connect_link",
        "create_connect_link",
        "A link (valid 24 h) for a person to open in a browser and connect a social account; append "
        "/<PLATFORM> (e.g. /BLUESKY) to open one platform's page directly.",
    ),
    ToolSpec(
        "get_connect_branding",
        "get_connect_branding",
        "How the connect pages look: name, logo, accent colour, support link, platforms offered.",
    ),
    ToolSpec(
        "set_connect_branding",
        "set_connect_branding",
        "Replace the connect pages' branding whole (fields left out go back to their defaults): displayName, "
        "logoUrl (a publicUrl from upload_media), accentColor (#rrggbb), supportUrl (https), platforms.",
    ),
    ToolSpec("get_account_queue", "get_account_queue", "An account's posting queue: its weekly slots and timezone."),
    ToolSpec(
        "set_account_queue",
        "set_account_queue",
        "Replace an account's posting queue: weekly slots (day MON..SUN, local time HH:MM) in a timezone.",
    ),
    ToolSpec("list_webhooks", "list_webhooks", "The workspace's webhook endpoints."),
    ToolSpec(
        "create_webhook",
        "create_webhook",
        "Register an endpoint URL for events (all, or those of `events`); the answer holds its signing secret, shown this once.",
    ),
    ToolSpec("delete_webhook", "delete_webhook", "Remove a webhook endpoint; it receives nothing more."),
    ToolSpec(
        "rotate_webhook_secret",
        "rotate_webhook_secret",
        "A new signing secret for a webhook (shown this once); deliveries carry both signatures for graceSeconds.",
    ),
    ToolSpec(
        "list_events",
        "list_events",
        "The events feed (what webhooks deliver), oldest first; pass nextCursor back as `after` to continue.",
    ),
    # the inbox
    ToolSpec(
        "list_comments",
        "list_comments",
        "Comments under the workspace's published posts (and Google Business reviews), newest first; "
        "unanswered=true for those still waiting for a reply; pass nextCursor back as `after`.",
    ),
    ToolSpec("get_comment", "get_comment", "One comment with every reply, hide, delete or like asked for on it."),
    ToolSpec("list_post_comments", "list_post_comments", "A post's comments as a tree per platform."),
    ToolSpec(
        "reply_to_comment",
        "reply_to_comment",
        "Reply to a comment as the account, publicly on the platform (checked against its comment limit first). "
        "Show the person the text before sending it.",
    ),
    ToolSpec("hide_comment", "hide_comment", "Hide a comment from the post's public view, where the platform allows."),
    ToolSpec("unhide_comment", "unhide_comment", "Show a hidden comment again."),
    ToolSpec(
        "delete_comment",
        "delete_comment",
        "Delete a comment on its platform (the account's own reply, or another person's where the platform "
        "allows). Cannot be undone: confirm with the user first.",
    ),
    ToolSpec("like_comment", "like_comment", "Like a comment as the account, where the platform allows."),
    ToolSpec(
        "request_comment_sync", "request_comment_sync", "Read the comments of every tracked post now (once per 10 min)."
    ),
    # organizations (an organization key, cpo_…)
    ToolSpec(
        "create_workspace",
        "create_workspace",
        "Create a workspace for one of the organization's customers (name, externalId, metadata).",
    ),
    ToolSpec("list_workspaces", "list_workspaces", "The workspaces this key reaches (ids for X-Workspace-Id)."),
    ToolSpec("get_workspace", "get_workspace", "One workspace of the organization, with its open deletion job."),
    ToolSpec("update_workspace", "update_workspace", "Change a workspace's name, externalId or metadata."),
    ToolSpec(
        "delete_workspace",
        "delete_workspace",
        "Delete a workspace: inactive at once, its accounts disconnected and scheduled posts cancelled; "
        "restorable until purgeAfter, then removed.",
    ),
    ToolSpec("restore_workspace", "restore_workspace", "Restore a deleted workspace before its grace period ends."),
    ToolSpec("get_workspace_deletion", "get_workspace_deletion", "The status of a workspace deletion job."),
    ToolSpec("list_workspace_keys", "list_workspace_keys", "A workspace's API keys (never their secrets)."),
    ToolSpec(
        "create_workspace_key",
        "create_workspace_key",
        "Create an API key of a workspace (name, role, expiresAt); the whole key is in `key`, shown this once.",
    ),
    ToolSpec("revoke_workspace_key", "revoke_workspace_key", "Revoke an API key of a workspace at once."),
    ToolSpec(
        "list_organization_keys",
        "list_organization_keys",
        "The organization's own keys (cpo_…), newest first, never their secrets; pass nextCursor back as `after`.",
    ),
    ToolSpec(
        "create_organization_key",
        "create_organization_key",
        "Create an organization key (name, role, permissions, expiresAt), holding no more than this key; the whole "
        "key is in `key`, shown this once.",
    ),
    ToolSpec("get_organization_key", "get_organization_key", "One of the organization's own keys (never its secret)."),
    ToolSpec(
        "revoke_organization_key",
        "revoke_organization_key",
        "Revoke one of the organization's keys at once (this key included, unless it is the last able to manage "
        "keys). Confirm with the user first.",
    ),
    ToolSpec("get_usage", "get_usage", "What the organization uses of its plan this month, per workspace."),
    ToolSpec(
        "list_audit_events",
        "list_audit_events",
        "The organization's audit log, newest first; filters workspaceId, actorId, action, since, until.",
    ),
    ToolSpec("wait_for_post", "", "Wait until a post is COMPLETED, PARTIAL_FAILURE or FAILED; returns the post."),
    ToolSpec("upload_media", "", "Upload a local file (path) or a file fetched from a URL; returns its publicUrl."),
]

HELPER_SCHEMAS: dict[str, dict[str, Any]] = {
    "wait_for_post": {
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "Post id"},
            "timeoutSeconds": {"type": "number", "minimum": 1, "maximum": 600, "default": 120},
        },
        "required": ["id"],
    },
    "upload_media": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "A file on the machine running this server."},
            "url": {"type": "string", "format": "uri", "description": "A public file to fetch and store."},
            "mimeType": {"type": "string", "description": "Defaults to what the name or server says."},
        },
        "oneOf": [{"required": ["path"]}, {"required": ["url"]}],
    },
}

_REF = re.compile(r"^#/components/schemas/(.+)$")


def _operation(openapi: dict[str, Any], name: str) -> dict[str, Any]:
    op = OPERATIONS[name]
    return dict(openapi["paths"][op.path][op.method.lower()])


def _convert(node: Any, refs: set[str]) -> Any:
    """OpenAPI 3.0 schema → JSON Schema: refs to ``#/$defs``, ``nullable`` into the type."""
    if isinstance(node, list):
        return [_convert(item, refs) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str) and (match := _REF.match(value)):
            refs.add(match.group(1))
            out[key] = f"#/$defs/{match.group(1)}"
        elif key == "nullable":
            continue
        else:
            out[key] = _convert(value, refs)
    if node.get("nullable"):
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        elif "$ref" in out or "allOf" in out or "oneOf" in out:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def input_schema(openapi: dict[str, Any], name: str) -> dict[str, Any]:
    """Path and query parameters and the JSON body's fields of operation ``name`` as one object."""
    operation = _operation(openapi, name)
    components = openapi.get("components", {}).get("schemas", {})
    refs: set[str] = set()
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in operation.get("parameters", []):
        if param.get("in") not in ("path", "query"):
            continue
        converted = _convert(param.get("schema", {}), refs)
        if param.get("description"):
            converted = {**converted, "description": param["description"]}
        properties[param["name"]] = converted
        if param.get("required"):
            required.append(param["name"])
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body:
        body = _convert(body, refs)
        if "$ref" in body:
            body = copy.deepcopy(_convert(components[body["$ref"].split("/")[-1]], refs))
        properties.update(body.get("properties", {}))
        required.extend(body.get("required", []))
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = sorted(set(required))
    defs: dict[str, Any] = {}
    pending = set(refs)
    while pending:
        ref = pending.pop()
        found: set[str] = set()
        defs[ref] = _convert(components.get(ref, {}), found)
        pending |= found - set(defs)
    if defs:
        schema["$defs"] = defs
    return schema


def split_arguments(openapi: dict[str, Any], name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An agent's arguments as the SDK call's ``path`` / ``params`` / ``json``."""
    operation = _operation(openapi, name)
    kinds = {p["name"]: p["in"] for p in operation.get("parameters", []) if p.get("in") in ("path", "query")}
    path = {k: str(v) for k, v in arguments.items() if kinds.get(k) == "path"}
    params = {k: v for k, v in arguments.items() if kinds.get(k) == "query"}
    body = {k: v for k, v in arguments.items() if k not in kinds}
    has_body = "requestBody" in operation or OPERATIONS[name].method == "POST"
    return {"path": path, "params": params, "json": body if has_body else None}
