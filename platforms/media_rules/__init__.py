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
and sound), which is what the probe measures.

The package: ``spec`` (the rule codes and the shapes of a rule), ``table`` (every platform's
rules, their sources, and which post type a target publishes) and ``checking`` (what a file
breaks, and how a refusal words it). Import from the package."""

from __future__ import annotations

from platforms.media_rules.checking import (
    Violation,
    check_file,
    what,
)
from platforms.media_rules.spec import (
    GIB,
    KB,
    MB,
    MBPS,
    MEDIA_ASPECT_RATIO,
    MEDIA_BITRATE,
    MEDIA_CODEC,
    MEDIA_DURATION,
    MEDIA_FILE_SIZE,
    MEDIA_FORMAT,
    MEDIA_FRAME_RATE,
    MEDIA_RESOLUTION,
    MEDIA_UNUSABLE,
    MIB,
    RULE_CODES,
    DocumentRules,
    ImageRules,
    MediaRules,
    PictureRules,
    PostType,
    Ratio,
    VideoRules,
)
from platforms.media_rules.table import (
    MEDIA_RULES,
    default_rules,
    post_type_of,
    rules_for,
    rules_of,
)

__all__ = [
    "GIB",
    "KB",
    "MB",
    "MBPS",
    "MEDIA_ASPECT_RATIO",
    "MEDIA_BITRATE",
    "MEDIA_CODEC",
    "MEDIA_DURATION",
    "MEDIA_FILE_SIZE",
    "MEDIA_FORMAT",
    "MEDIA_FRAME_RATE",
    "MEDIA_RESOLUTION",
    "MEDIA_RULES",
    "MEDIA_UNUSABLE",
    "MIB",
    "RULE_CODES",
    "DocumentRules",
    "ImageRules",
    "MediaRules",
    "PictureRules",
    "PostType",
    "Ratio",
    "VideoRules",
    "Violation",
    "check_file",
    "default_rules",
    "post_type_of",
    "rules_for",
    "rules_of",
    "what",
]
