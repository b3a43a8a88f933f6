"""After publishing: edit the published entries of a post on their platforms (PATCH of a COMPLETED or
PARTIAL_FAILURE post) or remove them (``POST /social-posts/{id}/unpublish``). Each entry that can take
the change gets a :class:`~posts.models.PostTargetAction` (its platform step, queued after commit);
each that cannot is answered with the reason (a SKIPPED action, so it is in the entry's history and
in the request's event too). Nothing here calls a platform."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from audit.actors import Actor, system_actor
from audit.services import record
from core.errors import ApplicationError, BadRequest
from core.ids import new_id
from media.models import MediaFile
from media.services import media_keep_until, media_resolve
from platforms.base import Platform
from platforms.capabilities import CAPABILITIES, media_edit_refusal, validate_content
from posts.models import ActionKind, ActionStatus, Post, PostStatus, PostTarget, PostTargetAction, TargetStatus
from posts.pipeline.after_publishing import close_request, live_media, media_of, media_value
from posts.pipeline.enqueue import enqueue_actions
from posts.selectors import post_get_for_update
from posts.validation import TITLE_KEYS, EditedEntry, Issue, raise_issues, validate_published_media
from workspaces.models import Workspace

EDITABLE_STATUSES = (PostStatus.COMPLETED, PostStatus.PARTIAL_FAILURE)
QUEUED, SKIPPED, UNCHANGED = "QUEUED", "SKIPPED", "UNCHANGED"
NOT_PUBLISHED = "Not published on this platform"
UNPUBLISHED = "Removed from the platform"
# The fields of a PATCH that change a published post's media, and the ones it takes at all.
MEDIA_FIELDS = ("contentType", "mediaUrls", "mediaAltTexts")
EDIT_FIELDS = ("text", "platformTexts", "title", "platformTitles", *MEDIA_FIELDS)
# How long the files of a media edit are kept from the media lifecycle sweep (a published post's
# files are released once it is finished): far longer than an edit's retries and the platform's
# processing take.
EDIT_MEDIA_KEEP = dt.timedelta(days=1)


@dataclass
class EntryReport:
    platform_id: str
    platform: str
    outcome: str  # QUEUED | SKIPPED | UNCHANGED
    fields: list[str] = field(default_factory=list)
    reason: str | None = None
    action_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "platformId": self.platform_id,
            "platform": self.platform,
            "outcome": self.outcome,
            "fields": self.fields,
            "reason": self.reason,
        }


@dataclass
class ActionReport:
    """What a request will do, per entry (``requestId`` names its actions and its event)."""

    post: Post
    request_id: str
    entries: list[EntryReport]

    def as_dict(self) -> dict[str, Any]:
        return {"requestId": self.request_id, "entries": [e.as_dict() for e in self.entries]}


def is_published_post(post: Post) -> bool:
    return post.status in EDITABLE_STATUSES


@transaction.atomic
def post_edit_published(*, workspace_id: str, post_id: str, changes: dict[str, Any]) -> ActionReport:
    """Edit the published entries of a COMPLETED or PARTIAL_FAILURE post (else 400
    ``post_not_editable``; a post removed from its platforms too): ``changes`` holds ``text``,
    ``platformTexts``, ``title``, ``platformTitles`` and the media fields ``contentType``,
    ``mediaUrls``, ``mediaAltTexts`` (``PublishedPostEditInput``). Each entry's new values are
    checked with the publishing validation (400 listing every problem, nothing queued): new media
    as a create checks them (the files looked up and probed, the content type, the platform's
    media rules). An entry whose platform cannot change a field (or cannot make this media change in
    place: ``platforms.capabilities.media_edit_refusal``), or that is not live, is SKIPPED with the
    reason; one whose values do not change is UNCHANGED. Under the post's row lock; the actions
    are queued after commit (each entry's in order, after any still open). ``post.text`` and the
    post's media take the new values; an entry's own text, title and media change when its
    platform confirms the edit (until then, and where it does not take it, an entry keeps the media
    live on its platform as its own). When nothing is queued, the request's ``post.updated`` event
    is emitted at once."""
    post = post_get_for_update(workspace_id=workspace_id, post_id=post_id)
    if post.status not in EDITABLE_STATUSES:
        raise BadRequest("Cannot edit post in current state", code="post_not_editable")
    if post.unpublished_at is not None:
        raise BadRequest("Cannot edit a post removed from its platforms", code="post_not_editable")
    texts = {item["platform"]: item["text"] for item in changes.get("platformTexts") or []}
    titles = {item["platform"]: item["title"] for item in changes.get("platformTitles") or []}
    targets = list(PostTarget.objects.select_for_update().filter(post=post).order_by("created_at", "id"))
    new_media = _new_media(post, changes)
    pending = _pending_values(targets, post)
    request_id = new_id("req")
    reports: list[EntryReport] = []
    issues: list[Issue] = []
    kinds_cache: dict[tuple[str, ...], list[str]] = {}
    taking_media: list[EditedEntry] = []
    planned: list[tuple[PostTarget, dict[str, Any], dict[str, Any], EntryReport]] = []
    for target in targets:
        platform = Platform(target.platform)
        report = EntryReport(target.id, target.platform, UNCHANGED)
        reports.append(report)
        current = pending.get(target.id) or _current(target, post)
        wanted: dict[str, Any] = {}
        if platform.value in texts or "text" in changes:
            wanted["text"] = texts.get(platform.value, changes.get("text"))
        if platform.value in titles or "title" in changes:
            wanted["title"] = titles.get(platform.value, changes.get("title"))
        if new_media is not None:
            wanted["media"] = new_media
        wanted = {k: v for k, v in wanted.items() if v is not None and v != current.get(k)}
        report.fields = sorted(wanted)
        if not wanted:
            continue
        reason = _cannot_edit(target, platform, wanted) or _cannot_change_media(platform, current, wanted)
        if reason:
            report.outcome, report.reason = SKIPPED, reason
            continue
        text = str(wanted.get("text", current.get("text") or ""))
        if "media" in wanted:
            config = dict(target.config or {})
            title_key = TITLE_KEYS.get(platform.value)
            if "title" in wanted and title_key:
                config[title_key] = wanted["title"]
            taking_media.append(EditedEntry(platform=platform.value, text=text, config=config))
        else:
            live = current["media"]
            problems = validate_content(
                platform,
                content_type=live["contentType"],
                text=text,
                media_kinds=_kinds_of(workspace_id, live, kinds_cache),
                title=wanted.get("title"),
            )
            issues.extend(Issue(problem, platform.value) for problem in problems)
        report.outcome = QUEUED
        planned.append((target, wanted, {k: current.get(k) for k in wanted}, report))
    post_media = media_of(post)
    media_changes = new_media is not None and new_media != post_media
    if new_media is not None:
        issues.extend(
            validate_published_media(
                workspace_id=workspace_id,
                content_type=new_media["contentType"],
                media_urls=new_media["mediaUrls"],
                media_alt_texts=list(changes.get("mediaAltTexts") or new_media["mediaAltTexts"]),
                entries=taking_media,
            )
        )
    raise_issues(issues)
    if "text" in changes and changes["text"] is not None:
        post.text = changes["text"]
        post.save(update_fields=["text", "updated_at"])
    if new_media is not None and (media_changes or taking_media):
        _keep_files(workspace_id, new_media["mediaUrls"])
    if new_media is not None and media_changes:
        _pin_live_media(targets, post, post_media, new_media)
        post.content_type = new_media["contentType"]
        post.media_urls, post.media_alt_texts = new_media["mediaUrls"], new_media["mediaAltTexts"]
        post.save(update_fields=["content_type", "media_urls", "media_alt_texts", "updated_at"])
    _record(post, request_id, ActionKind.EDIT, reports, planned)
    return ActionReport(
        post=Post.objects.prefetch_related("targets").get(pk=post.pk), request_id=request_id, entries=reports
    )


def _new_media(post: Post, changes: dict[str, Any]) -> dict[str, Any] | None:
    """The post's media as the PATCH asks for them (None: it names none of the media fields).
    Omitted fields keep the post's: ``mediaUrls`` that replace the files drop the old alt texts
    unless ``mediaAltTexts`` is sent too."""
    if not any(name in changes for name in MEDIA_FIELDS):
        return None
    now = media_of(post)
    urls = list(changes["mediaUrls"]) if "mediaUrls" in changes else now["mediaUrls"]
    if "mediaAltTexts" in changes:
        alts = list(changes["mediaAltTexts"])
    elif urls == now["mediaUrls"]:
        alts = now["mediaAltTexts"]
    else:
        alts = []
    return media_value(str(changes.get("contentType") or post.content_type), urls, alts)


def _cannot_change_media(platform: Platform, current: dict[str, Any], wanted: dict[str, Any]) -> str | None:
    if "media" not in wanted:
        return None
    live, new = current["media"], wanted["media"]
    return media_edit_refusal(
        platform,
        live_type=live["contentType"],
        live_items=len(live["mediaUrls"]),
        new_type=new["contentType"],
        new_items=len(new["mediaUrls"]),
    )


def _pin_live_media(targets: list[PostTarget], post: Post, before: dict[str, Any], after: dict[str, Any]) -> None:
    """The post's media change from ``before`` to ``after``: each live entry that followed them
    keeps ``before`` as its own (what its platform has until an edit there is confirmed); one whose
    own media are the new ones follows the post again."""
    now = timezone.now()
    for target in targets:
        own = dict(target.media or {})
        wanted = _own_media_after(target, post, own, before, after)
        if wanted != own:
            target.media = wanted
            PostTarget.objects.filter(id=target.id).update(media=wanted, updated_at=now)


def _own_media_after(
    target: PostTarget, post: Post, own: dict[str, Any], before: dict[str, Any], after: dict[str, Any]
) -> dict[str, Any]:
    if own:  # media of its own already: kept, unless they are the post's new ones
        return {} if live_media(target, post) == after else own
    return dict(before) if target.status == TargetStatus.PUBLISHED else {}


def _keep_files(workspace_id: str, urls: list[str]) -> None:
    """Keep the files of a media edit from the lifecycle sweep while the edit may still send them
    (a published post's files are released once it is finished); a file kept longer already (a
    connect pages' logo) keeps its own date."""
    until = timezone.now() + EDIT_MEDIA_KEEP
    shorter = list(
        MediaFile.objects.filter(workspace_id=workspace_id, public_url__in=set(urls))
        .filter(Q(keep_until__isnull=True) | Q(keep_until__lt=until))
        .values_list("public_url", flat=True)
    )
    if shorter:
        media_keep_until(workspace_id=workspace_id, urls=shorter, until=until)


@transaction.atomic
def post_unpublish(*, workspace_id: str, post_id: str, actor: Actor | None = None) -> ActionReport:
    """Remove the published entries of a COMPLETED or PARTIAL_FAILURE post from their platforms
    (else 400 ``post_not_published``); our record stays, marked ``unpublishedAt``, its status
    unchanged (analytics and audit stay whole). An entry whose platform cannot delete, or that is
    not live, is SKIPPED with the reason. Recorded in the audit log (``actor``; a system call
    when None) in the same transaction. Idempotent: asking again queues nothing for an entry
    already removed or whose removal is under way (UNCHANGED). Under the post's row lock; the
    deletes are queued after commit. When nothing is queued, ``post.unpublished`` is emitted at once."""
    post = post_get_for_update(workspace_id=workspace_id, post_id=post_id)
    if post.status not in EDITABLE_STATUSES:
        raise BadRequest(
            f"Only a published post can be removed from its platforms (its status is {post.status})",
            code="post_not_published",
        )
    targets = list(PostTarget.objects.select_for_update().filter(post=post).order_by("created_at", "id"))
    asked = set(
        PostTargetAction.objects.filter(target__post=post, kind=ActionKind.DELETE)
        .exclude(status__in=[ActionStatus.FAILED, ActionStatus.SKIPPED])
        .values_list("target_id", flat=True)
    )
    request_id = new_id("req")
    reports: list[EntryReport] = []
    planned: list[tuple[PostTarget, dict[str, Any], dict[str, Any], EntryReport]] = []
    for target in targets:
        report = EntryReport(target.id, target.platform, QUEUED)
        reports.append(report)
        if target.unpublished_at is not None or target.id in asked:
            report.outcome = UNCHANGED
            continue
        if target.status != TargetStatus.PUBLISHED:
            report.outcome, report.reason = SKIPPED, NOT_PUBLISHED
            continue
        caps = CAPABILITIES[Platform(target.platform)]
        if not caps.deletable:
            report.outcome = SKIPPED
            report.reason = f"{target.platform} does not let its API delete a published post; remove it in the app"
            continue
        items = len(live_media(target, post)["mediaUrls"])
        if caps.delete_max_items is not None and items > caps.delete_max_items:
            report.outcome = SKIPPED
            report.reason = (
                f"{target.platform} deletes one message per call and this post went out as an album of "
                f"{items}; remove it in the app"
            )
            continue
        planned.append((target, {}, {}, report))
    if post.unpublished_at is None:
        post.unpublished_at = timezone.now()
        post.save(update_fields=["unpublished_at", "updated_at"])
    _record(post, request_id, ActionKind.DELETE, reports, planned)
    record(
        actor=actor or system_actor("service call"),
        action="post.unpublish",
        organization_id=Workspace.objects.values_list("organization_id", flat=True).get(pk=workspace_id),
        workspace_id=workspace_id,
        target_type="post",
        target_id=post.id,
        changes={"requestId": request_id, "entries": {r.platform_id: r.outcome for r in reports}},
    )
    return ActionReport(
        post=Post.objects.prefetch_related("targets").get(pk=post.pk), request_id=request_id, entries=reports
    )


def _record(
    post: Post,
    request_id: str,
    kind: ActionKind,
    reports: list[EntryReport],
    planned: list[tuple[PostTarget, dict[str, Any], dict[str, Any], EntryReport]],
) -> None:
    """The request's actions (QUEUED → PENDING, SKIPPED → SKIPPED rows for the history), the
    entries stamped, the ready ones queued after commit; the event at once when none is open."""
    now = timezone.now()
    by_id = {target.id: (target, wanted, previous) for target, wanted, previous, _ in planned}
    rows: list[PostTargetAction] = []
    for report in reports:
        if report.outcome == QUEUED:
            _, wanted, previous = by_id[report.platform_id]
            row = PostTargetAction(
                target_id=report.platform_id,
                request_id=request_id,
                kind=kind,
                status=ActionStatus.PENDING,
                changes=wanted,
                previous=previous,
                due_at=now,
            )
        elif report.outcome == SKIPPED:
            row = PostTargetAction(
                target_id=report.platform_id,
                request_id=request_id,
                kind=kind,
                status=ActionStatus.SKIPPED,
                changes={name: None for name in report.fields},
                reason=report.reason or "",
                finished_at=now,
            )
        else:
            continue
        rows.append(row)
        report.action_id = row.id
    if not rows:
        return
    PostTargetAction.objects.bulk_create(rows)
    PostTarget.objects.filter(id__in=[r.target_id for r in rows]).update(last_action_at=now, updated_at=now)
    queued = [r.id for r in rows if r.status == ActionStatus.PENDING]
    if queued:
        transaction.on_commit(partial(enqueue_actions, queued), robust=True)
    else:
        close_request(post, request_id, kind)


def _kinds_of(workspace_id: str, media: dict[str, Any], cache: dict[tuple[str, ...], list[str]]) -> list[str]:
    """The kinds of the files of ``media`` ("image", "video", "document"), for the text limits of
    an edit that leaves the media as they are. Files no longer in storage (a published post's are
    collected once it is finished) are taken to be what their content type says."""
    urls = tuple(media["mediaUrls"])
    if not urls:
        return []
    if urls not in cache:
        try:
            cache[urls] = [info.kind for info in media_resolve(workspace_id=workspace_id, urls=list(urls))]
        except ApplicationError:
            kind = {"VIDEO": "video", "DOCUMENT": "document"}.get(media["contentType"], "image")
            cache[urls] = [kind] * len(urls)
    return cache[urls]


def _current(target: PostTarget, post: Post) -> dict[str, Any]:
    title_key = TITLE_KEYS.get(target.platform)
    return {
        "text": target.text,
        "title": (target.config or {}).get(title_key) if title_key else None,
        "media": live_media(target, post),
    }


def _pending_values(targets: list[PostTarget], post: Post) -> dict[str, dict[str, Any]]:
    """Each entry's values as its open edits will leave them (an edit compares with those)."""
    values: dict[str, dict[str, Any]] = {}
    by_id = {t.id: t for t in targets}
    for action in PostTargetAction.objects.filter(
        target_id__in=list(by_id), kind=ActionKind.EDIT, status__in=[ActionStatus.PENDING, ActionStatus.SENDING]
    ).order_by("created_at", "id"):
        current = values.setdefault(action.target_id, _current(by_id[action.target_id], post))
        current.update(action.changes or {})
    return values


def _cannot_edit(target: PostTarget, platform: Platform, wanted: dict[str, Any]) -> str | None:
    if target.status != TargetStatus.PUBLISHED:
        return NOT_PUBLISHED
    if target.unpublished_at is not None:
        return UNPUBLISHED
    allowed = CAPABILITIES[platform].edit_fields
    if not allowed:
        return f"{platform.value} does not let its API edit a published post"
    refused = sorted(name for name in wanted if name not in allowed)
    if "title" in refused and platform.value not in TITLE_KEYS:
        return f"{platform.value} posts have no title"
    if refused:
        return f"{platform.value} does not let its API change the {' and '.join(refused)} of a published post"
    return None


def edit_changes_of(data: dict[str, Any]) -> dict[str, Any]:
    """The fields of a published post's PATCH that were sent."""
    return {k: v for k, v in data.items() if k in EDIT_FIELDS}


__all__ = [
    "ActionReport",
    "EntryReport",
    "edit_changes_of",
    "is_published_post",
    "post_edit_published",
    "post_unpublish",
]
