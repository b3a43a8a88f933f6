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


TARGETING_DESCRIPTION = (
    "**Targeting:** `platforms` names the platforms to publish on, and each platform's account goes in that "
    "platform's own id array: "
    + ", ".join(f"{platform} in `{field}`" for platform, field in CONNECTION_FIELDS.items())
    + ". The ids are `id`s from GET /social-accounts (for FACEBOOK also the page's `pageId`); exactly one account "
    "per platform per post. An array whose platform is not in `platforms` is ignored; a platform in `platforms` "
    'with no account of its own in its array is skipped and reported in `skippedPlatforms` (reason "No valid '
    'connection found"), and when every platform is skipped the request is a 400 `connection_not_found`. '
    "Options per platform go in its config array (`instagramConfigs`, `tiktokConfigs`, ...; `privacyLevel` is "
    "required for TIKTOK, `boardId` for PINTEREST)."
)


def connection_ids_help(platform: str) -> str:
    return (
        f"The {platform} account to publish to: the `id` of a {platform} account of the workspace (GET "
        f"/social-accounts). Read only when `platforms` lists {platform}; ids that are no {platform} account of "
        f"the workspace are ignored, and {platform} is skipped (`skippedPlatforms`) when none is left. One "
        "account per platform per post."
    )


def _id_field(**kwargs: Any) -> serializers.CharField:
    return serializers.CharField(max_length=255, **kwargs)


def _configs(serializer_class: type[serializers.Serializer], **kwargs: Any) -> serializers.ListField:
    # A ListField rather than many=True: drf-spectacular documents its maxItems.
    return serializers.ListField(child=serializer_class(), required=False, max_length=50, **kwargs)


def _ids(**kwargs: Any) -> serializers.ListField:
    return serializers.ListField(child=_id_field(), required=False, max_length=50, **kwargs)


class _ConnectionConfig(strict.Serializer):
    connectionId = _id_field(
        required=False,
        help_text=("The account (its `id` among the post's accounts of this platform) these options apply to."),
    )


class InstagramConfigInput(_ConnectionConfig):
    postType = choice(
        ["FEED", "REEL", "STORY"],
        required=False,
        help_text="FEED (default), REEL (needs a VIDEO) or STORY (IMAGE or VIDEO).",
    )
    trialGraduation = choice(
        ["MANUAL", "SS_PERFORMANCE"],
        required=False,
        allow_null=True,
        help_text=(
            "Publish a REEL as a trial reel shown to non-followers first: MANUAL or "
            "SS_PERFORMANCE graduation (a single video only)."
        ),
    )
    audio = _id_field(
        required=False, allow_null=True, help_text="An `audioId` from GET /social-accounts/{id}/instagram-audio."
    )


class FacebookConfigInput(strict.Serializer):
    pageId = _id_field(required=False, help_text="The page (among `pageIds`) these options apply to.")
    postType = choice(["FEED", "REEL", "STORY"], required=False, help_text="FEED (default), REEL or STORY.")
    videoTitle = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=5000,
        help_text="A video's title (at most 255 characters).",
    )


class TiktokConfigInput(_ConnectionConfig):
    privacyLevel = choice(
        ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"],
        required=False,
        allow_null=True,
        help_text=(
            'Who sees the video; required for every TIKTOK target (else 400 "Privacy level is'
            ' required for TikTok posts").'
        ),
    )
    title = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=5000,
        help_text="A photo post's title (at most 90 characters).",
    )
    caption = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=100_000,
        help_text="The caption on TikTok instead of the post's text (at most 2200 characters).",
    )
    allowComments = serializers.BooleanField(required=False, help_text="Viewers may comment.")
    allowDuet = serializers.BooleanField(required=False, help_text="Viewers may duet the video.")
    allowStitch = serializers.BooleanField(required=False, help_text="Viewers may stitch the video.")
    sendAsDraft = serializers.BooleanField(
        required=False, help_text="Deliver to the creator's TikTok inbox as a draft instead of publishing."
    )
    aiGenerated = serializers.BooleanField(required=False, help_text="Label the content as AI-generated.")
    brandedContent = serializers.BooleanField(
        required=False, help_text="Disclose a paid partnership (branded content)."
    )
    brandedContentOwnBrand = serializers.BooleanField(
        required=False, help_text="Disclose that the creator promotes their own brand."
    )
    brandedOwnBrand = serializers.BooleanField(
        required=False,
        write_only=True,
        help_text="The published clients' name of brandedContentOwnBrand (what entries answer as "
        "tiktokBrandedOwnBrand); brandedContentOwnBrand wins when both are sent.",
    )
    autoAddMusic = serializers.BooleanField(required=False, help_text="Let TikTok add music to a photo post.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        alias = attrs.pop("brandedOwnBrand", None)
        if alias is not None and "brandedContentOwnBrand" not in attrs:
            attrs["brandedContentOwnBrand"] = alias
        return attrs


class YoutubeConfigInput(_ConnectionConfig):
    postType = choice(["VIDEO", "SHORTS"], required=False, help_text="VIDEO (default) or SHORTS.")
    videoTitle = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=5000,
        help_text="The video's title (at most 100 characters; default: the start of the text).",
    )
    tags = serializers.ListField(
        child=serializers.CharField(max_length=500), required=False, max_length=20, help_text="Up to 20 tags."
    )
    privacyStatus = choice(["public", "private", "unlisted"], required=False, help_text="public, private or unlisted.")
    license = choice(["youtube", "creativeCommon"], required=False, help_text="youtube (standard) or creativeCommon.")
    notifySubscribers = serializers.BooleanField(required=False, help_text="Notify the channel's subscribers.")
    allowEmbedding = serializers.BooleanField(required=False, help_text="The video may be embedded on other sites.")
    madeForKids = serializers.BooleanField(required=False, help_text="The video is made for children (COPPA).")
    categoryId = _id_field(required=False, allow_null=True, help_text="A YouTube video category id.")
    playlistId = _id_field(required=False, allow_null=True, help_text="A playlist of the channel to add the video to.")


class PinterestConfigInput(_ConnectionConfig):
    boardId = _id_field(
        required=False,
        allow_blank=True,
        allow_null=True,
        help_text=("The board to pin to (required): a board `id` from GET /social-accounts/{id}/pinterest-boards."),
    )
    title = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=5000,
        help_text="The pin's title (at most 100 characters).",
    )
    link = serializers.URLField(required=False, allow_null=True, max_length=2000, help_text="The URL the pin links to.")


class LinkedinConfigInput(_ConnectionConfig):
    documentTitle = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=5000,
        help_text="A DOCUMENT post's title (at most 100 characters).",
    )


class GoogleBusinessConfigInput(_ConnectionConfig):
    topicType = choice(["STANDARD", "EVENT", "OFFER"], required=False, help_text="STANDARD (default), EVENT or OFFER.")
    callToActionType = choice(
        ["BOOK", "ORDER", "SHOP", "LEARN_MORE", "SIGN_UP", "CALL"],
        required=False,
        allow_null=True,
        help_text="The button shown with the post.",
    )
    callToActionUrl = serializers.URLField(
        required=False, allow_null=True, max_length=2000, help_text="Where the button leads (not for CALL)."
    )
    eventTitle = serializers.CharField(
        required=False, allow_blank=True, allow_null=True, max_length=500, help_text="An EVENT or OFFER's title."
    )
    eventStart = InstantField(required=False, allow_null=True, help_text="When the event or offer starts.")
    eventEnd = InstantField(required=False, allow_null=True, help_text="When the event or offer ends.")
    offerCouponCode = serializers.CharField(
        required=False, allow_blank=True, allow_null=True, max_length=500, help_text="An OFFER's coupon code."
    )
    offerRedeemUrl = serializers.URLField(
        required=False, allow_null=True, max_length=2000, help_text="Where an OFFER is redeemed online."
    )
    offerTerms = serializers.CharField(
        required=False, allow_blank=True, allow_null=True, max_length=5000, help_text="An OFFER's terms and conditions."
    )


CONFIG_SERIALIZERS: dict[str, type[serializers.Serializer]] = {
    "INSTAGRAM": InstagramConfigInput,
    "FACEBOOK": FacebookConfigInput,
    "TIKTOK": TiktokConfigInput,
    "YOUTUBE": YoutubeConfigInput,
    "PINTEREST": PinterestConfigInput,
    "LINKEDIN": LinkedinConfigInput,
    "GOOGLE_BUSINESS": GoogleBusinessConfigInput,
}


class PlatformTitleInput(strict.Serializer):
    platform = choice(PLATFORM_VALUES, help_text="The platform whose entry gets this title.")
    title = serializers.CharField(max_length=1000, help_text="Its new title (checked against its title limit).")


class PlatformTextInput(strict.Serializer):
    platform = choice(PLATFORM_VALUES, help_text="The platform whose entry gets this text.")
    text = serializers.CharField(
        allow_blank=True,
        max_length=100_000,
        trim_whitespace=False,
        help_text="The text published on that platform instead of the post's `text`.",
    )


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
    text = serializers.CharField(
        allow_blank=True,
        max_length=100_000,
        trim_whitespace=False,
        help_text="This reply's text (an item needs text or media).",
    )
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
    platform = choice(PLATFORM_VALUES, help_text="The platform whose entries get this comment.")
    text = UntrimmedTextField(
        max_length=100_000,
        error_messages={"blank_text": FIRST_COMMENT_NEEDS_TEXT},
        help_text="The comment under this platform's entry, instead of firstComment.text",
    )


MEDIA_FIT_DESCRIPTION = (
    "`auto` fits the post's images and videos to each target platform (docs/contract.md, Fitting media): a file a "
    "platform would refuse for a reason a fit repairs (aspect ratio, resolution, image format, file size, video "
    "container, codec, frame rate, bit rate) is accepted, and a variant made for that platform is sent instead "
    "of the original, which is never changed. Ratios are padded with black bars to the nearest allowed ratio "
    "(never cropped); a vertical-video post type (Reels, Stories, Shorts, TikTok) gets 9:16. A video too long or "
    "too short is still refused: it is never trimmed. `off` (the default) sends the originals as they are. "
    "`platformMediaFit` sets it per platform."
)


class PlatformMediaFitInput(strict.Serializer):
    platform = choice(PLATFORM_VALUES, help_text="The platform whose entries this applies to.")
    mediaFit = choice(["auto", "off"], help_text="`auto` or `off` for this platform, instead of the post's mediaFit.")


def content_type_field(help_text: str, **kwargs: Any) -> serializers.ChoiceField:
    """A post's ``contentType`` (the create's, and a published post's media edit's)."""
    return choice(ContentType.values, help_text=help_text, **kwargs)


def media_urls_field(help_text: str) -> serializers.ListField:
    """A post's ``mediaUrls`` (the create's, and a published post's media edit's)."""
    return serializers.ListField(
        child=serializers.CharField(max_length=2000), required=False, max_length=35, help_text=help_text
    )


def media_alt_texts_field(help_text: str) -> serializers.ListField:
    """A post's ``mediaAltTexts`` (the create's, and a published post's media edit's)."""
    return serializers.ListField(
        child=serializers.CharField(max_length=1000, allow_blank=True, trim_whitespace=False),
        required=False,
        max_length=35,
        help_text=help_text,
    )


class PostContentInput(strict.Serializer):
    """Fields shared by create, change and bulk items."""

    contentType = content_type_field(
        "What the post is: TEXT (text only), IMAGE or VIDEO (one medium of that kind in "
        "`mediaUrls`), CAROUSEL (2 or more media) or DOCUMENT (LINKEDIN only, exactly one"
        " PDF, PPT, PPTX, DOC or DOCX). GET /platforms lists what each platform accepts."
    )
    text = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100_000,
        trim_whitespace=False,
        help_text=(
            "The post's text (caption), checked against each target platform's length limit "
            "as that platform counts it (GET /platforms); `platformTexts` gives a platform "
            "its own. `#sandbox-fail`, `#sandbox-flaky` and `#sandbox-unauthorized` steer the"
            " simulators in sandbox mode."
        ),
    )
    platformTexts = serializers.ListField(
        child=PlatformTextInput(),
        required=False,
        max_length=12,
        help_text=(
            "Per-platform text overrides: an item's `text` replaces `text` on its platform "
            "(each platform at most once; a platform the post does not target is ignored)."
        ),
    )
    mediaUrls = media_urls_field(
        "The media, in order: `publicUrl`s from POST /upload-urls (each must exist in "
        "storage, else 400 `media_not_found` naming it)."
    )
    mediaAltTexts = media_alt_texts_field(
        'Alternative text per medium, in the order of `mediaUrls` ("" skips one); used where the platform supports it.'
    )
    thumbnailUrl = serializers.URLField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=2000,
        help_text="A video's cover image: a `publicUrl` from POST /upload-urls.",
    )
    thumbnailTimestampMs = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=2**31 - 1,
        help_text="A video's cover taken from its frame at this many milliseconds.",
    )
    scheduledAt = InstantField(
        required=False,
        allow_null=True,
        help_text=(
            "When to publish (ISO 8601, UTC unless an offset is given): a future instant "
            "schedules the post (SCHEDULED); missing, null or past publishes now (PENDING). "
            "Never shifted by `timezone`."
        ),
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # Rules relating two fields (mediaAltTexts to mediaUrls) are checked on the post as it
        # will be (``build_plan``), since a PATCH may send one field of the pair.
        texts = attrs.get("platformTexts") or []
        if len({t["platform"] for t in texts}) != len(texts):
            raise serializers.ValidationError({"platformTexts": "must name each platform once"})
        return attrs


class PostTargetsInput(strict.Serializer):
    """Where a post goes: platforms, connection arrays and config arrays."""

    platforms = serializers.ListField(
        child=choice(PLATFORM_VALUES),
        min_length=1,
        max_length=12,
        help_text=(
            "Where the post goes (targeting): the platforms to publish on, each with its "
            "accounts in that platform's id array (`pageIds` for FACEBOOK, "
            "`<platform>ConnectionIds` for the others, e.g. `mastodonConnectionIds`). A "
            "platform listed here without an account in its array is skipped "
            '(`skippedPlatforms`, reason "No valid connection found"); when nothing is left '
            "to publish the request is a 400 `connection_not_found`."
        ),
    )
    pageIds = _ids(
        help_text=(
            "The FACEBOOK page to publish to: its account `id` (GET /social-accounts) or the page's "
            "`pageId`. Read only when `platforms` lists FACEBOOK; one page per post."
        )
    )
    instagramConnectionIds = _ids(help_text=connection_ids_help("INSTAGRAM"))
    threadsConnectionIds = _ids(help_text=connection_ids_help("THREADS"))
    tiktokConnectionIds = _ids(help_text=connection_ids_help("TIKTOK"))
    twitterConnectionIds = _ids(help_text=connection_ids_help("TWITTER"))
    blueskyConnectionIds = _ids(help_text=connection_ids_help("BLUESKY"))
    linkedinConnectionIds = _ids(help_text=connection_ids_help("LINKEDIN"))
    pinterestConnectionIds = _ids(help_text=connection_ids_help("PINTEREST"))
    youtubeConnectionIds = _ids(help_text=connection_ids_help("YOUTUBE"))
    mastodonConnectionIds = _ids(help_text=connection_ids_help("MASTODON"))
    telegramConnectionIds = _ids(help_text=connection_ids_help("TELEGRAM"))
    googleBusinessConnectionIds = _ids(help_text=connection_ids_help("GOOGLE_BUSINESS"))
    instagramConfigs = _configs(
        InstagramConfigInput,
        help_text=(
            "INSTAGRAM options per account (`connectionId`; without one, the item applies to "
            "the post's INSTAGRAM account)."
        ),
    )
    facebookConfigs = _configs(
        FacebookConfigInput, help_text="FACEBOOK options per page (`pageId`, which must be among `pageIds`)."
    )
    tiktokConfigs = _configs(
        TiktokConfigInput, help_text="TIKTOK options per account; a TIKTOK target needs `privacyLevel`."
    )
    youtubeConfigs = _configs(
        YoutubeConfigInput, help_text="YOUTUBE options per account (title, tags, privacy, Shorts)."
    )
    pinterestConfigs = _configs(
        PinterestConfigInput,
        help_text=(
            "PINTEREST options per account; a PINTEREST target needs `boardId` (GET "
            "/social-accounts/{id}/pinterest-boards)."
        ),
    )
    linkedinConfigs = _configs(
        LinkedinConfigInput, help_text="LINKEDIN options per account (the title of a DOCUMENT post)."
    )
    googleBusinessConfigs = _configs(
        GoogleBusinessConfigInput,
        help_text=("GOOGLE_BUSINESS options per account (the local post's topic, call to action, event or offer)."),
    )


class PostCreateInput(PostContentInput, PostTargetsInput):
    timezone = TimeZoneField(
        help_text=(
            "The post's IANA time zone (Europe/Berlin, UTC): for display and for a series' "
            "occurrences; it never shifts `scheduledAt`. Required on create."
        )
    )
    saveAsDraft = serializers.BooleanField(
        required=False,
        default=False,
        help_text=(
            "true: save a DRAFT and publish nothing (platform validation waits until POST /social-posts/{id}/publish)."
        ),
    )
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
    mediaFit = serializers.ChoiceField(
        choices=["auto", "off"], required=False, allow_null=True, help_text=MEDIA_FIT_DESCRIPTION
    )
    platformMediaFit = serializers.ListField(
        child=PlatformMediaFitInput(),
        required=False,
        allow_null=True,
        max_length=12,
        help_text="Per-platform mediaFit, each platform at most once: overrides the post's mediaFit there (a "
        "platform the post does not target is ignored).",
    )
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
        fits = attrs.get("platformMediaFit") or []
        if len({f["platform"] for f in fits}) != len(fits):
            raise serializers.ValidationError({"platformMediaFit": "must name each platform once"})
        return PostContentInput.validate(self, attrs)


class PostUpdateInput(PostCreateInput):
    """Same fields as create but ``saveAsDraft``, ``recurrence``, ``queue`` and ``thread``; every
    field optional."""

    saveAsDraft = None  # type: ignore[assignment]
    recurrence = None  # type: ignore[assignment]
    queue = None  # type: ignore[assignment]
    thread = None  # type: ignore[assignment]

    title = serializers.CharField(
        required=False,
        max_length=1000,
        help_text="Published posts only: the new title of every entry whose platform's posts have one (a draft's "
        "titles are in its platform configs)",
    )
    platformTitles = serializers.ListField(
        child=PlatformTitleInput(),
        required=False,
        max_length=12,
        help_text="Published posts only: a new title per platform (wins over title)",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.required = False

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        for name in ("title", "platformTitles"):
            if name in attrs:
                raise serializers.ValidationError(
                    {name: "only for a published post (a draft's titles are in its platform configs)"}
                )
        return super().validate(attrs)


class BulkItemInput(PostContentInput):
    """One item of ``posts``: its content, its time, optional per-item config arrays."""

    contentType = choice(
        [c for c in ContentType.values if c != ContentType.DOCUMENT],
        help_text="As the create's `contentType`, but no DOCUMENT.",
    )
    scheduledAt = InstantField(
        help_text=("When this item is published (required for a bulk item); as the create's `scheduledAt`.")
    )
    # Stored as "bulk-item:" + key in a 255-character column: a longer key was a database error.
    idempotencyKey = serializers.CharField(
        required=False,
        max_length=255 - len("bulk-item:"),
        help_text=(
            "A key of this item: a repeat of the batch with the same key answers the first "
            "item's result and creates no second post."
        ),
    )
    instagramConfigs = _configs(
        InstagramConfigInput, help_text="This item's INSTAGRAM options, instead of the batch's."
    )
    facebookConfigs = _configs(FacebookConfigInput, help_text="This item's FACEBOOK options, instead of the batch's.")
    tiktokConfigs = _configs(TiktokConfigInput, help_text="This item's TIKTOK options, instead of the batch's.")
    youtubeConfigs = _configs(YoutubeConfigInput, help_text="This item's YOUTUBE options, instead of the batch's.")
    pinterestConfigs = _configs(
        PinterestConfigInput, help_text="This item's PINTEREST options, instead of the batch's."
    )
    googleBusinessConfigs = _configs(
        GoogleBusinessConfigInput, help_text="This item's GOOGLE_BUSINESS options, instead of the batch's."
    )


@extend_schema_field(BulkItemInput)
class _BulkItemField(serializers.JSONField):
    """An item kept raw here (``posts.services.bulk`` validates it with BulkItemInput and reports
    its errors in its result, with a 201); documented as the BulkItemInput it must be."""


class BulkBatchInput(PostTargetsInput):
    """Batch-level fields (no ``linkedinConfigs``); ``posts`` is kept raw so that each item is
    validated on its own and one bad item never sinks the others."""

    linkedinConfigs = None  # type: ignore[assignment]
    timezone = TimeZoneField(help_text="The IANA time zone of every post of the batch.")
    posts = serializers.ListField(
        child=_BulkItemField(),
        min_length=1,
        max_length=100,
        help_text=(
            "The posts (1 to 100), each a BulkItemInput published on the batch's platforms "
            "and accounts. Each is validated on its own: a bad item is reported in `results` "
            "and never sinks the others."
        ),
    )
