"""The event payloads in the OpenAPI description: every event's envelope and data schema as
components, a ``WebhookEvent`` union discriminated by ``event``, and ``x-webhooks`` describing
the signed POST a receiver gets. Wired as a drf-spectacular postprocessing hook."""

from __future__ import annotations

from typing import Any

from webhooks.events import EVENT_NAMES

SIGNATURE_HELP = (
    "Each delivery is an HTTP POST with a JSON body `{id, event, createdAt, data}` and the headers "
    "`x-service-event`, `x-service-webhook-id`, `x-service-timestamp` (seconds) and `x-service-signature`: "
    "`sha256=` + the lowercase hex HMAC-SHA256, keyed with the whole webhook secret (`whsec_…`, UTF-8), "
    "over `<x-service-timestamp>.<raw request body>`. For a while after `POST /webhooks/{id}/rotate-secret` "
    "the header holds two space-separated values, `sha256=<new> sha256=<old>`: accept the delivery when any "
    "value matches a secret you hold. Verify it with a constant-time comparison against "
    "the exact bytes received, and reject timestamps more than 5 minutes away from your clock. Answer 2xx "
    "within 10 seconds; redirects are not followed. A failed delivery is retried 5 times with exponential "
    "backoff (about 30 s, 2 min, 8 min, 32 min, 2 h, each ±20 %); the same event can arrive more than once "
    "(the `id` never changes), so handlers must be idempotent. After 20 consecutive failed deliveries the "
    "webhook is disabled; PATCH it with `active: true` to re-enable. At the 15th consecutive failure and at "
    "disabling, the workspace's other webhooks receive `webhook.failing` and `webhook.disabled`. A webhook "
    "created with `events` receives only those (and `webhook.test`). Missed events: `GET /events?after=`."
)

_NULLABLE_STRING = {"type": "string", "nullable": True}
_NULLABLE_INSTANT = {"type": "string", "format": "date-time", "nullable": True}


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _maybe_text(description: str) -> dict[str, Any]:
    return {**_NULLABLE_STRING, "description": description}


def _maybe_instant(description: str) -> dict[str, Any]:
    return {**_NULLABLE_INSTANT, "description": description}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


DATA_SCHEMAS: dict[str, dict[str, Any]] = {
    "WebhookPostPlatformEntry": {
        "type": "object",
        "description": "A platform entry of the post, as in GET /social-posts/{id}.",
        "properties": {
            "id": _text("The entry's id (`platformIds` of POST /social-posts/{id}/retry take it)."),
            "platform": _text("The entry's platform."),
            "status": {"type": "string", "description": "PENDING, PUBLISHING, PUBLISHED or FAILED"},
            "platformPostId": _maybe_text("The post's id on the platform, once published."),
            "postUrl": _maybe_text("The post's address on the platform, once published."),
            "errorMessage": _maybe_text("Why the entry failed, when it did."),
            "errorCode": _maybe_text("A stable snake_case code of the failure."),
            "publishedAt": _maybe_instant("When the platform confirmed the post."),
        },
        "additionalProperties": True,
    },
    "WebhookPostRecord": {
        "type": "object",
        "description": "The full post in the shape of GET /social-posts/{id}.",
        "required": ["id", "status", "platforms"],
        "properties": {
            "id": _text("The post's id."),
            "status": {"type": "string", "description": "The post status (COMPLETED, PARTIAL_FAILURE, ...)."},
            "recurringPostId": _maybe_text("The series the post is an occurrence of, if any."),
            "occurrenceAt": _maybe_instant("The series occurrence the post stands for, if any."),
            "platforms": {
                "type": "array",
                "items": _ref("WebhookPostPlatformEntry"),
                "description": "The platform entries, each with its own result.",
            },
        },
        "additionalProperties": True,
    },
    "WebhookPostEventData": {
        "type": "object",
        "required": ["post"],
        "properties": {"post": {"allOf": [_ref("WebhookPostRecord")], "description": "The post, as it is now."}},
    },
    "WebhookPostMissedData": {
        "type": "object",
        "required": ["post", "latePolicy", "missed"],
        "properties": {
            "post": {"allOf": [_ref("WebhookPostRecord")], "description": "The post, as it is now."},
            "latePolicy": {
                "type": "string",
                "enum": ["skip", "draft"],
                "description": "What was done: skip (the entries FAILED with errorCode missed) or draft (the post "
                "is an undated DRAFT again).",
            },
            "missed": {
                "type": "array",
                "description": "The entries that were too late.",
                "items": {
                    "type": "object",
                    "required": ["platformId", "platform", "latenessSeconds"],
                    "properties": {
                        "platformId": _text("The entry's id."),
                        "platform": _text("The entry's platform."),
                        "latenessSeconds": {
                            "type": "integer",
                            "minimum": 0,
                            "description": "How late the entry reached a worker.",
                        },
                    },
                },
            },
        },
    },
    "WebhookAfterPublishingData": {
        "type": "object",
        "required": ["post", "requestId", "entries"],
        "properties": {
            "post": {"allOf": [_ref("WebhookPostRecord")], "description": "The post, as it is now."},
            "requestId": _text("The request (PATCH or unpublish) whose outcomes these are; its answer named it."),
            "entries": {
                "type": "array",
                "description": "Every entry the request concerned, with its outcome.",
                "items": {
                    "type": "object",
                    "required": ["platformId", "platform", "status", "fields", "reason", "errorCode", "errorMessage"],
                    "properties": {
                        "platformId": _text("The entry's id."),
                        "platform": _text("The entry's platform."),
                        "status": {
                            "type": "string",
                            "enum": ["DONE", "FAILED", "SKIPPED"],
                            "description": "DONE on the platform; FAILED (errorCode, errorMessage; unknown_outcome: "
                            "check the platform); SKIPPED: never sent, the platform cannot take it (reason).",
                        },
                        "fields": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "post.updated: the fields changed (text, title, media).",
                        },
                        "reason": {**_NULLABLE_STRING, "description": "SKIPPED: why."},
                        "errorCode": {**_NULLABLE_STRING, "description": "FAILED: the normalized errorCode."},
                        "errorMessage": {**_NULLABLE_STRING, "description": "FAILED: the platform's words."},
                    },
                },
            },
        },
    },
    "WebhookFirstCommentData": {
        "type": "object",
        "required": ["post", "platformId", "platform", "firstComment"],
        "properties": {
            "post": {"allOf": [_ref("WebhookPostRecord")], "description": "The post, as it is now."},
            "platformId": {"type": "string", "description": "The entry the comment is under."},
            "platform": _text("The entry's platform."),
            "firstComment": {
                "type": "object",
                "description": "The entry's firstComment as it is now.",
                "required": ["status", "platformCommentId"],
                "properties": {
                    "status": {"type": "string", "enum": ["PUBLISHED", "FAILED"], "description": "The outcome."},
                    "platformCommentId": {**_NULLABLE_STRING, "description": "PUBLISHED: the comment's id."},
                    "errorCode": {"type": "string", "description": "FAILED only (unknown_outcome: check the post)."},
                },
            },
        },
    },
    "WebhookAccountUnauthorizedData": {
        "type": "object",
        "required": ["account"],
        "properties": {
            "account": {
                "type": "object",
                "description": "The account whose token was rejected.",
                "required": ["id", "platform", "status"],
                "properties": {
                    "id": _text("The account's id."),
                    "platform": _text("The account's platform."),
                    "displayName": _maybe_text("The account's name as the platform shows it."),
                    "pageId": {**_NULLABLE_STRING, "description": "FACEBOOK pages only."},
                    "status": {"type": "string", "example": "unauthorized", "description": "unauthorized."},
                    "reason": {**_NULLABLE_STRING, "description": "The platform's stated reason."},
                },
                "additionalProperties": True,
            }
        },
    },
    "WebhookAccountDisconnectedData": {
        "type": "object",
        "required": ["account"],
        "properties": {
            "account": {
                "type": "object",
                "description": "The account that was disconnected (DELETE /social-accounts/{id}).",
                "required": ["id", "platform", "status", "disconnectedAt"],
                "properties": {
                    "id": _text("The account's id (GET /social-accounts/{id} still answers it)."),
                    "platform": _text("The account's platform."),
                    "displayName": _maybe_text("The account's name as the platform shows it."),
                    "pageId": {**_NULLABLE_STRING, "description": "FACEBOOK pages only."},
                    "status": {"type": "string", "example": "disconnected", "description": "disconnected."},
                    "disconnectedAt": {
                        "type": "string",
                        "format": "date-time",
                        "description": "When it was disconnected.",
                    },
                },
                "additionalProperties": True,
            }
        },
    },
    "WebhookComment": {
        "type": "object",
        "description": "A comment (or a Google Business review) as GET /comments answers it.",
        "required": ["id", "platform", "accountId", "platformCommentId", "author", "text", "createdAt"],
        "properties": {
            "id": _text("The comment's id here."),
            "platform": _text("The platform it is on."),
            "accountId": _text("The connected account whose post it is under."),
            "postId": _maybe_text("The post it is under (null for a Google Business review)."),
            "platformId": _maybe_text("The post's platform entry it is under (null for a review)."),
            "parentId": _maybe_text("The comment it answers (null: directly under the post)."),
            "platformCommentId": _text("Its id on the platform."),
            "author": {
                "type": "object",
                "description": "Who wrote it.",
                "properties": {
                    "id": _maybe_text("The author's id on the platform."),
                    "name": _maybe_text("The author's name."),
                    "handle": _maybe_text("The author's handle."),
                    "avatarUrl": _maybe_text("The author's picture."),
                },
            },
            "text": _text("What it says."),
            "createdAt": {"type": "string", "format": "date-time", "description": "When it was written."},
            "likeCount": {"type": "integer", "nullable": True, "description": "The platform's own count."},
            "replyCount": {"type": "integer", "nullable": True, "description": "The platform's own count of replies."},
            "hidden": {"type": "boolean", "description": "Hidden from the post's public view."},
            "answered": {"type": "boolean", "description": "A reply from the connected account exists under it."},
            "fromAccount": {"type": "boolean", "description": "Written by the connected account itself."},
            "rating": {"type": "integer", "nullable": True, "description": "A review's stars, 1 to 5."},
            "permalink": _maybe_text("Its address on the platform."),
            "deletedAt": _maybe_instant("When it was deleted; null while it is there."),
            "firstSeenAt": {"type": "string", "format": "date-time", "description": "When a sync first found it."},
        },
        "additionalProperties": True,
    },
    "WebhookCommentAction": {
        "type": "object",
        "description": "An action on a comment, as its POST answered it and GET /comments/{id} lists it.",
        "required": ["id", "commentId", "kind", "status"],
        "properties": {
            "id": _text("The action's id."),
            "commentId": _text("The comment it acts on."),
            "kind": {"type": "string", "enum": ["REPLY", "HIDE", "UNHIDE", "DELETE", "LIKE"], "description": "What."},
            "status": {
                "type": "string",
                "enum": ["PENDING", "SENDING", "DONE", "FAILED"],
                "description": "DONE on the platform, or FAILED (errorCode; unknown_outcome: check the platform).",
            },
            "text": _maybe_text("REPLY: the reply's text."),
            "replyId": _maybe_text("REPLY, once DONE: the reply's own comment id here."),
            "errorCode": _maybe_text("FAILED: the normalized errorCode."),
            "errorMessage": _maybe_text("FAILED: the platform's words."),
            "requestedAt": {"type": "string", "format": "date-time", "description": "When it was asked for."},
            "finishedAt": _maybe_instant("When it became DONE or FAILED."),
        },
        "additionalProperties": True,
    },
    "WebhookCommentsReceivedData": {
        "type": "object",
        "required": ["accountId", "platform", "comments"],
        "properties": {
            "accountId": _text("The account whose posts (or location) the comments are under."),
            "platform": _text("The account's platform."),
            "comments": {
                "type": "array",
                "items": _ref("WebhookComment"),
                "description": "The new comments found by one sync, oldest first (at most 100; each named once, ever).",
            },
        },
    },
    "WebhookCommentActionData": {
        "type": "object",
        "required": ["comment", "action"],
        "properties": {
            "comment": {"allOf": [_ref("WebhookComment")], "description": "The comment acted on, as it is now."},
            "action": {"allOf": [_ref("WebhookCommentAction")], "description": "The action and its outcome."},
            "reply": {
                "allOf": [_ref("WebhookComment")],
                "description": "comment.replied only: the reply, as a comment of the account's own.",
            },
        },
    },
    "WebhookImageEventData": {
        "type": "object",
        "required": ["image"],
        "properties": {
            "image": {
                "type": "object",
                "description": "The image job.",
                "required": ["jobId"],
                "properties": {
                    "jobId": _text("The job's id (GET /ai/images/{jobId})."),
                    "sessionId": _maybe_text("The session the job belongs to."),
                    "prompt": _text("The prompt the image was made from."),
                    "imageUrl": {**_NULLABLE_STRING, "description": "image.completed: ready to use."},
                    "imageId": _maybe_text("image.completed: the image's id."),
                    "error": {**_NULLABLE_STRING, "description": "image.failed: why."},
                },
                "additionalProperties": True,
            }
        },
    },
    "WebhookMediaEventData": {
        "type": "object",
        "required": ["media"],
        "properties": {
            "media": {
                "type": "object",
                "description": "One original fitted for one platform and post type (mediaFit auto).",
                "required": ["variantId", "originalUrl", "platform", "postType"],
                "properties": {
                    "variantId": _text("The variant's id."),
                    "originalUrl": _text("The file the post named in mediaUrls (never changed)."),
                    "platform": _text("The platform the variant is made for."),
                    "postType": _text("The post type whose rules it follows (FEED, REEL, STORY, SHORT, ...)."),
                    "url": {**_NULLABLE_STRING, "description": "media.processed: the variant's own URL."},
                    "rulesFixed": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "The rule codes the variant repairs (media_aspect_ratio, media_codec, ...).",
                    },
                    "errorCode": {**_NULLABLE_STRING, "description": "media.failed: media_fit_failed."},
                    "error": {**_NULLABLE_STRING, "description": "media.failed: why the file could not be fitted."},
                },
                "additionalProperties": True,
            }
        },
    },
    "WebhookTestEventData": {
        "type": "object",
        "required": ["webhookId", "events"],
        "properties": {
            "webhookId": _text("The webhook tested."),
            "events": {
                "type": "array",
                "items": {"type": "string", "enum": list(EVENT_NAMES)},
                "description": "The event names this webhook receives: every one, or its `events` filter.",
            },
        },
    },
    "WebhookNoticeData": {
        "type": "object",
        "required": ["webhook"],
        "properties": {
            "webhook": {
                "type": "object",
                "description": "The webhook the notice is about (never its secret).",
                "required": ["id", "url", "active", "consecutiveFailures", "lastFailureAt", "disabledAt"],
                "properties": {
                    "id": _text("The webhook's id."),
                    "url": _text("Where its deliveries go."),
                    "active": {"type": "boolean", "description": "false once disabled."},
                    "consecutiveFailures": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "Failed deliveries in a row.",
                    },
                    "lastFailureAt": _maybe_instant("Its last failed delivery."),
                    "disabledAt": _maybe_instant("When it was disabled, if it was."),
                },
            }
        },
    },
}

# event name → (data schema, title, what it means). The title names the event in the reference
# (ReDoc's and Swagger UI's list of webhooks); the meaning opens its description.
EVENT_DATA: dict[str, tuple[str, str, str]] = {
    "post.published": (
        "WebhookPostEventData",
        "Post published on every platform",
        "Every platform entry of the post published.",
    ),
    "post.partially_failed": (
        "WebhookPostEventData",
        "Post published on some platforms only",
        "Some platform entries published, others failed.",
    ),
    "post.failed": ("WebhookPostEventData", "Post failed on every platform", "Publishing failed on every entry."),
    "post.scheduled": ("WebhookPostEventData", "Post scheduled", "A post was scheduled for a future date."),
    "post.missed": (
        "WebhookPostMissedData",
        "Post missed its time",
        "Entries reached a worker later than the post's maxLatenessSeconds and, by its latePolicy, were skipped "
        "or the post turned back into a draft.",
    ),
    "post.first_comment.published": (
        "WebhookFirstCommentData",
        "First comment posted",
        "An entry's firstComment was posted under its post (once per entry).",
    ),
    "post.first_comment.failed": (
        "WebhookFirstCommentData",
        "First comment failed",
        "An entry's firstComment could not be posted (or its outcome is unknown: errorCode unknown_outcome); the "
        "post itself is live.",
    ),
    "post.updated": (
        "WebhookAfterPublishingData",
        "Published post edited",
        "Every entry of an edit of a published post (PATCH) has its outcome on its platform: one event per request, "
        "naming each entry's outcome.",
    ),
    "post.unpublished": (
        "WebhookAfterPublishingData",
        "Post removed from its platforms",
        "Every entry of a POST /social-posts/{id}/unpublish has its outcome: one event per request, naming each "
        "entry's outcome; the record stays.",
    ),
    "account.unauthorized": (
        "WebhookAccountUnauthorizedData",
        "Account needs reconnecting",
        "A platform rejected an account's token; it stays unauthorized until reconnected.",
    ),
    "account.disconnected": (
        "WebhookAccountDisconnectedData",
        "Account disconnected",
        "An account was disconnected (DELETE /social-accounts/{id}): its stored tokens are gone, its entries that "
        "were not sent failed with errorCode account_disconnected (their posts' own events follow as usual), its "
        "series paused and its posting queue was removed. Sent once.",
    ),
    "comment.received": (
        "WebhookCommentsReceivedData",
        "New comments",
        "A comment sync found new comments (or Google Business reviews) under an account's posts: one event per "
        "sync and account (up to 100 comments each), every comment named once, ever. The account's own replies "
        "are not named.",
    ),
    "comment.replied": (
        "WebhookCommentActionData",
        "Reply posted",
        "A reply asked for with POST /comments/{id}/replies is on the platform (`reply`); the comment is answered.",
    ),
    "comment.hidden": (
        "WebhookCommentActionData",
        "Comment hidden",
        "POST /comments/{id}/hide is done on the platform.",
    ),
    "comment.unhidden": (
        "WebhookCommentActionData",
        "Comment shown again",
        "POST /comments/{id}/unhide is done on the platform.",
    ),
    "comment.deleted": (
        "WebhookCommentActionData",
        "Comment deleted",
        "DELETE /comments/{id} is done on the platform (its replies are gone with it).",
    ),
    "comment.liked": ("WebhookCommentActionData", "Comment liked", "POST /comments/{id}/like is done on the platform."),
    "comment.action_failed": (
        "WebhookCommentActionData",
        "Comment action failed",
        "A reply, hide, unhide, delete or like could not be done (`action.errorCode`; `unknown_outcome`: the platform "
        "did not say whether it was done: check it before asking again).",
    ),
    "image.completed": (
        "WebhookImageEventData",
        "AI image ready",
        "An image started with POST /ai/images finished.",
    ),
    "image.failed": ("WebhookImageEventData", "AI image failed", "An image started with POST /ai/images failed."),
    "media.processed": (
        "WebhookMediaEventData",
        "Media fitted for a platform",
        "A variant of a post's file was made for a platform that would refuse the original (mediaFit auto); the "
        "platform is sent the variant.",
    ),
    "media.failed": (
        "WebhookMediaEventData",
        "Media could not be fitted",
        "A post's file could not be fitted for a platform (mediaFit auto); entries that send it there fail with "
        "media_fit_failed.",
    ),
    "webhook.test": ("WebhookTestEventData", "Test delivery", "Sent by POST /webhooks/{id}/test."),
    "webhook.failing": (
        "WebhookNoticeData",
        "Another webhook is failing",
        "Another webhook of the workspace reached 15 consecutive failed deliveries (it is disabled at 20); "
        "sent once per run of failures, to the workspace's other active webhooks.",
    ),
    "webhook.disabled": (
        "WebhookNoticeData",
        "Another webhook was disabled",
        "Another webhook of the workspace was disabled after 20 consecutive failed deliveries; sent to the "
        "workspace's other active webhooks.",
    ),
}

# The reference lists the events a receiver gets under a tag of their own, apart from the
# endpoints that manage webhooks; each tag's description opens its section.
EVENTS_TAG = "Webhook events"
EVENTS_TAG_HELP = (
    "What the service POSTs to each registered webhook URL: one entry per event, with its payload schema. "
    + SIGNATURE_HELP
)
WEBHOOKS_TAG = "Webhooks"
WEBHOOKS_TAG_HELP = (
    "Register the HTTPS URLs that receive events (listed under *Webhook events*), send a test delivery, "
    "rotate a secret, and read or redeliver past deliveries. `GET /events` replays what a receiver missed."
)


def envelope_component(name: str) -> str:
    """``post.partially_failed`` → ``WebhookEventPostPartiallyFailed``."""
    words = name.replace(".", "_").split("_")
    return "WebhookEvent" + "".join(word.capitalize() for word in words)


def event_components() -> dict[str, dict[str, Any]]:
    components = dict(DATA_SCHEMAS)
    for name, (data_schema, _, meaning) in EVENT_DATA.items():
        components[envelope_component(name)] = {
            "type": "object",
            "description": f"`{name}`: {meaning}",
            "required": ["id", "event", "createdAt", "data"],
            "properties": {
                "id": {"type": "string", "example": "evt_0001", "description": "Same on every retry."},
                "event": {"type": "string", "enum": [name], "description": "The event's name."},
                "createdAt": {"type": "string", "format": "date-time", "description": "When the event happened."},
                "data": {"allOf": [_ref(data_schema)], "description": "What the event is about."},
            },
        }
    components["WebhookEvent"] = {
        "description": SIGNATURE_HELP,
        "oneOf": [_ref(envelope_component(name)) for name in EVENT_DATA],
        "discriminator": {
            "propertyName": "event",
            "mapping": {name: f"#/components/schemas/{envelope_component(name)}" for name in EVENT_DATA},
        },
    }
    return components


def _header(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "in": "header", "required": True, "schema": {"type": "string"}, "description": description}


def webhook_operations() -> dict[str, Any]:
    headers = [
        _header("x-service-event", "The event name."),
        _header("x-service-webhook-id", "The id of the receiving webhook."),
        _header("x-service-timestamp", "Seconds since the epoch, decimal; signed with the body."),
        _header(
            "x-service-signature",
            "`sha256=<hex HMAC-SHA256 of '<timestamp>.<raw body>'>`; during a secret rotation's grace period two "
            "space-separated values, the new secret's first.",
        ),
    ]
    operations: dict[str, Any] = {}
    for name, (_, title, meaning) in EVENT_DATA.items():
        operations[name] = {
            "post": {
                "operationId": f"receive_{name.replace('.', '_')}",
                "summary": f"{name}: {title}",
                "description": f"{meaning}\n\nSigned, retried and filtered as *Webhook events* describes.",
                "tags": [EVENTS_TAG],
                "parameters": headers,
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _ref(envelope_component(name))}},
                },
                "responses": {"2XX": {"description": "Received; any other answer counts as a failed delivery."}},
            }
        }
    return operations


def describe_tags(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The document's tags in the order its operations use them (tags already declared first),
    with *Webhook events* right after *Webhooks* and both described."""
    tags = [dict(tag) for tag in result.get("tags") or []]
    named = {tag["name"] for tag in tags}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            for name in operation.get("tags", []) if isinstance(operation, dict) else []:
                if name not in named:
                    named.add(name)
                    tags.append({"name": name})
    tags = [tag for tag in tags if tag["name"] != EVENTS_TAG]
    where = next((i + 1 for i, tag in enumerate(tags) if tag["name"] == WEBHOOKS_TAG), len(tags))
    tags.insert(where, {"name": EVENTS_TAG})
    for tag in tags:
        help_text = {WEBHOOKS_TAG: WEBHOOKS_TAG_HELP, EVENTS_TAG: EVENTS_TAG_HELP}.get(tag["name"])
        if help_text and not tag.get("description"):
            tag["description"] = help_text
    return tags


def add_event_schemas(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: event components, ``x-webhooks`` and the tags that
    introduce them."""
    result.setdefault("components", {}).setdefault("schemas", {}).update(event_components())
    result["x-webhooks"] = webhook_operations()
    result["tags"] = describe_tags(result)
    return result
