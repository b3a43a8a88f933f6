"""The post record of CONTRACT.md §5: the one shape of a post in API responses and in the
``data.post`` of post events. :func:`post_records` renders a batch with a fixed number of
queries (its rows read once, media previews looked up once)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from core.fields import format_instant
from media.selectors import media_previews
from posts.models import Post

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
    "recurring_post_id",
    "occurrence_at",
    "created_by_id",
    "created_at",
    "updated_at",
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
)


TARGET_ORDER = ("created_at", "id")  # PostTarget's Meta.ordering: the order of ``post.targets.all()``


def _instant(value: dt.datetime | str | None) -> str | None:
    """A record's instant: rows read by ``posts.selectors`` carry them already formatted."""
    return value if value is None or isinstance(value, str) else format_instant(value)


def _entry(row: dict[str, Any]) -> dict[str, Any]:
    """The entry of a ``TARGET_FIELDS`` row. ``id`` and ``platformId`` carry the same value."""
    platform = row["platform"]
    record: dict[str, Any] = {
        "id": row["id"],
        "platformId": row["id"],
        "platform": platform,
        "status": row["status"],
        "connectionId": row["account_id"],
        "pageId": row["page_id"] or None,
        "accountName": row["account_name"],
        "text": row["text"],
        "platformPostId": row["platform_post_id"] or None,
        "postUrl": row["post_url"] or None,
        "errorMessage": row["error_message"] or None,
        "errorCode": row["error_code"] or None,
        "publishedAt": _instant(row["published_at"]),
        "tiktokDraftFallback": row["tiktok_draft_fallback"],
    }
    if platform in PLATFORM_CONFIG_FIELDS:
        config = row["config"] or {}
        for key in PLATFORM_CONFIG_FIELDS[platform][1]:
            value = config.get(key)
            if (platform, key) in LIST_CONFIG_FIELDS:
                value = list(value or [])
            record[record_field_name(platform, key)] = value
        for name, alias in CLIENT_ALIASES.items():
            if name in record:
                record[alias] = record[name]
    return record


def _record(post: dict[str, Any], entries: list[dict[str, Any]], previews: dict[str, str | None]) -> dict[str, Any]:
    """The record of a ``POST_FIELDS`` row with its entries."""
    media_urls = list(post["media_urls"] or [])
    preview_urls = [previews.get(url) for url in media_urls]
    for entry in entries:  # every entry publishes the post's media
        entry["mediaUrls"], entry["previewUrls"] = list(media_urls), list(preview_urls)
    return {
        "id": post["id"],
        "userId": None if post["created_by_id"] is None else str(post["created_by_id"]),
        "status": post["status"],
        "contentType": post["content_type"],
        "text": post["text"],
        "timezone": post["timezone"],
        "scheduledAt": _instant(post["scheduled_at"]),
        "mediaUrls": media_urls,
        "mediaAltTexts": list(post["media_alt_texts"] or []),
        "previewUrls": preview_urls,
        "thumbnailUrl": post["thumbnail_url"] or None,
        "recurringPostId": post["recurring_post_id"],
        "occurrenceAt": _instant(post["occurrence_at"]),
        "createdAt": _instant(post["created_at"]),
        "updatedAt": _instant(post["updated_at"]),
        "platforms": entries,
    }


def post_records(rows: list[dict[str, Any]], targets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of posts read as ``POST_FIELDS`` rows, with their entries as ``TARGET_FIELDS``
    rows (in ``TARGET_ORDER``), in the rows' order: one preview lookup for all their media. The
    one way a post is rendered (the list and the get read their rows with ``posts.selectors``)."""
    if not rows:
        return []
    entries: dict[str, list[dict[str, Any]]] = {row["id"]: [] for row in rows}
    for target in targets:
        entries[target["post_id"]].append(_entry(target))
    previews = _previews(url for row in rows for url in (row["media_urls"] or []))
    return [_record(row, entries[row["id"]], previews) for row in rows]


def post_record(post: Post) -> dict[str, Any]:
    """The record of one post model instance (its targets read fresh unless prefetched)."""
    rows = [{name: getattr(post, name) for name in POST_FIELDS}]
    targets = [{name: getattr(target, name) for name in TARGET_FIELDS} for target in post.targets.all()]
    return post_records(rows, targets)[0]
