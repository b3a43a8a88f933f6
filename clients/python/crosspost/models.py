"""Typed shapes of the main records the API answers (``TypedDict``: the answers stay plain dicts).

Field names and types as the OpenAPI description states them; ``tests/test_client_models.py`` fails
when a field here is no longer in the description."""

from __future__ import annotations

from typing import Any, TypedDict


class PlatformEntry(TypedDict):
    """``PlatformEntryOutput`` of the description."""

    id: str
    platformId: str
    platform: str
    status: str
    connectionId: str | None
    pageId: str | None
    accountName: str
    text: str
    platformPostId: str | None
    postUrl: str | None
    errorMessage: str | None
    errorCode: str | None
    publishedAt: str | None
    tiktokDraftFallback: bool
    instagramPostType: Any
    instagramTrialGraduation: Any
    instagramAudio: Any
    facebookPostType: Any
    facebookVideoTitle: Any
    tiktokPrivacyLevel: Any
    tiktokTitle: Any
    tiktokCaption: Any
    tiktokAllowComments: Any
    tiktokAllowDuet: Any
    tiktokAllowStitch: Any
    tiktokSendAsDraft: Any
    tiktokAiGenerated: Any
    tiktokBrandedContent: Any
    tiktokBrandedContentOwnBrand: Any
    tiktokAutoAddMusic: Any
    youtubePostType: Any
    youtubeVideoTitle: Any
    youtubeTags: list[str]
    youtubePrivacyStatus: Any
    youtubeLicense: Any
    youtubeNotifySubscribers: Any
    youtubeAllowEmbedding: Any
    youtubeMadeForKids: Any
    youtubeCategoryId: Any
    youtubePlaylistId: Any
    pinterestBoardId: Any
    pinterestTitle: Any
    pinterestLink: Any
    linkedinDocumentTitle: Any
    googleBusinessTopicType: Any
    googleBusinessCallToActionType: Any
    googleBusinessCallToActionUrl: Any
    googleBusinessEventTitle: Any
    googleBusinessEventStart: Any
    googleBusinessEventEnd: Any
    googleBusinessOfferCouponCode: Any
    googleBusinessOfferRedeemUrl: Any
    googleBusinessOfferTerms: Any


class Post(TypedDict):
    """``PostOutput`` of the description."""

    id: str
    status: str
    contentType: str
    text: str
    timezone: str
    scheduledAt: str | None
    mediaUrls: list[str]
    mediaAltTexts: list[str]
    previewUrls: list[str]
    thumbnailUrl: str | None
    recurringPostId: str | None
    occurrenceAt: str | None
    createdAt: str
    updatedAt: str
    platforms: list[PlatformEntry]


class PostCreated(TypedDict):
    """``PostCreateOutput`` of the description."""

    postId: str
    status: str
    queuedPlatforms: list[str]
    skippedPlatforms: list[dict[str, Any]]
    isScheduled: bool
    scheduledAt: str | None
    recurringPostId: str


class PostResult(TypedDict):
    """``PostResultOutput`` of the description."""

    platformId: str
    platform: str
    accountName: str
    status: str
    platformPostId: str | None
    errorMessage: str | None
    tiktokDraftFallback: bool
    publishedAt: str | None


class PostResults(TypedDict):
    """``PostResultsOutput`` of the description."""

    postId: str
    status: str
    results: list[PostResult]


class Account(TypedDict):
    """``SocialAccountOutput`` of the description."""

    id: str
    platform: str
    displayName: str
    username: str | None
    avatarUrl: str | None
    status: str
    unauthorizedReason: str | None
    pageId: str | None
    supportsInstagramAudio: bool
    connectedAt: str


class AccountDetail(Account):
    """``SocialAccountDetailOutput`` of the description: GET and DELETE /social-accounts/{id}."""

    disconnectedAt: str | None
    tokenRevocation: str | None
    tokenRevocationErrorCode: str | None


class ConnectBranding(TypedDict):
    """``ConnectBrandingOutput`` of the description."""

    displayName: str | None
    logoUrl: str | None
    accentColor: str | None
    supportUrl: str | None
    platforms: list[str]
    updatedAt: str | None


class UploadUrl(TypedDict):
    """``UploadUrlItemOutput`` of the description."""

    fileName: str
    uploadUrl: str
    publicUrl: str
    key: str
    expiresAt: str


class Webhook(TypedDict):
    """``WebhookOutput`` of the description."""

    id: str
    url: str
    active: bool
    createdAt: str
    updatedAt: str
    lastSuccessAt: str | None
    lastFailureAt: str | None
    disabledAt: str | None


class WebhookCreated(TypedDict):
    """``WebhookCreatedOutput`` of the description."""

    id: str
    url: str
    active: bool
    createdAt: str
    updatedAt: str
    lastSuccessAt: str | None
    lastFailureAt: str | None
    disabledAt: str | None
    secret: str


class ErrorBody(TypedDict, total=False):
    """The body of every error answer (CONTRACT.md §3)."""

    statusCode: int
    error: str
    message: str | list[str]
    code: str
    requiredPermission: str
    role: str
    tokenType: str
