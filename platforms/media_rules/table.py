"""Every platform's media rules, per post type, each with the documentation it comes from
(``platforms.media_rules``), and which post type a target publishes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from platforms.base import Platform
from platforms.media_rules.spec import (
    GIB,
    KB,
    MB,
    MBPS,
    MIB,
    DocumentRules,
    ImageRules,
    MediaRules,
    PostType,
    Ratio,
    VideoRules,
)

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
    ``<platform>Configs`` values) and the kinds of its media (see ``platforms.media_rules``)."""
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
