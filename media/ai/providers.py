"""AI providers behind one interface per kind (``media.ai.interface``), chosen by settings: images
(``generate(prompt, aspect_ratio) -> GeneratedImage``) and captions (``generate`` and ``refine``
returning a ``GeneratedCaption``). Each kind has an offline provider (no network, the default)
and an OpenAI-compatible one."""

from __future__ import annotations

from django.conf import settings

from media.ai.interface import (
    LONG_SIDE,
    RATIOS,
    CaptionProvider,
    CaptionTarget,
    GeneratedCaption,
    GeneratedImage,
    ImageProvider,
    ProviderError,
    pixel_size,
)
from media.ai.offline import OfflineRenderer
from media.ai.offline_captions import OfflineCaptionWriter
from media.ai.openai_captions import OpenAICompatibleCaptionProvider
from media.ai.openai_compat import OpenAICompatibleProvider

__all__ = [
    "LONG_SIDE",
    "RATIOS",
    "CaptionProvider",
    "CaptionTarget",
    "GeneratedCaption",
    "GeneratedImage",
    "ImageProvider",
    "ProviderError",
    "get_caption_provider",
    "get_provider",
    "pixel_size",
]


def get_provider() -> ImageProvider:
    """The provider AI_IMAGE_PROVIDER names (``offline`` by default, or ``openai``)."""
    name = settings.AI_IMAGE_PROVIDER
    if name == "offline":
        return OfflineRenderer()
    if name == "openai":
        return OpenAICompatibleProvider(
            base_url=settings.AI_IMAGE_API_URL,
            api_key=settings.AI_IMAGE_API_KEY,
            model=settings.AI_IMAGE_MODEL,
        )
    raise ProviderError(f"AI image provider {name!r} is not configured")


def get_caption_provider() -> CaptionProvider:
    """The provider AI_CAPTION_PROVIDER names (``offline`` by default, or ``openai``)."""
    name = settings.AI_CAPTION_PROVIDER
    if name == "offline":
        return OfflineCaptionWriter()
    if name == "openai":
        return OpenAICompatibleCaptionProvider(
            base_url=settings.AI_CAPTION_API_URL,
            api_key=settings.AI_CAPTION_API_KEY,
            model=settings.AI_CAPTION_MODEL,
            timeout=settings.AI_CAPTION_TIMEOUT_SECONDS,
            backoff=settings.AI_CAPTION_RETRY_BACKOFF_SECONDS,
        )
    raise ProviderError(f"AI caption provider {name!r} is not configured")
