from __future__ import annotations

from rest_framework import serializers

from core import serializers as strict
from core.fields import InstantField, UntrimmedTextField
from media.ai.services import PROMPT_MAX_LENGTH, SESSION_ID_MAX_LENGTH
from media.files import ALLOWED_MIME_TYPES, MAX_FILE_NAME_LENGTH
from media.models import AiJobStatus, AspectRatio
from media.services import MAX_FILES_PER_REQUEST


class UploadFileInput(strict.Serializer):
    fileName = UntrimmedTextField(max_length=MAX_FILE_NAME_LENGTH)
    mimeType = serializers.ChoiceField(choices=list(ALLOWED_MIME_TYPES))


class UploadUrlsCreateInput(strict.Serializer):
    # A ListField rather than many=True: drf-spectacular documents its minItems and maxItems.
    files = serializers.ListField(
        child=UploadFileInput(), allow_empty=False, min_length=1, max_length=MAX_FILES_PER_REQUEST
    )


class UploadUrlItemOutput(serializers.Serializer):
    fileName = serializers.CharField()
    uploadUrl = serializers.URLField(help_text="PUT the bytes here with the same Content-Type; no Authorization.")
    publicUrl = serializers.URLField(help_text="Reference this in mediaUrls of posts of this workspace.")
    key = serializers.CharField()
    expiresAt = InstantField()


class UploadUrlsOutput(serializers.Serializer):
    urls = UploadUrlItemOutput(many=True)


class AiImageCreateInput(strict.Serializer):
    prompt = UntrimmedTextField(min_length=1, max_length=PROMPT_MAX_LENGTH)
    aspectRatio = serializers.ChoiceField(choices=AspectRatio.values, default=AspectRatio.SQUARE)
    sessionId = serializers.CharField(max_length=SESSION_ID_MAX_LENGTH, required=False, allow_null=True)


class AiImageCreatedOutput(serializers.Serializer):
    jobId = serializers.CharField()
    sessionId = serializers.CharField()
    status = serializers.CharField(help_text="Always `queued` on creation")


class AiImageJobOutput(serializers.Serializer):
    jobId = serializers.CharField()
    sessionId = serializers.CharField()
    status = serializers.ChoiceField(choices=AiJobStatus.values)
    imageUrl = serializers.URLField(allow_null=True)
    imageId = serializers.CharField(allow_null=True)
    error = serializers.CharField(allow_null=True)
