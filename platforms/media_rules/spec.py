"""The rule codes and the shapes of a platform's media rules (``platforms.media_rules``): the
units they are written in, the post types, a ratio, and the rules of images, videos and
documents for one platform and post type."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from platforms.base import Platform

KB, MB, MIB, GIB = 1000, 1000 * 1000, 1024 * 1024, 1024 * 1024 * 1024
MBPS = 1000 * 1000

# The rule codes a refusal names (the error format of /social-posts/validate and create).
MEDIA_FORMAT = "media_format"
MEDIA_FILE_SIZE = "media_file_size"
MEDIA_ASPECT_RATIO = "media_aspect_ratio"
MEDIA_RESOLUTION = "media_resolution"
MEDIA_DURATION = "media_duration"
MEDIA_FRAME_RATE = "media_frame_rate"
MEDIA_BITRATE = "media_bitrate"
MEDIA_CODEC = "media_codec"
MEDIA_UNUSABLE = "media_unusable"
RULE_CODES = (
    MEDIA_UNUSABLE,
    MEDIA_FORMAT,
    MEDIA_FILE_SIZE,
    MEDIA_DURATION,
    MEDIA_ASPECT_RATIO,
    MEDIA_RESOLUTION,
    MEDIA_FRAME_RATE,
    MEDIA_BITRATE,
    MEDIA_CODEC,
)


class PostType(enum.StrEnum):
    FEED = "FEED"
    REEL = "REEL"
    STORY = "STORY"
    SHORT = "SHORT"
    CAROUSEL_ITEM = "CAROUSEL_ITEM"
    DOCUMENT = "DOCUMENT"


@dataclass(frozen=True)
class Ratio:
    """An aspect ratio ``width:height`` as the platform writes it (4:5, 1.91:1)."""

    width: float
    height: float

    @property
    def value(self) -> float:
        return self.width / self.height

    @property
    def label(self) -> str:
        return f"{self.width:g}:{self.height:g}"


@dataclass(frozen=True, kw_only=True)
class PictureRules:
    """Sides, pixels and aspect ratio. With ``any_orientation`` the width bounds apply to the
    longer side and the height bounds to the shorter (the platform states one orientation)."""

    min_width: int | None = None
    min_height: int | None = None
    max_width: int | None = None
    max_height: int | None = None
    any_orientation: bool = False
    max_pixels: int | None = None
    max_side_sum: int | None = None  # width + height
    min_ratio: Ratio | None = None
    max_ratio: Ratio | None = None
    ratio_tolerance: float = 0.0  # relative, for a platform that names one ratio (9:16)
    max_bytes: int | None = None
    min_bytes: int | None = None


@dataclass(frozen=True, kw_only=True)
class ImageRules(PictureRules):
    formats: frozenset[str] | None = None  # as the probe names them: JPEG, PNG, WEBP, GIF, HEIF
    animated: bool = True  # an animated image (GIF, WebP) is taken
    max_animated_bytes: int | None = None


@dataclass(frozen=True, kw_only=True)
class VideoRules(PictureRules):
    containers: frozenset[str] | None = None  # mp4 | quicktime
    video_codecs: frozenset[str] | None = None  # FFmpeg's names: h264, hevc, vp9, av1
    audio_codecs: frozenset[str] | None = None
    min_seconds: float | None = None
    max_seconds: float | None = None
    min_fps: float | None = None
    max_fps: float | None = None
    max_bitrate: int | None = None  # bits per second


@dataclass(frozen=True, kw_only=True)
class DocumentRules:
    max_bytes: int | None = None


@dataclass(frozen=True, kw_only=True)
class MediaRules:
    platform: Platform
    post_type: PostType
    source: str
    selected_by: str
    image: ImageRules | None = None
    video: VideoRules | None = None
    document: DocumentRules | None = None
    note: str = ""

    def for_kind(self, kind: str) -> ImageRules | VideoRules | DocumentRules | None:
        return {"image": self.image, "video": self.video, "document": self.document}.get(kind)
