"""The platform capabilities as the service's own table (``platforms.capabilities``) states them,
in the shape the client package ships in ``crosspost/capabilities.json``."""

from __future__ import annotations

from typing import Any

FIELDS = {
    "text_limit": "textLimit",
    "text_counting": "textCounting",
    "text_limit_with_media": "textLimitWithMedia",
    "text_byte_limit": "textByteLimit",
    "max_images": "maxImages",
    "max_videos": "maxVideos",
    "max_documents": "maxDocuments",
    "max_items": "maxItems",
    "min_images_without_video": "minImagesWithoutVideo",
    "mixed_media": "mixedMedia",
    "media_required": "mediaRequired",
    "title_limit": "titleLimit",
    "followers": "followers",
}


def server_capabilities() -> dict[str, Any]:
    from platforms.capabilities import CAPABILITIES

    table: dict[str, Any] = {}
    for platform, caps in CAPABILITIES.items():
        entry: dict[str, Any] = {"platform": platform.value, "contentTypes": sorted(caps.content_types)}
        entry.update({camel: getattr(caps, name) for name, camel in FIELDS.items()})
        entry["metrics"] = sorted(caps.metrics)
        table[platform.value] = entry
    return table
