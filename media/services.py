"""Media writes: minting upload URLs, receiving a local upload, resolving and marking the files
posts reference. The posts app calls :func:`media_resolve` and :func:`media_mark_referenced`."""

from __future__ import annotations

import datetime as dt
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.errors import ApplicationError, BadRequest, Conflict, NotFound, PayloadTooLarge, ValidationFailed
from media.files import ALLOWED_MIME_TYPES, MAX_FILE_NAME_LENGTH, kind_of, new_key, sanitize_file_name
from media.models import MediaFile, ProbeStatus
from media.previews import PREVIEWED_KINDS, previews_enqueue
from media.probing import probes_send
from media.selectors import media_previews
from media.storage import UPLOAD_URL_TTL, get_media_storage, local_upload_signature_valid

__all__ = [
    "MAX_FILES_PER_REQUEST",
    "MediaInfo",
    "UploadRequest",
    "UploadTicket",
    "media_keep_until",
    "media_mark_referenced",
    "media_previews",
    "media_resolve",
    "media_upload_receive",
    "upload_urls_create",
]

MAX_FILES_PER_REQUEST = 20
# A claimed local upload that never finished (client vanished mid-body) may be retried after this.
_ABANDONED_UPLOAD = dt.timedelta(minutes=15)
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class MediaInfo:
    url: str
    kind: str  # "image" | "video" | "document"
    mime_type: str
    size: int | None
    # What the probe read (``media.probe``), once ready; None before, or when it could not read it.
    probe: dict[str, Any] | None = None
    # Why the probe could not read the file ("" unless the file is unusable).
    unusable: str = ""


@dataclass(frozen=True)
class UploadRequest:
    file_name: str
    mime_type: str


@dataclass(frozen=True)
class UploadTicket:
    file_name: str
    upload_url: str
    public_url: str
    key: str
    expires_at: dt.datetime


@transaction.atomic
def upload_urls_create(*, workspace_id: str, files: list[UploadRequest]) -> list[UploadTicket]:
    """Mint one upload URL per file, in request order: a MediaFile row (not yet uploaded) under a
    fresh random key of the workspace, a PUT URL valid 1 h that only accepts the requested
    Content-Type, and the public URL posts of this workspace can reference once the bytes are in."""
    errors = []
    if not 1 <= len(files) <= MAX_FILES_PER_REQUEST:
        errors.append(f"files must contain 1 to {MAX_FILES_PER_REQUEST} items")
    for index, item in enumerate(files):
        if item.mime_type not in ALLOWED_MIME_TYPES:
            errors.append(f"files[{index}].mimeType must be one of: {', '.join(ALLOWED_MIME_TYPES)}")
        if not item.file_name.strip() or len(item.file_name) > MAX_FILE_NAME_LENGTH:
            errors.append(f"files[{index}].fileName must be 1 to {MAX_FILE_NAME_LENGTH} characters")
    if errors:
        raise ValidationFailed(errors)
    storage = get_media_storage()
    rows = []
    for item in files:
        name = sanitize_file_name(item.file_name, item.mime_type)
        key = new_key(workspace_id=workspace_id, file_name=name)
        rows.append(
            MediaFile(
                workspace_id=workspace_id,
                key=key,
                public_url=storage.public_url(key),
                file_name=name,
                mime_type=item.mime_type,
                kind=kind_of(item.mime_type),
            )
        )
    MediaFile.objects.bulk_create(rows)
    expires_at = (timezone.now() + UPLOAD_URL_TTL).replace(microsecond=0)
    return [
        UploadTicket(
            file_name=item.file_name,
            upload_url=storage.upload_url(key=row.key, content_type=row.mime_type, expires_at=expires_at),
            public_url=row.public_url,
            key=row.key,
            expires_at=expires_at,
        )
        for item, row in zip(files, rows, strict=True)
    ]


class _Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


class UploadRefused(ApplicationError):
    status_code = 403


def media_upload_receive(
    *,
    key: str,
    expires: str,
    content_type: str,
    signature: str,
    request_content_type: str,
    content_length: str | None,
    body: _Readable,
) -> MediaFile:
    """Accept the one PUT a local upload URL allows: the signature must cover this key, expiry
    and Content-Type, the URL must not have expired, the request's Content-Type must equal the
    signed one, and the body must fit MEDIA_MAX_UPLOAD_BYTES (413). The row is claimed with a
    conditional UPDATE, so of concurrent or repeated PUTs exactly one is stored (the others get
    409); a refused or broken transfer releases the claim so the URL can be used again.
    Runs in autocommit on purpose: the claim must be visible to other requests at once."""
    try:
        expires_at = int(expires)
    except ValueError:
        raise UploadRefused("Upload URL signature is invalid", code="invalid_upload_signature")
    if not local_upload_signature_valid(key=key, expires=expires_at, content_type=content_type, signature=signature):
        raise UploadRefused("Upload URL signature is invalid", code="invalid_upload_signature")
    if timezone.now().timestamp() > expires_at:
        raise UploadRefused("Upload URL has expired; request a new one", code="upload_url_expired")
    received_type = request_content_type.split(";", 1)[0].strip().lower()
    if received_type != content_type:
        raise BadRequest(
            f"Content-Type must be {content_type}, the type this upload URL was issued for",
            code="content_type_mismatch",
        )
    limit = settings.MEDIA_MAX_UPLOAD_BYTES
    declared = _declared_length(content_length)
    if declared is not None and declared > limit:
        raise PayloadTooLarge(f"File exceeds the upload limit of {limit} bytes", code="file_too_large")
    now = timezone.now()
    claimed = (
        MediaFile.objects.filter(key=key, uploaded_at__isnull=True)
        .exclude(upload_claimed_at__gt=now - _ABANDONED_UPLOAD)
        .update(upload_claimed_at=now)
    )
    if not claimed:
        if MediaFile.objects.filter(key=key).exists():
            raise Conflict("This upload URL was already used", code="upload_already_used")
        raise NotFound("Upload not found; request a new upload URL", code="upload_not_found")
    try:
        size = _store(key=key, content_type=content_type, body=body, limit=limit)
    except BaseException:
        MediaFile.objects.filter(key=key, upload_claimed_at=now).update(upload_claimed_at=None)
        raise
    stored_at = timezone.now()
    MediaFile.objects.filter(key=key).update(
        uploaded_at=stored_at,
        size=size,
        upload_claimed_at=None,
        probe_status=ProbeStatus.QUEUED,
        probe_queued_at=stored_at,
    )
    stored = MediaFile.objects.get(key=key)
    probes_send(media_file_ids=[stored.id])
    return stored


def _declared_length(raw: str | None) -> int | None:
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise BadRequest("Content-Length is not a number", code="invalid_content_length")


def _store(*, key: str, content_type: str, body: _Readable, limit: int) -> int:
    size = 0
    with tempfile.SpooledTemporaryFile(max_size=8 * 1024 * 1024) as buffer:
        while chunk := body.read(_CHUNK):
            size += len(chunk)
            if size > limit:
                raise PayloadTooLarge(f"File exceeds the upload limit of {limit} bytes", code="file_too_large")
            buffer.write(chunk)
        if size == 0:
            raise BadRequest("The request body is empty; PUT the file's bytes", code="empty_upload")
        buffer.seek(0)
        get_media_storage().save(key, buffer, content_type=content_type)  # type: ignore[arg-type]
    return size


def media_resolve(*, workspace_id: str, urls: list[str]) -> list[MediaInfo]:
    """Describe each URL (in order, duplicates kept) as a file of this workspace that is in
    storage. Any URL that is not the publicUrl of an uploaded file of this workspace (another
    workspace's included) raises 400 ``media_not_found`` naming every such URL; a file larger
    than MEDIA_MAX_UPLOAD_BYTES (possible only on S3, where the PUT is not size-capped) raises
    ``media_too_large``. The first time a file is seen in storage its size is recorded and its
    preview and probe queued. At most three queries, whatever the number of URLs."""
    if not urls:
        return []
    rows = {
        row.public_url: row for row in MediaFile.objects.filter(workspace_id=workspace_id, public_url__in=set(urls))
    }
    storage = get_media_storage()
    now = timezone.now()
    newly_uploaded: list[MediaFile] = []
    for row in rows.values():
        if row.uploaded_at is None and storage.exists(row.key):
            row.size, row.uploaded_at = storage.size(row.key), now
            row.probe_status, row.probe_queued_at = ProbeStatus.QUEUED, now
            newly_uploaded.append(row)
    missing = [url for url in dict.fromkeys(urls) if url not in rows or rows[url].uploaded_at is None]
    if missing:
        raise ValidationFailed(
            [f"mediaUrls: {url} was not found in this workspace's uploads (PUT the file first)" for url in missing],
            code="media_not_found",
        )
    limit = settings.MEDIA_MAX_UPLOAD_BYTES
    too_large = [url for url in dict.fromkeys(urls) if (rows[url].size or 0) > limit]
    if too_large:
        raise ValidationFailed(
            [f"mediaUrls: {url} is larger than the limit of {limit} bytes" for url in too_large],
            code="media_too_large",
        )
    if newly_uploaded:
        MediaFile.objects.bulk_update(newly_uploaded, ["size", "uploaded_at", "probe_status", "probe_queued_at"])
        probes_send(media_file_ids=[row.id for row in newly_uploaded])
    previews_enqueue(media_file_ids=_needing_preview(rows.values()))
    return [
        MediaInfo(
            url=url,
            kind=rows[url].kind,
            mime_type=rows[url].mime_type,
            size=rows[url].size,
            probe=rows[url].probe if rows[url].probe_status == ProbeStatus.READY else None,
            unusable=(rows[url].probe_error or "the file cannot be read")
            if rows[url].probe_status == ProbeStatus.UNUSABLE
            else "",
        )
        for url in urls
    ]


@transaction.atomic
def media_mark_referenced(*, workspace_id: str, urls: list[str]) -> None:
    """Record that a post of this workspace references these files (first_referenced_at is set
    once). The rows stay locked until the caller's transaction ends, so the lifecycle sweep can
    never collect a file while the post that references it is being written; a URL whose file
    is gone (collected meanwhile, or never of this workspace) raises 400 ``media_not_found``."""
    wanted = list(dict.fromkeys(urls))
    if not wanted:
        return
    rows = list(
        MediaFile.objects.select_for_update()
        .filter(workspace_id=workspace_id, public_url__in=wanted)
        .only("id", "public_url", "kind", "uploaded_at", "preview_status", "first_referenced_at")
    )
    found = {row.public_url for row in rows}
    missing = [url for url in wanted if url not in found]
    if missing:
        raise ValidationFailed(
            [f"mediaUrls: {url} was not found in this workspace's uploads" for url in missing],
            code="media_not_found",
        )
    unmarked = [row.id for row in rows if row.first_referenced_at is None]
    if unmarked:
        MediaFile.objects.filter(id__in=unmarked).update(first_referenced_at=timezone.now())
    previews_enqueue(media_file_ids=_needing_preview(rows))


def media_keep_until(*, workspace_id: str, urls: list[str], until: dt.datetime) -> int:
    """Keep these files of the workspace from collection until ``until`` (``keep_until``; the
    lifecycle sweep never takes a file before it), for a use other than a post's (the connect
    pages' logo). Setting an earlier instant hands the file back to the usual rules. Returns how
    many files it found; idempotent."""
    if not urls:
        return 0
    return MediaFile.objects.filter(workspace_id=workspace_id, public_url__in=set(urls)).update(keep_until=until)


def _needing_preview(rows: Iterable[MediaFile]) -> list[str]:
    return [
        row.id
        for row in rows
        if row.kind in PREVIEWED_KINDS and row.uploaded_at is not None and row.preview_status == ""
    ]
