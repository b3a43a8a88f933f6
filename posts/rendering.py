"""The post record of CONTRACT.md §5: the one shape of a post in API responses and in the
``data.post`` of post events. :func:`post_records` renders a batch with a fixed number of
queries (targets prefetched once, media previews looked up once)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import prefetch_related_objects

from core.fields import format_instant
from media.selectors import media_previews
from posts.models import Post, PostTarget

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


def record_field_name(platform: str, key: str) -> str:
    prefix = PLATFORM_CONFIG_FIELDS[platform][0]
    return prefix + key[0].upper() + key[1:]


def _previews(urls: Iterable[str]) -> dict[str, str]:
    wanted = sorted(set(urls))
    return media_previews(urls=wanted) if wanted else {}


def _none_if_blank(value: str) -> str | None:
    return value or None


def entry_record(target: PostTarget) -> dict[str, Any]:
    """One platform entry. ``id`` and ``platformId`` carry the same value."""
    record: dict[str, Any] = {
        "id": target.id,
        "platformId": target.id,
        "platform": target.platform,
        "status": target.status,
        "connectionId": target.account_id,
        "pageId": _none_if_blank(target.page_id),
        "accountName": target.account_name,
        "text": target.text,
        "platformPostId": _none_if_blank(target.platform_post_id),
        "postUrl": _none_if_blank(target.post_url),
        "errorMessage": _none_if_blank(target.error_message),
        "errorCode": _none_if_blank(target.error_code),
        "publishedAt": format_instant(target.published_at),
        "tiktokDraftFallback": target.tiktok_draft_fallback,
    }
    if target.platform in PLATFORM_CONFIG_FIELDS:
        config = target.config or {}
        for key in PLATFORM_CONFIG_FIELDS[target.platform][1]:
            value = config.get(key)
            if (target.platform, key) in LIST_CONFIG_FIELDS:
                value = list(value or [])
            record[record_field_name(target.platform, key)] = value
    return record


def _record(post: Post, previews: dict[str, str]) -> dict[str, Any]:
    media_urls = list(post.media_urls or [])
    return {
        "id": post.id,
        "status": post.status,
        "contentType": post.content_type,
        "text": post.text,
        "timezone": post.timezone,
        "scheduledAt": format_instant(post.scheduled_at),
        "mediaUrls": media_urls,
        "mediaAltTexts": list(post.media_alt_texts or []),
        "previewUrls": [previews.get(url) or "" for url in media_urls],
        "thumbnailUrl": post.thumbnail_url or None,
        "recurringPostId": post.recurring_post_id,
        "occurrenceAt": format_instant(post.occurrence_at),
        "createdAt": format_instant(post.created_at),
        "updatedAt": format_instant(post.updated_at),
        "platforms": [entry_record(t) for t in post.targets.all()],
    }


def post_records(posts: list[Post]) -> list[dict[str, Any]]:
    """Records of ``posts`` in order: one query for all their targets (skipped when already
    prefetched) and one preview lookup for all their media."""
    posts = list(posts)
    if not posts:
        return []
    prefetch_related_objects(posts, "targets")
    previews = _previews(url for post in posts for url in (post.media_urls or []))
    return [_record(post, previews) for post in posts]


def post_record(post: Post) -> dict[str, Any]:
    """The record of one post (its targets read fresh unless prefetched)."""
    return post_records([post])[0]
