"""What every AI provider is: the shapes an image or caption provider takes and returns, and the
one error it raises. The providers (offline, OpenAI-compatible) import this module; the
factory that picks one by settings is ``media.ai.providers``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

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


class CaptionProvider(Protocol):
    def generate(self, *, prompt: str, target: CaptionTarget) -> GeneratedCaption: ...

    def refine(
        self, *, instruction: str, original_text: str, partial_text: str, target: CaptionTarget
    ) -> GeneratedCaption: ...
