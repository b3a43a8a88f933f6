"""Shape of the create / change / bulk payloads (CONTRACT.md §5): types, enums and the limits
that are not a platform's (those live in ``platforms.capabilities`` only)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core import serializers as strict
from core.fields import InstantField, TimeZoneField, UntrimmedTextField, choice
from platforms.base import Platform
from posts.models import ContentType, LatePolicy
from posts.recurrence.input import RECURRENCE_DESCRIPTION, RecurrenceInput

PLATFORM_VALUES = [p.value for p in Platform]

# The payload field that lists each platform's accounts.
CONNECTION_FIELDS: dict[str, str] = {
    "FACEBOOK": "pageIds",
    "INSTAGRAM": "instagramConnectionIds",
    "THREADS": "threadsConnectionIds",
    "TIKTOK": "tiktokConnectionIds",
    "TWITTER": "twitterConnectionIds",
    "BLUESKY": "blueskyConnectionIds",
    "LINKEDIN": "linkedinConnectionIds",
    "PINTEREST": "pinterestConnectionIds",
    "YOUTUBE": "youtubeConnectionIds",
    "MASTODON": "mastodonConnectionIds",
    "TELEGRAM": "telegramConnectionIds",
    "GOOGLE_BUSINESS": "googleBusinessConnectionIds",
}
CONFIG_FIELDS: dict[str, str] = {
    "INSTAGRAM": "instagramConfigs",
    "FACEBOOK": "facebookConfigs",
    "TIKTOK": "tiktokConfigs",
    "YOUTUBE": "youtubeConfigs",
    "PINTEREST": "pinterestConfigs",
    "LINKEDIN": "linkedinConfigs",
    "GOOGLE_BUSINESS": "googleBusinessConfigs",
}


def _id_field(**kwargs: Any) -> serializers.CharField:
    return serializers.CharField(max_length=255, **kwargs)


def _configs(serializer_class: type[serializers.Serializer]) -> serializers.ListField:
    # A ListField rather than many=True: drf-spectacular documents its maxItems.
    return serializers.ListField(child=serializer_class(), required=False, max_length=50)


def _ids() -> serializers.ListField:
    return serializers.ListField(child=_id_field(), required=False, max_length=50)


class _ConnectionConfig(strict.Serializer):
    connectionId = _id_field(required=False)


class InstagramConfigInput(_ConnectionConfig):
    postType = choice(["FEED", "REEL", "STORY"], required=False)
    trialGraduation = choice(["MANUAL", "SS_PERFORMANCE"], required=False, allow_null=True)
    audio = _id_field(required=False, allow_null=True)


class FacebookConfigInput(strict.Serializer):
    pageId = _id_field(required=False)
    postType = choice(["FEED", "REEL", "STORY"], required=False)
    videoTitle = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=5000)


class TiktokConfigInput(_ConnectionConfig):
    privacyLevel = choice(
        ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"],
        required=False,
        allow_null=True,
    )
    title = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=5000)
    caption = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=100_000)
    allowComments = serializers.BooleanField(required=False)
    allowDuet = serializers.BooleanField(required=False)
    allowStitch = serializers.BooleanField(required=False)
    sendAsDraft = serializers.BooleanField(required=False)
    aiGenerated = serializers.BooleanField(required=False)
    brandedContent = serializers.BooleanField(required=False)
    brandedContentOwnBrand = serializers.BooleanField(required=False)
    brandedOwnBrand = serializers.BooleanField(
        required=False,
        write_only=True,
        help_text="The published clients' name of brandedContentOwnBrand (what entries answer as "
        "tiktokBrandedOwnBrand); brandedContentOwnBrand wins when both are sent.",
    )
    autoAddMusic = serializers.BooleanField(required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        alias = attrs.pop("brandedOwnBrand", None)
        if alias is not None and "brandedContentOwnBrand" not in attrs:
            attrs["brandedContentOwnBrand"] = alias
        return attrs


class YoutubeConfigInput(_ConnectionConfig):
    postType = choice(["VIDEO", "SHORTS"], required=False)
    videoTitle = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=5000)
    tags = serializers.ListField(child=serializers.CharField(max_length=500), required=False, max_length=20)
    privacyStatus = choice(["public", "private", "unlisted"], required=False)
    license = choice(["youtube", "creativeCommon"], required=False)
    notifySubscribers = serializers.BooleanField(required=False)
    allowEmbedding = serializers.BooleanField(required=False)
    madeForKids = serializers.BooleanField(required=False)
    categoryId = _id_field(required=False, allow_null=True)
    playlistId = _id_field(required=False, allow_null=True)


class PinterestConfigInput(_ConnectionConfig):
    boardId = _id_field(required=False, allow_blank=True, allow_null=True)
    title = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=5000)
    link = serializers.URLField(required=False, allow_null=True, max_length=2000)


class LinkedinConfigInput(_ConnectionConfig):
    documentTitle = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=5000)


class GoogleBusinessConfigInput(_ConnectionConfig):
    topicType = choice(["STANDARD", "EVENT", "OFFER"], required=False)
    callToActionType = choice(
        ["BOOK", "ORDER", "SHOP", "LEARN_MORE", "SIGN_UP", "CALL"], required=False, allow_null=True
    )
    callToActionUrl = serializers.URLField(required=False, allow_null=True, max_length=2000)
    eventTitle = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=500)
    eventStart = InstantField(required=False, allow_null=True)
    eventEnd = InstantField(required=False, allow_null=True)
    offerCouponCode = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=500)
    offerRedeemUrl = serializers.URLField(required=False, allow_null=True, max_length=2000)
    offerTerms = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=5000)


CONFIG_SERIALIZERS: dict[str, type[serializers.Serializer]] = {
    "INSTAGRAM": InstagramConfigInput,
    "FACEBOOK": FacebookConfigInput,
    "TIKTOK": TiktokConfigInput,
    "YOUTUBE": YoutubeConfigInput,
    "PINTEREST": PinterestConfigInput,
    "LINKEDIN": LinkedinConfigInput,
    "GOOGLE_BUSINESS": GoogleBusinessConfigInput,
}


class PlatformTextInput(strict.Serializer):
    platform = choice(PLATFORM_VALUES)
    text = serializers.CharField(allow_blank=True, max_length=100_000, trim_whitespace=False)


THREAD_MAX_ITEMS = 24
THREAD_DESCRIPTION = (
    "Replies published after the post, in order (1 to 24 items): the post's own `text` and media are the "
    "first item of the thread and each item here is a reply to the one before it. Only TWITTER, BLUESKY, "
    "THREADS and MASTODON publish threads; a post with a `thread` that targets any other platform is a 400 "
    "naming that platform. Every item is checked against each target platform's limits (its text as that "
    "platform counts it, its media by that platform's media rules). Each entry answers the items the platform "
    "confirmed in `threadItems`; a thread interrupted mid-way resumes after the last confirmed item, never "
    "sending an item twice: on BLUESKY and MASTODON each item carries its own idempotency key, so an item whose "
    "answer was lost is sent again safely; on TWITTER and THREADS, where a reply cannot be looked up, an item "
    "whose outcome is unknown (a timeout, a worker lost mid-call) ends the entry FAILED `unknown_outcome` "
    "instead, with the items before it in `threadItems`: check the platform, then `/retry` sends the thread on "
    "from that item. Not with `recurrence`; set at create only (a change keeps it and checks it against new "
    "platforms)."
)


class ThreadItemInput(strict.Serializer):
    text = serializers.CharField(allow_blank=True, max_length=100_000, trim_whitespace=False)
    mediaUrls = serializers.ListField(
        child=serializers.CharField(max_length=2000),
        required=False,
        max_length=35,
        help_text="`publicUrl`s from POST /upload-urls, as the post's own mediaUrls",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs["text"].strip() and not attrs.get("mediaUrls"):
            raise serializers.ValidationError({"text": "a thread item needs text or media"})
        return attrs


FIRST_COMMENT_DESCRIPTION = (
    "A comment posted under each entry's post once it is live, `delaySeconds` (0 to "
    "FIRST_COMMENT_MAX_DELAY_SECONDS, 3600 by default) after the entry is PUBLISHED, exactly once: a comment "
    "whose outcome is unknown (a timeout, a worker lost mid-call) is sent again only on BLUESKY and MASTODON, "
    "which deduplicate on our key; elsewhere it ends FAILED `unknown_outcome` (check the post). Supported on "
    "FACEBOOK, INSTAGRAM, LINKEDIN, TWITTER, BLUESKY, THREADS, MASTODON and YOUTUBE (GET /platforms: "
    "`firstComment`); a post with one that targets any other platform is a 400 naming it. The text is checked "
    "against each platform's comment limit, counted as that platform counts text. Each entry answers "
    "`firstComment: {status, platformCommentId, errorCode?}`; events `post.first_comment.published` and "
    "`post.first_comment.failed`. It never holds back the entry's status or the post's `post.published`. "
    "On PATCH, null removes it."
)


FIRST_COMMENT_NEEDS_TEXT = "a first comment needs text"


class FirstCommentInput(strict.Serializer):
    text = UntrimmedTextField(
        max_length=100_000, error_messages={"blank_text": FIRST_COMMENT_NEEDS_TEXT}, help_text="The comment's text"
    )
    delaySeconds = serializers.IntegerField(
        required=False,
        default=0,
        min_value=0,
        max_value=settings.FIRST_COMMENT_MAX_DELAY_SECONDS,
        help_text="Seconds between the entry going live and its comment (default 0)",
    )


PLATFORM_FIRST_COMMENTS_DESCRIPTION = (
    "Per-platform first comments, in the style of `platformTexts`: each entry's comment is its platform's `text` "
    "here when given, else the post's `firstComment.text`; the post's `firstComment.delaySeconds` applies to "
    "every comment (0 when only `platformFirstComments` is given). Without a `firstComment`, only the platforms "
    "named here get a comment. Each platform at most once (else a 400); an item for a platform the post does not "
    "target (not in `platforms`, or skipped for lack of a connection) is ignored, as `platformTexts` items are. "
    "As `firstComment`: a target platform without a comment API is a 400 naming it (GET /platforms: "
    "`firstComment`), as is a Facebook or Instagram STORY; each text is checked against its platform's comment "
    "limit, counted as that platform counts text. The post record answers the items that apply, in the order of "
    "its entries. On PATCH, a new list replaces the old one, null (or []) removes it, and a change of `platforms` "
    "keeps it (checked against the new platforms)."
)


class PlatformFirstCommentInput(strict.Serializer):
    platform = choice(PLATFORM_VALUES)
    text = UntrimmedTextField(
        max_length=100_000,
        error_messages={"blank_text": FIRST_COMMENT_NEEDS_TEXT},
        help_text="The comment under this platform's entry, instead of firstComment.text",
    )


class PostContentInput(strict.Serializer):
    """Fields shared by create, change and bulk items."""

    contentType = choice(ContentType.values)
    text = serializers.CharField(required=False, allow_blank=True, max_length=100_000, trim_whitespace=False)
    platformTexts = serializers.ListField(child=PlatformTextInput(), required=False, max_length=12)
    mediaUrls = serializers.ListField(child=serializers.CharField(max_length=2000), required=False, max_length=35)
    mediaAltTexts = serializers.ListField(
        child=serializers.CharField(max_length=1000, allow_blank=True, trim_whitespace=False),
        required=False,
        max_length=35,
    )
    thumbnailUrl = serializers.URLField(required=False, allow_blank=True, allow_null=True, max_length=2000)
    thumbnailTimestampMs = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=2**31 - 1)
    scheduledAt = InstantField(required=False, allow_null=True)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # Rules relating two fields (mediaAltTexts to mediaUrls) are checked on the post as it
        # will be (``build_plan``), since a PATCH may send one field of the pair.
        texts = attrs.get("platformTexts") or []
        if len({t["platform"] for t in texts}) != len(texts):
            raise serializers.ValidationError({"platformTexts": "must name each platform once"})
        return attrs


class PostTargetsInput(strict.Serializer):
    """Where a post goes: platforms, connection arrays and config arrays."""

    platforms = serializers.ListField(child=choice(PLATFORM_VALUES), min_length=1, max_length=12)
    pageIds = _ids()
    instagramConnectionIds = _ids()
    threadsConnectionIds = _ids()
    tiktokConnectionIds = _ids()
    twitterConnectionIds = _ids()
    blueskyConnectionIds = _ids()
    linkedinConnectionIds = _ids()
    pinterestConnectionIds = _ids()
    youtubeConnectionIds = _ids()
    mastodonConnectionIds = _ids()
    telegramConnectionIds = _ids()
    googleBusinessConnectionIds = _ids()
    instagramConfigs = _configs(InstagramConfigInput)
    facebookConfigs = _configs(FacebookConfigInput)
    tiktokConfigs = _configs(TiktokConfigInput)
    youtubeConfigs = _configs(YoutubeConfigInput)
    pinterestConfigs = _configs(PinterestConfigInput)
    linkedinConfigs = _configs(LinkedinConfigInput)
    googleBusinessConfigs = _configs(GoogleBusinessConfigInput)


class PostCreateInput(PostContentInput, PostTargetsInput):
    timezone = TimeZoneField()
    saveAsDraft = serializers.BooleanField(required=False, default=False)
    recurrence = RecurrenceInput(required=False, allow_null=True, help_text=RECURRENCE_DESCRIPTION)
    queue = serializers.BooleanField(
        required=False,
        help_text="true: schedule the post at the earliest slot of its accounts' posting queues that is free "
        "for every one of them (answered as `scheduledAt`). Not with `scheduledAt`, `saveAsDraft` or "
        "`recurrence`; every target account needs a queue with slots (PUT /social-accounts/{id}/queue). "
        "400 when no slot within POSTING_QUEUE_HORIZON_DAYS (366 by default) is free for all of them; "
        "`/validate` checks the rest, the slot itself is claimed by the create.",
    )

    latePolicy = choice(
        LatePolicy.values,
        required=False,
        help_text="What happens to an entry that reaches a worker more than `maxLatenessSeconds` after "
        "`scheduledAt` (workers were down, a backlog): `publish` (the default) sends it late; `skip` fails it with "
        "`errorCode: missed`; `draft` turns the post back into an undated draft when none of its entries has been "
        "sent yet (else the entry is skipped). Either emits `post.missed` naming the entries. Only a first attempt "
        "is judged: a retry after a platform error is never skipped.",
    )
    maxLatenessSeconds = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=30 * 86_400,
        help_text="With latePolicy skip or draft: how late an entry may still go out (default "
        "LATE_POLICY_DEFAULT_SECONDS, 3600).",
    )
    thread = serializers.ListField(
        child=ThreadItemInput(),
        required=False,
        min_length=1,
        max_length=THREAD_MAX_ITEMS,
        help_text=THREAD_DESCRIPTION,
    )
    firstComment = FirstCommentInput(required=False, allow_null=True, help_text=FIRST_COMMENT_DESCRIPTION)
    platformFirstComments = serializers.ListField(
        child=PlatformFirstCommentInput(),
        required=False,
        allow_null=True,
        max_length=12,
        help_text=PLATFORM_FIRST_COMMENTS_DESCRIPTION,
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        comments = attrs.get("platformFirstComments") or []
        if len({c["platform"] for c in comments}) != len(comments):
            raise serializers.ValidationError({"platformFirstComments": "must name each platform once"})
        return PostContentInput.validate(self, attrs)


class PostUpdateInput(PostCreateInput):
    """Same fields as create but ``saveAsDraft``, ``recurrence``, ``queue`` and ``thread``; every
    field optional."""

    saveAsDraft = None  # type: ignore[assignment]
    recurrence = None  # type: ignore[assignment]
    queue = None  # type: ignore[assignment]
    thread = None  # type: ignore[assignment]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.required = False


class BulkItemInput(PostContentInput):
    """One item of ``posts``: its content, its time, optional per-item config arrays."""

    contentType = choice([c for c in ContentType.values if c != ContentType.DOCUMENT])
    scheduledAt = InstantField()
    # Stored as "bulk-item:" + key in a 255-character column: a longer key was a database error.
    idempotencyKey = serializers.CharField(required=False, max_length=255 - len("bulk-item:"))
    instagramConfigs = _configs(InstagramConfigInput)
    facebookConfigs = _configs(FacebookConfigInput)
    tiktokConfigs = _configs(TiktokConfigInput)
    youtubeConfigs = _configs(YoutubeConfigInput)
    pinterestConfigs = _configs(PinterestConfigInput)
    googleBusinessConfigs = _configs(GoogleBusinessConfigInput)


@extend_schema_field(BulkItemInput)
class _BulkItemField(serializers.JSONField):
    """An item kept raw here (``posts.services.bulk`` validates it with BulkItemInput and reports
    its errors in its result, with a 201); documented as the BulkItemInput it must be."""


class BulkBatchInput(PostTargetsInput):
    """Batch-level fields (no ``linkedinConfigs``); ``posts`` is kept raw so that each item is
    validated on its own and one bad item never sinks the others."""

    linkedinConfigs = None  # type: ignore[assignment]
    timezone = TimeZoneField()
    posts = serializers.ListField(child=_BulkItemField(), min_length=1, max_length=100)
