"""Probing: what each stored upload is (``media.probe`` reads it in a child process), recorded on
its row as ``probe`` (ready) or ``probe_error`` (unusable), once. Images and videos are probed;
documents are marked ``n/a``."""

from __future__ import annotations

import json
import logging
import shutil
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from media.children import Limits, run_child
from media.enqueue import PROBE_MEDIA, enqueue_each
from media.models import MediaFile, MediaKind, ProbeStatus
from media.storage import get_media_storage

logger = logging.getLogger(__name__)
_SOURCE_ROOT = Path(__file__).resolve().parent.parent  # where ``-m media.probe`` is found

PROBED_KINDS = (MediaKind.IMAGE, MediaKind.VIDEO)
_REASON_MAX_LENGTH = 300
_DONE = (ProbeStatus.READY, ProbeStatus.UNUSABLE, ProbeStatus.NOT_APPLICABLE)


def probes_enqueue(*, media_file_ids: list[str]) -> None:
    """Mark these files' probes as queued (only those with none yet) and enqueue one
    ``media.probe`` each after the caller's transaction commits."""
    if not media_file_ids:
        return
    MediaFile.objects.filter(id__in=media_file_ids, probe_status=ProbeStatus.NONE).update(
        probe_status=ProbeStatus.QUEUED, probe_queued_at=timezone.now()
    )
    probes_send(media_file_ids=media_file_ids)


def probes_send(*, media_file_ids: list[str]) -> None:
    """Enqueue one ``media.probe`` each after the caller's transaction commits, for files the
    caller has already marked queued in its own write."""
    if media_file_ids:
        transaction.on_commit(partial(enqueue_each, PROBE_MEDIA, list(media_file_ids)), robust=True)


def probe_limits() -> Limits:
    """The probe child's CPU budget and wall-clock backstop (``MEDIA_PROBE_*_SECONDS``)."""
    return Limits(
        what="the probe",
        cpu_seconds=settings.MEDIA_PROBE_CPU_SECONDS,
        wall_seconds=settings.MEDIA_PROBE_WALL_SECONDS,
        cpu_setting="MEDIA_PROBE_CPU_SECONDS",
        wall_setting="MEDIA_PROBE_WALL_SECONDS",
    )


def probe_file(*, kind: str, path: str) -> dict[str, Any]:
    """The facts ``media.probe`` reads from the local file at ``path`` (an image or a video).
    Raises ``ValueError`` with the reason for a file it cannot read, and for a probe stopped by
    its CPU limit, its wall-clock backstop or its memory cap (:func:`probe_limits`)."""
    command = [sys.executable, "-m", "media.probe", kind]
    with open(path, "rb") as source:
        output = run_child(command, stdin=source, cwd=_SOURCE_ROOT, limits=probe_limits())
    try:
        facts = json.loads(output)
    except ValueError:
        facts = None
    if not isinstance(facts, dict):
        raise ValueError("the file cannot be read")
    return facts


def media_probe(*, media_file_id: str) -> str:
    """Probe one stored image or video and record the outcome: ``ready`` with ``probe``, or
    ``unusable`` with ``probe_error``; a document is marked ``n/a``. Idempotent: a file already
    probed is left as it is, and of two runs at once only the first to finish writes (a
    conditional UPDATE), so the file is probed to one result. A file not stored yet, or whose
    bytes cannot be read from storage right now, is left for a later run. Returns the status."""
    row = MediaFile.objects.filter(id=media_file_id).only("id", "kind", "key", "uploaded_at", "probe_status").first()
    if row is None:
        return "gone"
    if row.probe_status in _DONE or row.uploaded_at is None:
        return row.probe_status
    if row.kind not in PROBED_KINDS:
        return _record(row.id, probe_status=ProbeStatus.NOT_APPLICABLE)
    try:
        with tempfile.NamedTemporaryFile(suffix=".probe") as copy:
            with get_media_storage().open(row.key) as original:
                shutil.copyfileobj(original, copy)
            copy.flush()
            facts = probe_file(kind=row.kind, path=copy.name)
    except (FileNotFoundError, OSError):
        logger.warning("probe of %s skipped: original not readable", row.id)
        return row.probe_status
    except ValueError as error:
        return media_probe_failed(media_file_id=row.id, reason=str(error))
    return _record(row.id, probe_status=ProbeStatus.READY, probe=facts, probe_error="")


def media_probe_failed(*, media_file_id: str, reason: str) -> str:
    """Mark a file not probed yet unusable, with ``reason`` (shown to the client)."""
    return _record(
        media_file_id, probe_status=ProbeStatus.UNUSABLE, probe=None, probe_error=reason[:_REASON_MAX_LENGTH]
    )


def _record(media_file_id: str, **fields: Any) -> str:
    written = MediaFile.objects.filter(id=media_file_id).exclude(probe_status__in=_DONE).update(**fields)
    if written:
        return str(fields["probe_status"])
    current = MediaFile.objects.filter(id=media_file_id).values_list("probe_status", flat=True).first()
    return "gone" if current is None else str(current)
