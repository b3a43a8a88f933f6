"""WebP previews: scaled to fit 720 x 720 (never enlarged), EXIF rotation applied, made once."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from media.ai.services import ai_image_job_run
from media.models import MediaFile
from media.previews import render_preview
from media.selectors import media_previews
from media.storage import get_media_storage
from media.tasks import make_preview
from tests.factories.media import AiImageJobFactory


def encoded(size: tuple[int, int], fmt: str = "JPEG", mode: str = "RGB", **save: object) -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, (200, 40, 40, 128)[: len(mode)]).save(out, format=fmt, **save)
    return out.getvalue()


def size_of(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "WEBP"
        return image.size


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        ((2000, 1000), (720, 360)),
        ((900, 3000), (216, 720)),
        ((4000, 4000), (720, 720)),
        ((720, 100), (720, 100)),
        ((300, 200), (300, 200)),  # never enlarged
    ],
)
def test_previews_fit_720_pixels(size: tuple[int, int], expected: tuple[int, int]) -> None:
    assert size_of(render_preview(encoded(size))) == expected


def test_exif_rotation_is_applied_and_transparency_kept() -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise to display
    assert size_of(render_preview(encoded((1600, 800), exif=exif))) == (360, 720)
    with Image.open(io.BytesIO(render_preview(encoded((1000, 1000), fmt="PNG", mode="RGBA")))) as image:
        assert image.mode == "RGBA"


def test_undecodable_bytes_are_refused() -> None:
    with pytest.raises(ValueError):
        render_preview(b"%PDF-1.4 not an image")


@pytest.mark.django_db
def test_a_generated_image_gets_its_preview_once(workspace, local_media) -> None:
    job = AiImageJobFactory(workspace=workspace, aspect_ratio="16:9")
    assert ai_image_job_run(job_id=job.id).status == "completed"
    media = MediaFile.objects.get(workspace=workspace)
    assert media.preview_status == "queued"

    assert make_preview(media.id) == "ready"
    assert make_preview(media.id) == "ready"

    preview_url = media_previews(urls=[media.public_url])[media.public_url]
    media.refresh_from_db()
    assert preview_url == get_media_storage().public_url(media.preview_key)
    with get_media_storage().open(media.preview_key) as stored:
        assert size_of(stored.read()) == (720, 405)
