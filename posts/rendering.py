"""The post record of CONTRACT.md §5: the one shape of a post in API responses and in the
``data.post`` of post events. :func:`post_records` renders a batch with a fixed number of
queries (its rows read once, media previews looked up once). The record is declared once
(:class:`core.records.Record`): the same declaration renders the bodies and gives the OpenAPI
description its ``PostOutput`` and ``PlatformEntryOutput``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rest_framework import serializers

from core.fields import choice, format_instant
from core.records import Key, Reader, Record, column, id_text, instant, listed, text_or_none
from media.fitting import variants_by_original
from media.selectors import media_previews
from platforms.base import Platform
from platforms.media_rules import post_type_of
from posts.fitting import thread_item_post_type
from posts.models import LatePolicy, Post, PostStatus, PostTargetAction, TargetStatus

# Per-platform config values as stored in ``PostTarget.config`` (camelCase, unprefixed), and the
# prefix their entry fields carry in the record (``postType`` of INSTAGRAM → ``instagramPostType``).
PLATFORM_CONFIG_FIELDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "INSTAGRAM": ("instagram", ("postType", "trialGraduation", "audio")),
    "FACEBOOK": ("facebook", ("postType", "videoTitle")),
    "TIKTOK": (
        "tiktok",
        (
            "privacyLevel",
            "title",
            "caption",
            "allowComments",
            "allowDuet",
            "allowStitch",
            "sendAsDraft",
            "aiGenerated",
            "brandedContent",
            "brandedContentOwnBrand",
            "autoAddMusic",
        ),
    ),
    "YOUTUBE": (
        "youtube",
        (
            "postType",
            "videoTitle",
            "tags",
            "privacyStatus",
            "license",
            "notifySubscribers",
            "allowEmbedding",
            "madeForKids",
            "categoryId",
            "playlistId",
        ),
    ),
    "PINTEREST": ("pinterest", ("boardId", "title", "link")),
    "LINKEDIN": ("linkedin", ("documentTitle",)),
    "GOOGLE_BUSINESS": (
        "googleBusiness",
        (
            "topicType",
            "callToActionType",
            "callToActionUrl",
            "eventTitle",
            "eventStart",
            "eventEnd",
            "offerCouponCode",
            "offerRedeemUrl",
            "offerTerms",
        ),
    ),
}
LIST_CONFIG_FIELDS = {("YOUTUBE", "tags")}
# Entry fields also answered under the name the published clients read (and send back).
CLIENT_ALIASES = {"tiktokBrandedContentOwnBrand": "tiktokBrandedOwnBrand"}


def record_field_name(platform: str, key: str) -> str:
    prefix = PLATFORM_CONFIG_FIELDS[platform][0]
    return prefix + key[0].upper() + key[1:]


def _previews(urls: Iterable[str]) -> dict[str, str | None]:
    wanted = sorted(set(urls))
    return media_previews(urls=wanted) if wanted else {}


def _preview_urls(media_urls: list[str], previews: dict[str, str | None]) -> list[str]:
    """The previews of ``media_urls`` that exist, in their order: the clients type the list as
    strings, so an item without one is left out rather than null."""
    return [preview for preview in (previews.get(url) for url in media_urls) if preview]


# The columns a record is made of: what the list reads with ``.values()`` (no model instances).
POST_FIELDS = (
    "id",
    "status",
    "content_type",
    "text",
    "timezone",
    "scheduled_at",
    "media_urls",
    "media_alt_texts",
    "thumbnail_url",
    "late_policy",
    "max_lateness_seconds",
    "thread",
    "first_comment",
    "recurring_post_id",
    "occurrence_at",
    "created_by_id",
    "created_at",
    "updated_at",
    "unpublished_at",
)
TARGET_FIELDS = (
    "id",
    "post_id",
    "platform",
    "status",
    "account_id",
    "page_id",
    "account_name",
    "text",
    "platform_post_id",
    "post_url",
    "error_message",
    "error_code",
    "published_at",
    "tiktok_draft_fallback",
    "config",
    "thread_items",
    "comment_status",
    "first_comment",
    "first_comment_text",
    "media_fit",
    "created_at",
    "updated_at",
    "unpublished_at",
    "last_action_at",
    "media",
    "actions",
)


TARGET_ORDER = ("created_at", "id")  # PostTarget's Meta.ordering: the order of ``post.targets.all()``

_PLATFORMS = [platform.value for platform in Platform]


def _override(row: dict[str, Any]) -> str | None:
    """An entry stores the text it sends; the record answers it only where it differs from its
    post's (``post_text``, added by :func:`post_records`): that is what ``payload_of`` rebuilds as
    an override, and an entry with the post's text follows every change of it."""
    text: str = row["text"]
    return None if text == row["post_text"] else text


def _config_value(platform: str, key: str) -> Reader:
    if (platform, key) in LIST_CONFIG_FIELDS:
        return lambda row: list((row["config"] or {}).get(key) or [])
    return lambda row: (row["config"] or {}).get(key)


def _config_schema(platform: str, key: str) -> serializers.Field:
    if (platform, key) in LIST_CONFIG_FIELDS:
        return serializers.ListField(
            child=serializers.CharField(), required=False, help_text=f"{platform} entries only"
        )
    return serializers.JSONField(required=False, allow_null=True, help_text=f"{platform} entries only")


def _config_record(platform: str, keys: tuple[str, ...]) -> Record:
    """The config values of one platform's entries, then their client aliases."""
    record = {
        record_field_name(platform, key): Key(_config_schema(platform, key), _config_value(platform, key))
        for key in keys
    }
    for name, alias in CLIENT_ALIASES.items():
        if name in record:
            record[alias] = Key(
                serializers.JSONField(
                    required=False,
                    allow_null=True,
                    help_text=f"The same value as {name} (the name the published clients read)",
                ),
                record[name].read,
            )
    return Record(record)


# A platform entry of a post record: these keys, then its platform's config values, then its media.
ENTRY = Record(
    {
        "id": Key(
            serializers.CharField(
                help_text=(
                    "The entry's id (`platformId` of the results; POST /social-posts/{id}/retry takes"
                    " it in `platformIds`)."
                )
            ),
            column("id"),
        ),
        "platformId": Key(
            serializers.CharField(help_text="Same value as id; retry's platformIds match it"), column("id")
        ),
        "platform": Key(choice(_PLATFORMS, help_text="The entry's platform."), column("platform")),
        "status": Key(
            choice(
                TargetStatus.values,
                help_text="PENDING (waiting for its time or a worker), PUBLISHING, PUBLISHED or FAILED.",
            ),
            column("status"),
        ),
        "connectionId": Key(
            serializers.CharField(
                allow_null=True, help_text="The social account published to (its `id` in GET /social-accounts)."
            ),
            column("account_id"),
        ),
        "pageId": Key(
            serializers.CharField(allow_null=True, help_text="FACEBOOK entries: the page's id on Facebook; else null."),
            text_or_none("page_id"),
        ),
        "accountName": Key(serializers.CharField(help_text="The account's display name."), column("account_name")),
        "text": Key(
            serializers.CharField(
                allow_null=True,
                help_text="This platform's override of the post's text (platformTexts); null when the entry uses "
                "the post's own text, which a later change of the post's text then reaches",
            ),
            _override,
        ),
        "platformPostId": Key(
            serializers.CharField(allow_null=True, help_text="The post's id on the platform, once published."),
            text_or_none("platform_post_id"),
        ),
        "postUrl": Key(
            serializers.CharField(allow_null=True, help_text="The post's address on the platform, once published."),
            text_or_none("post_url"),
        ),
        "errorMessage": Key(
            serializers.CharField(
                allow_null=True, help_text="Why the entry failed, as the platform or the service said it."
            ),
            text_or_none("error_message"),
        ),
        "errorCode": Key(
            serializers.CharField(
                allow_null=True,
                help_text=(
                    "A stable snake_case code of the failure (e.g. `rate_limited`, `account_unauthorized`, `missed`)."
                ),
            ),
            text_or_none("error_code"),
        ),
        "publishedAt": Key(
            serializers.DateTimeField(allow_null=True, help_text="When the platform confirmed the post."),
            instant("published_at"),
        ),
        "tiktokDraftFallback": Key(
            serializers.BooleanField(
                help_text=(
                    "true when TIKTOK delivered the content to the creator's inbox as a draft (its daily cap was hit)."
                )
            ),
            column("tiktok_draft_fallback"),
        ),
        "createdAt": Key(serializers.DateTimeField(help_text="When the entry was made."), instant("created_at")),
        "updatedAt": Key(serializers.DateTimeField(help_text="When the entry last changed."), instant("updated_at")),
    }
)
ENTRY_CONFIG = {platform: _config_record(platform, keys) for platform, (_, keys) in PLATFORM_CONFIG_FIELDS.items()}
ENTRY_MEDIA = Record(
    {
        "mediaUrls": Key(
            serializers.ListField(
                child=serializers.CharField(),
                help_text="The media this entry publishes (the post's), or, after a media edit its platform did not "
                "take (or has not confirmed yet), the media live there",
            ),
            column("media_urls"),
        ),
        "previewUrls": Key(
            serializers.ListField(
                child=serializers.CharField(), help_text="The previews of mediaUrls, as the post's previewUrls"
            ),
            column("preview_urls"),
        ),
        "mediaAltTexts": Key(
            serializers.ListField(
                child=serializers.CharField(), help_text="The alt texts of mediaUrls, as the post's mediaAltTexts"
            ),
            listed("media_alt_texts"),
        ),
    }
)
_NO_CONFIG = Record({})
# Entries whose live media differ from the post's only (after a media edit: docs/contract.md, "After
# publishing").
ENTRY_OWN_MEDIA = Record(
    {
        "contentType": Key(
            serializers.CharField(
                required=False,
                help_text="Entries whose media differ from the post's only (a media edit their platform did not take, "
                "or has not confirmed yet): the content type of what is live there, with its mediaUrls",
            ),
            column("content_type"),
        )
    }
)


class ThreadItemResultOutput(serializers.Serializer):
    platformPostId = serializers.CharField(help_text="The platform's id of this thread item")
    postUrl = serializers.CharField(allow_null=True, help_text="The item's address on the platform.")


def _thread_items(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"platformPostId": item.get("platformPostId") or "", "postUrl": item.get("postUrl") or None}
        for item in row["thread_items"] or []
    ]


# Entries of a post with a ``thread`` only (a post without one answers exactly as before).
ENTRY_THREAD = Record(
    {
        "threadItems": Key(
            serializers.ListField(
                child=ThreadItemResultOutput(),
                required=False,
                help_text="Posts with a thread only: the items this platform has confirmed so far, in order, the post "
                "itself first (its platformPostId and postUrl are the entry's). The entry is PUBLISHED once every "
                "item is; a FAILED entry lists those published before the failure, and a retry resumes after them.",
            ),
            _thread_items,
        )
    }
)


class MediaVariantOutput(serializers.Serializer):
    originalUrl = serializers.CharField(
        help_text="The file named in the post's mediaUrls, or in a thread item's (never changed)"
    )
    url = serializers.CharField(
        allow_null=True,
        help_text="The variant made for this entry's platform (null until ready, or when none is "
        "needed: status unchanged); this is what the platform is sent",
    )
    status = choice(
        ["queued", "ready", "unchanged", "failed"],
        help_text="queued: being made (the entry waits for it); ready; unchanged: the original already fits and is "
        "sent as it is; failed: the entry fails media_fit_failed",
    )
    rulesFixed = serializers.ListField(
        child=serializers.CharField(), help_text="The rule codes the variant repairs (media_aspect_ratio, ...)"
    )
    error = serializers.CharField(allow_null=True, help_text="failed: why the file could not be fitted")


def _media_variants(row: dict[str, Any]) -> list[dict[str, Any]]:
    return list(row.get("media_variants") or [])


# Entries with mediaFit auto only.
ENTRY_MEDIA_FIT = Record(
    {
        "mediaFit": Key(
            choice(["auto"], required=False, help_text="Entries with mediaFit auto only: their media is fitted"),
            lambda row: "auto",
        ),
        "mediaVariants": Key(
            serializers.ListField(
                child=MediaVariantOutput(),
                required=False,
                help_text="Entries with mediaFit auto only: each of the post's images and videos as fitted for this "
                "platform and post type, then each thread item's (under the item's post type; a file listed once "
                "per variant) (docs/contract.md, Fitting media)",
            ),
            _media_variants,
        ),
    }
)


class FirstCommentResultOutput(serializers.Serializer):
    status = choice(
        ["PENDING", "PUBLISHED", "FAILED", "SKIPPED"],
        help_text="PENDING until the entry is live and `delaySeconds` have passed and the comment is sent; "
        "SKIPPED while the entry is FAILED (a retry that publishes it sends the comment)",
    )
    platformCommentId = serializers.CharField(allow_null=True, help_text="The platform's id of the comment")
    errorCode = serializers.CharField(
        required=False, help_text="FAILED only: the normalized errorCode (`unknown_outcome`: check the post)"
    )


def first_comment_result(row: dict[str, Any]) -> dict[str, Any]:
    """An entry's ``firstComment``: its status, the comment's id, and on failure its errorCode."""
    status = row["comment_status"]
    result = row["first_comment"] or {}
    if status == "PUBLISHED":
        return {"status": "PUBLISHED", "platformCommentId": result.get("platformCommentId") or None}
    if status == "FAILED":
        return {"status": "FAILED", "platformCommentId": None, "errorCode": result.get("errorCode") or ""}
    if not status and row["status"] == TargetStatus.FAILED:
        return {"status": "SKIPPED", "platformCommentId": None}
    return {"status": "PENDING", "platformCommentId": None}


# Entries with a first comment only: of a post with a ``firstComment``, or of a platform named in its
# ``platformFirstComments``.
ENTRY_FIRST_COMMENT = Record(
    {
        "firstComment": Key(
            FirstCommentResultOutput(
                required=False,
                help_text="Entries with a first comment only (the post's firstComment, or their platform's "
                "platformFirstComments item): the comment under this entry's post, sent once after the entry is "
                "PUBLISHED (it never holds back the entry's or the post's status)",
            ),
            first_comment_result,
        )
    }
)


# ``fields`` is the name of a Serializer attribute too: declared with type() (as posts.api.platforms).
EntryEditOutput = type(
    "EntryEditOutput",
    (serializers.Serializer,),
    {
        "id": serializers.CharField(help_text="The edit's id."),
        "requestId": serializers.CharField(help_text="The PATCH that asked for it (its `post.updated` event names it)"),
        "requestedAt": serializers.DateTimeField(help_text="When the edit was asked for."),
        "fields": serializers.ListField(child=choice(["media", "text", "title"]), help_text="What the edit changes."),
        "changes": serializers.DictField(
            help_text="The new values, by field (null for a SKIPPED edit); `media` is `{contentType, mediaUrls, "
            "mediaAltTexts}`"
        ),
        "previous": serializers.DictField(help_text="The values they replace, by field (`media` as in `changes`)."),
        "status": choice(
            ["PENDING", "SENDING", "DONE", "FAILED", "SKIPPED"],
            help_text="PENDING/SENDING until the platform answers; DONE, FAILED (errorCode, errorMessage) or SKIPPED "
            "(never sent: the platform cannot take it, `reason` says why)",
        ),
        "reason": serializers.CharField(allow_null=True, help_text="SKIPPED: why the platform cannot take it"),
        "errorCode": serializers.CharField(allow_null=True, help_text="FAILED: the normalized errorCode"),
        "errorMessage": serializers.CharField(allow_null=True, help_text="FAILED: the platform's words"),
        "finishedAt": serializers.DateTimeField(allow_null=True, help_text="When it ended (null while open)."),
    },
)


class EntryUnpublishOutput(serializers.Serializer):
    status = choice(
        ["PENDING", "SENDING", "DONE", "FAILED", "SKIPPED"],
        help_text="DONE once the platform no longer has the post (one already gone counts); SKIPPED: the platform "
        "cannot delete through its API (`reason`)",
    )
    requestedAt = serializers.DateTimeField(help_text="When removing it was asked for.")
    reason = serializers.CharField(allow_null=True, help_text="SKIPPED: why the platform cannot delete it")
    errorCode = serializers.CharField(allow_null=True, help_text="FAILED: the normalized errorCode")
    errorMessage = serializers.CharField(allow_null=True, help_text="FAILED: the platform's words")
    finishedAt = serializers.DateTimeField(allow_null=True, help_text="When it ended (null while open).")


def _action(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": item["status"],
        "requestedAt": item["requestedAt"],
        "reason": item.get("reason") or None,
        "errorCode": item.get("errorCode") or None,
        "errorMessage": item.get("errorMessage") or None,
        "finishedAt": item.get("finishedAt"),
    }


def _edits(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": item["id"],
            "requestId": item["requestId"],
            "fields": sorted(item.get("changes") or {}),
            "changes": item.get("changes") or {},
            "previous": item.get("previous") or {},
            **_action(item),
        }
        for item in row["actions"] or []
        if item["kind"] == "EDIT"
    ]


def _unpublish(row: dict[str, Any]) -> dict[str, Any] | None:
    deletes = [item for item in row["actions"] or [] if item["kind"] == "DELETE"]
    return _action(deletes[-1]) if deletes else None


# Entries edited or asked to be removed after publishing only (others answer as they always did).
ENTRY_AFTER_PUBLISHING = Record(
    {
        "edits": Key(
            serializers.ListField(
                child=EntryEditOutput(),
                required=False,
                help_text="Entries edited after publishing only: every edit asked for, oldest first, with its outcome "
                "(the entry's history)",
            ),
            _edits,
        ),
        "unpublish": Key(
            EntryUnpublishOutput(
                required=False,
                allow_null=True,
                help_text="Entries of a post asked to be removed from its platforms only (else null): the last "
                "removal asked for and its outcome",
            ),
            _unpublish,
        ),
        "unpublishedAt": Key(
            serializers.DateTimeField(
                required=False,
                allow_null=True,
                help_text="Entries edited or asked to be removed only: when the platform's copy was removed (null: "
                "it is still there). The entry keeps its status and ids",
            ),
            instant("unpublished_at"),
        ),
    }
)
PlatformEntryOutput = ENTRY.serializer(
    "PlatformEntryOutput",
    *ENTRY_CONFIG.values(),
    ENTRY_MEDIA,
    ENTRY_OWN_MEDIA,
    ENTRY_THREAD,
    ENTRY_FIRST_COMMENT,
    ENTRY_AFTER_PUBLISHING,
    ENTRY_MEDIA_FIT,
)


class ThreadItemOutput(serializers.Serializer):
    text = serializers.CharField(help_text="The reply's text.")
    mediaUrls = serializers.ListField(child=serializers.CharField(), help_text="The reply's media.")


# Posts with a thread only.
POST_THREAD = Record(
    {
        "thread": Key(
            serializers.ListField(
                child=ThreadItemOutput(),
                required=False,
                help_text="Posts created with a thread only: its replies, in order, after the post's own text",
            ),
            lambda row: [
                {"text": item.get("text") or "", "mediaUrls": list(item.get("mediaUrls") or [])}
                for item in row["thread"] or []
            ],
        )
    }
)


class FirstCommentOutput(serializers.Serializer):
    text = serializers.CharField(help_text="The comment's text.")
    delaySeconds = serializers.IntegerField(help_text="Seconds between an entry going live and its comment.")


# Posts with a first comment only.
POST_FIRST_COMMENT = Record(
    {
        "firstComment": Key(
            FirstCommentOutput(required=False, help_text="Posts created with a firstComment only"),
            lambda row: {
                "text": str(row["first_comment"].get("text") or ""),
                "delaySeconds": int(row["first_comment"].get("delaySeconds") or 0),
            },
        )
    }
)


class PostPlatformFirstCommentOutput(serializers.Serializer):
    platform = choice(_PLATFORMS, help_text="The platform whose entries get this comment.")
    text = serializers.CharField(help_text="The comment on that platform.")


# Posts with per-platform first comments only; ``platform_first_comments`` is added to the row by
# :func:`post_records` from its entries (where each is stored).
POST_PLATFORM_FIRST_COMMENTS = Record(
    {
        "platformFirstComments": Key(
            serializers.ListField(
                child=PostPlatformFirstCommentOutput(),
                required=False,
                help_text="Posts with platformFirstComments only: the items that apply (a platform of the post's "
                "entries), in the order of the entries",
            ),
            column("platform_first_comments"),
        )
    }
)

# The post record: ``preview_urls`` and ``platforms`` are added to the row by :func:`post_records`.
POST = Record(
    {
        "id": Key(serializers.CharField(help_text="The post's id."), column("id")),
        "userId": Key(
            serializers.CharField(
                allow_null=True, help_text="The member who created the post; null when its key has no member"
            ),
            id_text("created_by_id"),
        ),
        "status": Key(
            choice(
                PostStatus.values,
                help_text="DRAFT, SCHEDULED, PENDING, PUBLISHING, COMPLETED, PARTIAL_FAILURE or FAILED.",
            ),
            column("status"),
        ),
        "contentType": Key(
            serializers.CharField(help_text="TEXT, IMAGE, VIDEO, CAROUSEL or DOCUMENT."), column("content_type")
        ),
        "text": Key(
            serializers.CharField(help_text="The post's text (entries with their own text answer it in their `text`)."),
            column("text"),
        ),
        "timezone": Key(serializers.CharField(help_text="The post's IANA time zone."), column("timezone")),
        "scheduledAt": Key(
            serializers.DateTimeField(allow_null=True, help_text="null for an undated draft or a post sent now"),
            instant("scheduled_at"),
        ),
        "mediaUrls": Key(
            serializers.ListField(child=serializers.CharField(), help_text="The media, in order."), column("media_urls")
        ),
        "mediaAltTexts": Key(
            serializers.ListField(
                child=serializers.CharField(), help_text='Alternative text per medium ("" for none).'
            ),
            listed("media_alt_texts"),
        ),
        "previewUrls": Key(
            serializers.ListField(
                child=serializers.CharField(),
                help_text="The WebP previews (at most 720 px) of the media items that have one, in the order of "
                "mediaUrls: of an image, the image; of a video, a still frame; of a PDF document, its first page. An "
                "item with no preview (not made yet, none possible, or a PowerPoint or Word file) is left out: never "
                "null, never an empty string",
            ),
            column("preview_urls"),
        ),
        "thumbnailUrl": Key(
            serializers.CharField(allow_null=True, help_text="A video's cover image, when one was given."),
            text_or_none("thumbnail_url"),
        ),
        "recurringPostId": Key(
            serializers.CharField(allow_null=True, help_text="The series this post is an occurrence of, if any."),
            column("recurring_post_id"),
        ),
        "occurrenceAt": Key(
            serializers.DateTimeField(allow_null=True, help_text="The series occurrence this post stands for, if any."),
            instant("occurrence_at"),
        ),
        "createdAt": Key(serializers.DateTimeField(help_text="When the post was created."), instant("created_at")),
        "updatedAt": Key(serializers.DateTimeField(help_text="When the post last changed."), instant("updated_at")),
        "platforms": Key(
            PlatformEntryOutput(
                many=True,
                help_text=("The platform entries: one per account published to, each with its own status and result."),
            ),
            column("platforms"),
        ),
    }
)
# Keys a record carries only when the post has a late policy (bodies of other posts are unchanged).
LATE = Record(
    {
        "latePolicy": Key(
            choice([LatePolicy.SKIP.value, LatePolicy.DRAFT.value], required=False, help_text="Present when set"),
            column("late_policy"),
        ),
        "maxLatenessSeconds": Key(
            serializers.IntegerField(required=False, help_text="Present with latePolicy"),
            column("max_lateness_seconds"),
        ),
    }
)
# Posts asked to be removed from their platforms only.
POST_UNPUBLISHED = Record(
    {
        "unpublishedAt": Key(
            serializers.DateTimeField(
                required=False,
                help_text="Posts asked to be removed from their platforms only: when (`POST /social-posts/{id}/unpublish`)."
                " The status stays what publishing made it; each entry's `unpublish` says how its removal went",
            ),
            instant("unpublished_at"),
        )
    }
)
PostOutput = POST.serializer(
    "PostOutput", LATE, POST_THREAD, POST_FIRST_COMMENT, POST_PLATFORM_FIRST_COMMENTS, POST_UNPUBLISHED
)


def _entry(
    row: dict[str, Any], media: dict[str, Any], *, thread: bool = False, first_comment: bool = False
) -> dict[str, Any]:
    """The entry of a ``TARGET_FIELDS`` row, with the media of its post (and, when the post has a
    thread, its thread items; when it has a first comment, of the post or its own, the comment's result)."""
    return {
        **ENTRY.render(row),
        **ENTRY_CONFIG.get(row["platform"], _NO_CONFIG).render(row),
        **ENTRY_MEDIA.render(media),
        **(ENTRY_OWN_MEDIA.render(media) if media.get("own") else {}),
        **(ENTRY_THREAD.render(row) if thread else {}),
        **(ENTRY_FIRST_COMMENT.render(row) if first_comment else {}),
        **(ENTRY_AFTER_PUBLISHING.render(row) if row["last_action_at"] else {}),
        **(ENTRY_MEDIA_FIT.render(row) if row.get("media_fit") else {}),
    }


def post_records(rows: list[dict[str, Any]], targets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of posts read as ``POST_FIELDS`` rows, with their entries as ``TARGET_FIELDS``
    rows (in ``TARGET_ORDER``), in the rows' order: one preview lookup for all their media. The
    one way a post is rendered (the list and the get read their rows with ``posts.selectors``)."""
    if not rows:
        return []
    own_urls = [url for target in targets for url in (target.get("media") or {}).get("mediaUrls") or []]
    previews = _previews([*(url for row in rows for url in (row["media_urls"] or [])), *own_urls])
    fitted_posts = {t["post_id"] for t in targets if t.get("media_fit")}
    variants = variants_by_original(
        urls=[u for row in rows if row["id"] in fitted_posts for u in (row["media_urls"] or []) + _thread_urls(row)]
    )
    kinds = {url: kind for (url, _, _), kind in _kinds(variants).items()}
    records = {}
    for row in rows:
        media_urls = list(row["media_urls"] or [])
        source = {**row, "media_urls": media_urls, "preview_urls": _preview_urls(media_urls, previews)}
        source["platforms"] = []
        source["platform_first_comments"] = []
        records[row["id"]] = source
    for target in targets:
        post = records[target["post_id"]]
        # every entry publishes the post's media (a list of its own in each entry), unless media of
        # its own are live on its platform (after a media edit it did not take, or not yet)
        own = target.get("media") or {}
        if own:
            own_urls = list(own.get("mediaUrls") or [])
            media = {
                "own": True,
                "content_type": own.get("contentType"),
                "media_urls": own_urls,
                "preview_urls": _preview_urls(own_urls, previews),
                "media_alt_texts": list(own.get("mediaAltTexts") or []),
            }
        else:
            media = {
                "media_urls": list(post["media_urls"]),
                "preview_urls": list(post["preview_urls"]),
                "media_alt_texts": list(post["media_alt_texts"] or []),
            }
        if target.get("media_fit"):
            target = {**target, "media_variants": _entry_variants(post, target, variants, kinds)}
        post["platforms"].append(
            _entry(
                {**target, "post_text": post["text"]},
                media,
                thread=bool(post["thread"]),
                first_comment=bool(post["first_comment"] or target["first_comment_text"]),
            )
        )
        if target["first_comment_text"]:
            comment = {"platform": target["platform"], "text": target["first_comment_text"]}
            post["platform_first_comments"].append(comment)
    return [_post(source) for source in records.values()]


def _kinds(variants: dict[tuple[str, str, str], dict[str, Any]]) -> dict[tuple[str, str, str], str]:
    return {key: str(value.get("kind") or "") for key, value in variants.items()}


def _entry_variants(
    post: dict[str, Any],
    target: dict[str, Any],
    variants: dict[tuple[str, str, str], dict[str, Any]],
    kinds: dict[str, str],
) -> list[dict[str, Any]]:
    urls = list(post["media_urls"])
    post_type = post_type_of(
        Platform(target["platform"]),
        content_type=post["content_type"],
        options=target["config"] or {},
        kinds=[kinds.get(url, "") for url in urls],
    )
    found = [variants.get((url, target["platform"], post_type.value)) for url in urls]
    for item in post["thread"] or []:  # then each thread item's, fitted under the item's post type
        item_urls = [u for u in item.get("mediaUrls") or [] if isinstance(u, str)]
        item_type = thread_item_post_type(Platform(target["platform"]), [kinds.get(url, "") for url in item_urls])
        found += [variants.get((url, target["platform"], item_type.value)) for url in item_urls]
    listed = [{k: v for k, v in item.items() if k != "kind"} for item in found if item is not None]
    return [item for index, item in enumerate(listed) if item not in listed[:index]]


def _thread_urls(row: dict[str, Any]) -> list[str]:
    return [u for item in row.get("thread") or [] for u in item.get("mediaUrls") or [] if isinstance(u, str)]


def _post(source: dict[str, Any]) -> dict[str, Any]:
    """The record of a post's row: its keys, then those of a late policy, a thread, a first comment
    and per-platform first comments, each only when the post has one (so a post without any has
    the body it always had)."""
    record = POST.render(source)
    if source["late_policy"] != LatePolicy.PUBLISH:
        record.update(LATE.render(source))
    if source["thread"]:
        record.update(POST_THREAD.render(source))
    if source["first_comment"]:
        record.update(POST_FIRST_COMMENT.render(source))
    if source["platform_first_comments"]:
        record.update(POST_PLATFORM_FIRST_COMMENTS.render(source))
    if source["unpublished_at"]:
        record.update(POST_UNPUBLISHED.render(source))
    return record


def post_record(post: Post) -> dict[str, Any]:
    """The record of one post model instance (its targets read fresh unless prefetched)."""
    rows = [{name: getattr(post, name) for name in POST_FIELDS}]
    entries = list(post.targets.all())
    acted = [target.id for target in entries if target.last_action_at]  # none for a post never edited
    actions = _actions_of(acted) if acted else {}
    targets = [
        {
            **{name: getattr(target, name) for name in TARGET_FIELDS if name != "actions"},
            "actions": actions.get(target.id),
        }
        for target in entries
    ]
    return post_records(rows, targets)[0]


def _actions_of(target_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The actions of these entries as the selectors' ``actions`` column reads them, one query."""
    found: dict[str, list[dict[str, Any]]] = {}
    for action in PostTargetAction.objects.filter(target_id__in=target_ids).order_by("created_at", "id"):
        found.setdefault(action.target_id, []).append(
            {
                "id": action.id,
                "requestId": action.request_id,
                "kind": action.kind,
                "status": action.status,
                "changes": action.changes,
                "previous": action.previous,
                "reason": action.reason,
                "errorCode": action.error_code,
                "errorMessage": action.error_message,
                "requestedAt": format_instant(action.created_at),
                "finishedAt": format_instant(action.finished_at),
            }
        )
    return found
