"""Factories of the media app."""

from __future__ import annotations

import secrets

import factory
from django.conf import settings
from django.utils import timezone

from media.models import AiImageJob, MediaFile
from tests.factories import WorkspaceFactory


def _key(file: MediaFile) -> str:
    return f"{file.workspace.id}/{secrets.token_hex(16)}/{file.file_name}"


UPLOADED_SIZE = 100_000


class MediaFileFactory(factory.django.DjangoModelFactory):
    """A file row; ``uploaded=True`` marks it as in storage (the bytes are the test's business)."""

    class Meta:
        model = MediaFile

    class Params:
        # 100 kB: within every platform's file size rules (Google's 10 kB minimum, LinkedIn's 75 kB
        # for videos, Bluesky's 1 MB for images: platforms.media_rules), so only a test that
        # means to hit one of them does.
        uploaded = factory.Trait(uploaded_at=factory.LazyFunction(timezone.now), size=UPLOADED_SIZE)

    workspace = factory.SubFactory(WorkspaceFactory)
    file_name = "photo.jpg"
    mime_type = "image/jpeg"
    kind = "image"
    key = factory.LazyAttribute(_key)
    public_url = factory.LazyAttribute(lambda f: f"{settings.PUBLIC_BASE_URL}/media/{f.key}")


class AiImageJobFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = AiImageJob

    workspace = factory.SubFactory(WorkspaceFactory)
    session_id = factory.Sequence(lambda n: f"sess_{n}")
    prompt = "a red fox in the snow"
    aspect_ratio = "1:1"
