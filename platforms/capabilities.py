"""What each platform accepts: the one table of limits (CONTRACT.md §9). Validation elsewhere
(posts) calls :func:`validate_content`; nothing about a platform's limits is written twice."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import grapheme
from twitter_text import parse_tweet

from platforms.base import Platform
from platforms.media_rules import (
    MEDIA_UNUSABLE,
    Violation,
    check_file,
    default_rules,
    post_type_of,
    rules_for,
    what,
)

TEXT, IMAGE, VIDEO, CAROUSEL, DOCUMENT = "TEXT", "IMAGE", "VIDEO", "CAROUSEL", "DOCUMENT"
METRICS = ("views", "likes", "comments", "shares")


@dataclass(frozen=True)
class Capabilities:
    platform: Platform
    content_types: frozenset[str]
    text_limit: int
    text_counting: str = "chars"  # chars | x_weighted | graphemes
    text_limit_with_media: int | None = None
    text_byte_limit: int | None = None  # UTF-8 bytes, where the platform caps those as well
    max_images: int = 0
    max_videos: int = 0
    max_documents: int = 0
    max_items: int = 0  # total media items
    min_images_without_video: int = 0  # e.g. TikTok photo posts need 2+
    mixed_media: bool = False  # images and videos in one post
    media_required: bool = False
    title_limit: int | None = None
    metrics: frozenset[str] = frozenset()  # analytics figures the platform reports
    # OAuth scopes the analytics reads need; an account granted fewer must reconnect for analytics.
    analytics_scopes: frozenset[str] = frozenset()
    followers: bool = False
    idempotent_publish: str = "none"  # "key" (idempotency key), "lookup" (find by marker), "none"
    refreshable_token: bool = False
    threads: bool = False  # publishes a thread: replies to the post, each to the one before it
    # The longest comment (or reply) the platform takes under a published post, counted as its
    # text is (``text_counting``); None: no comment API, so no ``firstComment``.
    comment_text_limit: int | None = None
    # What each post type takes of a file (sizes, formats, ratios, durations...) is the media
    # rules table, platforms.media_rules.
    # After publishing (the platform's own edit and delete calls): the fields of a published post
    # the platform lets its author change ("text", "title", "media"), and whether it deletes one;
    # how long after publishing it still takes each (None: no window), and whether it revokes an
    # account's token on disconnect (``PlatformClient.revoke_token``).
    edit_fields: frozenset[str] = frozenset()
    # A media edit (``edit_fields`` holds "media"), what the platform can do in place: add media to
    # a post that went out as text only, remove every medium (leaving text only), and the most
    # media items the post may have before and after the edit (None: as many as publishing takes).
    edit_media_adds: bool = True
    edit_media_removes: bool = True
    edit_media_max_items: int | None = None
    deletable: bool = False
    # The most media items a post can carry and still be deleted by the one delete call (None: any
    # number). A Telegram album is one message per item and deleteMessage removes one.
    delete_max_items: int | None = None
    edit_window_seconds: int | None = None
    delete_window_seconds: int | None = None
    revocable_token: bool = False
    # Whether the client reads one published post by its id (``PlatformClient.fetch_post``): an
    # edit or a delete interrupted mid-call is looked up there before anything is sent again.
    post_lookup: bool = False

    # Engagement: what the platform's comment API lets the account do with the comments on its own
    # posts (Google Business: the reviews of its location). Empty ``comment_actions``: no comment
    # API (Pinterest, Telegram), so nothing is synced. Actions: "read", "reply", "hide",
    # "delete_own" (the account's own replies), "delete_others" (another person's comment), "like".
    comment_actions: frozenset[str] = frozenset()
    # The most comment reads the sync may spend on one account per hour (the share of the
    # platform's rate budget that comments get; publishing keeps the rest).
    comment_reads_per_hour: int = 0
    # The list calls one read of a post's comments makes at the least, each spending one of those
    # reads (YouTube lists the published threads, then those held for review): the cadence plans
    # for this many per read.
    comment_listings: int = 1
    # The longest reply to a comment (or a review) the account can send, counted as its text is;
    # None: ``comment_text_limit`` (Google Business takes no first comment but answers reviews).
    reply_text_limit: int | None = None
    # Whether the platform's comment listing says which comments are hidden; where it does not
    # (X's tweet objects carry no hidden flag), a sync keeps the hidden state the inbox set.
    comment_hidden_listed: bool = True

    @property
    def has_analytics(self) -> bool:
        return bool(self.metrics)


_ALL = frozenset(METRICS)
CAPABILITIES: dict[Platform, Capabilities] = {
    c.platform: c
    for c in [
        Capabilities(
            Platform.TWITTER,
            frozenset({TEXT, IMAGE, VIDEO, CAROUSEL}),
            280,
            "x_weighted",
            max_images=4,
            max_videos=1,
            max_items=4,
            metrics=_ALL,
            analytics_scopes=frozenset({"tweet.read"}),
            followers=True,
            idempotent_publish="lookup",
            refreshable_token=True,
            threads=True,
            comment_text_limit=280,
            # DELETE /2/tweets/:id; the v2 API reads edit history but has no call that edits
            deletable=True,
            revocable_token=True,  # POST /2/oauth2/revoke
            post_lookup=True,  # GET /2/tweets/:id
            # Replies are read with recent search (conversation_id:<post>), which reaches back 7
            # days only; PUT /2/tweets/:id/hidden hides one in the account's own conversation,
            # POST /2/tweets replies, DELETE /2/tweets/:id deletes the account's own tweets only,
            # POST /2/users/:id/likes likes. Recent search allows 60 requests / 15 min per user on
            # the Basic plan (300 on Pro), and every reply read counts against the plan's monthly
            # post cap: half of Basic's search budget goes to comment reads.
            comment_actions=frozenset({"read", "reply", "hide", "delete_own", "like"}),
            comment_reads_per_hour=120,
            comment_hidden_listed=False,  # PUT /2/tweets/:id/hidden sets it; no read shows it
        ),
        Capabilities(
            Platform.BLUESKY,
            frozenset({TEXT, IMAGE, VIDEO, CAROUSEL}),
            300,
            "graphemes",
            text_byte_limit=3000,  # app.bsky.feed.post: maxGraphemes 300 and maxLength 3000 (bytes)
            max_images=4,
            max_videos=1,
            max_items=4,
            metrics=frozenset({"likes", "comments", "shares"}),
            followers=True,
            idempotent_publish="key",
            refreshable_token=True,
            threads=True,
            comment_text_limit=300,
            # com.atproto.repo.deleteRecord; no edit (the app shows no edited post)
            deletable=True,
            post_lookup=True,  # com.atproto.repo.getRecord
            # app.bsky.feed.getPostThread reads the reply tree; a reply is a post record naming root
            # and parent; hiding puts the reply in the post's threadgate hiddenReplies (at most 300,
            # shown behind "hidden replies" in the app); deleteRecord works in the account's own
            # repo only; a like is an app.bsky.feed.like record. bsky.social allows 3,000 requests
            # per 5 minutes per client IP, which every account the service syncs from that address
            # shares: 300 comment reads an hour per account.
            comment_actions=frozenset({"read", "reply", "hide", "delete_own", "like"}),
            comment_reads_per_hour=300,
        ),
        Capabilities(
            Platform.MASTODON,
            frozenset({TEXT, IMAGE, VIDEO, CAROUSEL}),
            500,
            max_images=4,
            max_videos=1,
            max_items=4,
            followers=True,  # verify_credentials reports followers_count; no per-post analytics
            idempotent_publish="key",
            threads=True,
            comment_text_limit=500,
            # PUT /api/v1/statuses/:id (text and media, history kept, no window); DELETE the same
            edit_fields=frozenset({"text", "media"}),
            deletable=True,
            revocable_token=True,  # POST /oauth/revoke
            post_lookup=True,  # GET /api/v1/statuses/:id and its /source
            # GET /api/v1/statuses/:id/context (descendants); a reply is a status with
            # in_reply_to_id and an Idempotency-Key; an account deletes only its own statuses and
            # Mastodon has no call that hides another's reply; favourite likes. 300 requests per 5
            # minutes per account: a sixth goes to comment reads.
            comment_actions=frozenset({"read", "reply", "delete_own", "like"}),
            comment_reads_per_hour=600,
        ),
        Capabilities(
            Platform.THREADS,
            frozenset({TEXT, IMAGE, VIDEO, CAROUSEL}),
            500,
            max_images=10,
            max_videos=10,
            max_items=10,
            mixed_media=True,
            metrics=_ALL,
            analytics_scopes=frozenset({"threads_manage_insights"}),
            followers=True,
            idempotent_publish="lookup",
            refreshable_token=True,
            threads=True,
            comment_text_limit=500,
            # DELETE /{threads-media-id} (threads_delete, 100 a day); no edit call
            deletable=True,
            post_lookup=True,  # GET /{threads-media-id}
            # /{media-id}/conversation (every reply, flattened); a reply is a container with
            # reply_to_id; /{reply-id}/manage_reply hides a top-level reply; DELETE /{media-id} only
            # the account's own replies; no like call. Reads: a share of the account's hourly
            # Threads calls, the rest kept for publishing.
            comment_actions=frozenset({"read", "reply", "hide", "delete_own"}),
            comment_reads_per_hour=200,
        ),
        Capabilities(
            Platform.LINKEDIN,
            frozenset({TEXT, IMAGE, VIDEO, CAROUSEL, DOCUMENT}),
            3000,
            max_images=9,
            max_videos=1,
            max_documents=1,
            max_items=9,
            metrics=_ALL,
            analytics_scopes=frozenset({"r_member_postAnalytics"}),
            followers=True,
            title_limit=100,
            idempotent_publish="none",
            refreshable_token=True,
            comment_text_limit=1250,
            # Posts API: PARTIAL_UPDATE of commentary only; DELETE /rest/posts/{urn}
            edit_fields=frozenset({"text"}),
            deletable=True,
            revocable_token=True,  # POST /oauth/v2/revoke
            post_lookup=True,  # GET /rest/posts/{urn}
            # Comments API: GET /rest/socialActions/{urn}/comments (first-level comments, then the
            # replies of each: a read per comment that has some; r_member_social), replies with
            # parentComment (one level), DELETE of the member's own comment, likes through the
            # Reactions API; no hide. LinkedIn's throttles are daily per member and app: a
            # conservative 40 reads an hour (960 a day) go to comments.
            comment_actions=frozenset({"read", "reply", "delete_own", "like"}),
            comment_reads_per_hour=40,
        ),
        Capabilities(
            Platform.INSTAGRAM,
            frozenset({IMAGE, VIDEO, CAROUSEL}),
            2200,
            max_images=10,
            max_videos=10,
            max_items=10,
            mixed_media=True,
            media_required=True,
            metrics=_ALL,
            analytics_scopes=frozenset({"instagram_manage_insights"}),
            followers=True,
            idempotent_publish="lookup",
            refreshable_token=True,
            comment_text_limit=2200,
            # POST /{ig-media-id} changes only comment_enabled: no caption edit, no delete
            revocable_token=True,  # DELETE /{user-id}/permissions (the Facebook Login behind it)
            post_lookup=True,  # GET /{ig-media-id}
            # /{ig-media-id}/comments with replies; POST /{ig-comment-id}/replies; POST
            # /{ig-comment-id}?hide=; DELETE /{ig-comment-id} (anyone's, on the account's media);
            # no comment like. Reads: a share of the 200 calls an hour an Instagram account gets.
            comment_actions=frozenset({"read", "reply", "hide", "delete_own", "delete_others"}),
            comment_reads_per_hour=120,
        ),
        Capabilities(
            Platform.FACEBOOK,
            frozenset({TEXT, IMAGE, VIDEO, CAROUSEL}),
            63206,
            max_images=10,
            max_videos=1,
            max_items=10,
            metrics=_ALL,
            analytics_scopes=frozenset({"read_insights"}),
            followers=True,
            title_limit=255,
            idempotent_publish="lookup",
            comment_text_limit=8000,
            # POST /{post-id} with message; DELETE /{post-id}
            edit_fields=frozenset({"text"}),
            deletable=True,
            revocable_token=True,  # DELETE /{user-id}/permissions
            post_lookup=True,  # GET /{post-id}
            # /{post-id}/comments?filter=stream; POST /{comment-id}/comments; POST /{comment-id}
            # ?is_hidden=; DELETE /{comment-id} (the page moderates its posts); POST
            # /{comment-id}/likes. Reads: a share of the page's hourly Graph budget.
            comment_actions=frozenset({"read", "reply", "hide", "delete_own", "delete_others", "like"}),
            comment_reads_per_hour=600,
        ),
        Capabilities(
            Platform.TIKTOK,
            frozenset({VIDEO, IMAGE, CAROUSEL}),
            2200,
            max_images=35,
            max_videos=1,
            max_items=35,
            min_images_without_video=2,
            media_required=True,
            title_limit=90,
            metrics=_ALL,
            analytics_scopes=frozenset({"video.list"}),
            followers=True,
            idempotent_publish="none",
            refreshable_token=True,
            # the Content Posting API neither edits nor deletes a published post
            revocable_token=True,  # POST /v2/oauth/revoke/
            # No comment_actions: the APIs an app reaches with the creator's Login Kit token
            # (Display API, Content Posting API) have no comment read or write; the Research API
            # lists a video's comments but only for approved non-commercial researchers and never
            # replies; comment management exists only in the separate TikTok API for Business,
            # for Business Accounts authorized through its own app and OAuth.
        ),
        Capabilities(
            Platform.YOUTUBE,
            frozenset({VIDEO}),
            5000,
            max_videos=1,
            max_items=1,
            media_required=True,
            title_limit=100,
            metrics=frozenset({"views", "likes", "comments"}),
            analytics_scopes=frozenset({"https://www.googleapis.com/auth/youtube.readonly"}),
            followers=True,
            idempotent_publish="none",
            refreshable_token=True,
            comment_text_limit=10000,
            # videos.update (snippet title and description); videos.delete
            edit_fields=frozenset({"text", "title"}),
            deletable=True,
            revocable_token=True,  # POST oauth2.googleapis.com/revoke
            post_lookup=True,  # videos.list by id
            # commentThreads.list / comments.list?parentId= (1 quota unit a page); comments.insert;
            # comments.setModerationStatus heldForReview|published (hide), rejected (others'
            # comments); comments.delete (the channel's own); no like call. Reads: kept low, the
            # project's 10,000 daily units are shared by every channel and an upload costs 1,600.
            comment_actions=frozenset({"read", "reply", "hide", "delete_own", "delete_others"}),
            comment_reads_per_hour=30,
            comment_listings=2,  # platforms.youtube.MODERATION_LISTINGS
        ),
        Capabilities(
            Platform.PINTEREST,
            frozenset({IMAGE, VIDEO, CAROUSEL}),
            500,
            max_images=5,
            max_videos=1,
            max_items=5,
            media_required=True,
            title_limit=100,
            metrics=frozenset({"views", "likes", "comments", "shares"}),
            analytics_scopes=frozenset({"pins:read", "user_accounts:read"}),
            followers=True,
            idempotent_publish="none",
            refreshable_token=True,
            # PATCH /v5/pins/{id} (title, description; not the media); DELETE /v5/pins/{id}
            edit_fields=frozenset({"text", "title"}),
            deletable=True,
            post_lookup=True,  # GET /v5/pins/{pin_id}
        ),
        Capabilities(
            Platform.TELEGRAM,
            frozenset({TEXT, IMAGE, VIDEO, CAROUSEL}),
            4096,
            text_limit_with_media=1024,
            max_images=10,
            max_videos=10,
            max_items=10,
            mixed_media=True,
            followers=True,  # getChatMemberCount; the Bot API has no per-post analytics
            idempotent_publish="none",
            # editMessageText / editMessageCaption (no window for the bot's own messages);
            # editMessageMedia replaces the photo or video of one message, "or adds media to text
            # messages": an album is one message per item, and a message's media cannot be removed;
            # deleteMessage only within 48 hours of sending
            edit_fields=frozenset({"text", "media"}),
            edit_media_removes=False,
            edit_media_max_items=1,
            deletable=True,
            delete_window_seconds=48 * 3600,
            delete_max_items=1,
        ),
        Capabilities(
            Platform.GOOGLE_BUSINESS,
            frozenset({TEXT, IMAGE}),
            1500,
            max_images=1,
            max_items=1,
            metrics=frozenset({"views"}),
            analytics_scopes=frozenset({"https://www.googleapis.com/auth/business.manage"}),
            idempotent_publish="none",
            refreshable_token=True,
            # localPosts.patch with updateMask=summary and/or media (a LocalPost field: its one
            # photo, set, replaced or removed); localPosts.delete
            edit_fields=frozenset({"text", "media"}),
            deletable=True,
            revocable_token=True,  # POST oauth2.googleapis.com/revoke
            post_lookup=True,  # localPosts.get
            # Reviews of the location: reviews.list; updateReply (PUT …/reviews/{id}/reply, one
            # reply per review, up to 4096 characters); deleteReply; a review can be neither
            # hidden, deleted nor liked. Reads: a share of the per-minute Business Profile quota.
            comment_actions=frozenset({"read", "reply", "delete_own"}),
            comment_reads_per_hour=60,
            reply_text_limit=4096,
        ),
    ]
}

ANALYTICS_PLATFORMS: tuple[Platform, ...] = tuple(p for p, c in CAPABILITIES.items() if c.has_analytics)


def title_limit(platform: Platform) -> int:
    """The title limit of a platform whose posts carry a title (KeyError for one without)."""
    limit = CAPABILITIES[platform].title_limit
    if limit is None:
        raise KeyError(f"{platform.value} posts carry no title")
    return limit


def max_file_bytes(platform: Platform, kind: str) -> int | None:
    """The largest ``kind`` ("image" | "video" | "document") file ``platform`` documents taking
    when one such file is posted with no options (None: it documents no limit); each post type's
    own limits are in ``platforms.media_rules``."""
    spec = default_rules(platform, kind).for_kind(kind)
    return None if spec is None else spec.max_bytes


def max_video_seconds(platform: Platform) -> int | None:
    """The longest video ``platform`` documents taking when one video is posted with no options."""
    spec = default_rules(platform, "video").video
    return None if spec is None or spec.max_seconds is None else int(spec.max_seconds)


@dataclass(frozen=True)
class PostedFile:
    """One file of a post as the media rules see it: its size in bytes, what the probe measured
    (``facts``; None while not probed) and, for a file the probe could not read, why."""

    url: str
    kind: str  # "image" | "video" | "document"
    size: int | None
    facts: Mapping[str, Any] | None = None
    unusable: str = ""


def validate_media(
    platform: Platform, *, content_type: str, options: Mapping[str, Any], media: list[PostedFile]
) -> list[tuple[Violation, str]]:
    """Every file of ``media`` that ``platform`` refuses for the post type these options select,
    as (the rule broken, message naming the platform, the file and the rule). A file not probed
    yet is checked for its size only; an unusable one is refused with the probe's reason."""
    post_type = post_type_of(platform, content_type=content_type, options=options, kinds=[m.kind for m in media])
    rules = rules_for(platform, post_type)
    issues = []
    for item in media:
        if item.unusable:
            message = f"{platform.value} takes only readable files ({MEDIA_UNUSABLE}); {item.url} is unusable: "
            issues.append((Violation(MEDIA_UNUSABLE, "only readable files", "is unusable"), message + item.unusable))
            continue
        for broken in check_file(rules, item.kind, size=item.size, facts=item.facts):
            message = f"{platform.value} takes {what(rules, item.kind)} {broken.requirement} ({broken.code}); "
            issues.append((broken, f"{message}{item.url} {broken.found}"))
    return issues


def text_length(platform: Platform, text: str) -> int:
    counting = CAPABILITIES[platform].text_counting
    if counting == "x_weighted":
        # twitter-text v3 (X's own counting): weighted code points, emoji as 2, any URL as 23.
        return int(parse_tweet(text).weightedLength)
    if counting == "graphemes":
        return grapheme.length(text)
    return len(text)


def validate_comment(platform: Platform, text: str) -> list[str]:
    """Every reason ``platform`` would refuse ``text`` as a comment under a post, as messages naming
    the platform (a platform without a comment API refuses every comment)."""
    limit = CAPABILITIES[platform].comment_text_limit
    if limit is None:
        supported = ", ".join(p.value for p, caps in CAPABILITIES.items() if caps.comment_text_limit is not None)
        return [f"{platform.value} has no comment API (only {supported})"]
    length = text_length(platform, text)
    if length > limit:
        return [f"{platform.value} comment is {length} characters; the limit is {limit}"]
    return []


def validate_reply(platform: Platform, text: str) -> list[str]:
    """Every reason ``platform`` would refuse ``text`` as the account's reply to a comment or a
    review, as messages naming the platform."""
    caps = CAPABILITIES[platform]
    if "reply" not in caps.comment_actions:
        return [f"{platform.value} does not let an app reply to comments"]
    limit = caps.reply_text_limit or caps.comment_text_limit
    length = text_length(platform, text)
    if not text.strip():
        return [f"{platform.value} reply is empty"]
    if limit is not None and length > limit:
        return [f"{platform.value} reply is {length} characters; the limit is {limit}"]
    return []


def media_edit_refusal(
    platform: Platform, *, live_type: str, live_items: int, new_type: str, new_items: int
) -> str | None:
    """Why ``platform`` (one whose ``edit_fields`` hold "media") cannot turn the media of a
    published post, a ``live_type`` post with ``live_items`` media items, into a ``new_type`` post
    with ``new_items`` in place; None when it can. What the new files themselves must meet is
    :func:`validate_content` and :func:`validate_media`, as at publishing."""
    caps = CAPABILITIES[platform]
    name = platform.value
    if new_type not in caps.content_types:
        taken = ", ".join(t for t in (TEXT, IMAGE, VIDEO, CAROUSEL, DOCUMENT) if t in caps.content_types)
        return f"{name} does not take {new_type} posts (only {taken}), so it cannot become one"
    limit = caps.edit_media_max_items
    if limit is not None and live_items > limit:
        return (
            f"{name} replaces the media of a post with at most {limit} media item(s) in place; this one went out "
            f"with {live_items}"
        )
    if limit is not None and new_items > limit:
        return f"{name} replaces a post's media in place with at most {limit} media item(s), not {new_items}"
    if not live_items and new_items and not caps.edit_media_adds:
        return f"{name} cannot add media to a post that went out as text only"
    if live_items and not new_items and not caps.edit_media_removes:
        return f"{name} cannot remove the media of a published post, only replace them"
    return None


def validate_content(
    platform: Platform, *, content_type: str, text: str, media_kinds: list[str], title: str | None = None
) -> list[str]:
    """Every reason ``platform`` would refuse this content, as messages naming the platform.
    ``media_kinds`` holds "image" | "video" | "document" per media item, in order."""
    caps = CAPABILITIES[platform]
    name = platform.value
    issues: list[str] = []
    if content_type not in caps.content_types:
        issues.append(f"{name} does not accept {content_type} posts")
    images = media_kinds.count("image")
    videos = media_kinds.count("video")
    documents = media_kinds.count("document")
    limit = caps.text_limit_with_media if media_kinds and caps.text_limit_with_media else caps.text_limit
    length = text_length(platform, text or "")
    if length > limit:
        issues.append(f"{name} text is {length} characters; the limit is {limit}")
    elif caps.text_byte_limit is not None and len((text or "").encode()) > caps.text_byte_limit:
        size = len((text or "").encode())
        issues.append(f"{name} text is {size} bytes in UTF-8; the limit is {caps.text_byte_limit}")
    if caps.media_required and not media_kinds:
        issues.append(f"{name} requires media")
    if documents and (documents > caps.max_documents or images or videos):
        issues.append(
            f"{name} does not accept documents" if not caps.max_documents else f"{name} takes one document alone"
        )
    if images > caps.max_images:
        issues.append(
            f"{name} accepts at most {caps.max_images} images" if caps.max_images else f"{name} does not accept images"
        )
    if videos > caps.max_videos:
        issues.append(
            f"{name} accepts at most {caps.max_videos} video(s)"
            if caps.max_videos
            else f"{name} does not accept videos"
        )
    if images and videos and not caps.mixed_media:
        issues.append(f"{name} does not mix images and videos in one post")
    if len(media_kinds) > caps.max_items and caps.max_items:
        issues.append(f"{name} accepts at most {caps.max_items} media items")
    if caps.min_images_without_video and images and not videos and images < caps.min_images_without_video:
        issues.append(f"{name} photo posts need at least {caps.min_images_without_video} images")
    if title is not None and caps.title_limit is not None and len(title) > caps.title_limit:
        issues.append(f"{name} title is {len(title)} characters; the limit is {caps.title_limit}")
    return issues
