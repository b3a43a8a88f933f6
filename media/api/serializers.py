from __future__ import annotations

from rest_framework import serializers

from core import serializers as strict
from core.fields import InstantField, UntrimmedTextField
from media.ai.captions import CAPTION_PLATFORM_VALUES
from media.ai.captions import TEXT_MAX_LENGTH as CAPTION_TEXT_MAX_LENGTH
from media.ai.services import PROMPT_MAX_LENGTH, SESSION_ID_MAX_LENGTH
from media.files import ALLOWED_MIME_TYPES, MAX_FILE_NAME_LENGTH
from media.models import AiJobStatus, AspectRatio
from media.services import MAX_FILES_PER_REQUEST


class UploadFileInput(strict.Serializer):
    fileName = UntrimmedTextField(
        max_length=MAX_FILE_NAME_LENGTH, help_text="The file's name (shown in `fileName` and kept in its key)."
    )
    mimeType = serializers.ChoiceField(
        choices=list(ALLOWED_MIME_TYPES), help_text="The file's media type; the PUT must send it as its Content-Type."
    )


class UploadUrlsCreateInput(strict.Serializer):
    # A ListField rather than many=True: drf-spectacular documents its minItems and maxItems.
    files = serializers.ListField(
        child=UploadFileInput(),
        allow_empty=False,
        min_length=1,
        max_length=MAX_FILES_PER_REQUEST,
        help_text="The files to upload, one upload URL each.",
    )


class UploadUrlItemOutput(serializers.Serializer):
    fileName = serializers.CharField(help_text="The file's name, as sent.")
    uploadUrl = serializers.URLField(help_text="PUT the bytes here with the same Content-Type; no Authorization.")
    publicUrl = serializers.URLField(help_text="Reference this in mediaUrls of posts of this workspace.")
    key = serializers.CharField(help_text="The file's storage key.")
    expiresAt = InstantField(help_text="When `uploadUrl` stops accepting the PUT.")


class UploadUrlsOutput(serializers.Serializer):
    urls = UploadUrlItemOutput(many=True, help_text="One item per file, in the order sent.")


class AiImageCreateInput(strict.Serializer):
    prompt = UntrimmedTextField(
        min_length=1, max_length=PROMPT_MAX_LENGTH, help_text="What the image should show (1 to 2000 characters)."
    )
    aspectRatio = serializers.ChoiceField(
        choices=AspectRatio.values, default=AspectRatio.SQUARE, help_text="The image's aspect ratio (default 1:1)."
    )
    sessionId = serializers.CharField(
        max_length=SESSION_ID_MAX_LENGTH,
        required=False,
        allow_null=True,
        help_text="Groups related generations: send back the `sessionId` of an earlier job. Omitted: a new "
        "session (a UUID). Ids issued before UUIDs (`sess_…`) keep working.",
    )


class AiImageCreatedOutput(serializers.Serializer):
    jobId = serializers.CharField(help_text="The job's id: GET /ai/images/{jobId} follows it.")
    sessionId = serializers.CharField(help_text="A UUID for a new session, or the id sent.")
    status = serializers.CharField(help_text="Always `queued` on creation")


class AiImageJobOutput(serializers.Serializer):
    jobId = serializers.CharField(help_text="The job's id.")
    sessionId = serializers.CharField(help_text="The session the job belongs to.")
    status = serializers.ChoiceField(choices=AiJobStatus.values, help_text="queued, processing, completed or failed.")
    imageUrl = serializers.URLField(allow_null=True, help_text="The image, once completed: usable in `mediaUrls`.")
    imageId = serializers.CharField(allow_null=True, help_text="The image's id, once completed.")
    error = serializers.CharField(allow_null=True, help_text="Why it failed, when it did.")


_PLATFORM_HELP = (
    "The platform the caption is for; the caption then fits its text limit as post validation counts it "
    "(TWITTER: weighted length with every URL as 23; BLUESKY: graphemes). Omit for a general caption."
)


class AiCaptionCreateInput(strict.Serializer):
    prompt = UntrimmedTextField(
        min_length=1,
        max_length=PROMPT_MAX_LENGTH,
        help_text="What the caption should say or be about: tone, audience, hashtags, a call to action.",
    )
    platform = serializers.ChoiceField(choices=CAPTION_PLATFORM_VALUES, required=False, help_text=_PLATFORM_HELP)


class AiCaptionRefineInput(strict.Serializer):
    prompt = UntrimmedTextField(
        min_length=1,
        max_length=PROMPT_MAX_LENGTH,
        help_text="How the caption should change, e.g. `shorter`, `more playful`, `add a question at the end`.",
    )
    originalText = UntrimmedTextField(
        min_length=1,
        max_length=CAPTION_TEXT_MAX_LENGTH,
        help_text="The caption to rework.",
    )
    partialText = UntrimmedTextField(
        max_length=CAPTION_TEXT_MAX_LENGTH,
        required=False,
        allow_blank=True,
        help_text="A partly written caption to continue from; the result begins with it.",
    )
    platform = serializers.ChoiceField(choices=CAPTION_PLATFORM_VALUES, required=False, help_text=_PLATFORM_HELP)


class AiCaptionOutput(serializers.Serializer):
    caption = serializers.CharField(help_text="The text; nothing is saved or posted.")
