from __future__ import annotations

from typing import Any

import pytest

from core.fields import format_instant
from posts.models import Post, PostStatus, PostTarget, TargetStatus
from posts.rendering import post_record
from tests.factories.posts import account, uploaded
from tests.posts.conftest import events, future, iso

URL = "/api/v1/social-posts"


def body(**extra: Any) -> dict[str, Any]:
    return {"contentType": "TEXT", "timezone": "Europe/Paris", "text": "Hello world", **extra}


@pytest.fixture
def masto(workspace: Any) -> Any:
    return account(workspace, "MASTODON", display_name="Masto")


def test_create_now_queues_targets_after_commit(
    api: Any, workspace: Any, masto: Any, enqueued: list, commit: Any
) -> None:
    bsky = account(workspace, "BLUESKY", display_name="Sky")
    response = commit(
        lambda: api.post(
            URL,
            body(
                platforms=["MASTODON", "BLUESKY"],
                mastodonConnectionIds=[masto.id],
                blueskyConnectionIds=[bsky.id],
                platformTexts=[{"platform": "BLUESKY", "text": "Hi sky"}],
            ),
            format="json",
        )
    )
    assert response.status_code == 201, response.json()
    post = Post.objects.get()
    assert response.json() == {
        "postId": post.id,
        "status": "PENDING",
        "queuedPlatforms": ["MASTODON", "BLUESKY"],
        "skippedPlatforms": [],
        "isScheduled": False,
        "scheduledAt": None,
    }
    targets = {t.platform: t for t in post.targets.all()}
    assert targets["BLUESKY"].text == "Hi sky" and targets["MASTODON"].text == "Hello world"
    assert {t.status for t in targets.values()} == {TargetStatus.PENDING}
    assert sorted(enqueued) == sorted(t.id for t in targets.values())


def test_enqueue_waits_for_commit(
    api: Any, masto: Any, enqueued: list, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = api.post(URL, body(platforms=["MASTODON"], mastodonConnectionIds=[masto.id]), format="json")
    assert response.status_code == 201
    assert enqueued == [] and len(callbacks) == 1
    callbacks[0]()
    assert enqueued == [PostTarget.objects.get().id]


def test_create_scheduled_emits_post_scheduled(
    api: Any, workspace: Any, masto: Any, enqueued: list, commit: Any
) -> None:
    when = future()
    response = commit(
        lambda: api.post(
            URL, body(platforms=["MASTODON"], mastodonConnectionIds=[masto.id], scheduledAt=iso(when)), format="json"
        )
    )
    assert response.status_code == 201
    post = Post.objects.get()
    assert response.json() == {
        "postId": post.id,
        "status": "SCHEDULED",
        "queuedPlatforms": [],  # queued at its time, not now
        "skippedPlatforms": [],
        "isScheduled": True,
        "scheduledAt": iso(when),
    }
    assert enqueued == []
    [event] = events(workspace.id, "post.scheduled")
    assert event["data"] == {"post": post_record(post)}


def test_create_draft_and_dated_draft(api: Any, workspace: Any, masto: Any, enqueued: list) -> None:
    response = api.post(
        URL, body(platforms=["MASTODON"], mastodonConnectionIds=[masto.id], saveAsDraft=True), format="json"
    )
    assert response.status_code == 201
    assert response.json() == {
        "postId": response.json()["postId"],
        "status": "DRAFT",
        "queuedPlatforms": [],
        "skippedPlatforms": [],
        "isScheduled": False,
        "scheduledAt": None,
    }
    when = future(90)
    response = api.post(
        URL,
        body(platforms=["MASTODON"], mastodonConnectionIds=[masto.id], saveAsDraft=True, scheduledAt=iso(when)),
        format="json",
    )
    assert response.status_code == 201
    assert response.json() == {
        "postId": response.json()["postId"],
        "status": "DRAFT",
        "queuedPlatforms": [],
        "skippedPlatforms": [],
        "isScheduled": False,
        "scheduledAt": iso(when),
    }
    dated = Post.objects.get(id=response.json()["postId"])
    assert dated.scheduled_at == when
    # the dated draft keeps its time on read, and the dispatcher leaves it alone when it falls due
    assert api.get(f"{URL}/{dated.id}").json()["scheduledAt"] == iso(when)
    from posts.pipeline.dispatcher import dispatch_due

    Post.objects.filter(id=dated.id).update(scheduled_at=future(-1))
    assert dispatch_due() == 0 and Post.objects.get(id=dated.id).status == "DRAFT"
    assert enqueued == [] and events(workspace.id, "post.scheduled") == []


def test_record_shape(api: Any, workspace: Any, enqueued: list) -> None:
    tiktok = account(workspace, "TIKTOK", display_name="Tok")
    video = uploaded(workspace, "video")
    response = api.post(
        URL,
        body(
            contentType="VIDEO",
            platforms=["TIKTOK"],
            tiktokConnectionIds=[tiktok.id],
            mediaUrls=[video],
            mediaAltTexts=["a clip"],
            tiktokConfigs=[{"connectionId": tiktok.id, "privacyLevel": "SELF_ONLY", "title": "T", "allowDuet": False}],
            scheduledAt=iso(future()),
        ),
        format="json",
    )
    assert response.status_code == 201, response.json()
    post = Post.objects.get()
    target = post.targets.get()
    record = api.get(f"{URL}/{post.id}").json()
    assert record == {
        "id": post.id,
        "userId": None,  # the key was made without a member
        "status": "SCHEDULED",
        "contentType": "VIDEO",
        "text": "Hello world",
        "timezone": "Europe/Paris",
        "scheduledAt": response.json()["scheduledAt"],
        "mediaUrls": [video],
        "mediaAltTexts": ["a clip"],
        "previewUrls": [],  # no still frame made yet: left out, never null
        "thumbnailUrl": None,
        "recurringPostId": None,
        "occurrenceAt": None,
        "createdAt": record["createdAt"],
        "updatedAt": record["updatedAt"],
        "platforms": [
            {
                "id": target.id,
                "platformId": target.id,
                "platform": "TIKTOK",
                "status": "PENDING",
                "connectionId": tiktok.id,
                "pageId": None,
                "accountName": "Tok",
                "text": None,  # no override: the post's text
                "platformPostId": None,
                "postUrl": None,
                "errorMessage": None,
                "errorCode": None,
                "publishedAt": None,
                "tiktokDraftFallback": False,
                "createdAt": format_instant(target.created_at),
                "updatedAt": format_instant(target.updated_at),
                "tiktokPrivacyLevel": "SELF_ONLY",
                "tiktokTitle": "T",
                "tiktokCaption": None,
                "tiktokAllowComments": None,
                "tiktokAllowDuet": False,
                "tiktokAllowStitch": None,
                "tiktokSendAsDraft": None,
                "tiktokAiGenerated": None,
                "tiktokBrandedContent": None,
                "tiktokBrandedContentOwnBrand": None,
                "tiktokBrandedOwnBrand": None,
                "tiktokAutoAddMusic": None,
                "mediaUrls": [video],
                "previewUrls": [],
                "mediaAltTexts": ["a clip"],
            }
        ],
    }
    assert target.config == {"privacyLevel": "SELF_ONLY", "title": "T", "allowDuet": False}


def test_youtube_tags_always_a_list_and_facebook_page_id(api: Any, workspace: Any, enqueued: list) -> None:
    yt = account(workspace, "YOUTUBE")
    fb = account(workspace, "FACEBOOK", page_id="pg-77", display_name="Page")
    video = uploaded(workspace, "video")
    response = api.post(
        URL,
        body(
            contentType="VIDEO",
            platforms=["YOUTUBE", "FACEBOOK"],
            youtubeConnectionIds=[yt.id],
            pageIds=["pg-77"],
            facebookConfigs=[{"pageId": "pg-77", "postType": "REEL", "videoTitle": "Vid"}],
            mediaUrls=[video],
            scheduledAt=iso(future()),
        ),
        format="json",
    )
    assert response.status_code == 201, response.json()
    entries = {e["platform"]: e for e in api.get(f"{URL}/{response.json()['postId']}").json()["platforms"]}
    assert entries["YOUTUBE"]["youtubeTags"] == [] and entries["YOUTUBE"]["youtubeVideoTitle"] is None
    assert entries["FACEBOOK"]["pageId"] == "pg-77" and entries["FACEBOOK"]["connectionId"] == fb.id
    assert entries["FACEBOOK"]["facebookPostType"] == "REEL" and entries["FACEBOOK"]["facebookVideoTitle"] == "Vid"


def test_skipped_platforms_and_connection_not_found(
    api: Any, workspace: Any, other_workspace: Any, masto: Any, enqueued: list
) -> None:
    foreign = account(other_workspace, "BLUESKY")
    wrong_platform = account(workspace, "THREADS")
    response = api.post(
        URL,
        body(
            platforms=["MASTODON", "BLUESKY", "TWITTER", "TELEGRAM"],
            mastodonConnectionIds=[masto.id],
            blueskyConnectionIds=[foreign.id],
            twitterConnectionIds=[wrong_platform.id],
        ),
        format="json",
    )
    assert response.status_code == 201
    assert response.json()["queuedPlatforms"] == ["MASTODON"]
    assert response.json()["skippedPlatforms"] == [
        {"platform": "BLUESKY", "reason": "No valid connection found"},
        {"platform": "TWITTER", "reason": "No valid connection found"},
        {"platform": "TELEGRAM", "reason": "No valid connection found"},
    ]
    response = api.post(URL, body(platforms=["BLUESKY"], blueskyConnectionIds=[foreign.id]), format="json")
    assert response.status_code == 400
    assert response.json() == {
        "statusCode": 400,
        "error": "Bad Request",
        "message": ["platforms: no valid connection found for any requested platform"],
        "code": "connection_not_found",
    }
    assert Post.objects.count() == 1


def test_unauthorized_account_refused(api: Any, workspace: Any, enqueued: list) -> None:
    masto = account(workspace, "MASTODON", status="unauthorized")
    response = api.post(URL, body(platforms=["MASTODON"], mastodonConnectionIds=[masto.id]), format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "account_unauthorized"
    assert masto.id in response.json()["message"][0]
    # a draft postpones that check to publish
    response = api.post(
        URL, body(platforms=["MASTODON"], mastodonConnectionIds=[masto.id], saveAsDraft=True), format="json"
    )
    assert response.status_code == 201


def test_media_not_found(api: Any, workspace: Any, other_workspace: Any, enqueued: list) -> None:
    masto = account(workspace, "MASTODON")
    foreign = uploaded(other_workspace, "image")
    response = api.post(
        URL,
        body(contentType="IMAGE", platforms=["MASTODON"], mastodonConnectionIds=[masto.id], mediaUrls=[foreign]),
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["code"] == "media_not_found"
    assert foreign in response.json()["message"][0]
    assert Post.objects.count() == 0


@pytest.mark.parametrize(
    ("platform", "content_type", "kinds", "config", "message"),
    [
        ("TIKTOK", "VIDEO", ["video"], {}, "Privacy level is required for TikTok posts"),
        ("PINTEREST", "IMAGE", ["image"], {}, "pinterestConfigs.boardId: boardId is required for PINTEREST posts"),
        ("MASTODON", "DOCUMENT", ["document"], None, "contentType: DOCUMENT posts go to LINKEDIN only, not MASTODON"),
        ("LINKEDIN", "DOCUMENT", ["document", "document"], None, "mediaUrls: DOCUMENT posts take exactly one document"),
        ("MASTODON", "CAROUSEL", ["image"], None, "mediaUrls: CAROUSEL posts need at least 2 media items"),
        ("MASTODON", "IMAGE", [], None, "mediaUrls: IMAGE posts need media"),
        ("MASTODON", "VIDEO", ["image"], None, "mediaUrls: every media item of a VIDEO post must be a video"),
        ("INSTAGRAM", "IMAGE", ["image"], {"postType": "REEL"}, "instagramConfigs.postType: REEL needs a VIDEO post"),
        (
            "INSTAGRAM",
            "CAROUSEL",
            ["image", "image"],
            {"postType": "STORY"},
            "instagramConfigs.postType: STORY needs an IMAGE or VIDEO post",
        ),
        (
            "INSTAGRAM",
            "IMAGE",
            ["image"],
            {"trialGraduation": "MANUAL"},
            "instagramConfigs.trialGraduation: only for a single video posted as REEL or FEED",
        ),
        ("YOUTUBE", "IMAGE", ["image"], None, "YOUTUBE does not accept IMAGE posts"),
        (
            "GOOGLE_BUSINESS",
            "TEXT",
            [],
            {"topicType": "EVENT", "eventTitle": "Fair"},
            "googleBusinessConfigs.eventStart: required for EVENT posts",
        ),
        (
            "GOOGLE_BUSINESS",
            "TEXT",
            [],
            {"callToActionType": "BOOK"},
            "googleBusinessConfigs.callToActionUrl: required with callToActionType BOOK",
        ),
    ],
)
def test_platform_rules(
    api: Any, workspace: Any, enqueued: list, platform: str, content_type: str, kinds: list, config: Any, message: str
) -> None:
    from posts.payloads import CONFIG_FIELDS, CONNECTION_FIELDS

    target = account(workspace, platform)
    payload = body(contentType=content_type, platforms=[platform], mediaUrls=[uploaded(workspace, k) for k in kinds])
    payload[CONNECTION_FIELDS[platform]] = [target.page_id if platform == "FACEBOOK" else target.id]
    if config is not None:
        payload[CONFIG_FIELDS[platform]] = [{"connectionId": target.id, **config}] if config else []
    response = api.post(URL, payload, format="json")
    assert response.status_code == 400, response.json()
    assert message in response.json()["message"], response.json()
    assert response.json()["code"] == "validation_error"
    # the same payload as a draft is accepted: platform rules wait for publish
    response = api.post(URL, {**payload, "saveAsDraft": True}, format="json")
    assert response.status_code == 201, response.json()


def test_text_limit_uses_capabilities(api: Any, workspace: Any, enqueued: list) -> None:
    bsky = account(workspace, "BLUESKY")
    response = api.post(URL, body(text="x" * 301, platforms=["BLUESKY"], blueskyConnectionIds=[bsky.id]), format="json")
    assert response.status_code == 400
    assert response.json()["message"] == ["BLUESKY text is 301 characters; the limit is 300"]


@pytest.mark.parametrize(
    ("role", "extra", "permission"),
    [
        ("viewer", {"saveAsDraft": True}, "posts.draft"),
        ("contributor", {"scheduledAt": "2999-01-01T00:00:00Z"}, "posts.schedule"),
        ("contributor", {}, "posts.publish"),
    ],
)
def test_permissions(client_for: Any, workspace: Any, masto: Any, role: str, extra: dict, permission: str) -> None:
    response = client_for(role).post(
        URL, body(platforms=["MASTODON"], mastodonConnectionIds=[masto.id], **extra), format="json"
    )
    assert response.status_code == 403
    assert response.json() == {
        "statusCode": 403,
        "error": "Forbidden",
        "message": f"This operation requires the {permission} permission",
        "code": "permission_denied",
        "requiredPermission": permission,
        "role": role,
        "tokenType": "api_token",
    }
    assert Post.objects.count() == 0


def test_contributor_may_draft(client_for: Any, masto: Any) -> None:
    response = client_for("contributor").post(
        URL, body(platforms=["MASTODON"], mastodonConnectionIds=[masto.id], saveAsDraft=True), format="json"
    )
    assert response.status_code == 201 and response.json()["status"] == PostStatus.DRAFT


def test_anonymous(anon: Any) -> None:
    response = anon.post(URL, body(platforms=["MASTODON"]), format="json")
    assert response.status_code == 401


def test_idempotent_replay(api: Any, masto: Any, enqueued: list, commit: Any) -> None:
    payload = body(platforms=["MASTODON"], mastodonConnectionIds=[masto.id])
    first = commit(lambda: api.post(URL, payload, format="json", HTTP_IDEMPOTENCY_KEY="k-1"))
    second = commit(lambda: api.post(URL, payload, format="json", HTTP_IDEMPOTENCY_KEY="k-1"))
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json() and second["Idempotent-Replayed"] == "true"
    assert Post.objects.count() == 1 and len(enqueued) == 1
    reused = api.post(URL, {**payload, "text": "other"}, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert reused.status_code == 422


GARBAGE = [None, 1, 1.5, True, "x", [], {}, [1], {"a": 1}, [None], "2026-13-45"]


@pytest.mark.parametrize(
    "field",
    [
        "platforms",
        "contentType",
        "timezone",
        "text",
        "platformTexts",
        "mediaUrls",
        "mediaAltTexts",
        "thumbnailUrl",
        "thumbnailTimestampMs",
        "scheduledAt",
        "saveAsDraft",
        "recurrence",
        "pageIds",
        "mastodonConnectionIds",
        "instagramConfigs",
        "facebookConfigs",
        "tiktokConfigs",
        "youtubeConfigs",
        "pinterestConfigs",
        "linkedinConfigs",
        "googleBusinessConfigs",
        "firstComment",
        "platformFirstComments",
    ],
)
def test_garbage_never_500(api: Any, masto: Any, enqueued: list, field: str) -> None:
    for value in GARBAGE:
        payload = body(platforms=["MASTODON"], mastodonConnectionIds=[masto.id], saveAsDraft=True)
        payload[field] = value
        response = api.post(URL, payload, format="json")
        assert response.status_code in (201, 400), (field, value, response.content)
    for raw in ([], "x", 1, None):
        assert api.post(URL, raw, format="json").status_code == 400


def test_nested_garbage_in_configs(api: Any, workspace: Any, enqueued: list) -> None:
    tiktok = account(workspace, "TIKTOK")
    for config in ({"privacyLevel": 5}, {"title": []}, {"allowDuet": "maybe"}, {"connectionId": {}}, 7, [1]):
        response = api.post(
            URL,
            body(contentType="VIDEO", platforms=["TIKTOK"], tiktokConnectionIds=[tiktok.id], tiktokConfigs=[config]),
            format="json",
        )
        assert response.status_code == 400, (config, response.content)


# Each platform: its connection array, a content its rules accept, its config array with every
# field set, and the entry fields the record must show for them (written out, not derived).
EVENT_START, EVENT_END = "2031-05-01T09:00:00.000Z", "2031-05-01T18:00:00.000Z"
PLATFORM_CASES: dict[str, tuple[str, str, list[str], dict[str, Any] | None, dict[str, Any]]] = {
    "FACEBOOK": (
        "pageIds",
        "VIDEO",
        ["video"],
        {"postType": "REEL", "videoTitle": "FB title"},
        {"facebookPostType": "REEL", "facebookVideoTitle": "FB title"},
    ),
    "INSTAGRAM": (
        "instagramConnectionIds",
        "VIDEO",
        ["video"],
        {"postType": "REEL", "trialGraduation": "SS_PERFORMANCE", "audio": "aud-42"},
        {"instagramPostType": "REEL", "instagramTrialGraduation": "SS_PERFORMANCE", "instagramAudio": "aud-42"},
    ),
    "THREADS": ("threadsConnectionIds", "TEXT", [], None, {}),
    "TIKTOK": (
        "tiktokConnectionIds",
        "VIDEO",
        ["video"],
        {
            "privacyLevel": "MUTUAL_FOLLOW_FRIENDS",
            "title": "Tok title",
            "caption": "Tok caption",
            "allowComments": True,
            "allowDuet": False,
            "allowStitch": True,
            "sendAsDraft": False,
            "aiGenerated": True,
            "brandedContent": True,
            "brandedContentOwnBrand": False,
            "autoAddMusic": True,
        },
        {
            "tiktokPrivacyLevel": "MUTUAL_FOLLOW_FRIENDS",
            "tiktokTitle": "Tok title",
            "tiktokCaption": "Tok caption",
            "tiktokAllowComments": True,
            "tiktokAllowDuet": False,
            "tiktokAllowStitch": True,
            "tiktokSendAsDraft": False,
            "tiktokAiGenerated": True,
            "tiktokBrandedContent": True,
            "tiktokBrandedContentOwnBrand": False,
            "tiktokBrandedOwnBrand": False,
            "tiktokAutoAddMusic": True,
        },
    ),
    "TWITTER": ("twitterConnectionIds", "TEXT", [], None, {}),
    "BLUESKY": ("blueskyConnectionIds", "TEXT", [], None, {}),
    "LINKEDIN": (
        "linkedinConnectionIds",
        "DOCUMENT",
        ["document"],
        {"documentTitle": "Deck"},
        {"linkedinDocumentTitle": "Deck"},
    ),
    "PINTEREST": (
        "pinterestConnectionIds",
        "IMAGE",
        ["image"],
        {"boardId": "board-9", "title": "Pin title", "link": "https://example.com/pin"},
        {"pinterestBoardId": "board-9", "pinterestTitle": "Pin title", "pinterestLink": "https://example.com/pin"},
    ),
    "YOUTUBE": (
        "youtubeConnectionIds",
        "VIDEO",
        ["video"],
        {
            "postType": "SHORTS",
            "videoTitle": "Yt title",
            "tags": ["a", "b"],
            "privacyStatus": "unlisted",
            "license": "creativeCommon",
            "notifySubscribers": False,
            "allowEmbedding": True,
            "madeForKids": False,
            "categoryId": "22",
            "playlistId": "PL1",
        },
        {
            "youtubePostType": "SHORTS",
            "youtubeVideoTitle": "Yt title",
            "youtubeTags": ["a", "b"],
            "youtubePrivacyStatus": "unlisted",
            "youtubeLicense": "creativeCommon",
            "youtubeNotifySubscribers": False,
            "youtubeAllowEmbedding": True,
            "youtubeMadeForKids": False,
            "youtubeCategoryId": "22",
            "youtubePlaylistId": "PL1",
        },
    ),
    "MASTODON": ("mastodonConnectionIds", "TEXT", [], None, {}),
    "TELEGRAM": ("telegramConnectionIds", "TEXT", [], None, {}),
    "GOOGLE_BUSINESS": (
        "googleBusinessConnectionIds",
        "IMAGE",
        ["image"],
        {
            "topicType": "OFFER",
            "callToActionType": "SHOP",
            "callToActionUrl": "https://example.com/shop",
            "eventTitle": "Sale",
            "eventStart": EVENT_START,
            "eventEnd": EVENT_END,
            "offerCouponCode": "SAVE10",
            "offerRedeemUrl": "https://example.com/redeem",
            "offerTerms": "While stocks last",
        },
        {
            "googleBusinessTopicType": "OFFER",
            "googleBusinessCallToActionType": "SHOP",
            "googleBusinessCallToActionUrl": "https://example.com/shop",
            "googleBusinessEventTitle": "Sale",
            "googleBusinessEventStart": EVENT_START,
            "googleBusinessEventEnd": EVENT_END,
            "googleBusinessOfferCouponCode": "SAVE10",
            "googleBusinessOfferRedeemUrl": "https://example.com/redeem",
            "googleBusinessOfferTerms": "While stocks last",
        },
    ),
}
CONFIG_ARRAYS = {
    "FACEBOOK": "facebookConfigs",
    "INSTAGRAM": "instagramConfigs",
    "TIKTOK": "tiktokConfigs",
    "LINKEDIN": "linkedinConfigs",
    "PINTEREST": "pinterestConfigs",
    "YOUTUBE": "youtubeConfigs",
    "GOOGLE_BUSINESS": "googleBusinessConfigs",
}


@pytest.mark.parametrize("platform", list(PLATFORM_CASES))
def test_every_platform_connection_and_config_array(api: Any, workspace: Any, enqueued: list, platform: str) -> None:
    connection_field, content_type, kinds, config, entry_fields = PLATFORM_CASES[platform]
    target_account = account(workspace, platform, display_name=f"{platform} account")
    reference = target_account.page_id if platform == "FACEBOOK" else target_account.id
    payload = body(
        contentType=content_type,
        platforms=[platform],
        mediaUrls=[uploaded(workspace, kind) for kind in kinds],
        scheduledAt=iso(future()),
        **{connection_field: [reference]},
    )
    if config is not None:
        key = "pageId" if platform == "FACEBOOK" else "connectionId"
        payload[CONFIG_ARRAYS[platform]] = [{key: reference, **config}]
    response = api.post(URL, payload, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["queuedPlatforms"] == [] and response.json()["skippedPlatforms"] == []  # scheduled
    target = PostTarget.objects.get(post_id=response.json()["postId"])
    [entry] = api.get(f"{URL}/{response.json()['postId']}").json()["platforms"]
    media_urls = payload["mediaUrls"]
    assert entry == {
        "id": target.id,
        "platformId": target.id,
        "platform": platform,
        "status": "PENDING",
        "connectionId": target_account.id,
        "pageId": target_account.page_id if platform == "FACEBOOK" else None,
        "accountName": f"{platform} account",
        "text": None,
        "platformPostId": None,
        "postUrl": None,
        "errorMessage": None,
        "errorCode": None,
        "publishedAt": None,
        "tiktokDraftFallback": False,
        "createdAt": format_instant(target.created_at),
        "updatedAt": format_instant(target.updated_at),
        "mediaUrls": media_urls,
        "previewUrls": [],  # no preview made yet: left out, never null
        "mediaAltTexts": [],
        **entry_fields,
    }


def test_client_headers_never_cause_an_error(api: Any, masto: Any, enqueued: list) -> None:
    headers = {
        "HTTP_ACCEPT": "application/json, text/plain, */*",
        "HTTP_USER_AGENT": "n8n-nodes-crosspost/1.4",
        "HTTP_X_LANGUAGE": "de",
        "HTTP_X_REQUEST_ID": "req-123",
    }
    response = api.post(URL, body(platforms=["MASTODON"], mastodonConnectionIds=[masto.id]), format="json", **headers)
    assert response.status_code == 201 and response["X-Request-Id"] == "req-123"
    listed = api.get(URL + "?status=PENDING&platforms[0]=MASTODON", **headers)
    assert listed.status_code == 200 and listed.json()["total"] == 1


def test_user_id_is_the_member_of_an_oauth_token_and_null_for_a_key_without_one(api: Any, workspace: Any) -> None:
    from tests.factories import MembershipFactory
    from tests.workspaces.test_auth import _oauth_client

    masto = account(workspace, "MASTODON")
    member = MembershipFactory(workspace=workspace, role="editor", is_default=True).user
    payload = body(platforms=["MASTODON"], mastodonConnectionIds=[masto.id], saveAsDraft=True)
    by_member = _oauth_client(member).post(URL, payload, format="json")
    by_key = api.post(URL, payload, format="json")
    assert by_member.status_code == by_key.status_code == 201, (by_member.json(), by_key.json())
    assert api.get(f"{URL}/{by_member.json()['postId']}").json()["userId"] == str(member.id)
    assert api.get(f"{URL}/{by_key.json()['postId']}").json()["userId"] is None
    assert Post.objects.get(id=by_member.json()["postId"]).created_by_id == member.id
