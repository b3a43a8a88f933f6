"""The media lifecycle sweep: which files stay, which are collected.

The only module of this app that reads the posts tables (read-only).
"""

from __future__ import annotations

import datetime as dt
import itertools
import logging
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from media.files import preview_key_of
from media.models import MediaFile, MediaSource, MediaVariant, PreviewStatus, ProbeStatus
from media.previews import PREVIEWED_KINDS, previews_enqueue
from media.probing import probes_enqueue
from media.storage import get_media_storage
from posts.models import Post, PostStatus, RecurringPost, RecurringStatus

logger = logging.getLogger(__name__)

UNREFERENCED_GRACE = dt.timedelta(days=7)
FAILED_POST_GRACE = dt.timedelta(days=7)
PREVIEW_REQUEUE_AFTER = dt.timedelta(minutes=30)
BATCH_SIZE = 200
# An object is written to storage before its row commits (AI images, previews); a worker killed in
# between leaves an object no row names. Far longer than any job holds one uncommitted (an AI job:
# 3 attempts of a 10-minute lease), so nothing on its way to a commit is ever taken.
ORPHAN_GRACE = dt.timedelta(days=1)
ORPHAN_BATCH = 500
# Only keys of the shape this app writes (``media.files.new_key`` and its preview) are ever
# considered: a bucket or directory shared with anything else keeps what is not ours.
_OUR_KEY = re.compile(r"^[^/]+/[0-9a-f]{32}/[^/]+$")
_PREVIEW_SUFFIX = preview_key_of("")
PREVIEW_BATCH = 500

UNFINISHED_POST_STATUSES = (PostStatus.DRAFT, PostStatus.SCHEDULED, PostStatus.PENDING, PostStatus.PUBLISHING)
RETRYABLE_POST_STATUSES = (PostStatus.FAILED, PostStatus.PARTIAL_FAILURE)
LIVE_SERIES_STATUSES = (RecurringStatus.ACTIVE, RecurringStatus.PAUSED)


@dataclass(frozen=True)
class SweepResult:
    deleted: int
    previews_queued: int
    probes_queued: int = 0


def collect_garbage(*, now: dt.datetime | None = None) -> SweepResult:
    """Delete (storage objects, preview included, then the row) every media file nothing needs
    any more, and queue the previews and probes that are missing. Idempotent: a second run finds nothing
    left to delete.

    A file is KEPT while any of these holds:

    * a post in DRAFT, SCHEDULED, PENDING or PUBLISHING references it (``mediaUrls``,
      ``thumbnailUrl`` or a ``thread`` item's ``mediaUrls``);
    * an ACTIVE or PAUSED recurring series references it in its template;
    * a post in FAILED or PARTIAL_FAILURE that finished less than 7 days ago references it —
      such a post may still be retried (``POST /social-posts/{id}/retry``), and a retry must
      find its files, so they get the same 7 days an unreferenced upload gets;
    * its ``keep_until`` is in the future (AI images: 7 days after they are made);
    * it was created less than 7 days ago and no finished post references it yet (an upload
      waiting for its post, or one whose draft was deleted and may be reused).

    A fitted file (``mediaFit: "auto"``, a MediaVariant's output) is kept while its original is
    (the posts that fit reference the original, never the variant), or while something above
    keeps the variant itself; it is collected with its original, in the same batch, and a
    fitted file whose original is gone is collected as soon as nothing above keeps it.

    Otherwise it is deleted: once every post referencing it has finished publishing
    (COMPLETED, PARTIAL_FAILURE, FAILED — the latter two after their 7 days), or 7 days after
    upload when nothing ever referenced it. Rows are taken with ``FOR UPDATE SKIP LOCKED`` in
    small batches, so a post being written (``media_mark_referenced`` holds the row lock until
    its transaction ends) is never collected from under it, and two sweeps never collide.
    """
    now = now or timezone.now()
    deleted = 0
    after_id = ""
    while True:
        batch_deleted, last_id = _sweep_batch(now=now, after_id=after_id)
        deleted += batch_deleted
        if last_id is None:
            break
        after_id = last_id
    previews_queued = _queue_missing_previews(now=now)
    probes_queued = _queue_missing_probes(now=now)
    if deleted:
        logger.info("media lifecycle: %d file(s) collected", deleted)
    return SweepResult(deleted=deleted, previews_queued=previews_queued, probes_queued=probes_queued)


def _sweep_batch(*, now: dt.datetime, after_id: str) -> tuple[int, str | None]:
    with transaction.atomic():
        candidates = list(
            MediaFile.objects.select_for_update(skip_locked=True)
            .filter(
                Q(created_at__lt=now - UNREFERENCED_GRACE)
                | Q(first_referenced_at__isnull=False)
                | Q(source=MediaSource.FIT)
            )
            .exclude(keep_until__gt=now)
            .filter(id__gt=after_id)
            .order_by("id")
            .only("id", "workspace_id", "key", "public_url", "preview_key", "created_at", "source")[:BATCH_SIZE]
        )
        if not candidates:
            return 0, None
        kept, released = _references(candidates, now=now)
        originals = [row for row in candidates if row.source != MediaSource.FIT]
        doomed = [
            row
            for row in originals
            if row.public_url not in kept and (row.public_url in released or row.created_at < now - UNREFERENCED_GRACE)
        ]
        doomed_ids = {row.id for row in doomed}
        fitted = [row for row in candidates if row.source == MediaSource.FIT]
        doomed += _fitted_doomed(fitted, kept, doomed_ids)
        doomed += _outputs_of(doomed_ids, seen={row.id for row in candidates}, now=now)
        storage = get_media_storage()
        for row in doomed:
            for key in filter(None, (row.preview_key, row.key)):
                storage.delete(key)
        if doomed:
            MediaFile.objects.filter(id__in=[row.id for row in doomed]).delete()
        return len(doomed), candidates[-1].id


def _fitted_doomed(fitted: list[MediaFile], kept: set[str], doomed_ids: set[str]) -> list[MediaFile]:
    """The fitted files among ``fitted`` to collect: those no post or series keeps whose original
    is gone or is collected now (``doomed_ids``)."""
    if not fitted:
        return []
    original_of = dict(
        MediaVariant.objects.filter(output_id__in=[row.id for row in fitted]).values_list("output_id", "original_id")
    )
    return [
        row
        for row in fitted
        if row.public_url not in kept and (row.id not in original_of or original_of[row.id] in doomed_ids)
    ]


def _outputs_of(doomed_ids: set[str], *, seen: set[str], now: dt.datetime) -> list[MediaFile]:
    """The fitted files of the originals collected now that this batch has not looked at (an
    output sorts anywhere among the ids), locked as the batch is, less those a post or series
    keeps. One skipped because another transaction holds it has no original left afterwards and
    goes at a later sweep."""
    if not doomed_ids:
        return []
    outputs = list(
        MediaFile.objects.select_for_update(skip_locked=True, of=("self",))
        .filter(fitted_from__original_id__in=doomed_ids)
        .exclude(id__in=seen)
        .only("id", "workspace_id", "key", "public_url", "preview_key", "created_at", "source")
    )
    if not outputs:
        return []
    kept, _ = _references(outputs, now=now)
    return [row for row in outputs if row.public_url not in kept]


def _references(candidates: list[MediaFile], *, now: dt.datetime) -> tuple[set[str], set[str]]:
    """(URLs something still needs, URLs a finished post has released) among the candidates."""
    urls = {row.public_url for row in candidates}
    statuses: dict[str, list[tuple[str, dt.datetime]]] = defaultdict(list)
    in_thread = Q()
    for url in sorted(urls):  # a thread item's media: jsonb containment, one term per URL
        in_thread |= Q(thread__contains=[{"mediaUrls": [url]}])
    posts = Post.objects.filter(
        Q(media_urls__has_any_keys=list(urls)) | Q(thumbnail_url__in=urls) | in_thread,
        workspace_id__in={row.workspace_id for row in candidates},
    ).values_list("status", "media_urls", "thumbnail_url", "thread", "finished_at", "updated_at")
    for status, media_urls, thumbnail_url, thread, finished_at, updated_at in posts:
        referenced = {u for u in (media_urls or []) if isinstance(u, str)} | {thumbnail_url}
        referenced |= {u for item in thread or [] for u in item.get("mediaUrls") or [] if isinstance(u, str)}
        for url in referenced & urls:
            statuses[url].append((status, finished_at or updated_at))
    kept: set[str] = set()
    released: set[str] = set()
    for url, entries in statuses.items():
        for status, finished in entries:
            if status in UNFINISHED_POST_STATUSES or (
                status in RETRYABLE_POST_STATUSES and finished > now - FAILED_POST_GRACE
            ):
                kept.add(url)
            else:
                released.add(url)
    templates = RecurringPost.objects.filter(
        status__in=LIVE_SERIES_STATUSES,
        workspace_id__in={row.workspace_id for row in candidates},
    ).filter(Q(template__mediaUrls__has_any_keys=list(urls)) | Q(template__thumbnailUrl__in=list(urls)))
    for template in templates.values_list("template", flat=True):
        media_urls = template.get("mediaUrls") or [] if isinstance(template, dict) else []
        thumbnail = template.get("thumbnailUrl") if isinstance(template, dict) else None
        kept.update(urls & ({u for u in media_urls if isinstance(u, str)} | {thumbnail}))
    return kept, released


def collect_orphans(*, now: dt.datetime | None = None) -> int:
    """Delete the stored objects that no media file row names (as its object or its preview)
    and that were written more than ``ORPHAN_GRACE`` ago: what a worker killed between its write
    to storage and its database commit left behind. Returns how many; a second run finds none."""
    now = now or timezone.now()
    storage = get_media_storage()
    deleted = 0
    for keys in _batches(storage.keys_written_before(now - ORPHAN_GRACE), ORPHAN_BATCH):
        named = _named_by_rows(keys)
        for key in keys:
            if key not in named:
                storage.delete(key)
                deleted += 1
    if deleted:
        logger.info("media lifecycle: %d orphaned object(s) collected", deleted)
    return deleted


def _batches(keys: Iterator[str], size: int) -> Iterator[list[str]]:
    ours = (key for key in keys if _OUR_KEY.match(key.removesuffix(_PREVIEW_SUFFIX)))
    while batch := list(itertools.islice(ours, size)):
        yield batch


def _named_by_rows(keys: list[str]) -> set[str]:
    """The keys among ``keys`` that a row names: its object, its preview, or the preview it will
    have (a preview is written before its row records it)."""
    originals = {key.removesuffix(_PREVIEW_SUFFIX) for key in keys}
    named: set[str] = set()
    for key, preview_key in MediaFile.objects.filter(Q(key__in=originals) | Q(preview_key__in=keys)).values_list(
        "key", "preview_key"
    ):
        named.update((key, preview_key_of(key), preview_key))
    return named


def _queue_missing_previews(*, now: dt.datetime) -> int:
    """Uploaded images and videos without a preview, and previews queued long ago whose task was lost."""
    ids = list(
        MediaFile.objects.filter(kind__in=PREVIEWED_KINDS, uploaded_at__isnull=False)
        .filter(
            Q(preview_status=PreviewStatus.NONE)
            | Q(preview_status=PreviewStatus.QUEUED, preview_queued_at__lt=now - PREVIEW_REQUEUE_AFTER)
        )
        .values_list("id", flat=True)[:PREVIEW_BATCH]
    )
    if ids:
        MediaFile.objects.filter(id__in=ids, preview_status=PreviewStatus.QUEUED).update(
            preview_status=PreviewStatus.NONE
        )
        previews_enqueue(media_file_ids=ids)
    return len(ids)


def _queue_missing_probes(*, now: dt.datetime) -> int:
    """Stored files never probed (stored before probing existed), and probes queued long ago
    whose task was lost."""
    ids = list(
        MediaFile.objects.filter(uploaded_at__isnull=False)
        .filter(
            Q(probe_status=ProbeStatus.NONE)
            | Q(probe_status=ProbeStatus.QUEUED, probe_queued_at__lt=now - PREVIEW_REQUEUE_AFTER)
        )
        .values_list("id", flat=True)[:PREVIEW_BATCH]
    )
    if ids:
        MediaFile.objects.filter(id__in=ids, probe_status=ProbeStatus.QUEUED).update(probe_status=ProbeStatus.NONE)
        probes_enqueue(media_file_ids=ids)
    return len(ids)
