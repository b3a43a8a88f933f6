"""A client of an OpenAI-compatible images API (``POST {base}/images/generations``).

Such APIs offer a few fixed sizes, so we ask for the closest orientation and crop the result
to the exact aspect ratio requested (1024 px on the long side, like the offline renderer)."""

from __future__ import annotations

import base64
import binascii
import io
from typing import Any

import requests
from PIL import Image, ImageOps, UnidentifiedImageError

from media.ai.interface import RATIOS, GeneratedImage, ProviderError, pixel_size

TIMEOUT_SECONDS = 120.0
_MAX_MESSAGE = 300


def _request_size(aspect_ratio: str) -> str:
    w, h = RATIOS[aspect_ratio]
    if w == h:
        return "1024x1024"
    return "1536x1024" if w > h else "1024x1536"


class OpenAICompatibleProvider:
    def __init__(self, *, base_url: str, api_key: str, model: str, timeout: float = TIMEOUT_SECONDS) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.model = model
        self.timeout = timeout

    def generate(self, *, prompt: str, aspect_ratio: str) -> GeneratedImage:
        if not self.base_url:
            raise ProviderError("AI image provider is not configured (AI_IMAGE_API_URL is empty)")
        payload: dict[str, Any] = {
            "prompt": prompt,
            "size": _request_size(aspect_ratio),
            "response_format": "b64_json",
            "n": 1,
        }
        if self.model:
            payload["model"] = self.model
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        try:
            response = requests.post(
                f"{self.base_url}/images/generations", json=payload, headers=headers, timeout=self.timeout
            )
        except requests.Timeout:
            raise ProviderError("AI image provider timed out", retryable=True)
        except requests.RequestException:
            raise ProviderError("AI image provider is unreachable", retryable=True)
        if response.status_code >= 400:
            raise classify_error(response, provider="AI image provider", secret=self.api_key)
        return self._decode(response, aspect_ratio)

    def _decode(self, response: requests.Response, aspect_ratio: str) -> GeneratedImage:
        try:
            encoded = response.json()["data"][0]["b64_json"]
            raw = base64.b64decode(encoded, validate=True)
        except (ValueError, KeyError, IndexError, TypeError, binascii.Error):
            raise ProviderError("AI image provider returned no image")
        width, height = pixel_size(aspect_ratio)
        try:
            with Image.open(io.BytesIO(raw)) as source:
                picture = ImageOps.fit(source.convert("RGB"), (width, height), Image.Resampling.LANCZOS)
        except (UnidentifiedImageError, OSError, Image.DecompressionBombError):
            raise ProviderError("AI image provider returned an unreadable image")
        out = io.BytesIO()
        picture.save(out, format="PNG")
        return GeneratedImage(data=out.getvalue(), mime_type="image/png", width=width, height=height)


def classify_error(response: requests.Response, *, provider: str, secret: str = "") -> ProviderError:
    """The provider's error response as a ProviderError: 429 and 5xx retryable, the rest not.
    ``secret`` (the API key) is blotted out of the provider's message before it is shortened,
    so not even a piece of it can show."""
    status = response.status_code
    detail = _error_message(response, secret)
    if status in (401, 403):
        return ProviderError(f"{provider} refused the credentials")
    if status == 429:
        return ProviderError(f"{provider} rate limit or quota exceeded: {detail}", retryable=True)
    if status >= 500:
        return ProviderError(f"{provider} failed ({status}): {detail}", retryable=True)
    return ProviderError(f"{provider} rejected the request: {detail}")


def _error_message(response: requests.Response, secret: str) -> str:
    try:
        body = response.json()
        message = body["error"]["message"] if isinstance(body.get("error"), dict) else body.get("error")
    except (ValueError, AttributeError, KeyError, TypeError):
        message = None
    text = str(message) if message else f"HTTP {response.status_code}"
    if secret:
        text = text.replace(secret, "***")
    return text[:_MAX_MESSAGE]
