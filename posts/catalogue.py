"""What ``GET /platforms`` answers: each platform's limits as the validators apply them. Built on
every call from the same sources validation reads (``platforms.capabilities``, the config
serializers of ``posts.payloads``, the upload types and size of ``media``), so the catalogue
cannot drift from what create and ``/validate`` enforce."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import serializers

from core.serializers import json_type
from media.files import ALLOWED_MIME_TYPES
from media.models import MediaKind
from platforms.base import Platform
from platforms.capabilities import CAPABILITIES, METRICS, Capabilities, max_file_bytes, max_video_seconds
from platforms.media_rules import DocumentRules, ImageRules, MediaRules, PictureRules, VideoRules, rules_of
from posts.models import ContentType
from posts.payloads import CONFIG_FIELDS, CONFIG_SERIALIZERS, THREAD_MAX_ITEMS


def platform_catalogue() -> list[dict[str, Any]]:
    """One entry per platform of the spec, in the spec's order."""
    return [_entry(platform, CAPABILITIES[platform]) for platform in Platform]


def _entry(platform: Platform, caps: Capabilities) -> dict[str, Any]:
    return {
        "platform": platform.value,
        "contentTypes": [c for c in ContentType.values if c in caps.content_types],
        "text": {
            "limit": caps.text_limit,
            "counting": caps.text_counting,
            "limitWithMedia": caps.text_limit_with_media,
            "byteLimit": caps.text_byte_limit,
        },
        "titleLimit": caps.title_limit,
        "media": _media(platform, caps),
        "config": _config(platform.value),
        "analytics": {"metrics": [m for m in METRICS if m in caps.metrics], "followers": caps.followers},
        "thread": {"supported": caps.threads, "maxItems": THREAD_MAX_ITEMS if caps.threads else None},
        "firstComment": {"supported": caps.comment_text_limit is not None, "textLimit": caps.comment_text_limit},
        "afterPublishing": {
            "editFields": sorted(caps.edit_fields),
            "deletable": caps.deletable,
            "mediaEdit": {
                "addsMedia": caps.edit_media_adds,
                "removesMedia": caps.edit_media_removes,
                "maxItems": caps.edit_media_max_items,
            }
            if "media" in caps.edit_fields
            else None,
        },
        "comments": comments_entry(caps),
    }


# The order GET /platforms lists a platform's comment actions in.
COMMENT_ACTIONS = ("read", "reply", "hide", "delete_own", "delete_others", "like")


def comments_entry(caps: Capabilities) -> dict[str, Any]:
    """What the inbox can do with the comments on this platform: its comment API's actions (empty:
    none, nothing is synced), the longest reply, and the comment reads a sync may spend per account
    and hour."""
    actions = [action for action in COMMENT_ACTIONS if action in caps.comment_actions]
    return {
        "actions": actions,
        "textLimit": (caps.reply_text_limit or caps.comment_text_limit) if "reply" in actions else None,
        "readsPerHour": caps.comment_reads_per_hour if "read" in actions else None,
    }


def _max_file_bytes(platform: Platform, kind: MediaKind) -> int:
    """The platform's limit for files of ``kind``, or this service's upload limit where that is
    smaller (or the platform documents none): the largest file a post to it can carry."""
    limit = max_file_bytes(platform, kind.value)
    upload_limit = int(settings.MEDIA_MAX_UPLOAD_BYTES)
    return upload_limit if limit is None else min(limit, upload_limit)


def _media(platform: Platform, caps: Capabilities) -> dict[str, Any]:
    maxima = {
        MediaKind.IMAGE: caps.max_images,
        MediaKind.VIDEO: caps.max_videos,
        MediaKind.DOCUMENT: caps.max_documents,
    }
    kinds = [
        {
            "kind": kind.value,
            "maxCount": maxima[kind],
            "mimeTypes": [mime for mime, (of_kind, _) in ALLOWED_MIME_TYPES.items() if of_kind == kind],
            "maxFileBytes": _max_file_bytes(platform, kind),
            "maxDurationSeconds": max_video_seconds(platform) if kind == MediaKind.VIDEO else None,
        }
        for kind in MediaKind
        if maxima[kind]
    ]
    return {
        "required": caps.media_required,
        "maxItems": caps.max_items,
        "mixedImagesAndVideos": caps.mixed_media,
        "minImagesWithoutVideo": caps.min_images_without_video or None,
        "kinds": kinds,
        "rules": [media_rules_entry(rules) for rules in rules_of(platform)],
    }


def media_rules_entry(rules: MediaRules) -> dict[str, Any]:
    """One post type's rules as ``media.rules`` answers them (``posts.api.platforms``)."""
    return {
        "postType": rules.post_type.value,
        "selectedBy": rules.selected_by,
        "source": rules.source,
        "note": rules.note or None,
        "image": _image_rules(rules.image) if rules.image else None,
        "video": _video_rules(rules.video) if rules.video else None,
        "document": _document_rules(rules.document) if rules.document else None,
    }


def _sorted(values: frozenset[str] | None) -> list[str] | None:
    return None if values is None else sorted(values)


def _picture_rules(spec: PictureRules) -> dict[str, Any]:
    ratio = None
    if spec.min_ratio or spec.max_ratio:
        ratio = {
            "min": spec.min_ratio.label if spec.min_ratio else None,
            "max": spec.max_ratio.label if spec.max_ratio else None,
            "minValue": round(spec.min_ratio.value, 6) if spec.min_ratio else None,
            "maxValue": round(spec.max_ratio.value, 6) if spec.max_ratio else None,
            "tolerance": spec.ratio_tolerance,
        }
    return {
        "maxFileBytes": spec.max_bytes,
        "minFileBytes": spec.min_bytes,
        "minWidth": spec.min_width,
        "minHeight": spec.min_height,
        "maxWidth": spec.max_width,
        "maxHeight": spec.max_height,
        "eitherOrientation": spec.any_orientation,
        "maxPixels": spec.max_pixels,
        "maxWidthPlusHeight": spec.max_side_sum,
        "aspectRatio": ratio,
    }


def _image_rules(spec: ImageRules) -> dict[str, Any]:
    return {
        **_picture_rules(spec),
        "formats": _sorted(spec.formats),
        "animated": spec.animated,
        "maxAnimatedFileBytes": spec.max_animated_bytes,
    }


def _video_rules(spec: VideoRules) -> dict[str, Any]:
    return {
        **_picture_rules(spec),
        "containers": _sorted(spec.containers),
        "videoCodecs": _sorted(spec.video_codecs),
        "audioCodecs": _sorted(spec.audio_codecs),
        "minDurationSeconds": spec.min_seconds,
        "maxDurationSeconds": spec.max_seconds,
        "minFrameRate": spec.min_fps,
        "maxFrameRate": spec.max_fps,
        "maxBitRate": spec.max_bitrate,
    }


def _document_rules(spec: DocumentRules) -> dict[str, Any]:
    return {"maxFileBytes": spec.max_bytes}


def _config(platform: str) -> dict[str, Any] | None:
    serializer_class = CONFIG_SERIALIZERS.get(platform)
    if serializer_class is None:
        return None
    fields = [_config_field(name, field) for name, field in serializer_class().fields.items() if not field.write_only]
    return {"field": CONFIG_FIELDS[platform], "fields": fields}


def _config_field(name: str, field: serializers.Field) -> dict[str, Any]:
    kind = "array" if isinstance(field, serializers.ListField) else json_type(field) or "string"
    choices = list(field.choices) if isinstance(field, serializers.ChoiceField) else None
    max_length = getattr(field, "max_length", None)
    return {
        "name": name,
        "type": kind,
        "required": bool(field.required),
        "allowsNull": bool(getattr(field, "allow_null", False)),
        "enum": choices,
        "maxLength": max_length,
    }
