"""The capabilities table: CONTRACT.md §9's limits, each platform's way of counting text (X
weighted length, Bluesky graphemes), and the table as the one source post validation reads."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from platforms.base import Platform
from platforms.capabilities import CAPABILITIES, text_length, validate_content
from tests.factories.posts import account

# CONTRACT.md §9: (text limit, text limit with media, title limit, max images, max videos,
# max documents, max items, min images without video, mixed media, media required)
CONTRACT = {
    Platform.TWITTER: (280, None, None, 4, 1, 0, 4, 0, False, False),
    Platform.BLUESKY: (300, None, None, 4, 1, 0, 4, 0, False, False),
    Platform.MASTODON: (500, None, None, 4, 1, 0, 4, 0, False, False),
    Platform.THREADS: (500, None, None, 10, 10, 0, 10, 0, True, False),
    Platform.LINKEDIN: (3000, None, 100, 9, 1, 1, 9, 0, False, False),
    Platform.INSTAGRAM: (2200, None, None, 10, 10, 0, 10, 0, True, True),
    Platform.FACEBOOK: (63206, None, 255, 10, 1, 0, 10, 0, False, False),
    Platform.TIKTOK: (2200, None, 90, 35, 1, 0, 35, 2, False, True),
    Platform.YOUTUBE: (5000, None, 100, 0, 1, 0, 1, 0, False, True),
    Platform.PINTEREST: (500, None, 100, 5, 1, 0, 5, 0, False, True),
    Platform.TELEGRAM: (4096, 1024, None, 10, 10, 0, 10, 0, True, False),
    Platform.GOOGLE_BUSINESS: (1500, None, None, 1, 0, 0, 1, 0, False, False),
}


@pytest.mark.parametrize("platform", list(Platform), ids=[p.value for p in Platform])
def test_the_table_holds_the_contract_limits(platform: Platform) -> None:
    c = CAPABILITIES[platform]
    assert (
        c.text_limit,
        c.text_limit_with_media,
        c.title_limit,
        c.max_images,
        c.max_videos,
        c.max_documents,
        c.max_items,
        c.min_images_without_video,
        c.mixed_media,
        c.media_required,
    ) == CONTRACT[platform]


@pytest.mark.parametrize("platform", list(Platform), ids=[p.value for p in Platform])
def test_text_at_the_limit_passes_and_one_more_is_refused(platform: Platform) -> None:
    caps = CAPABILITIES[platform]
    content_type = next(t for t in ("TEXT", "VIDEO", "IMAGE") if t in caps.content_types)
    kinds = [] if content_type == "TEXT" else [content_type.lower()]
    limit = caps.text_limit_with_media if kinds and caps.text_limit_with_media else caps.text_limit
    assert validate_content(platform, content_type=content_type, text="a" * limit, media_kinds=kinds) == []
    assert validate_content(platform, content_type=content_type, text="a" * (limit + 1), media_kinds=kinds) == [
        f"{platform.value} text is {limit + 1} characters; the limit is {limit}"
    ]


@pytest.mark.parametrize(
    ("text", "weight"),
    [
        ("hello", 5),
        ("日本語のテキスト", 16),  # CJK weighs 2
        ("Hello 👋 world", 14),  # an emoji weighs 2
        ("👨\u200d👩\u200d👧\u200d👦 family", 9),  # a ZWJ family is one emoji
        ("👍🏽 thumbs", 9),  # with its skin tone
        ("Zürich “quotes” —dash", 21),  # Latin-1 and general punctuation weigh 1
        ("€100", 5),  # the euro sign is outside those ranges: 2
        ("see https://example.com/a/very/long/path/indeed ok", 30),  # any URL weighs 23
        ("see example.com ok", 30),  # a URL without a scheme too
        ("e\u0301", 1),  # normalized (NFC) first
        ("कि", 2),  # each code point of a cluster counts
    ],
)
def test_x_counts_the_weighted_length(text: str, weight: int) -> None:
    assert text_length(Platform.TWITTER, text) == weight


def test_x_limit_is_on_the_weighted_length() -> None:
    assert validate_content(Platform.TWITTER, content_type="TEXT", text="日" * 140, media_kinds=[]) == []
    assert validate_content(Platform.TWITTER, content_type="TEXT", text="日" * 141, media_kinds=[]) == [
        "TWITTER text is 282 characters; the limit is 280"
    ]
    link = "https://example.com/" + "x" * 200  # 220 characters, weighs 23
    assert validate_content(Platform.TWITTER, content_type="TEXT", text=f"{'a' * 256} {link}", media_kinds=[]) == []


def test_bluesky_counts_graphemes() -> None:
    family = "👨\u200d👩\u200d👧\u200d👦"  # 7 code points, one grapheme
    assert text_length(Platform.BLUESKY, family * 300) == 300
    assert validate_content(Platform.BLUESKY, content_type="TEXT", text=family * 120, media_kinds=[]) == []
    assert validate_content(Platform.BLUESKY, content_type="TEXT", text=family * 301, media_kinds=[]) == [
        "BLUESKY text is 301 characters; the limit is 300"
    ]
    # 300 graphemes, but 25 UTF-8 bytes each: over the record's 3,000-byte cap as well.
    assert validate_content(Platform.BLUESKY, content_type="TEXT", text=family * 300, media_kinds=[]) == [
        "BLUESKY text is 7500 bytes in UTF-8; the limit is 3000"
    ]
    assert validate_content(Platform.BLUESKY, content_type="TEXT", text="é" * 300, media_kinds=[]) == []
    assert text_length(Platform.BLUESKY, "e\u0301" * 300) == 300
    assert text_length(Platform.MASTODON, "e\u0301" * 300) == 600  # plain characters elsewhere


def test_media_rules_come_from_the_table() -> None:
    assert validate_content(Platform.TWITTER, content_type="CAROUSEL", text="", media_kinds=["image"] * 5) == [
        "TWITTER accepts at most 4 images",
        "TWITTER accepts at most 4 media items",
    ]
    assert validate_content(Platform.FACEBOOK, content_type="CAROUSEL", text="", media_kinds=["image", "video"]) == [
        "FACEBOOK does not mix images and videos in one post"
    ]
    assert validate_content(Platform.TIKTOK, content_type="IMAGE", text="", media_kinds=["image"]) == [
        "TIKTOK photo posts need at least 2 images"
    ]
    assert validate_content(Platform.INSTAGRAM, content_type="TEXT", text="hi", media_kinds=[]) == [
        "INSTAGRAM does not accept TEXT posts",
        "INSTAGRAM requires media",
    ]
    assert validate_content(Platform.TELEGRAM, content_type="IMAGE", text="a" * 1025, media_kinds=["image"]) == [
        "TELEGRAM text is 1025 characters; the limit is 1024"
    ]
    assert validate_content(
        Platform.YOUTUBE, content_type="VIDEO", text="", media_kinds=["video"], title="t" * 101
    ) == ["YOUTUBE title is 101 characters; the limit is 100"]


@pytest.mark.django_db
def test_post_validation_reads_the_table(workspace: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import posts.services  # noqa: F401  (posts.validation is imported through its package)
    from posts.validation import build_plan

    masto = account(workspace, "MASTODON")
    data = {
        "contentType": "TEXT",
        "timezone": "UTC",
        "text": "twelve chars",
        "platforms": ["MASTODON"],
        "mastodonConnectionIds": [masto.id],
    }
    assert build_plan(workspace_id=workspace.id, data=data, full=True).issues == []
    tighter = dataclasses.replace(CAPABILITIES[Platform.MASTODON], text_limit=10)
    monkeypatch.setitem(CAPABILITIES, Platform.MASTODON, tighter)
    issues = build_plan(workspace_id=workspace.id, data=data, full=True).issues
    assert [issue.message for issue in issues] == ["MASTODON text is 12 characters; the limit is 10"]


def test_a_reply_is_checked_against_the_platforms_reply_limit() -> None:
    """Google Business takes no first comment but answers a review in up to 4096 characters; a
    platform without replies refuses every one; elsewhere the comment limit applies."""
    from platforms.capabilities import validate_reply

    assert validate_reply(Platform.GOOGLE_BUSINESS, "Thank you!") == []
    assert validate_reply(Platform.GOOGLE_BUSINESS, "x" * 4096) == []
    assert validate_reply(Platform.GOOGLE_BUSINESS, "x" * 4097) == [
        "GOOGLE_BUSINESS reply is 4097 characters; the limit is 4096"
    ]
    assert validate_reply(Platform.MASTODON, "x" * 501) == ["MASTODON reply is 501 characters; the limit is 500"]
    assert validate_reply(Platform.PINTEREST, "hi") == ["PINTEREST does not let an app reply to comments"]
    assert validate_reply(Platform.BLUESKY, "   ") == ["BLUESKY reply is empty"]
