"""Media reads."""

from __future__ import annotations

from media.models import AiImageJob, MediaFile, PreviewStatus
from media.storage import get_media_storage


def media_previews(*, urls: list[str]) -> dict[str, str | None]:
    """url → the public URL of its WebP preview (of an image, or a still frame of a video), or
    None where there is none (not made yet, none could be made, or the URL is not one of ours). One query for any number of URLs. Public URLs are
    unguessable and carry their workspace id, so this needs no workspace argument."""
    if not urls:
        return {}
    ready = dict(
        MediaFile.objects.filter(public_url__in=set(urls), preview_status=PreviewStatus.READY).values_list(
            "public_url", "preview_key"
        )
    )
    storage = get_media_storage()
    return {url: storage.public_url(ready[url]) if url in ready else None for url in urls}


def ai_image_job_get(*, workspace_id: str, job_id: str) -> AiImageJob | None:
    return AiImageJob.objects.filter(workspace_id=workspace_id, id=job_id).first()


def media_file_for_serving(*, key: str) -> tuple[str, str] | None:
    """(storage key, mime type) of an uploaded original or a ready preview at ``key``. A key
    PostgreSQL cannot even compare (NUL characters) names nothing."""
    if "\x00" in key:
        return None
    row = MediaFile.objects.filter(key=key, uploaded_at__isnull=False).values_list("key", "mime_type").first()
    if row is not None:
        return row
    preview = (
        MediaFile.objects.filter(preview_key=key, preview_status=PreviewStatus.READY)
        .values_list("preview_key", flat=True)
        .first()
    )
    return (preview, "image/webp") if preview else None


def media_file_by_url(*, workspace_id: str, url: str) -> MediaFile | None:
    """The file of this workspace whose public URL is ``url`` (uploaded or not)."""
    if "\x00" in url:
        return None
    return MediaFile.objects.filter(workspace_id=workspace_id, public_url=url).first()


def media_kinds(*, workspace_id: str, urls: list[str]) -> list[str]:
    """The kind of each URL's file of this workspace, in order ("" for a URL that is none)."""
    kinds = dict(
        MediaFile.objects.filter(workspace_id=workspace_id, public_url__in=set(urls)).values_list("public_url", "kind")
    )
    return [kinds.get(url, "") for url in urls]
