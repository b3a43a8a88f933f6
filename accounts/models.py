from __future__ import annotations

from django.db import models
from django.db.models import Q

from core.crypto import EncryptedTextField
from core.ids import id_factory
from media.models import MediaFile
from platforms.base import Credentials, Platform
from workspaces.models import Workspace

PLATFORM_CHOICES = [(p.value, p.value) for p in Platform]


class AccountStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    UNAUTHORIZED = "unauthorized", "Unauthorized"
    DISCONNECTED = "disconnected", "Disconnected"


class TokenRevocation(models.TextChoices):
    """What became of the token at the platform when the account was disconnected."""

    PENDING = "pending", "Pending"  # the disconnect committed; its revoke call has not answered yet
    REVOKED = "revoked", "Revoked"
    NOT_SUPPORTED = "not_supported", "Not supported"  # the platform has no revoke call
    FAILED = "failed", "Failed"


class SocialAccount(models.Model):
    """A connected account of one platform in one workspace. Tokens are encrypted at rest."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("acc"), editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="social_accounts")
    platform = models.CharField(max_length=20, choices=PLATFORM_CHOICES)
    external_id = models.CharField(max_length=255, help_text="The platform's id of the account (page, user, chat…)")
    page_id = models.CharField(max_length=255, blank=True, default="", help_text="FACEBOOK page id")
    display_name = models.CharField(max_length=255, blank=True, default="")
    username = models.CharField(max_length=255, blank=True, default="")
    avatar_url = models.URLField(max_length=1000, blank=True, default="")
    status = models.CharField(max_length=20, choices=AccountStatus.choices, default=AccountStatus.ACTIVE)
    unauthorized_reason = models.TextField(blank=True, default="")
    supports_instagram_audio = models.BooleanField(default=False)
    scopes = models.JSONField(default=list, blank=True)
    access_token = EncryptedTextField()
    refresh_token = EncryptedTextField(blank=True, default="")
    token_expires_at = models.DateTimeField(null=True, blank=True)
    credentials_extra = models.JSONField(default=dict, blank=True, help_text="Non-secret identifiers (did, instance…)")
    connected_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    last_checked_at = models.DateTimeField(null=True, blank=True)
    # Disconnect (issue 31): the row stays, without its tokens, so that posts and analytics keep it.
    disconnected_at = models.DateTimeField(null=True, blank=True)
    token_revocation = models.CharField(max_length=20, choices=TokenRevocation.choices, blank=True, default="")
    token_revocation_error = models.CharField(
        max_length=40, blank=True, default="", help_text="The errorCode of a failed revoke call (never its text)"
    )

    class Meta:
        ordering = ["connected_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "platform", "external_id"], name="socialaccount_unique_external"
            ),
            models.CheckConstraint(condition=Q(status__in=AccountStatus.values), name="socialaccount_status_valid"),
        ]
        indexes = [models.Index(fields=["workspace", "platform"]), models.Index(fields=["platform", "page_id"])]

    def __str__(self) -> str:
        return f"{self.platform} {self.display_name or self.external_id}"

    def credentials(self) -> Credentials:
        return Credentials(
            access_token=self.access_token,
            external_id=self.external_id,
            refresh_token=self.refresh_token,
            expires_at=self.token_expires_at,
            extra={str(k): str(v) for k, v in (self.credentials_extra or {}).items()},
        )


class ConnectLink(models.Model):
    """A white-label link that lets an end user connect accounts into one workspace for 24 h.
    Only a hash of the token is kept; the token itself is shown once, at creation."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("cl"), editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="connect_links")
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    connections = models.PositiveIntegerField(default=0, help_text="Accounts connected through this link")
    redirect_url = models.CharField(
        max_length=2048, blank=True, default="", help_text="Where the browser goes after the flow (empty: our page)"
    )
    platforms = models.JSONField(
        default=list, blank=True, help_text="The platforms this link offers (empty: every one the branding offers)"
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"connect link {self.id}"


class ConnectBranding(models.Model):
    """How the hosted connect pages of one workspace look (issue 31): a name, a logo (an upload of
    the workspace, kept from collection while it is the logo), an accent colour (``#rrggbb``), a
    support link (https) and the platforms offered (empty: all twelve)."""

    workspace = models.OneToOneField(
        Workspace, primary_key=True, on_delete=models.CASCADE, related_name="connect_branding"
    )
    display_name = models.CharField(max_length=80, blank=True, default="")
    logo = models.ForeignKey(MediaFile, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    accent_color = models.CharField(max_length=7, blank=True, default="")
    support_url = models.CharField(max_length=2000, blank=True, default="")
    platforms = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(accent_color="") | Q(accent_color__regex=r"^#[0-9a-f]{6}$"),
                name="connectbranding_accent_hex",
            )
        ]

    def __str__(self) -> str:
        return f"branding of {self.workspace_id}"


class ConnectAttempt(models.Model):
    """One trip to a platform's consent screen: the signed ``state`` names it, and it is claimed
    once by the callback (single use). The PKCE verifier stays here, encrypted."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("cat"), editable=False)
    link = models.ForeignKey(ConnectLink, on_delete=models.CASCADE, related_name="attempts")
    platform = models.CharField(max_length=20, choices=PLATFORM_CHOICES)
    nonce = models.CharField(max_length=64)
    code_verifier = EncryptedTextField(blank=True, default="")
    link_token = EncryptedTextField(blank=True, default="", help_text="To offer 'connect another' afterwards")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.platform} attempt {self.id}"


class PostingQueue(models.Model):
    """An account's weekly posting slots (issue 18): wall-clock times in ``timezone``. A post
    created with ``queue: true`` takes the earliest free one (``posts.queues``)."""

    account = models.OneToOneField(SocialAccount, primary_key=True, on_delete=models.CASCADE, related_name="queue")
    timezone = models.CharField(max_length=64)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=~Q(timezone=""), name="postingqueue_timezone_set")]

    def __str__(self) -> str:
        return f"queue of {self.account_id}"


class QueueSlot(models.Model):
    """One weekly slot: ``weekday`` 0 = Monday … 6 = Sunday, at ``local_time`` (whole minutes)."""

    queue = models.ForeignKey(PostingQueue, on_delete=models.CASCADE, related_name="slots")
    weekday = models.PositiveSmallIntegerField()
    local_time = models.TimeField()

    class Meta:
        ordering = ["weekday", "local_time"]
        constraints = [
            models.UniqueConstraint(fields=["queue", "weekday", "local_time"], name="queueslot_unique"),
            models.CheckConstraint(condition=Q(weekday__lte=6), name="queueslot_weekday_range"),
        ]

    def __str__(self) -> str:
        return f"{self.weekday} {self.local_time:%H:%M}"
