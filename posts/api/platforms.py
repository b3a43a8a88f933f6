"""``GET /platforms``: what each platform accepts, generated from the table validation uses
(``posts.catalogue``)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.query import UNKNOWN_PARAMETER, NoQuery, parse_query
from platforms.base import Platform
from platforms.capabilities import METRICS
from platforms.media_rules import PostType, rules_of
from posts.catalogue import media_rules_entry, platform_catalogue
from posts.models import ContentType
from posts.payloads import PLATFORM_VALUES, choice
from workspaces.permissions import ANY_VALID_KEY

COUNTING_HELP = (
    "How `limit` is counted: `chars` (Unicode code points), `x_weighted` (X's weighted count: most "
    "non-Latin characters and emoji count 2, any URL counts 23), `graphemes` (user-perceived characters)."
)


class PlatformTextLimitsOutput(serializers.Serializer):
    limit = serializers.IntegerField(help_text="Longest text accepted, counted as `counting` says")
    counting = choice(["chars", "x_weighted", "graphemes"], help_text=COUNTING_HELP)
    limitWithMedia = serializers.IntegerField(allow_null=True, help_text="The limit when the post carries media")
    byteLimit = serializers.IntegerField(allow_null=True, help_text="UTF-8 bytes, where the platform caps those too")


class PlatformMediaKindOutput(serializers.Serializer):
    kind = choice(["image", "video", "document"], help_text="image, video or document.")
    maxCount = serializers.IntegerField(help_text="Most items of this kind in one post")
    mimeTypes = serializers.ListField(child=serializers.CharField(), help_text="Upload types of this kind")
    maxFileBytes = serializers.IntegerField(
        help_text="Largest file of this kind the platform takes (or this service's upload limit where that is "
        "smaller); create and `/social-posts/validate` refuse a larger one"
    )
    maxDurationSeconds = serializers.IntegerField(
        allow_null=True,
        help_text="Videos: the longest the platform takes, as it documents it (null where it documents none, and "
        "for other kinds). Create and `/social-posts/validate` refuse a longer video (`media_duration`) once the "
        "upload has been probed (`GET /media-files`), seconds after it is stored",
    )


class PlatformAspectRatioOutput(serializers.Serializer):
    min = serializers.CharField(allow_null=True, help_text="The widest-to-tallest lower bound, as width:height (4:5)")
    max = serializers.CharField(allow_null=True, help_text="The upper bound, as width:height (1.91:1)")
    minValue = serializers.FloatField(allow_null=True, help_text="`min` as width / height")
    maxValue = serializers.FloatField(allow_null=True, help_text="`max` as width / height")
    tolerance = serializers.FloatField(
        help_text="Relative slack allowed around the bounds (for a platform that names one ratio, such as 9:16)"
    )


class PlatformPictureRulesOutput(serializers.Serializer):
    maxFileBytes = serializers.IntegerField(allow_null=True, help_text="Largest file the platform documents taking")
    minFileBytes = serializers.IntegerField(allow_null=True, help_text="Smallest file it takes, where it says")
    minWidth = serializers.IntegerField(allow_null=True, help_text="Fewest pixels across (as displayed)")
    minHeight = serializers.IntegerField(allow_null=True, help_text="Fewest pixels down (as displayed)")
    maxWidth = serializers.IntegerField(allow_null=True, help_text="Most pixels across (as displayed)")
    maxHeight = serializers.IntegerField(allow_null=True, help_text="Most pixels down (as displayed)")
    eitherOrientation = serializers.BooleanField(
        help_text="The width bounds apply to the longer side and the height bounds to the shorter"
    )
    maxPixels = serializers.IntegerField(allow_null=True, help_text="Most pixels in all (width x height)")
    maxWidthPlusHeight = serializers.IntegerField(allow_null=True, help_text="Largest width + height")
    aspectRatio = PlatformAspectRatioOutput(allow_null=True, help_text="The ratios taken (null: any)")


class PlatformImageRulesOutput(PlatformPictureRulesOutput):
    formats = serializers.ListField(
        child=serializers.CharField(),
        allow_null=True,
        help_text="Image formats taken, as the probe names them (JPEG, PNG, WEBP, GIF, HEIF); null: any",
    )
    animated = serializers.BooleanField(help_text="An animated image (GIF, WebP) is taken")
    maxAnimatedFileBytes = serializers.IntegerField(
        allow_null=True, help_text="Largest animated image, where the platform caps those apart"
    )


class PlatformVideoRulesOutput(PlatformPictureRulesOutput):
    containers = serializers.ListField(
        child=serializers.CharField(), allow_null=True, help_text="Containers taken (mp4, quicktime); null: any"
    )
    videoCodecs = serializers.ListField(
        child=serializers.CharField(), allow_null=True, help_text="Video codecs taken (h264, hevc, ...); null: any"
    )
    audioCodecs = serializers.ListField(
        child=serializers.CharField(), allow_null=True, help_text="Sound codecs taken (aac); null: any"
    )
    minDurationSeconds = serializers.FloatField(allow_null=True, help_text="Shortest video taken")
    maxDurationSeconds = serializers.FloatField(allow_null=True, help_text="Longest video taken")
    minFrameRate = serializers.FloatField(allow_null=True, help_text="Fewest frames per second")
    maxFrameRate = serializers.FloatField(allow_null=True, help_text="Most frames per second")
    maxBitRate = serializers.IntegerField(
        allow_null=True, help_text="Highest bit rate in bits per second, compared with the file's overall bit rate"
    )


class PlatformDocumentRulesOutput(serializers.Serializer):
    maxFileBytes = serializers.IntegerField(allow_null=True, help_text="Largest document the platform takes")


# ``required``, ``type``, ``fields`` and ``source`` are names of Serializer attributes too: these
# shapes are declared with type() (as core.records does) so that the keys can be what the body says.
PlatformMediaRulesOutput = type(
    "PlatformMediaRulesOutput",
    (serializers.Serializer,),
    {
        "postType": choice(
            [t.value for t in PostType],
            help_text="FEED, REEL, STORY, SHORT, CAROUSEL_ITEM (each item of a multi-item post) or DOCUMENT",
        ),
        "selectedBy": serializers.CharField(help_text="Which posts publish as this type (config option and media)"),
        "source": serializers.CharField(help_text="The platform documentation the numbers come from"),
        "note": serializers.CharField(allow_null=True, help_text="What the platform leaves open or only recommends"),
        "image": PlatformImageRulesOutput(allow_null=True, help_text="Rules for images; null: no images of this type"),
        "video": PlatformVideoRulesOutput(allow_null=True, help_text="Rules for videos; null: no videos of this type"),
        "document": PlatformDocumentRulesOutput(allow_null=True, help_text="Rules for documents; null: none taken"),
    },
)
PlatformMediaOutput = type(
    "PlatformMediaOutput",
    (serializers.Serializer,),
    {
        "required": serializers.BooleanField(help_text="A post needs at least one media item"),
        "maxItems": serializers.IntegerField(help_text="Most media items in one post"),
        "mixedImagesAndVideos": serializers.BooleanField(help_text="Images and videos may be mixed in one post."),
        "minImagesWithoutVideo": serializers.IntegerField(allow_null=True, help_text="Fewest images in a photo post"),
        "kinds": PlatformMediaKindOutput(many=True, help_text="The media kinds accepted; a kind not listed is refused"),
        "rules": PlatformMediaRulesOutput(
            many=True,
            help_text="What each post type takes of a file, with its source; create and `/social-posts/validate` "
            "refuse a file that breaks one, naming the rule (`media_format`, `media_aspect_ratio`, ...)",
        ),
    },
)


PlatformConfigFieldOutput = type(
    "PlatformConfigFieldOutput",
    (serializers.Serializer,),
    {
        "name": serializers.CharField(help_text="The config object's key."),
        "type": choice(["string", "integer", "number", "boolean", "array"], help_text="The JSON type accepted"),
        "required": serializers.BooleanField(help_text="Must be present in each config object"),
        "allowsNull": serializers.BooleanField(help_text="null is accepted"),
        "enum": serializers.ListField(child=serializers.CharField(), allow_null=True, help_text="The values accepted"),
        "maxLength": serializers.IntegerField(allow_null=True, help_text="Longest text accepted, if limited."),
    },
)
PlatformConfigOutput = type(
    "PlatformConfigOutput",
    (serializers.Serializer,),
    {
        "field": serializers.CharField(help_text="The create payload's array of this platform's configs"),
        "fields": PlatformConfigFieldOutput(many=True, help_text="The keys a config object of this platform accepts."),
    },
)


class PlatformAnalyticsOutput(serializers.Serializer):
    metrics = serializers.ListField(child=choice(list(METRICS)), help_text="Per-post figures the platform reports")
    followers = serializers.BooleanField(help_text="Follower counts are reported")


class PlatformThreadOutput(serializers.Serializer):
    supported = serializers.BooleanField(help_text="A post may carry a `thread` (replies after it)")
    maxItems = serializers.IntegerField(allow_null=True, help_text="Most `thread` items; null where unsupported")


class PlatformFirstCommentOutput(serializers.Serializer):
    supported = serializers.BooleanField(help_text="A post may carry a `firstComment` (the platform has a comment API)")
    textLimit = serializers.IntegerField(
        allow_null=True, help_text="Longest comment accepted, counted as `text.counting` says; null where unsupported"
    )


class PlatformMediaEditOutput(serializers.Serializer):
    addsMedia = serializers.BooleanField(help_text="Media can be added to a post that went out as text only")
    removesMedia = serializers.BooleanField(help_text="Every medium can be removed, leaving the text only")
    maxItems = serializers.IntegerField(
        allow_null=True,
        help_text="The most media items the post may have before and after the edit (null: as publishing allows)",
    )


class PlatformAfterPublishingOutput(serializers.Serializer):
    editFields = serializers.ListField(
        child=choice(["media", "text", "title"]),
        help_text="What PATCH of a published post can change on this platform (empty: its API edits nothing; the "
        "entry is answered SKIPPED with the reason)",
    )
    deletable = serializers.BooleanField(
        help_text="POST /social-posts/{id}/unpublish removes the post from this platform (false: SKIPPED, remove "
        "it in the platform's app)"
    )
    mediaEdit = PlatformMediaEditOutput(
        allow_null=True,
        help_text="Platforms whose editFields hold media: which media changes it makes in place (others are "
        "SKIPPED with the reason); null elsewhere",
    )


class PlatformCommentsOutput(serializers.Serializer):
    actions = serializers.ListField(
        child=choice(["read", "reply", "hide", "delete_own", "delete_others", "like"]),
        help_text="What the inbox does with comments here (empty: no comment API, nothing is synced): read (synced "
        "into GET /comments), reply, hide (and unhide), delete_own (the account's own replies), delete_others "
        "(another person's comment), like",
    )
    textLimit = serializers.IntegerField(
        allow_null=True,
        help_text="Longest reply accepted (POST /comments/{id}/replies), counted as `text.counting` says; null "
        "where replies are not offered or the platform documents no limit",
    )
    readsPerHour = serializers.IntegerField(
        allow_null=True,
        help_text="Comment reads a sync may spend per account and hour (its share of the platform's rate limit); "
        "null where comments are not read",
    )


class PlatformOutput(serializers.Serializer):
    platform = choice(PLATFORM_VALUES, help_text="The platform.")
    contentTypes = serializers.ListField(child=choice(ContentType.values), help_text="The `contentType`s it publishes.")
    text = PlatformTextLimitsOutput(help_text="Its text limit and how it counts characters.")
    titleLimit = serializers.IntegerField(allow_null=True, help_text="Title limit, for platforms whose posts have one")
    media = PlatformMediaOutput(help_text="What media it accepts.")
    config = PlatformConfigOutput(allow_null=True, help_text="null for a platform without a config array")
    analytics = PlatformAnalyticsOutput(help_text="The figures it reports.")
    thread = PlatformThreadOutput(help_text="Whether it publishes threads.")
    firstComment = PlatformFirstCommentOutput(help_text="Whether it posts a first comment, and its comment limit.")
    afterPublishing = PlatformAfterPublishingOutput(help_text="What can be edited or deleted once it is published.")
    comments = PlatformCommentsOutput(help_text="What the inbox can do with the comments on this platform.")


class PlatformListOutput(serializers.Serializer):
    platforms = PlatformOutput(many=True, help_text="One entry per platform, all twelve.")


_EXAMPLE: dict[str, Any] = {
    "platforms": [
        {
            "platform": "BLUESKY",
            "contentTypes": ["TEXT", "IMAGE", "VIDEO", "CAROUSEL"],
            "text": {"limit": 300, "counting": "graphemes", "limitWithMedia": None, "byteLimit": 3000},
            "titleLimit": None,
            "media": {
                "required": False,
                "maxItems": 4,
                "mixedImagesAndVideos": False,
                "minImagesWithoutVideo": None,
                "kinds": [
                    {
                        "kind": "image",
                        "maxCount": 4,
                        "mimeTypes": ["image/jpeg", "image/png", "image/webp"],
                        "maxFileBytes": 1000000,
                        "maxDurationSeconds": None,
                    },
                    {
                        "kind": "video",
                        "maxCount": 1,
                        "mimeTypes": ["video/mp4", "video/quicktime"],
                        "maxFileBytes": 100000000,
                        "maxDurationSeconds": 180,
                    },
                ],
                "rules": [media_rules_entry(rules) for rules in rules_of(Platform.BLUESKY)],
            },
            "config": None,
            "analytics": {"metrics": ["likes", "comments", "shares"], "followers": True},
            "thread": {"supported": True, "maxItems": 24},
            "firstComment": {"supported": True, "textLimit": 300},
            "afterPublishing": {"editFields": [], "deletable": True, "mediaEdit": None},
            "comments": {
                "actions": ["read", "reply", "hide", "delete_own", "like"],
                "textLimit": 300,
                "readsPerHour": 300,
            },
        }
    ]
}


class PlatformListView(APIView):
    required_permissions = {"get": ANY_VALID_KEY}
    schema_tags = ["Platforms"]

    @extend_schema(
        operation_id="listPlatforms",
        summary="What each platform accepts",
        description=(
            "One entry per platform: content types, text limits and how they are counted, media kinds, counts "
            "and upload types, title limit, the per-platform config array and its fields, and the analytics "
            "metrics. Generated from the table create and `/social-posts/validate` check against, so a text of "
            "`text.limit` characters (counted as `text.counting` says) passes and one more fails. Each "
            "media kind carries the platform's file size limit (`maxFileBytes`) and, for videos, its longest "
            "duration (`maxDurationSeconds`) for one such file posted with no options. `media.rules` holds what "
            "each post type (FEED, REEL, STORY, SHORT, CAROUSEL_ITEM, DOCUMENT) takes of a file: formats, size, "
            "sides, aspect ratio, and for videos containers, codecs, duration, frame rate and bit rate, each entry "
            "with the platform documentation it comes from (`source`) and which posts publish as that type "
            "(`selectedBy`). Create, PATCH and `/social-posts/validate` refuse a file that breaks one of its "
            "target's rules, naming the platform, the file and the rule (`media_format`, `media_file_size`, "
            "`media_aspect_ratio`, `media_resolution`, `media_duration`, `media_frame_rate`, `media_bitrate`, "
            "`media_codec`); what is measured of a file is checked once its upload has been probed (`GET "
            "/media-files`, seconds after it is stored), and a file the probe could not read is refused "
            "(`media_unusable`) with its reason. `afterPublishing` says what a "
            "PATCH of a published post can change there and whether `POST /social-posts/{id}/unpublish` deletes "
            "its copy. `comments` says what the inbox does with the comments there (`actions` empty: the platform "
            "has no comment API, so its posts' comments are not synced)."
        ),
        responses={200: PlatformListOutput, 400: UNKNOWN_PARAMETER},
        examples=[OpenApiExample("Bluesky (one entry shown)", value=_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request) -> Response:
        parse_query(request.query_params, NoQuery)
        return Response({"platforms": platform_catalogue()})
