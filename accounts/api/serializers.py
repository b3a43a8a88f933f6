"""Input and output shapes of the social-account and connect-link endpoints (CONTRACT.md §7)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from accounts.models import AccountStatus, SocialAccount
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
    id = serializers.CharField()
    platform = serializers.ChoiceField(choices=PLATFORM_VALUES)
    displayName = serializers.CharField()
    username = serializers.CharField(allow_null=True)
    avatarUrl = serializers.CharField(allow_null=True)
    status = serializers.CharField(help_text=STATUS_HELP)
    unauthorizedReason = serializers.CharField(allow_null=True, help_text="The platform's reason; null when active")
    pageId = serializers.CharField(allow_null=True, help_text="FACEBOOK page id; null for other platforms")
    supportsInstagramAudio = serializers.BooleanField(help_text="Audio search available (INSTAGRAM only)")
    connectedAt = InstantField()

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


class SocialAccountListOutput(serializers.Serializer):
    accounts = SocialAccountOutput(many=True)


class AccountCheckOutput(serializers.Serializer):
    id = serializers.CharField()
    platform = serializers.ChoiceField(choices=PLATFORM_VALUES)
    displayName = serializers.CharField()
    pageId = serializers.CharField(allow_null=True)
    status = serializers.CharField(help_text=STATUS_HELP)
    unauthorizedReason = serializers.CharField(allow_null=True)
    checkedAt = InstantField()


class AudioItemOutput(serializers.Serializer):
    audioId = serializers.CharField()
    title = serializers.CharField()
    artist = serializers.CharField()
    durationMs = serializers.IntegerField(allow_null=True)
    coverUrl = serializers.CharField(allow_null=True)
    audioType = serializers.ChoiceField(choices=["music", "original_sound"])

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
    audio = AudioItemOutput(many=True)


class BoardOutput(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    privacy = serializers.ChoiceField(choices=["PUBLIC", "PROTECTED", "SECRET"])

    def to_representation(self, instance: Board) -> dict[str, Any]:
        return {
            "id": instance.id,
            "name": instance.name,
            "description": instance.description,
            "privacy": instance.privacy,
        }


class BoardListOutput(serializers.Serializer):
    boards = BoardOutput(many=True)


class ConnectLinkOutput(serializers.Serializer):
    url = serializers.CharField(help_text="The hosted page to send the end user to")
    token = serializers.CharField()
    expiresAt = InstantField()


class SuccessOutput(serializers.Serializer):
    success = serializers.BooleanField()
