"""Storage and the image provider are configured by the environment alone, as a deployment
sets them: STORAGE=s3 with bucket, region, endpoint and public base URL, and the
OpenAI-compatible provider with URL, key and model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, datetime as dt
import django
django.setup()
from django.utils import timezone
from media.storage import get_media_storage, S3MediaStorage
from media.ai.providers import get_provider
from media.ai.openai_compat import OpenAICompatibleProvider
storage = get_media_storage()
provider = get_provider()
print(json.dumps({
    "s3": isinstance(storage, S3MediaStorage),
    "public": storage.public_url("ws_1/abc/a.png"),
    "upload": storage.upload_url(key="ws_1/abc/a.png", content_type="image/png",
                                 expires_at=timezone.now() + dt.timedelta(hours=1)),
    "region": getattr(storage.files, "region_name", None),
    "bucket": getattr(storage, "bucket", None),
    "provider": type(provider).__name__,
    "provider_config": [provider.base_url, provider.api_key == "sk-env-key", provider.model]
        if isinstance(provider, OpenAICompatibleProvider) else None,
}))
"""


def _start(**overrides: str) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("S3_", "AWS_", "STORAGE", "AI_IMAGE_", "DEBUG", "TESTING", "PYTEST"))
    }
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            # Unused (nothing connects); set so that loading the settings starts no embedded server.
            "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none",
            "REDIS_URL": "redis://127.0.0.1:1/0",
            "SECRET_KEY": "a-test-secret-key-that-is-long-enough-0123456789",
            "FERNET_KEYS": "0" * 43 + "=",
            "ALLOWED_HOSTS": "example.com",
            "PLATFORM_MODE": "sandbox",
        }
    )
    env.update(overrides)
    return subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_s3_and_the_openai_provider_come_from_the_environment() -> None:
    result = _start(
        STORAGE="s3",
        S3_BUCKET="crosspost-media",
        S3_REGION="eu-west-3",
        S3_ENDPOINT_URL="http://127.0.0.1:9",
        S3_PUBLIC_BASE_URL="https://cdn.example.com/m/",
        AWS_ACCESS_KEY_ID="AKIAEXAMPLE",
        AWS_SECRET_ACCESS_KEY="not-a-real-secret",
        AI_IMAGE_PROVIDER="openai",
        AI_IMAGE_API_URL="https://images.example.com/v1",
        AI_IMAGE_API_KEY="sk-env-key",
        AI_IMAGE_MODEL="image-model-2",
    )
    assert result.returncode == 0, result.stderr
    probe = json.loads(result.stdout.strip().splitlines()[-1])
    assert probe["s3"] is True
    assert (probe["bucket"], probe["region"]) == ("crosspost-media", "eu-west-3")
    assert probe["public"] == "https://cdn.example.com/m/ws_1/abc/a.png"
    upload = urlsplit(probe["upload"])
    query = parse_qs(upload.query)
    assert (upload.scheme, upload.netloc, upload.path) == ("http", "127.0.0.1:9", "/crosspost-media/ws_1/abc/a.png")
    assert query["X-Amz-Credential"][0].startswith("AKIAEXAMPLE/") and "/eu-west-3/s3/" in query["X-Amz-Credential"][0]
    assert query["X-Amz-SignedHeaders"] == ["content-type;host"]
    assert probe["provider"] == "OpenAICompatibleProvider"
    assert probe["provider_config"] == ["https://images.example.com/v1", True, "image-model-2"]


def test_the_embedded_defaults_are_local_storage_and_the_offline_renderer() -> None:
    result = _start()
    assert result.returncode == 0, result.stderr
    probe = json.loads(result.stdout.strip().splitlines()[-1])
    assert probe["s3"] is False and probe["provider"] == "OfflineRenderer"
    assert "/uploads/ws_1/abc/a.png?" in probe["upload"] and probe["public"].endswith("/media/ws_1/abc/a.png")


CAPTION_PROBE = """
import json
import django
django.setup()
from django.conf import settings
from media.ai.providers import get_caption_provider
provider = get_caption_provider()
print(json.dumps({
    "provider": type(provider).__name__,
    "config": [getattr(provider, name, None) for name in ("base_url", "api_key", "model", "timeout", "backoff")],
    "quota": settings.AI_MONTHLY_UNITS,
}))
"""


def _caption_probe(**overrides: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AI_", "DEBUG", "TESTING", "PYTEST"))}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none",
            "REDIS_URL": "redis://127.0.0.1:1/0",
            "SECRET_KEY": "a-test-secret-key-that-is-long-enough-0123456789",
            "FERNET_KEYS": "0" * 43 + "=",
            "ALLOWED_HOSTS": "example.com",
            "PLATFORM_MODE": "sandbox",
            **overrides,
        }
    )
    result = subprocess.run(
        [sys.executable, "-c", CAPTION_PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def test_captions_default_to_the_offline_provider_and_no_quota() -> None:
    probe = _caption_probe()
    assert (probe["provider"], probe["quota"]) == ("OfflineCaptionWriter", None)


def test_the_caption_provider_and_quota_come_from_the_environment() -> None:
    probe = _caption_probe(
        AI_CAPTION_PROVIDER="openai",
        AI_IMAGE_API_URL="https://ai.example.com/v1",
        AI_IMAGE_API_KEY="sk-shared",
        AI_CAPTION_MODEL="text-model",
        AI_CAPTION_TIMEOUT_SECONDS="12",
        AI_CAPTION_RETRY_BACKOFF_SECONDS="0.25",
        AI_MONTHLY_UNITS="500",
    )
    assert probe == {
        "provider": "OpenAICompatibleCaptionProvider",
        "config": ["https://ai.example.com/v1", "sk-shared", "text-model", 12.0, 0.25],
        "quota": 500,
    }
    own = _caption_probe(
        AI_CAPTION_PROVIDER="openai",
        AI_IMAGE_API_URL="https://images.example.com/v1",
        AI_CAPTION_API_URL="https://text.example.com/v1",
        AI_CAPTION_API_KEY="sk-text",
    )
    assert own["config"][:2] == ["https://text.example.com/v1", "sk-text"]
