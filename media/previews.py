"""WebP previews (≤ 720 px on the long side) of uploaded images, of a still frame of uploaded
videos and of the first page of uploaded PDFs, made in the background and stored next to the
original (``<key>.preview.webp``). PowerPoint and Word files get none: no library renders them
without system binaries, so their status becomes ``n/a`` and posts list no preview for them."""

from __future__ import annotations

import io
import logging
import shutil
import subprocess
import sys
import tempfile
import warnings
from functools import partial
from pathlib import Path
from typing import IO

import imageio_ffmpeg
from django.db import transaction
from django.utils import timezone
from PIL import Image, ImageOps, UnidentifiedImageError

from media.enqueue import MAKE_PREVIEW, enqueue_each
from media.files import preview_key_of
from media.models import MediaFile, MediaKind, PreviewStatus
from media.storage import get_media_storage

logger = logging.getLogger(__name__)
_SOURCE_ROOT = Path(__file__).resolve().parent.parent  # where ``-m media.pdf_page`` is found

PREVIEW_MAX_SIDE = 720
PREVIEW_QUALITY = 80
FRAME_TIMEOUT_SECONDS = 60
PAGE_TIMEOUT_SECONDS = 30
PREVIEWED_KINDS = (MediaKind.IMAGE, MediaKind.VIDEO, MediaKind.DOCUMENT)
_PDF_SIGNATURE = b"%PDF-"
_PDF_SIGNATURE_WINDOW = 1024  # PDF readers accept the header anywhere in the first KiB


class NotPreviewable(Exception):
    """The file is of a kind no preview is made of (a document that is not a PDF)."""


def previews_enqueue(*, media_file_ids: list[str]) -> None:
    """Mark these images' previews as queued (only those with none yet) and enqueue one
    ``media.make_preview`` each after the caller's transaction commits."""
    if not media_file_ids:
        return
    MediaFile.objects.filter(id__in=media_file_ids, preview_status=PreviewStatus.NONE).update(
        preview_status=PreviewStatus.QUEUED, preview_queued_at=timezone.now()
    )
    transaction.on_commit(partial(enqueue_each, MAKE_PREVIEW, list(media_file_ids)), robust=True)


def render_preview(original: bytes) -> bytes:
    """The WebP bytes of ``original`` scaled to fit 720 x 720 (never enlarged), EXIF rotation
    applied. Raises ``ValueError`` for bytes that are not a decodable image."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(original)) as image:
                image.draft("RGB", (PREVIEW_MAX_SIDE, PREVIEW_MAX_SIDE))
                picture = ImageOps.exif_transpose(image)
                picture = picture.convert("RGBA" if "A" in picture.getbands() else "RGB")
                picture.thumbnail((PREVIEW_MAX_SIDE, PREVIEW_MAX_SIDE), Image.Resampling.LANCZOS)
                out = io.BytesIO()
                picture.save(out, format="WEBP", quality=PREVIEW_QUALITY)
                return out.getvalue()
    except (UnidentifiedImageError, OSError, SyntaxError, Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ValueError("not a decodable image")


def video_still_frame(original: IO[bytes]) -> bytes:
    """A PNG of a representative frame near the start of the video read from ``original``
    (ffmpeg's ``thumbnail`` filter, which skips black and fade frames), decoded by the ffmpeg
    binary that the imageio-ffmpeg package ships. ffmpeg may only read the local copy (no network
    protocols a crafted file could name) and gets a time limit. Raises ``ValueError`` for bytes
    ffmpeg cannot decode into a frame."""
    with tempfile.NamedTemporaryFile(suffix=".video") as copy:
        shutil.copyfileobj(original, copy)
        copy.flush()
        command = [
            imageio_ffmpeg.get_ffmpeg_exe(),
            *("-nostdin", "-hide_banner", "-loglevel", "error", "-protocol_whitelist", "file"),
            *("-i", copy.name, "-vf", "thumbnail", "-frames:v", "1", "-f", "image2pipe", "-c:v", "png", "-"),
        ]
        try:
            done = subprocess.run(command, capture_output=True, timeout=FRAME_TIMEOUT_SECONDS, check=False)
        except subprocess.TimeoutExpired:
            raise ValueError("no frame within the time limit")
    if done.returncode != 0 or not done.stdout:
        raise ValueError("not a decodable video")
    return done.stdout


def document_first_page(original: IO[bytes]) -> bytes:
    """A PNG of the first page of the PDF read from ``original``, rendered by ``media.pdf_page`` in
    a child process with capped memory and CPU time and a wall-clock limit, so a hostile PDF costs
    at most that child. Raises ``NotPreviewable`` for a document that is not a PDF (PowerPoint,
    Word) and ``ValueError`` for a PDF that cannot be rendered."""
    with tempfile.TemporaryFile() as copy:
        shutil.copyfileobj(original, copy)
        copy.seek(0)
        if _PDF_SIGNATURE not in copy.read(_PDF_SIGNATURE_WINDOW):
            raise NotPreviewable("not a PDF")
        copy.seek(0)
        command = [sys.executable, "-m", "media.pdf_page"]
        try:
            done = subprocess.run(
                command, stdin=copy, capture_output=True, timeout=PAGE_TIMEOUT_SECONDS, check=False, cwd=_SOURCE_ROOT
            )
        except subprocess.TimeoutExpired:
            raise ValueError("no page within the time limit")
    if done.returncode != 0 or not done.stdout:
        raise ValueError("not a renderable PDF")
    return done.stdout


def _original_still(kind: str, original: IO[bytes]) -> bytes:
    if kind == MediaKind.VIDEO:
        return video_still_frame(original)
    if kind == MediaKind.DOCUMENT:
        return document_first_page(original)
    return original.read()


def preview_make(*, media_file_id: str) -> str:
    """Make the preview of one uploaded image, of a still frame of one uploaded video or of the
    first page of one uploaded PDF, unless it already has one (a document that is not a PDF is
    marked ``n/a``). Idempotent: a second run finds the status ``ready`` or
    ``failed`` and does nothing. Returns the resulting preview status."""
    row = MediaFile.objects.filter(id=media_file_id).first()
    if row is None:
        return "gone"
    if row.kind not in PREVIEWED_KINDS:
        MediaFile.objects.filter(id=row.id).update(preview_status=PreviewStatus.NOT_APPLICABLE)
        return PreviewStatus.NOT_APPLICABLE
    if row.preview_status in (PreviewStatus.READY, PreviewStatus.FAILED) or row.uploaded_at is None:
        return row.preview_status
    storage = get_media_storage()
    try:
        with storage.open(row.key) as original:
            data = _original_still(row.kind, original)
    except NotPreviewable:
        MediaFile.objects.filter(id=row.id).update(preview_status=PreviewStatus.NOT_APPLICABLE)
        return PreviewStatus.NOT_APPLICABLE
    except (FileNotFoundError, OSError):
        logger.warning("preview of %s skipped: original not readable", row.id)
        return row.preview_status
    except ValueError:
        MediaFile.objects.filter(id=row.id).update(preview_status=PreviewStatus.FAILED)
        return PreviewStatus.FAILED
    try:
        webp = render_preview(data)
    except ValueError:
        MediaFile.objects.filter(id=row.id).update(preview_status=PreviewStatus.FAILED)
        return PreviewStatus.FAILED
    preview_key = preview_key_of(row.key)
    storage.save(preview_key, io.BytesIO(webp), content_type="image/webp")
    updated = MediaFile.objects.filter(id=row.id).update(preview_key=preview_key, preview_status=PreviewStatus.READY)
    if not updated:  # the file was collected while we worked: do not leave an orphan behind
        storage.delete(preview_key)
        return "gone"
    return PreviewStatus.READY
