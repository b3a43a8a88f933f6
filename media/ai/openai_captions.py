"""A client of an OpenAI-compatible chat completions API (``POST {base}/chat/completions``)
that writes and refines captions.

A 429, a 5xx, a timeout or a refused connection is retried (``MAX_ATTEMPTS`` in all) after a
backoff that doubles each time, or after the provider's ``Retry-After`` when it sends a short
one. Every failure becomes a :class:`ProviderError` whose message is safe to show: the API key
never appears in it nor in a log line."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import requests

from media.ai.interface import CaptionTarget, GeneratedCaption, ProviderError
from media.ai.openai_compat import classify_error

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
MAX_RETRY_AFTER_SECONDS = 10.0
_SYSTEM = (
    "You write social media captions. Answer with the caption text only: no preamble, no quotes "
    "around it, no explanations."
)


class OpenAICompatibleCaptionProvider:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        timeout: float = 30.0,
        backoff: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.model = model
        self.timeout = timeout
        self.backoff = backoff
        self.sleep = sleep

    def generate(self, *, prompt: str, target: CaptionTarget) -> GeneratedCaption:
        user = f"Write a caption for this brief:\n{prompt}{_limit_line(target)}"
        return self._complete(user)

    def refine(
        self, *, instruction: str, original_text: str, partial_text: str, target: CaptionTarget
    ) -> GeneratedCaption:
        user = f"Rewrite this caption following the instruction.\nInstruction: {instruction}\nCaption:\n{original_text}"
        if partial_text:
            user += f"\nThe rewritten caption must begin exactly with this partly written text; continue it:\n{partial_text}"
        caption = self._complete(user + _limit_line(target))
        if partial_text and not caption.text.startswith(partial_text):
            joiner = "" if partial_text[-1:].isspace() or caption.text[:1] in ",.;:!?" else " "
            caption = GeneratedCaption(text=partial_text + joiner + caption.text)
        return caption

    def _complete(self, user: str) -> GeneratedCaption:
        if not self.base_url:
            raise ProviderError("AI caption provider is not configured (AI_CAPTION_API_URL is empty)")
        payload: dict[str, Any] = {
            "messages": [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}],
            "n": 1,
        }
        if self.model:
            payload["model"] = self.model
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        for attempt in range(1, MAX_ATTEMPTS + 1):
            wait: float | None = None
            try:
                response = requests.post(
                    f"{self.base_url}/chat/completions", json=payload, headers=headers, timeout=self.timeout
                )
            except requests.Timeout:
                error = ProviderError("AI caption provider timed out", retryable=True)
            except requests.RequestException:
                error = ProviderError("AI caption provider is unreachable", retryable=True)
            else:
                if response.status_code < 400:
                    return _decode(response)
                error = classify_error(response, provider="AI caption provider", secret=self.api_key)
                wait = _retry_after(response)
            logger.warning("AI caption provider attempt %d/%d failed: %s", attempt, MAX_ATTEMPTS, error.message)
            if not error.retryable or attempt == MAX_ATTEMPTS:
                raise error
            self.sleep(wait if wait is not None else self.backoff * 2 ** (attempt - 1))
        raise AssertionError("unreachable")  # pragma: no cover


def _limit_line(target: CaptionTarget) -> str:
    if target.platform is None or target.max_length is None:
        return ""
    return f"\nIt is for {target.platform}: keep it under {target.max_length} characters, URLs included."


def _decode(response: requests.Response) -> GeneratedCaption:
    try:
        content = response.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ProviderError("AI caption provider returned no caption")
    if not isinstance(content, str) or not content.strip():
        raise ProviderError("AI caption provider returned no caption")
    text = content.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'“”":
        text = text[1:-1].strip()  # a model that quotes its answer despite being asked not to
    return GeneratedCaption(text=text)


def _retry_after(response: requests.Response) -> float | None:
    try:
        seconds = float(response.headers.get("Retry-After", ""))
    except ValueError:
        return None
    return seconds if 0 <= seconds <= MAX_RETRY_AFTER_SECONDS else None
