"""``POST /ai/captions`` and ``POST /ai/captions/refine``: text in, a caption out."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.viewsets import GenericViewSet

from core.idempotency import idempotent
from media.ai.captions import ai_caption_generate, ai_caption_refine
from media.ai.usage import UNITS, usage_member_of
from media.api.serializers import AiCaptionCreateInput, AiCaptionOutput, AiCaptionRefineInput
from media.models import AiUsageKind
from platforms.base import Platform
from workspaces.authentication import access_of
from workspaces.roles import Permission

_COST = (
    f"Each call costs {UNITS[AiUsageKind.CAPTION]} AI units of the workspace's monthly quota (`AI_MONTHLY_UNITS`), "
    "charged to the member who signed in or created the key and refunded when generation fails. "
    "Nothing is saved or posted: pass the caption to a post yourself."
)
_PROVIDER_FAILED = OpenApiResponse(
    description="The AI provider failed (`code: ai_provider_error`); nothing was charged. Retry later.",
    examples=[
        OpenApiExample(
            "Provider failure",
            value={
                "statusCode": 502,
                "error": "Bad Gateway",
                "message": "AI caption provider failed (503): overloaded",
                "code": "ai_provider_error",
            },
        )
    ],
)
QUOTA_EXHAUSTED = OpenApiResponse(
    description="The workspace has spent its AI units for this month (`code: ai_quota_exhausted`). Do not "
    "retry automatically; the quota renews on the first day of the next month (UTC).",
    examples=[
        OpenApiExample(
            "Quota exhausted",
            value={
                "statusCode": 402,
                "error": "Payment Required",
                "message": "This workspace has used 1000 of its 1000 AI units this month; this generation needs 2. "
                "The quota renews on the first day of next month (UTC).",
                "code": "ai_quota_exhausted",
            },
        )
    ],
)


def _platform(data: dict[str, str]) -> Platform | None:
    return Platform(data["platform"]) if data.get("platform") else None


class AiCaptionViewSet(GenericViewSet):
    required_permissions = {"create": Permission.AI_GENERATE, "refine": Permission.AI_GENERATE}
    schema_tags = ["AI captions"]

    @extend_schema(
        operation_id="generateCaption",
        summary="Write a caption",
        description=f"A new caption from a prompt; with `platform`, one that fits that platform's text limit "
        f"(cut only where a word ends, never inside a word, a URL or a character). {_COST}",
        request=AiCaptionCreateInput,
        responses={201: AiCaptionOutput, 402: QUOTA_EXHAUSTED, 502: _PROVIDER_FAILED},
        examples=[
            OpenApiExample(
                "For X",
                request_only=True,
                value={"prompt": "Announce our spring sale: 20% off hiking boots this weekend", "platform": "TWITTER"},
            ),
            OpenApiExample(
                "Caption",
                response_only=True,
                status_codes=["201"],
                value={"caption": "Spring sale: 20% off every hiking boot, this weekend only. #hiking #sale"},
            ),
        ],
    )
    @idempotent
    def create(self, request: Request) -> Response:
        access = access_of(request)
        serializer = AiCaptionCreateInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        caption = ai_caption_generate(
            workspace_id=access.workspace.id,
            member=usage_member_of(access.principal),
            prompt=data["prompt"],
            platform=_platform(data),
        )
        return Response(AiCaptionOutput({"caption": caption}).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="refineCaption",
        summary="Rework a caption",
        description="`originalText` reworked as `prompt` says; with `partialText`, the result begins with it and "
        f"continues it. With `platform`, the result fits that platform's text limit. {_COST}",
        request=AiCaptionRefineInput,
        responses={201: AiCaptionOutput, 402: QUOTA_EXHAUSTED, 502: _PROVIDER_FAILED},
        examples=[
            OpenApiExample(
                "Shorter, for Bluesky",
                request_only=True,
                value={
                    "prompt": "shorter, and end with a question",
                    "originalText": "We just shipped dark mode. It took months of work and we love it.",
                    "platform": "BLUESKY",
                },
            ),
            OpenApiExample(
                "Caption",
                response_only=True,
                status_codes=["201"],
                value={"caption": "We just shipped dark mode. What do you think?"},
            ),
        ],
    )
    @action(detail=False, methods=["post"])
    @idempotent
    def refine(self, request: Request) -> Response:
        access = access_of(request)
        serializer = AiCaptionRefineInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        caption = ai_caption_refine(
            workspace_id=access.workspace.id,
            member=usage_member_of(access.principal),
            instruction=data["prompt"],
            original_text=data["originalText"],
            partial_text=data.get("partialText") or "",
            platform=_platform(data),
        )
        return Response(AiCaptionOutput({"caption": caption}).data, status=status.HTTP_201_CREATED)
