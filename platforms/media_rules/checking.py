"""Checking one file against a platform's media rules (``platforms.media_rules``): every rule it
breaks, as the code a refusal names and the words of the refusal."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from platforms.media_rules.spec import (
    MEDIA_ASPECT_RATIO,
    MEDIA_BITRATE,
    MEDIA_CODEC,
    MEDIA_DURATION,
    MEDIA_FILE_SIZE,
    MEDIA_FORMAT,
    MEDIA_FRAME_RATE,
    MEDIA_RESOLUTION,
    DocumentRules,
    ImageRules,
    MediaRules,
    PictureRules,
    PostType,
    VideoRules,
)

_RATIO_EPSILON = 1e-9

_TYPE_WORDS = {
    PostType.FEED: "",
    PostType.REEL: "Reel ",
    PostType.STORY: "Story ",
    PostType.SHORT: "Shorts ",
    PostType.CAROUSEL_ITEM: "carousel ",
    PostType.DOCUMENT: "",
}


@dataclass(frozen=True)
class Violation:
    """One rule a file breaks: ``requirement`` completes "<PLATFORM> takes <what> ...", ``found``
    completes "<file> ..."."""

    code: str
    requirement: str
    found: str
    too_small: bool = False  # under the platform's smallest file size (a fit never makes a file larger)


def what(rules: MediaRules, kind: str) -> str:
    """How a refusal names the files a rule applies to: "videos", "Reel videos", "carousel images"."""
    return f"{_TYPE_WORDS[rules.post_type]}{kind}s"


def check_file(rules: MediaRules, kind: str, *, size: int | None, facts: Mapping[str, Any] | None) -> list[Violation]:
    """Every rule of ``rules`` a ``kind`` file breaks: its ``size`` in bytes (None: unknown) and
    what was measured of it (``facts``, in the probe's keys; None: not measured yet, so only the
    size is checked)."""
    spec = rules.for_kind(kind)
    if spec is None:
        return []
    found = _sizes(spec, size, facts)
    if facts is None:
        return found
    if isinstance(spec, ImageRules):
        found = _image(spec, facts) + found
    if isinstance(spec, VideoRules):
        found = _video_format(spec, facts) + found + _video(spec, facts)
    if isinstance(spec, PictureRules):
        found += _picture(spec, facts)
    return found


def _sizes(spec: PictureRules | DocumentRules, size: int | None, facts: Mapping[str, Any] | None) -> list[Violation]:
    if size is None:
        return []
    limit = spec.max_bytes
    if isinstance(spec, ImageRules) and spec.max_animated_bytes and facts and facts.get("animated"):
        limit = spec.max_animated_bytes
    if limit is not None and size > limit:
        return [Violation(MEDIA_FILE_SIZE, f"of at most {limit} bytes", f"is {size} bytes")]
    minimum = getattr(spec, "min_bytes", None)
    if minimum is not None and size < minimum:
        return [Violation(MEDIA_FILE_SIZE, f"of at least {minimum} bytes", f"is {size} bytes", too_small=True)]
    return []


def _image(spec: ImageRules, facts: Mapping[str, Any]) -> list[Violation]:
    image_format = str(facts.get("format") or "unknown")
    if spec.formats is not None and image_format not in spec.formats:
        return [Violation(MEDIA_FORMAT, f"in {_names(spec.formats)} format", f"is {image_format}")]
    if not spec.animated and facts.get("animated"):
        frames = facts.get("frameCount")
        return [Violation(MEDIA_FORMAT, "that are not animated", f"is an animated {image_format} of {frames} frames")]
    return []


def _video_format(spec: VideoRules, facts: Mapping[str, Any]) -> list[Violation]:
    container = str(facts.get("container") or "unknown")
    if spec.containers is not None and container not in spec.containers:
        names = _names(frozenset("MOV" if c == "quicktime" else c.upper() for c in spec.containers))
        return [
            Violation(MEDIA_FORMAT, f"in {names} containers", f"is {'MOV' if container == 'quicktime' else container}")
        ]
    return []


def _video(spec: VideoRules, facts: Mapping[str, Any]) -> list[Violation]:
    found: list[Violation] = []
    seconds = _number(facts.get("durationSeconds"))
    if seconds is not None:
        if spec.max_seconds is not None and seconds > spec.max_seconds:
            found.append(
                Violation(MEDIA_DURATION, f"of at most {spec.max_seconds:g} seconds", f"lasts {seconds:g} seconds")
            )
        if spec.min_seconds is not None and seconds < spec.min_seconds:
            found.append(
                Violation(MEDIA_DURATION, f"of at least {spec.min_seconds:g} seconds", f"lasts {seconds:g} seconds")
            )
    fps = _number(facts.get("frameRate"))
    if fps is not None:
        if spec.max_fps is not None and fps > spec.max_fps:
            found.append(Violation(MEDIA_FRAME_RATE, f"of at most {spec.max_fps:g} frames per second", f"has {fps:g}"))
        if spec.min_fps is not None and fps < spec.min_fps:
            found.append(Violation(MEDIA_FRAME_RATE, f"of at least {spec.min_fps:g} frames per second", f"has {fps:g}"))
    bitrate = _number(facts.get("bitRate"))
    if bitrate is not None and spec.max_bitrate is not None and bitrate > spec.max_bitrate:
        found.append(
            Violation(
                MEDIA_BITRATE, f"of at most {spec.max_bitrate} bits per second", f"has {int(bitrate)} bits per second"
            )
        )
    found += _codecs(spec, facts)
    return found


def _codecs(spec: VideoRules, facts: Mapping[str, Any]) -> list[Violation]:
    found = []
    codec = str(facts.get("videoCodec") or "unknown")
    if spec.video_codecs is not None and codec not in spec.video_codecs:
        found.append(Violation(MEDIA_CODEC, f"coded in {_names(spec.video_codecs)}", f"is coded in {codec}"))
    sound = facts.get("audioCodec")
    if spec.audio_codecs is not None and sound and sound not in spec.audio_codecs:
        found.append(Violation(MEDIA_CODEC, f"with {_names(spec.audio_codecs)} sound", f"has {sound} sound"))
    return found


def _picture(spec: PictureRules, facts: Mapping[str, Any]) -> list[Violation]:
    width = int(facts.get("displayWidth") or facts.get("width") or 0)
    height = int(facts.get("displayHeight") or facts.get("height") or 0)
    if width < 1 or height < 1:
        return []
    found: list[Violation] = []
    ratio = width / height
    low = spec.min_ratio.value * (1 - spec.ratio_tolerance) if spec.min_ratio else None
    high = spec.max_ratio.value * (1 + spec.ratio_tolerance) if spec.max_ratio else None
    if (low is not None and ratio < low - _RATIO_EPSILON) or (high is not None and ratio > high + _RATIO_EPSILON):
        found.append(Violation(MEDIA_ASPECT_RATIO, _ratio_requirement(spec), f"is {width}x{height} ({ratio:.4g}:1)"))
    long_side, short_side = (max(width, height), min(width, height)) if spec.any_orientation else (width, height)
    too_small = (spec.min_width is not None and long_side < spec.min_width) or (
        spec.min_height is not None and short_side < spec.min_height
    )
    too_large = (spec.max_width is not None and long_side > spec.max_width) or (
        spec.max_height is not None and short_side > spec.max_height
    )
    if too_small or too_large:
        found.append(Violation(MEDIA_RESOLUTION, _sides_requirement(spec), f"is {width}x{height}"))
    if spec.max_pixels is not None and width * height > spec.max_pixels:
        found.append(
            Violation(
                MEDIA_RESOLUTION, f"of at most {spec.max_pixels} pixels", f"has {width * height} ({width}x{height})"
            )
        )
    if spec.max_side_sum is not None and width + height > spec.max_side_sum:
        found.append(
            Violation(
                MEDIA_RESOLUTION,
                f"whose width and height add up to at most {spec.max_side_sum}",
                f"is {width}x{height}",
            )
        )
    return found


def _ratio_requirement(spec: PictureRules) -> str:
    if spec.min_ratio and spec.max_ratio and spec.min_ratio == spec.max_ratio:
        return f"with an aspect ratio of {spec.min_ratio.label}"
    if spec.min_ratio and spec.max_ratio:
        return f"with an aspect ratio from {spec.min_ratio.label} to {spec.max_ratio.label}"
    if spec.max_ratio:
        return f"with an aspect ratio of at most {spec.max_ratio.label}"
    assert spec.min_ratio is not None
    return f"with an aspect ratio of at least {spec.min_ratio.label}"


def _sides_requirement(spec: PictureRules) -> str:
    parts = []
    if spec.min_width is not None or spec.min_height is not None:
        parts.append(f"at least {spec.min_width or 1}x{spec.min_height or 1}")
    if spec.max_width is not None or spec.max_height is not None:
        parts.append(f"at most {spec.max_width or 'any'}x{spec.max_height or 'any'}")
    sides = " and ".join(parts)
    return f"of {sides} pixels" + (" (either way round)" if spec.any_orientation else "")


def _names(values: frozenset[str]) -> str:
    return ", ".join(sorted(values))


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
