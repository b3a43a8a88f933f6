"""AI captions: write one from a prompt, or rework one following an instruction. Nothing is
saved or posted; the only write is the member's usage (charged, and refunded on failure)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from media.ai.errors import AiProviderFailed
from media.ai.fitting import fit_to_platform, text_limit
from media.ai.providers import CaptionProvider, CaptionTarget, GeneratedCaption, ProviderError, get_caption_provider
from media.ai.usage import UsageMember, usage_charge, usage_refund
from media.models import AiUsageKind
from platforms.base import Platform

logger = logging.getLogger(__name__)

TEXT_MAX_LENGTH = 10000  # originalText and partialText; the prompt has the image prompt's 2000
CAPTION_PLATFORMS: tuple[Platform, ...] = (
    Platform.TWITTER,
    Platform.BLUESKY,
    Platform.MASTODON,
    Platform.THREADS,
    Platform.PINTEREST,
    Platform.INSTAGRAM,
    Platform.TIKTOK,
    Platform.LINKEDIN,
    Platform.YOUTUBE,
    Platform.FACEBOOK,
)
CAPTION_PLATFORM_VALUES: list[str] = [p.value for p in CAPTION_PLATFORMS]
_UNEXPECTED_ERROR = "AI caption generation failed unexpectedly"


def ai_caption_generate(
    *, workspace_id: str, member: UsageMember, prompt: str, platform: Platform | None = None
) -> str:
    """A new caption about ``prompt``; with a platform, one that fits its text limit as post
    validation counts it. Charges the member one caption (402 ``ai_quota_exhausted`` past the
    workspace's monthly units); a provider failure is 502 ``ai_provider_error`` and refunded."""
    return _write(
        workspace_id=workspace_id,
        member=member,
        platform=platform,
        call=lambda provider, target: provider.generate(prompt=prompt, target=target),
    )


def ai_caption_refine(
    *,
    workspace_id: str,
    member: UsageMember,
    instruction: str,
    original_text: str,
    partial_text: str = "",
    platform: Platform | None = None,
) -> str:
    """``original_text`` reworked as ``instruction`` says, continuing ``partial_text`` when given;
    fitted, charged and refunded exactly as :func:`ai_caption_generate`."""
    return _write(
        workspace_id=workspace_id,
        member=member,
        platform=platform,
        call=lambda provider, target: provider.refine(
            instruction=instruction, original_text=original_text, partial_text=partial_text, target=target
        ),
    )


def _write(
    *,
    workspace_id: str,
    member: UsageMember,
    platform: Platform | None,
    call: Callable[[CaptionProvider, CaptionTarget], GeneratedCaption],
) -> str:
    target = CaptionTarget(platform=platform.value, max_length=text_limit(platform)) if platform else CaptionTarget()
    charge = usage_charge(workspace_id=workspace_id, member=member, kind=AiUsageKind.CAPTION)
    try:
        text = call(get_caption_provider(), target).text.strip()
        if platform is not None:
            text = fit_to_platform(platform, text)
        if not text:
            raise ProviderError(
                "AI caption provider returned no caption that fits"
                + (f" {platform.value}'s text limit without cutting a word" if platform else "")
            )
    except ProviderError as exc:
        usage_refund(charge=charge)
        raise AiProviderFailed(exc.message) from exc
    except Exception as exc:
        usage_refund(charge=charge)
        logger.exception("AI caption provider crashed")
        raise AiProviderFailed(_UNEXPECTED_ERROR) from exc
    return text
