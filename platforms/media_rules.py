"""What each platform takes of a file, per post type: the one table of media rules (issue 34).

Every entry is one platform x one post type (FEED, REEL, STORY, SHORT, CAROUSEL_ITEM, DOCUMENT)
with the rules for each kind of file it takes (image, video, document) and ``source``: the
platform's documentation page the numbers come from. A number the platform does not document
is None (nothing is checked), and ``note`` says what it leaves open rather than inventing it.

Which post type a target publishes (``post_type_of``), from the options the create payload
carries for it (``<platform>Configs``) and its media, as the platform clients send it:

- INSTAGRAM: ``postType`` STORY -> STORY; two or more items (a carousel) -> CAROUSEL_ITEM each;
  else a video -> REEL (the client publishes every single video as ``media_type=REELS``, so
  FEED and REEL are one for video) and an image -> FEED.
- FACEBOOK: ``postType`` STORY -> STORY, REEL -> REEL (videos), else FEED.
- YOUTUBE: ``postType`` SHORTS -> SHORT, else FEED (a regular video).
- LINKEDIN: a DOCUMENT post -> DOCUMENT, else FEED.
- THREADS and PINTEREST: two or more items -> CAROUSEL_ITEM each, else FEED.
- TIKTOK: FEED (a video post, or a photo post whose images follow the FEED image rules).
- every other platform: FEED.

The same table answers ``GET /platforms`` (``media.rules``), the check of create and
``/social-posts/validate`` (``check_file``, over what the probe measured) and the sandbox
simulators (which measure the bytes they fetch), so nothing about a platform's media is written
twice. Ratios are width / height of the picture as displayed (after EXIF orientation or video
rotation); bounds are inclusive. Bit rates are compared with the file's overall bit rate (video
and sound), which is what the probe measures."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

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
_RATIO_EPSILON = 1e-9


class PostType(enum.StrEnum):
    FEED = "FEED"
    REEL = "REEL"
    STORY = "STORY"
    SHORT = "SHORT"
    CAROUSEL_ITEM = "CAROUSEL_ITEM"
    DOCUMENT = "DOCUMENT"


_TYPE_WORDS = {
    PostType.FEED: "",
    PostType.REEL: "Reel ",
    PostType.STORY: "Story ",
    PostType.SHORT: "Shorts ",
    PostType.CAROUSEL_ITEM: "carousel ",
    PostType.DOCUMENT: "",
}


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


@dataclass(frozen=True)
class Violation:
    """One rule a file breaks: ``requirement`` completes "<PLATFORM> takes <what> ...", ``found``
    completes "<file> ..."."""

    code: str
    requirement: str
    found: str


_MOV_MP4 = frozenset({"mp4", "quicktime"})
_H264_HEVC = frozenset({"h264", "hevc"})
_AAC = frozenset({"aac"})
_META_REELS_CODECS = frozenset({"h264", "hevc", "vp9", "av1"})

# Instagram Platform, "IG User Media" reference: image, Reel, Story and carousel video
# specifications (developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media).
_IG_SOURCE = "Instagram Platform: IG User Media reference (image, Reels, Stories and carousel specifications)"
_IG_IMAGE = ImageRules(
    formats=frozenset({"JPEG"}), max_bytes=8 * MIB, min_ratio=Ratio(4, 5), max_ratio=Ratio(1.91, 1), animated=False
)
_IG_STORY_IMAGE = ImageRules(formats=frozenset({"JPEG"}), max_bytes=8 * MIB, animated=False)
_IG_VIDEO = VideoRules(
    containers=_MOV_MP4,
    video_codecs=_H264_HEVC,
    audio_codecs=_AAC,
    min_fps=23,
    max_fps=60,
    max_width=1920,
    max_bitrate=25 * MBPS,
    min_seconds=3,
)
_IG_NOTE = (
    "Images are scaled to 320-1440 px wide (not refused); sRGB is converted. Every single video is published as a Reel."
)

# Threads API, "Media specifications" (developers.facebook.com/docs/threads/overview#media-specifications).
_THREADS_SOURCE = "Threads API: Overview, media specifications (image and video)"
_THREADS_IMAGE = ImageRules(
    formats=frozenset({"JPEG", "PNG"}), max_bytes=8 * MIB, min_ratio=Ratio(1, 10), max_ratio=Ratio(10, 1)
)
_THREADS_VIDEO = VideoRules(
    containers=_MOV_MP4,
    video_codecs=_H264_HEVC,
    audio_codecs=_AAC,
    min_fps=23,
    max_fps=60,
    max_width=1920,
    min_ratio=Ratio(0.01, 1),
    max_ratio=Ratio(10, 1),
    max_bitrate=25 * MBPS,
    max_seconds=300,
    max_bytes=1 * GIB,
)
_THREADS_NOTE = "Images are scaled to 320-1440 px wide (not refused)."

# Facebook: Graph API "Page Photos" (photos), "Video API" (page videos), "Reels Publishing API"
# and "Page Stories" (developers.facebook.com/docs/graph-api/reference/page/photos,
# /docs/video-api/guides/reels-publishing, /docs/page-stories-api).
_FB_SOURCE = "Facebook Graph API: Page Photos, Video API, Reels Publishing API and Page Stories API"
_FB_IMAGE = ImageRules(formats=frozenset({"JPEG", "PNG", "GIF", "HEIF", "WEBP"}), max_bytes=4 * MIB)
_FB_REEL = VideoRules(
    containers=_MOV_MP4,
    video_codecs=_META_REELS_CODECS,
    audio_codecs=_AAC,
    min_width=540,
    min_height=960,
    min_ratio=Ratio(9, 16),
    max_ratio=Ratio(9, 16),
    ratio_tolerance=0.01,
    min_fps=24,
    max_fps=60,
    min_seconds=3,
    max_seconds=90,
)

# LinkedIn Marketing API: Images API, Videos API and Documents API
# (learn.microsoft.com/linkedin/marketing/community-management/shares/{images,videos,documents}-api).
_LI_SOURCE = "LinkedIn Marketing API: Images API, Videos API and Documents API"

# Pinterest API v5 "Create Pin" media sources and Pinterest's "Product specs" for pins.
_PIN_SOURCE = "Pinterest API v5: Create Pin (media sources) and Pinterest product specs for standard pins"
_PIN_IMAGE = ImageRules(formats=frozenset({"JPEG", "PNG", "GIF", "WEBP"}), max_bytes=20 * MIB)
_PIN_NOTE = (
    "Pinterest recommends 2:3 images (1000x1500) and crops pins taller than 1:2.1 in the feed: guidance, not a "
    "refusal, so image ratios are not checked."
)

# TikTok Content Posting API, "Media Transfer Guide": video and image restrictions
# (developers.tiktok.com/doc/content-posting-api-media-transfer-guide).
_TIKTOK_SOURCE = "TikTok Content Posting API: Media Transfer Guide (video and image restrictions)"

# YouTube Help: "Upload videos longer than 15 minutes", "Supported YouTube file formats" and
# "Upload YouTube Shorts" (support.google.com/youtube/answer/71673, /4558372, /12779649).
_YT_SOURCE = "YouTube Help: upload limits (256 GB, 12 hours) and YouTube Shorts (square or vertical, up to 3 minutes)"

# X API v2 media "Best practices" (docs.x.com/x-api/media/quickstart/best-practices).
_X_SOURCE = "X API: Media best practices (image, animated GIF and video specifications)"

# Bluesky lexicons app.bsky.embed.images and app.bsky.embed.video, and docs.bsky.app "Video".
_BSKY_SOURCE = "Bluesky lexicons app.bsky.embed.images / app.bsky.embed.video (blob maxSize) and the video docs"

# Mastodon documentation: POST /api/v2/media and GET /api/v2/instance configuration.media_attachments.
_MASTODON_SOURCE = "Mastodon docs: POST /api/v2/media and the instance's configuration.media_attachments (defaults)"

# Telegram Bot API: sendPhoto, sendVideo and "Sending files" (core.telegram.org/bots/api).
_TG_SOURCE = "Telegram Bot API: sendPhoto, sendVideo and Sending files (by URL)"

# Google Business Profile APIs "Upload media" and Business Profile help "Photo guidelines"
# (developers.google.com/my-business/content/upload-photos, support.google.com/business/answer/6103862).
_GBP_SOURCE = "Google Business Profile: Upload photos (API) and photo guidelines (help)"


def _rules() -> list[MediaRules]:
    p = Platform
    t = PostType
    return [
        MediaRules(
            platform=p.INSTAGRAM,
            post_type=t.FEED,
            source=_IG_SOURCE,
            selected_by="a single image (instagramConfigs.postType FEED or none)",
            image=_IG_IMAGE,
            note=_IG_NOTE,
        ),
        MediaRules(
            platform=p.INSTAGRAM,
            post_type=t.REEL,
            source=_IG_SOURCE,
            selected_by="a single video (instagramConfigs.postType REEL, FEED or none)",
            video=replace(
                _IG_VIDEO, min_ratio=Ratio(0.01, 1), max_ratio=Ratio(10, 1), max_seconds=900, max_bytes=300 * MIB
            ),
            note="Instagram recommends 9:16 to avoid cropping or blank space.",
        ),
        MediaRules(
            platform=p.INSTAGRAM,
            post_type=t.STORY,
            source=_IG_SOURCE,
            selected_by="instagramConfigs.postType STORY",
            image=_IG_STORY_IMAGE,
            video=replace(
                _IG_VIDEO, min_ratio=Ratio(0.1, 1), max_ratio=Ratio(10, 1), max_seconds=60, max_bytes=100 * MB
            ),
            note="Instagram recommends 9:16 for stories; it documents no ratio for story images.",
        ),
        MediaRules(
            platform=p.INSTAGRAM,
            post_type=t.CAROUSEL_ITEM,
            source=_IG_SOURCE,
            selected_by="each item of a post with two or more media items",
            image=_IG_IMAGE,
            video=replace(_IG_VIDEO, min_ratio=Ratio(4, 5), max_ratio=Ratio(16, 9), max_seconds=60, max_bytes=100 * MB),
            note=_IG_NOTE,
        ),
        MediaRules(
            platform=p.FACEBOOK,
            post_type=t.FEED,
            source=_FB_SOURCE,
            selected_by="facebookConfigs.postType FEED or none",
            image=_FB_IMAGE,
            video=VideoRules(max_bytes=10 * GIB, max_seconds=240 * 60),
            note="Facebook documents no ratio, resolution or codec limit for page photos and page videos.",
        ),
        MediaRules(
            platform=p.FACEBOOK,
            post_type=t.REEL,
            source=_FB_SOURCE,
            selected_by="facebookConfigs.postType REEL",
            video=_FB_REEL,
            note="The Reels Publishing API documents no file size limit.",
        ),
        MediaRules(
            platform=p.FACEBOOK,
            post_type=t.STORY,
            source=_FB_SOURCE,
            selected_by="facebookConfigs.postType STORY",
            image=_FB_IMAGE,
            video=VideoRules(
                containers=_MOV_MP4,
                video_codecs=_META_REELS_CODECS,
                audio_codecs=_AAC,
                min_width=540,
                min_height=960,
                min_ratio=Ratio(9, 16),
                max_ratio=Ratio(9, 16),
                ratio_tolerance=0.01,
                min_fps=24,
                max_fps=60,
                min_seconds=3,
                max_seconds=60,
            ),
            note="Video stories follow the Reels specifications; a story is at most 60 seconds.",
        ),
        MediaRules(
            platform=p.THREADS,
            post_type=t.FEED,
            source=_THREADS_SOURCE,
            selected_by="a post with one media item",
            image=_THREADS_IMAGE,
            video=_THREADS_VIDEO,
            note=_THREADS_NOTE,
        ),
        MediaRules(
            platform=p.THREADS,
            post_type=t.CAROUSEL_ITEM,
            source=_THREADS_SOURCE,
            selected_by="each item of a post with two or more media items",
            image=_THREADS_IMAGE,
            video=_THREADS_VIDEO,
            note=_THREADS_NOTE,
        ),
        MediaRules(
            platform=p.TWITTER,
            post_type=t.FEED,
            source=_X_SOURCE,
            selected_by="every post",
            image=ImageRules(
                formats=frozenset({"JPEG", "PNG", "GIF", "WEBP"}), max_bytes=5 * MIB, max_animated_bytes=15 * MIB
            ),
            video=VideoRules(
                audio_codecs=_AAC,
                min_width=32,
                min_height=32,
                max_width=1280,
                max_height=1024,
                any_orientation=True,
                min_ratio=Ratio(1, 3),
                max_ratio=Ratio(3, 1),
                max_fps=60,
                min_seconds=0.5,
                max_seconds=20 * 60,
                max_bytes=8 * GIB,
            ),
            note=(
                "Video durations and sizes are those of accounts without X Premium (Premium: 125 minutes, 16 GB). "
                "X recommends H.264 High Profile but requires no codec; its animated GIF limits (1280x1080, 350 "
                "frames) are recommendations and are not checked."
            ),
        ),
        MediaRules(
            platform=p.BLUESKY,
            post_type=t.FEED,
            source=_BSKY_SOURCE,
            selected_by="every post",
            image=ImageRules(max_bytes=1000 * KB),
            video=VideoRules(containers=frozenset({"mp4"}), max_bytes=100 * MB, max_seconds=180),
            note="The image lexicon accepts any image/* type; Bluesky documents no ratio or resolution limit.",
        ),
        MediaRules(
            platform=p.MASTODON,
            post_type=t.FEED,
            source=_MASTODON_SOURCE,
            selected_by="every post",
            image=ImageRules(max_bytes=16 * MIB),
            video=VideoRules(max_bytes=99 * MIB),
            note=(
                "An instance may change its limits. Mastodon downscales images and re-encodes videos above its "
                "matrix and frame-rate limits instead of refusing them, and documents no longest video."
            ),
        ),
        MediaRules(
            platform=p.LINKEDIN,
            post_type=t.FEED,
            source=_LI_SOURCE,
            selected_by="an IMAGE, VIDEO or CAROUSEL post",
            image=ImageRules(formats=frozenset({"JPEG", "PNG", "GIF"}), max_bytes=5 * MIB, max_pixels=36_152_320),
            video=VideoRules(
                containers=frozenset({"mp4"}),
                min_width=256,
                min_height=144,
                max_width=4096,
                max_height=2304,
                any_orientation=True,
                min_ratio=Ratio(1, 2.4),
                max_ratio=Ratio(2.4, 1),
                min_fps=10,
                max_fps=60,
                max_bitrate=30 * MBPS,
                min_seconds=3,
                max_seconds=30 * 60,
                max_bytes=500 * MIB,
                min_bytes=75 * KB,
            ),
            note="LinkedIn takes GIFs of up to 250 frames (not checked).",
        ),
        MediaRules(
            platform=p.LINKEDIN,
            post_type=t.DOCUMENT,
            source=_LI_SOURCE,
            selected_by="a DOCUMENT post",
            document=DocumentRules(max_bytes=100 * MIB),
            note="LinkedIn takes documents of up to 300 pages (not checked).",
        ),
        MediaRules(
            platform=p.PINTEREST,
            post_type=t.FEED,
            source=_PIN_SOURCE,
            selected_by="a pin with one image or one video",
            image=_PIN_IMAGE,
            video=VideoRules(
                containers=_MOV_MP4,
                min_ratio=Ratio(1, 2),
                max_ratio=Ratio(1.91, 1),
                min_seconds=4,
                max_seconds=15 * 60,
                max_bytes=2 * GIB,
            ),
            note=_PIN_NOTE,
        ),
        MediaRules(
            platform=p.PINTEREST,
            post_type=t.CAROUSEL_ITEM,
            source=_PIN_SOURCE,
            selected_by="each image of a carousel pin (2 to 5 images)",
            image=_PIN_IMAGE,
            note=_PIN_NOTE + " Carousel images should share one size (not checked across items).",
        ),
        MediaRules(
            platform=p.TIKTOK,
            post_type=t.FEED,
            source=_TIKTOK_SOURCE,
            selected_by="every post (a video, or a photo post of 2 to 35 images)",
            image=ImageRules(
                formats=frozenset({"JPEG", "WEBP"}),
                max_bytes=20 * MIB,
                max_width=1920,
                max_height=1080,
                any_orientation=True,
            ),
            video=VideoRules(
                containers=_MOV_MP4,
                video_codecs=frozenset({"h264", "hevc", "vp8", "vp9"}),
                min_width=360,
                min_height=360,
                max_width=4096,
                max_height=4096,
                min_fps=23,
                max_fps=60,
                max_seconds=600,
                max_bytes=4 * GIB,
            ),
            note=(
                "Photos are at most 1080p (read as 1920x1080 either way round). A creator's own longest video "
                "(creator_info max_video_post_duration_sec) may be shorter than 10 minutes; TikTok documents no "
                "ratio limit."
            ),
        ),
        MediaRules(
            platform=p.YOUTUBE,
            post_type=t.FEED,
            source=_YT_SOURCE,
            selected_by="youtubeConfigs.postType VIDEO or none",
            video=VideoRules(max_bytes=256 * GIB, max_seconds=12 * 3600),
            note="YouTube takes most containers and codecs and any ratio for regular videos.",
        ),
        MediaRules(
            platform=p.YOUTUBE,
            post_type=t.SHORT,
            source=_YT_SOURCE,
            selected_by="youtubeConfigs.postType SHORTS",
            video=VideoRules(max_bytes=256 * GIB, max_ratio=Ratio(1, 1), max_seconds=180),
            note="A longer or landscape video is published as a regular video, not a Short: it is refused here.",
        ),
        MediaRules(
            platform=p.TELEGRAM,
            post_type=t.FEED,
            source=_TG_SOURCE,
            selected_by="every post",
            image=ImageRules(max_bytes=5 * MIB, max_side_sum=10_000, min_ratio=Ratio(1, 20), max_ratio=Ratio(20, 1)),
            video=VideoRules(max_bytes=20 * MIB),
            note="Telegram documents no image format list, and no video limit but the 20 MB of a file sent by URL.",
        ),
        MediaRules(
            platform=p.GOOGLE_BUSINESS,
            post_type=t.FEED,
            source=_GBP_SOURCE,
            selected_by="every post",
            image=ImageRules(
                formats=frozenset({"JPEG", "PNG"}), min_bytes=10 * KB, max_bytes=5 * MIB, min_width=250, min_height=250
            ),
            note="Google recommends 720x720 and documents no aspect ratio limit for post photos.",
        ),
    ]


MEDIA_RULES: dict[tuple[Platform, PostType], MediaRules] = {(r.platform, r.post_type): r for r in _rules()}


def rules_of(platform: Platform) -> list[MediaRules]:
    """Every post type's rules of ``platform``, in the table's order."""
    return [rules for (owner, _), rules in MEDIA_RULES.items() if owner == platform]


def post_type_of(platform: Platform, *, content_type: str, options: Mapping[str, Any], kinds: list[str]) -> PostType:
    """The post type a target of ``platform`` publishes, from its config ``options`` (the
    ``<platform>Configs`` values) and the kinds of its media (see the module docstring)."""
    requested = str(options.get("postType") or "").upper()
    several = len(kinds) > 1
    if platform == Platform.INSTAGRAM:
        if requested == "STORY":
            return PostType.STORY
        if several:
            return PostType.CAROUSEL_ITEM
        return PostType.REEL if kinds == ["video"] else PostType.FEED
    if platform == Platform.FACEBOOK and requested in ("STORY", "REEL"):
        return PostType(requested)
    if platform == Platform.YOUTUBE and requested == "SHORTS":
        return PostType.SHORT
    if platform == Platform.LINKEDIN and content_type == "DOCUMENT":
        return PostType.DOCUMENT
    if platform in (Platform.THREADS, Platform.PINTEREST) and several:
        return PostType.CAROUSEL_ITEM
    return PostType.FEED


def rules_for(platform: Platform, post_type: PostType) -> MediaRules:
    """The rules of ``post_type`` on ``platform`` (its FEED rules where it has no such type)."""
    return MEDIA_RULES.get((platform, post_type)) or MEDIA_RULES[(platform, PostType.FEED)]


def default_rules(platform: Platform, kind: str) -> MediaRules:
    """The rules a single ``kind`` file is published under with no options."""
    content_type = {"image": "IMAGE", "video": "VIDEO", "document": "DOCUMENT"}.get(kind, kind.upper())
    return rules_for(platform, post_type_of(platform, content_type=content_type, options={}, kinds=[kind]))


def what(rules: MediaRules, kind: str) -> str:
    """How a refusal names the files a rule applies to: "videos", "Reel videos", "carousel images"."""
    return f"{_TYPE_WORDS[rules.post_type]}{kind}s"


# --- checking one file ---------------------------------------------------------------------


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
        return [Violation(MEDIA_FILE_SIZE, f"of at least {minimum} bytes", f"is {size} bytes")]
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
