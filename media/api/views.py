from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.viewsets import GenericViewSet

from core.errors import NotFound
from core.fields import format_instant
from core.idempotency import idempotent
from media.ai.services import ai_image_job_create
from media.ai.usage import usage_member_of
from media.api.captions import QUOTA_EXHAUSTED
from media.api.serializers import (
    AiImageCreatedOutput,
    AiImageCreateInput,
    AiImageJobOutput,
    MediaFileOutput,
    MediaFileQuery,
    MediaProbeOutput,
    UploadUrlsCreateInput,
    UploadUrlsOutput,
)
from media.models import AiImageJob, MediaFile, ProbeStatus
from media.selectors import ai_image_job_get, media_file_by_url
from media.services import UploadRequest, upload_urls_create
from workspaces.authentication import access_of


class UploadUrlViewSet(GenericViewSet):
    required_permissions = {"create": "media.upload"}
    schema_tags = ["Media"]

    @extend_schema(
        operation_id="createUploadUrls",
        summary="Get presigned upload URLs",
        request=UploadUrlsCreateInput,
        responses={201: UploadUrlsOutput},
    )
    @idempotent
    def create(self, request: Request) -> Response:
        """1 to 20 files. For each, PUT the bytes to `uploadUrl` within 1 hour with a `Content-Type`
        equal to `mimeType` and no Authorization header (the URL accepts one PUT), then reference
        `publicUrl` in `mediaUrls` of any post of this workspace. A file stays until the last post
        referencing it has published; one never referenced is deleted 7 days after upload."""
        access = access_of(request)
        data = _validated(UploadUrlsCreateInput, request)
        tickets = upload_urls_create(
            workspace_id=access.workspace.id,
            files=[UploadRequest(file_name=f["fileName"], mime_type=f["mimeType"]) for f in data["files"]],
        )
        body = {
            "urls": [
                {
                    "fileName": t.file_name,
                    "uploadUrl": t.upload_url,
                    "publicUrl": t.public_url,
                    "key": t.key,
                    "expiresAt": format_instant(t.expires_at),
                }
                for t in tickets
            ]
        }
        return Response(body, status=status.HTTP_201_CREATED)


class AiImageViewSet(GenericViewSet):
    required_permissions = {"create": "ai.generate", "retrieve": "ai.generate"}
    schema_tags = ["AI images"]
    lookup_url_kwarg = "jobId"
    lookup_value_regex = r"[^/]+"
    queryset = AiImageJob.objects.none()

    @extend_schema(
        operation_id="createAiImage",
        summary="Start generating an image",
        request=AiImageCreateInput,
        responses={201: AiImageCreatedOutput, 402: QUOTA_EXHAUSTED},
    )
    @idempotent
    def create(self, request: Request) -> Response:
        """Queues a job. Poll `GET /ai/images/{jobId}` or wait for the `image.completed` /
        `image.failed` webhook event. The finished image's `imageUrl` can be used in `mediaUrls`
        of posts of this workspace. Costs 2 AI units of the workspace's monthly quota, refunded if
        the job fails."""
        access = access_of(request)
        data = _validated(AiImageCreateInput, request)
        job = ai_image_job_create(
            workspace_id=access.workspace.id,
            prompt=data["prompt"],
            aspect_ratio=data["aspectRatio"],
            session_id=data.get("sessionId"),
            member=usage_member_of(access.principal),
        )
        return Response({"jobId": job.id, "sessionId": job.session_id, "status": job.status}, status=201)

    @extend_schema(
        operation_id="getAiImage",
        summary="Get an image generation job",
        parameters=[OpenApiParameter("jobId", str, OpenApiParameter.PATH, description="The job id")],
        responses={200: AiImageJobOutput},
    )
    def retrieve(self, request: Request, jobId: str) -> Response:
        """`status` is queued, processing, completed (with `imageUrl` and `imageId`) or failed
        (with `error`)."""
        access = access_of(request)
        job = ai_image_job_get(workspace_id=access.workspace.id, job_id=jobId)
        if job is None:
            raise NotFound("Image job not found", code="image_job_not_found")
        return Response(
            {
                "jobId": job.id,
                "sessionId": job.session_id,
                "status": job.status,
                "imageUrl": job.image_url or None,
                "imageId": job.image_id or None,
                "error": job.error or None,
            }
        )


class MediaFileViewSet(GenericViewSet):
    required_permissions = {"list": "media.upload"}
    schema_tags = ["Media"]
    queryset = MediaFile.objects.none()

    @extend_schema(
        operation_id="getMediaFile",
        summary="Get an uploaded file and what it is",
        parameters=[MediaFileQuery],
        responses={
            200: MediaFileOutput,
            404: OpenApiResponse(description="`media_not_found`: no file of this workspace has this URL."),
        },
    )
    def list(self, request: Request) -> Response:
        """One file of this workspace by its `publicUrl`. Once stored, every image and video is
        read (probed) in the background: its sides, orientation, format and colour mode, or its
        container, codecs, duration, frame rate, bit rate, rotation and sound. A file that cannot
        be read as its kind becomes `unusable`, with the reason."""
        access = access_of(request)
        query = MediaFileQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        media = media_file_by_url(workspace_id=access.workspace.id, url=query.validated_data["url"])
        if media is None:
            raise NotFound("No file of this workspace has this URL", code="media_not_found")
        return Response(MediaFileOutput(_media_file_body(media)).data)


_PROBE_FIELDS = tuple(MediaProbeOutput().fields)


def _media_file_body(media: MediaFile) -> dict[str, Any]:
    status = media.probe_status if media.probe_status != ProbeStatus.QUEUED else ""
    ready = status == ProbeStatus.READY and isinstance(media.probe, dict)
    return {
        "url": media.public_url,
        "fileName": media.file_name,
        "mimeType": media.mime_type,
        "kind": media.kind,
        "size": media.size,
        "uploadedAt": media.uploaded_at,
        "probeStatus": status or "pending",
        "probe": {name: media.probe.get(name) for name in _PROBE_FIELDS} if ready else None,  # type: ignore[union-attr]
        "probeError": (media.probe_error or None) if status == ProbeStatus.UNUSABLE else None,
    }


def _validated(serializer_class: Any, request: Request) -> dict[str, Any]:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
