"""Models of the media app: uploaded (or generated) files and AI image jobs."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from core.ids import id_factory
from workspaces.models import Workspace


class MediaKind(models.TextChoices):
    IMAGE = "image"
    VIDEO = "video"
    DOCUMENT = "document"


class MediaSource(models.TextChoices):
    UPLOAD = "upload"
    AI = "ai"


class PreviewStatus(models.TextChoices):
    NONE = "", "none yet"
    QUEUED = "queued"
    READY = "ready"
    FAILED = "failed"
    NOT_APPLICABLE = "n/a"


class MediaFile(models.Model):
    """One object in storage under ``<workspace id>/<32 hex>/<file name>``. ``size`` and
    ``uploaded_at`` are set once the bytes are known to be in storage."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("med"), editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="media_files")
    key = models.CharField(max_length=500, unique=True)
    public_url = models.CharField(max_length=2000, unique=True)
    file_name = models.CharField(max_length=255)
    mime_type = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=MediaKind.choices)
    source = models.CharField(max_length=10, choices=MediaSource.choices, default=MediaSource.UPLOAD)
    size = models.BigIntegerField(null=True, blank=True)
    uploaded_at = models.DateTimeField(null=True, blank=True)
    upload_claimed_at = models.DateTimeField(
        null=True, blank=True, help_text="Set while the one accepted PUT is being received (local storage)"
    )
    first_referenced_at = models.DateTimeField(null=True, blank=True)
    keep_until = models.DateTimeField(null=True, blank=True, help_text="Never collected before this instant")
    preview_key = models.CharField(max_length=520, blank=True, default="")
    preview_status = models.CharField(max_length=10, choices=PreviewStatus.choices, blank=True, default="")
    preview_queued_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=MediaKind.values), name="media_kind_valid"),
            models.CheckConstraint(condition=Q(size__isnull=True) | Q(size__gte=0), name="media_size_non_negative"),
        ]
        indexes = [
            models.Index(fields=["workspace", "-created_at"], name="media_ws_created"),
            models.Index(fields=["preview_key"], condition=~Q(preview_key=""), name="media_preview_key"),
        ]

    def __str__(self) -> str:
        return self.key

    @property
    def is_uploaded(self) -> bool:
        return self.uploaded_at is not None


class AiJobStatus(models.TextChoices):
    QUEUED = "queued"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"


class AspectRatio(models.TextChoices):
    SQUARE = "1:1"
    LANDSCAPE_16_9 = "16:9"
    PORTRAIT_9_16 = "9:16"
    LANDSCAPE_3_2 = "3:2"
    PORTRAIT_2_3 = "2:3"
    PORTRAIT_4_5 = "4:5"
    LANDSCAPE_5_4 = "5:4"


class AiImageJob(models.Model):
    """One ``POST /ai/images`` request and its outcome (a MediaFile, or an error)."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("imgjob"), editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="ai_image_jobs")
    session_id = models.CharField(max_length=200)
    prompt = models.TextField()
    aspect_ratio = models.CharField(max_length=5, choices=AspectRatio.choices, default=AspectRatio.SQUARE)
    status = models.CharField(max_length=10, choices=AiJobStatus.choices, default=AiJobStatus.QUEUED)
    media_file = models.ForeignKey(MediaFile, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    image_url = models.CharField(max_length=2000, blank=True, default="")
    image_id = models.CharField(
        max_length=40, blank=True, default="", help_text="The MediaFile id (kept if it is deleted)"
    )
    error = models.TextField(blank=True, default="")
    attempts = models.PositiveSmallIntegerField(default=0)
    lease_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=AiJobStatus.values), name="ai_job_status_valid"),
            models.CheckConstraint(condition=Q(aspect_ratio__in=AspectRatio.values), name="ai_job_ratio_valid"),
        ]
        indexes = [models.Index(fields=["status", "lease_until"], name="ai_job_status_lease")]

    def __str__(self) -> str:
        return f"{self.id} ({self.status})"
