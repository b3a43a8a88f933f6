"""Input and output shapes of the social-account and connect-link endpoints (CONTRACT.md §7)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from accounts.models import AccountStatus, SocialAccount, TokenRevocation
from core import serializers as strict
from core.fields import InstantField, format_instant
from platforms.base import AudioItem, Board, Platform
from platforms.instagram import AUDIO_QUERY_LIMIT

PLATFORM_VALUES = [p.value for p in Platform]
STATUS_HELP = " or ".join(f"`{v}`" for v in AccountStatus.values)


class NoQuery(strict.QuerySerializer):
    """An endpoint that takes no query parameters (any given is a 400 naming it)."""


class InstagramAudioQuery(strict.QuerySerializer):
    audioType = serializers.ChoiceField(choices=["music", "original_sound"])
    searchQuery = serializers.CharField(
        max_length=AUDIO_QUERY_LIMIT, required=False, allow_blank=True, trim_whitespace=True
    )


class SocialAccountOutput(serializers.Serializer):
    id = serializers.CharField(
        help_text=("The account's id: what `<platform>ConnectionIds` (or `pageIds` for FACEBOOK) of a post take.")
    )
    platform = serializers.ChoiceField(choices=PLATFORM_VALUES, help_text="The account's platform.")
    displayName = serializers.CharField(help_text="The account's name as the platform shows it.")
    username = serializers.CharField(allow_null=True, help_text="The account's handle, where the platform has one.")
    avatarUrl = serializers.CharField(allow_null=True, help_text="The account's picture.")
    status = serializers.CharField(help_text=STATUS_HELP)
    unauthorizedReason = serializers.CharField(allow_null=True, help_text="The platform's reason; null when active")
    pageId = serializers.CharField(allow_null=True, help_text="FACEBOOK page id; null for other platforms")
    supportsInstagramAudio = serializers.BooleanField(help_text="Audio search available (INSTAGRAM only)")
    connectedAt = InstantField(help_text="When it was connected.")

    def to_representation(self, instance: SocialAccount) -> dict[str, Any]:
        return {
            "id": instance.id,
            "platform": instance.platform,
            "displayName": instance.display_name,
            "username": instance.username or None,
            "avatarUrl": instance.avatar_url or None,
            "status": instance.status,
            "unauthorizedReason": instance.unauthorized_reason or None,
            "pageId": (instance.page_id or None) if instance.platform == Platform.FACEBOOK else None,
            "supportsInstagramAudio": instance.platform == Platform.INSTAGRAM and instance.supports_instagram_audio,
            "connectedAt": format_instant(instance.connected_at),
        }


class SocialAccountDetailOutput(SocialAccountOutput):
    """One account (GET and DELETE /social-accounts/{id}): the list item and its disconnect."""

    disconnectedAt = InstantField(allow_null=True, help_text="When it was disconnected; null while connected.")
    tokenRevocation = serializers.ChoiceField(
        choices=TokenRevocation.values,
        allow_null=True,
        help_text=(
            "What became of the token at the platform when the account was disconnected: `revoked`, "
            "`not_supported` (the platform has no revoke call; the token was only dropped), `failed` (the revoke "
            "call failed; the token was dropped all the same and expires at the platform on its own), or `pending` "
            "(the disconnect is still waiting for the platform's answer). null while connected."
        ),
    )
    tokenRevocationErrorCode = serializers.CharField(
        allow_null=True,
        help_text="With `tokenRevocation: failed`: the normalized errorCode of the failure (never the platform's text).",
    )

    def to_representation(self, instance: SocialAccount) -> dict[str, Any]:
        return {
            **super().to_representation(instance),
            "disconnectedAt": format_instant(instance.disconnected_at),
            "tokenRevocation": instance.token_revocation or None,
            "tokenRevocationErrorCode": instance.token_revocation_error or None,
        }


class SocialAccountListOutput(serializers.Serializer):
    accounts = SocialAccountOutput(many=True, help_text="The workspace's connected accounts.")


class AccountCheckOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The account's id.")
    platform = serializers.ChoiceField(choices=PLATFORM_VALUES, help_text="The account's platform.")
    displayName = serializers.CharField(help_text="The account's name as the platform shows it.")
    pageId = serializers.CharField(allow_null=True, help_text="FACEBOOK: the page's id on Facebook; else null.")
    status = serializers.CharField(help_text=STATUS_HELP)
    unauthorizedReason = serializers.CharField(
        allow_null=True, help_text="Why the platform refused the token, when it did."
    )
    checkedAt = InstantField(help_text="When the check ran.")


class AudioItemOutput(serializers.Serializer):
    audioId = serializers.CharField(help_text="What `instagramConfigs[].audio` takes.")
    title = serializers.CharField(help_text="The track's title.")
    artist = serializers.CharField(help_text="The artist.")
    durationMs = serializers.IntegerField(allow_null=True, help_text="Length in milliseconds, when known.")
    coverUrl = serializers.CharField(allow_null=True, help_text="The cover image, when there is one.")
    audioType = serializers.ChoiceField(choices=["music", "original_sound"], help_text="music or original_sound.")

    def to_representation(self, instance: AudioItem) -> dict[str, Any]:
        return {
            "audioId": instance.audio_id,
            "title": instance.title,
            "artist": instance.artist,
            "durationMs": instance.duration_ms,
            "coverUrl": instance.cover_url or None,
            "audioType": instance.audio_type,
        }


class AudioListOutput(serializers.Serializer):
    audio = AudioItemOutput(many=True, help_text="The tracks found (trending ones without `searchQuery`).")


class BoardOutput(serializers.Serializer):
    id = serializers.CharField(help_text="What `pinterestConfigs[].boardId` takes.")
    name = serializers.CharField(help_text="The board's name.")
    description = serializers.CharField(help_text="The board's description.")
    privacy = serializers.ChoiceField(
        choices=["PUBLIC", "PROTECTED", "SECRET"], help_text="PUBLIC, PROTECTED or SECRET."
    )

    def to_representation(self, instance: Board) -> dict[str, Any]:
        return {
            "id": instance.id,
            "name": instance.name,
            "description": instance.description,
            "privacy": instance.privacy,
        }


class BoardListOutput(serializers.Serializer):
    boards = BoardOutput(many=True, help_text="Every board the account can pin to, secret boards included.")


class ConnectLinkCreateInput(strict.Serializer):
    redirectUrl = serializers.CharField(
        required=False,
        allow_null=True,
        max_length=2048,
        help_text=(
            "Where the end user's browser goes when the flow ends (303), instead of our success page: "
            "`outcome=connected&platform=<PLATFORM>&accountId=<id>&accountIds=<id,id…>` (every account connected, "
            "e.g. several FACEBOOK pages), or `outcome=error&error=<code>&platform=<PLATFORM>` (codes: "
            "`connection_declined`, `connection_refused`, `platform_unavailable`, `no_account_found`, `not_supported`, "
            "`not_offered`, `link_expired`, `already_used`, `invalid_request`, `not_available_yet`) added to its own "
            "query. Checked as a webhook URL is: http(s), no user:password, every address its host resolves to "
            "public (400 `invalid_redirect_url`)."
        ),
    )
    platforms = serializers.ListField(
        child=serializers.ChoiceField(choices=PLATFORM_VALUES),
        required=False,
        allow_null=True,
        help_text=(
            "The platforms this link offers: some of those the workspace's connect branding offers (400 "
            "`platform_not_offered` otherwise). Omitted: every platform the branding offers."
        ),
    )


class ConnectLinkOutput(serializers.Serializer):
    url = serializers.CharField(help_text="The hosted page to send the end user to")
    token = serializers.CharField(help_text="The link's token (DELETE /connect-links/{token} withdraws it).")
    expiresAt = InstantField(help_text="When the link stops working (24 hours after it was made).")
    redirectUrl = serializers.CharField(
        allow_null=True, help_text="Where the browser goes after the flow (normalized); null: our own page."
    )
    platforms = serializers.ListField(
        child=serializers.ChoiceField(choices=PLATFORM_VALUES), help_text="The platforms the link's page offers."
    )


class ConnectBrandingInput(strict.Serializer):
    displayName = serializers.CharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=80,
        help_text="The name shown at the top of the connect pages (your product's, or your customer's); ≤ 80.",
    )
    logoUrl = serializers.CharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=2000,
        help_text=(
            "The `publicUrl` of an upload of this workspace (POST /upload-urls, then PUT the file): image/png, "
            "image/jpeg or image/webp of at most 1 MiB, served from storage. 400 `media_not_found` when it is not "
            "one. It is kept while it is the logo."
        ),
    )
    accentColor = serializers.CharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=7,
        help_text=(
            "`#rgb` or `#rrggbb`, stored as `#rrggbb`: buttons, focus rings and the header rule. Button text is "
            "black or white, whichever contrasts more, so every colour stays readable."
        ),
    )
    supportUrl = serializers.CharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=2000,
        help_text='An https link shown as "Need help?" at the foot of the pages.',
    )
    platforms = serializers.ListField(
        child=serializers.ChoiceField(choices=PLATFORM_VALUES),
        required=False,
        allow_null=True,
        help_text="The platforms the pages offer (at least one, no repeats); omitted or null: all twelve.",
    )


class ConnectBrandingOutput(serializers.Serializer):
    displayName = serializers.CharField(allow_null=True, help_text="The name on the pages; null: none.")
    logoUrl = serializers.CharField(allow_null=True, help_text="The logo's address in storage; null: none.")
    accentColor = serializers.CharField(allow_null=True, help_text="`#rrggbb`; null: the default blue.")
    supportUrl = serializers.CharField(allow_null=True, help_text="The https help link; null: none.")
    platforms = serializers.ListField(
        child=serializers.ChoiceField(choices=PLATFORM_VALUES),
        help_text="The platforms the pages offer, in the usual order (all twelve unless narrowed).",
    )
    updatedAt = InstantField(allow_null=True, help_text="When it was last set; null: never (the defaults).")


class SuccessOutput(serializers.Serializer):
    success = serializers.BooleanField(help_text="true when it was done.")
