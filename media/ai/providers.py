"""AI providers behind one interface per kind, chosen by settings: images
(``generate(prompt, aspect_ratio) -> GeneratedImage``) and captions (``generate`` and ``refine``
returning a ``GeneratedCaption``). Each kind has an offline provider (no network, the default)
and an OpenAI-compatible one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from django.conf import settings

LONG_SIDE = 1024
RATIOS: dict[str, tuple[int, int]] = {
    "1:1": (1, 1),
    "16:9": (16, 9),
    "9:16": (9, 16),
    "3:2": (3, 2),
    "2:3": (2, 3),
    "4:5": (4, 5),
    "5:4": (5, 4),
}


def pixel_size(aspect_ratio: str, long_side: int = LONG_SIDE) -> tuple[int, int]:
    """(width, height) with ``long_side`` pixels on the longer side, e.g. 16:9 → 1024 x 576."""
    w, h = RATIOS[aspect_ratio]
    if w >= h:
        return long_side, round(long_side * h / w)
    return round(long_side * w / h), long_side


@dataclass(frozen=True)
class GeneratedImage:
    data: bytes
    mime_type: str
    width: int
    height: int


class ProviderError(Exception):
    """The provider could not make the image. ``message`` is safe to show to the API user (it
    never carries credentials); ``retryable`` says whether trying again later may succeed."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable


@dataclass(frozen=True)
class GeneratedCaption:
    text: str


@dataclass(frozen=True)
class CaptionTarget:
    """What the caption is for: a platform name and its text limit, or neither (general)."""

    platform: str | None = None
    max_length: int | None = None


class ImageProvider(Protocol):
    def generate(self, *, prompt: str, aspect_ratio: str) -> GeneratedImage: ...


def get_provider() -> ImageProvider:
    """The provider AI_IMAGE_PROVIDER names (``offline`` by default, or ``openai``)."""
    name = settings.AI_IMAGE_PROVIDER
    if name == "offline":
        from media.ai.offline import OfflineRenderer

        return OfflineRenderer()
    if name == "openai":
        from media.ai.openai_compat import OpenAICompatibleProvider

        return OpenAICompatibleProvider(
            base_url=settings.AI_IMAGE_API_URL,
            api_key=settings.AI_IMAGE_API_KEY,
            model=settings.AI_IMAGE_MODEL,
        )
    raise ProviderError(f"AI image provider {name!r} is not configured")


class CaptionProvider(Protocol):
    def generate(self, *, prompt: str, target: CaptionTarget) -> GeneratedCaption: ...

    def refine(
        self, *, instruction: str, original_text: str, partial_text: str, target: CaptionTarget
    ) -> GeneratedCaption: ...


def get_caption_provider() -> CaptionProvider:
    """The provider AI_CAPTION_PROVIDER names (``offline`` by default, or ``openai``)."""
    name = settings.AI_CAPTION_PROVIDER
    if name == "offline":
        from media.ai.offline_captions import OfflineCaptionWriter

        return OfflineCaptionWriter()
    if name == "openai":
        from media.ai.openai_captions import OpenAICompatibleCaptionProvider

        return OpenAICompatibleCaptionProvider(
            base_url=settings.AI_CAPTION_API_URL,
            api_key=settings.AI_CAPTION_API_KEY,
            model=settings.AI_CAPTION_MODEL,
            timeout=settings.AI_CAPTION_TIMEOUT_SECONDS,
            backoff=settings.AI_CAPTION_RETRY_BACKOFF_SECONDS,
        )
    raise ProviderError(f"AI caption provider {name!r} is not configured")
