from __future__ import annotations

from rest_framework import serializers

from core import serializers as strict
from core.fields import InstantField, UntrimmedTextField
from media.ai.captions import CAPTION_PLATFORM_VALUES
from media.ai.captions import TEXT_MAX_LENGTH as CAPTION_TEXT_MAX_LENGTH
from media.ai.services import PROMPT_MAX_LENGTH, SESSION_ID_MAX_LENGTH
from media.files import ALLOWED_MIME_TYPES, MAX_FILE_NAME_LENGTH
from media.models import AiJobStatus, AspectRatio, MediaKind
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


class MediaFileQuery(strict.QuerySerializer):
    url = serializers.CharField(max_length=2000, help_text="The file's `publicUrl`, as `POST /upload-urls` gave it.")


class MediaProbeOutput(serializers.Serializer):
    """What the probe read from the file; the fields of the other kind are null."""

    type = serializers.ChoiceField(choices=["image", "video"], help_text="`image` or `video`: which fields apply.")
    width = serializers.IntegerField(help_text="Width in pixels, as stored (before any rotation).")
    height = serializers.IntegerField(help_text="Height in pixels, as stored (before any rotation).")
    displayWidth = serializers.IntegerField(
        help_text="Width as shown, after the EXIF orientation (image) or the rotation (video) is applied."
    )
    displayHeight = serializers.IntegerField(
        help_text="Height as shown, after the EXIF orientation (image) or the rotation (video) is applied."
    )
    frameCount = serializers.IntegerField(help_text="Frames: 1 for a still image; of the video track for a video.")
    durationSeconds = serializers.FloatField(
        allow_null=True, help_text="Length of a video or an animated image in seconds; null for a still image."
    )
    format = serializers.CharField(
        required=False,
        allow_null=True,
        help_text="Image: the encoding read from the bytes (JPEG, PNG, WEBP, GIF, HEIF).",
    )
    orientation = serializers.IntegerField(
        required=False, allow_null=True, help_text="Image: the EXIF orientation, 1 to 8 (1 when the file has none)."
    )
    colorMode = serializers.CharField(
        required=False, allow_null=True, help_text="Image: Pillow's colour mode (RGB, RGBA, L, P, CMYK, ...)."
    )
    animated = serializers.BooleanField(
        required=False,
        allow_null=True,
        help_text="Image: whether it has more than one frame (an animated GIF or WebP).",
    )
    container = serializers.CharField(
        required=False, allow_null=True, help_text="Video: `mp4` or `quicktime`, from the file's brand."
    )
    videoCodec = serializers.CharField(
        required=False, allow_null=True, help_text="Video: FFmpeg's name of the video codec (h264, hevc, vp9, ...)."
    )
    audioCodec = serializers.CharField(
        required=False, allow_null=True, help_text="Video: FFmpeg's name of the audio codec (aac, ...); null for none."
    )
    hasAudio = serializers.BooleanField(
        required=False, allow_null=True, help_text="Video: whether it has an audio track with sound in it."
    )
    frameRate = serializers.FloatField(
        required=False, allow_null=True, help_text="Video: average frames per second of the video track."
    )
    bitRate = serializers.IntegerField(
        required=False, allow_null=True, help_text="Video: overall bit rate in bits per second."
    )
    rotation = serializers.IntegerField(
        required=False, allow_null=True, help_text="Video: the display rotation in degrees (0, 90, 180 or 270)."
    )


class MediaFileOutput(serializers.Serializer):
    url = serializers.CharField(help_text="The file's `publicUrl`.")
    fileName = serializers.CharField(help_text="The file's name as stored (made safe for URLs).")
    mimeType = serializers.CharField(help_text="The media type the file was uploaded as.")
    kind = serializers.ChoiceField(choices=MediaKind.values, help_text="image, video or document.")
    size = serializers.IntegerField(allow_null=True, help_text="Bytes, once the file is stored; null before.")
    uploadedAt = InstantField(allow_null=True, help_text="When the file was found stored; null before.")
    probeStatus = serializers.ChoiceField(
        choices=["pending", "ready", "unusable", "n/a"],
        help_text="`pending` until the file is stored and read (seconds after the upload); `ready` with `probe`; "
        "`unusable` (the file cannot be read as its kind: a post using it will fail) with `probeError`; `n/a` "
        "for documents, which are not probed.",
    )
    probe = MediaProbeOutput(allow_null=True, help_text="What the file is, once `probeStatus` is `ready`.")
    probeError = serializers.CharField(allow_null=True, help_text="Why the file is unusable, when it is.")
