"""Building the targeting fields of a post from connected accounts, and its content type from
its media, the two parts of a create body people get wrong most."""

from __future__ import annotations

import mimetypes
from collections.abc import Iterable, Mapping
from typing import Any

CONNECTION_FIELDS = {
    "TWITTER": "twitterConnectionIds",
    "BLUESKY": "blueskyConnectionIds",
    "MASTODON": "mastodonConnectionIds",
    "THREADS": "threadsConnectionIds",
    "LINKEDIN": "linkedinConnectionIds",
    "INSTAGRAM": "instagramConnectionIds",
    "TIKTOK": "tiktokConnectionIds",
    "YOUTUBE": "youtubeConnectionIds",
    "PINTEREST": "pinterestConnectionIds",
    "TELEGRAM": "telegramConnectionIds",
    "GOOGLE_BUSINESS": "googleBusinessConnectionIds",
}


def targets_for(accounts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``platforms`` plus the connection arrays (``pageIds`` for Facebook) that aim a post at
    exactly these accounts (records of ``list_accounts``)."""
    body: dict[str, Any] = {"platforms": []}
    for account in accounts:
        platform = str(account["platform"])
        if platform not in body["platforms"]:
            body["platforms"].append(platform)
        if platform == "FACEBOOK":
            body.setdefault("pageIds", []).append(account.get("pageId") or account["id"])
        else:
            body.setdefault(CONNECTION_FIELDS[platform], []).append(account["id"])
    return body


def content_type_for(media_urls: list[str]) -> str:
    """TEXT without media, VIDEO / DOCUMENT for one such file, IMAGE for one image, else CAROUSEL."""
    if not media_urls:
        return "TEXT"
    kinds = [_kind(url) for url in media_urls]
    if len(kinds) == 1:
        return {"video": "VIDEO", "document": "DOCUMENT"}.get(kinds[0], "IMAGE")
    return "CAROUSEL"


def _kind(url: str) -> str:
    mime, _ = mimetypes.guess_type(url.split("?")[0])
    if mime and mime.startswith("video/"):
        return "video"
    if mime and not mime.startswith("image/"):
        return "document"
    return "image"
