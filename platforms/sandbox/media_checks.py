"""The media rules (``platforms.media_rules``) as the simulators apply them to the bytes they
receive, so a post the service lets through and the platform would refuse fails in the sandbox
too. Each simulator calls :func:`refusal` (bytes it was sent) or :func:`refusal_of_url` (a URL it
pulls) from its media path and answers a refusal in its own platform's error shape.

The bytes are read in-process, cheaply and within bounds: Pillow reads an image's header (and
counts an animation's frames), PyAV reads a video's container and stream headers and decodes one
frame for its rotation, with at most ``MAX_PACKETS`` packets demuxed; nothing is decoded beyond
that. What is measured has the keys of ``media.probe``'s facts, so ``check_file`` reads both
alike. Bytes neither library can read are left to each simulator's own type checks, as before.

What a simulator received is also written to its request log (``media``: one :func:`received`
summary per file, its SHA-256 and what was measured), so a test can tell which file each platform
was sent: the original, or the variant fitted for it (``mediaFit: "auto"``)."""

from __future__ import annotations

import hashlib
import io
import warnings
from typing import Any

from django.http import HttpRequest

from platforms.base import Platform
from platforms.media_rules import PostType, check_file, rules_for, what
from platforms.sandbox.common import pull_media

MAX_PACKETS = 400
_IMAGE_FORMATS = ("JPEG", "PNG", "WEBP", "GIF", "HEIF")
_QUARTER_TURNS = (5, 6, 7, 8)  # EXIF orientations whose displayed sides are swapped
_EXIF_ORIENTATION = 0x0112


def refusal(platform: Platform, post_type: PostType | str, data: bytes) -> str | None:
    """Why ``platform`` refuses ``data`` for a post of ``post_type`` (the first rule it breaks,
    naming the rule's code), or None when it takes it or the bytes cannot be read here."""
    facts = measure(data)
    if facts is None:
        return None
    kind = facts["type"]
    rules = rules_for(platform, PostType(post_type))
    broken = check_file(rules, kind, size=len(data), facts=facts)
    if not broken:
        return None
    first = broken[0]
    return f"{platform.value} takes {what(rules, kind)} {first.requirement} ({first.code}); the file {first.found}"


def refusal_of_url(
    platform: Platform, post_type: PostType | str, url: str, *, receipts: list[dict[str, Any]] | None = None
) -> str | None:
    """:func:`refusal` of the bytes at ``url`` (None when they cannot be fetched: the simulator's
    own fetch reports that); what was fetched is added to ``receipts`` when given (:func:`received`)."""
    pulled = pull_media(url)
    if isinstance(pulled, str):
        return None
    if receipts is not None:
        receipts.append(received(pulled[0]))
    return refusal(platform, post_type, pulled[0])


_RECEIVED_FACTS = (
    "type",
    "format",
    "container",
    "videoCodec",
    "audioCodec",
    "width",
    "height",
    "displayWidth",
    "displayHeight",
    "frameRate",
    "durationSeconds",
)


def received(data: bytes) -> dict[str, Any]:
    """What a simulator received, as its request log records it: the bytes' SHA-256 and length and
    what :func:`measure` read of them (nothing more for bytes it cannot read)."""
    facts = measure(data) or {}
    summary: dict[str, Any] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    summary.update((key, facts[key]) for key in _RECEIVED_FACTS if key in facts)
    return summary


def log_received(request: HttpRequest, receipts: list[dict[str, Any]]) -> None:
    """Add ``receipts`` to the call's request log entry, under ``media`` (after whatever the view
    logged already: call it once the view's own ``sandbox_log`` is set)."""
    if not receipts:
        return
    entry = dict(getattr(request, "sandbox_log", None) or {})
    entry["media"] = [*entry.get("media", []), *receipts]
    request.sandbox_log = entry  # type: ignore[attr-defined]


def meta_post_type(media_type: str, carousel_item: bool) -> PostType:
    """The post type of a Graph container (Instagram, Threads) from its ``media_type``."""
    if carousel_item:
        return PostType.CAROUSEL_ITEM
    return {"REELS": PostType.REEL, "STORIES": PostType.STORY}.get(media_type.upper(), PostType.FEED)


def measure(data: bytes) -> dict[str, Any] | None:
    """What the bytes are, in the probe's keys; None for bytes that are neither a readable image
    nor a readable MP4/QuickTime video."""
    if data[4:8] == b"ftyp":
        return _video(data)
    return _image(data)


def _image(data: bytes) -> dict[str, Any] | None:
    from PIL import Image  # noqa: PLC0415 (only simulators that received media load it)
    from pillow_heif import register_heif_opener  # noqa: PLC0415

    register_heif_opener()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=_IMAGE_FORMATS) as image:
                width, height = image.size
                orientation = int(image.getexif().get(_EXIF_ORIENTATION) or 1)
                frames = int(getattr(image, "n_frames", 1) or 1)
                image_format = image.format
    except (Image.DecompressionBombError, OSError, SyntaxError, ValueError, EOFError):
        return None
    turned = orientation in _QUARTER_TURNS
    return {
        "type": "image",
        "format": image_format,
        "width": width,
        "height": height,
        "displayWidth": height if turned else width,
        "displayHeight": width if turned else height,
        "frameCount": frames,
        "animated": frames > 1,
    }


def _video(data: bytes) -> dict[str, Any] | None:
    import av  # noqa: PLC0415 (only simulators that received media load it)

    try:
        container = av.open(io.BytesIO(data), mode="r", format="mov", options={"enable_drefs": "0"})
    except (av.FFmpegError, ValueError, OSError):
        return None
    try:
        return _video_facts(container)
    except (av.FFmpegError, ValueError, OSError):
        return None
    finally:
        container.close()


def _video_facts(container: Any) -> dict[str, Any] | None:
    if not container.streams.video:
        return None
    video = container.streams.video[0]
    audio = container.streams.audio[0] if container.streams.audio else None
    width, height = video.codec_context.width, video.codec_context.height
    if not (width and height):
        return None
    rotation = _rotation(container, video)
    rate = video.average_rate or video.guessed_rate
    swapped = rotation in (90, 270)
    seconds = container.duration / 1_000_000 if container.duration else None
    return {
        "type": "video",
        "container": "quicktime" if str(container.metadata.get("major_brand", "")).strip() == "qt" else "mp4",
        "videoCodec": video.codec_context.name,
        "audioCodec": audio.codec_context.name if audio is not None else None,
        "durationSeconds": round(seconds, 3) if seconds else None,
        "frameRate": round(float(rate), 3) if rate else None,
        "bitRate": int(container.bit_rate) if container.bit_rate else None,
        "width": width,
        "height": height,
        "displayWidth": height if swapped else width,
        "displayHeight": width if swapped else height,
    }


def _rotation(container: Any, video: Any) -> int:
    video.codec_context.thread_count = 1
    for count, packet in enumerate(container.demux(video)):
        if count >= MAX_PACKETS:
            break
        for frame in video.codec_context.decode(packet):
            return int(frame.rotation) % 360
    return 0


def rupload_refusal(platform: Platform, video: dict[str, Any], url: str) -> str | None:
    """:func:`refusal_of_url` for a Facebook resumable upload, typed by its upload session."""
    post_type = {"reel": PostType.REEL, "video_story": PostType.STORY}.get(str(video.get("kind")), PostType.FEED)
    return refusal_of_url(platform, post_type, url)


# TikTok's documented fail_reason of a post whose media it fetched but refuses, per rule code.
_TIKTOK_FAIL_REASONS = {
    "media_format": "file_format_check_failed",
    "media_codec": "file_format_check_failed",
    "media_file_size": "file_format_check_failed",
    "media_duration": "duration_check_failed",
    "media_frame_rate": "frame_rate_check_failed",
    "media_resolution": "picture_size_check_failed",
    "media_aspect_ratio": "picture_size_check_failed",
}


def tiktok_fail_reason(problem: str, kind: str) -> str:
    """The ``fail_reason`` TikTok's status/fetch answers for ``problem`` (a refusal of this
    module, naming its rule code, or a failed download)."""
    for code, reason in _TIKTOK_FAIL_REASONS.items():
        if f"({code})" in problem:
            return reason
    return "video_pull_failed" if kind == "VIDEO" else "photo_pull_failed"
