"""After publishing: edit the published entries of a post on their platforms (PATCH of a COMPLETED or
PARTIAL_FAILURE post) or remove them (``POST /social-posts/{id}/unpublish``). Each entry that can take
the change gets a :class:`~posts.models.PostTargetAction` (its platform step, queued after commit);
each that cannot is answered with the reason (a SKIPPED action, so it is in the entry's history and
in the request's event too). Nothing here calls a platform."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

from django.db import transaction
from django.utils import timezone

from audit.actors import Actor, system_actor
from audit.services import record
from core.errors import BadRequest, ValidationFailed
from core.ids import new_id
from media.services import media_resolve
from platforms.base import Platform
from platforms.capabilities import CAPABILITIES, validate_content
from posts.models import ActionKind, ActionStatus, Post, PostStatus, PostTarget, PostTargetAction, TargetStatus
from posts.pipeline.after_publishing import close_request
from posts.pipeline.enqueue import enqueue_actions
from posts.selectors import post_get_for_update
from posts.validation import TITLE_KEYS
from workspaces.models import Workspace

EDITABLE_STATUSES = (PostStatus.COMPLETED, PostStatus.PARTIAL_FAILURE)
QUEUED, SKIPPED, UNCHANGED = "QUEUED", "SKIPPED", "UNCHANGED"
NOT_PUBLISHED = "Not published on this platform"
UNPUBLISHED = "Removed from the platform"


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
    ``platformTexts``, ``title``, ``platformTitles`` (``PublishedPostEditInput``). Each entry's new
    text and title are checked with the publishing validation (400 listing every problem, nothing
    queued); an entry whose platform cannot change a field, or that is not live, is SKIPPED with the
    reason; one whose values do not change is UNCHANGED. Under the post's row lock; the actions are
    queued after commit (each entry's in order, after any still open). ``post.text`` takes the new
    ``text``; an entry's own text and title change when its platform confirms the edit. When nothing
    is queued, the request's ``post.updated`` event is emitted at once."""
    post = post_get_for_update(workspace_id=workspace_id, post_id=post_id)
    if post.status not in EDITABLE_STATUSES:
        raise BadRequest("Cannot edit post in current state", code="post_not_editable")
    if post.unpublished_at is not None:
        raise BadRequest("Cannot edit a post removed from its platforms", code="post_not_editable")
    texts = {item["platform"]: item["text"] for item in changes.get("platformTexts") or []}
    titles = {item["platform"]: item["title"] for item in changes.get("platformTitles") or []}
    targets = list(PostTarget.objects.select_for_update().filter(post=post).order_by("created_at", "id"))
    kinds = _media_kinds(post)
    pending = _pending_values(targets)
    request_id = new_id("req")
    reports: list[EntryReport] = []
    issues: list[str] = []
    planned: list[tuple[PostTarget, dict[str, Any], dict[str, Any], EntryReport]] = []
    for target in targets:
        platform = Platform(target.platform)
        report = EntryReport(target.id, target.platform, UNCHANGED)
        reports.append(report)
        current = pending.get(target.id) or _current(target)
        wanted: dict[str, Any] = {}
        if platform.value in texts or "text" in changes:
            wanted["text"] = texts.get(platform.value, changes.get("text"))
        if platform.value in titles or "title" in changes:
            wanted["title"] = titles.get(platform.value, changes.get("title"))
        wanted = {k: v for k, v in wanted.items() if v is not None and v != current.get(k)}
        report.fields = sorted(wanted)
        if not wanted:
            continue
        reason = _cannot_edit(target, platform, wanted)
        if reason:
            report.outcome, report.reason = SKIPPED, reason
            continue
        problems = validate_content(
            platform,
            content_type=post.content_type,
            text=str(wanted.get("text", current.get("text") or "")),
            media_kinds=kinds,
            title=wanted.get("title"),
        )
        if problems:
            issues.extend(problems)
            continue
        report.outcome = QUEUED
        planned.append((target, wanted, {k: current.get(k) for k in wanted}, report))
    if issues:
        raise ValidationFailed(issues)
    if "text" in changes and changes["text"] is not None:
        post.text = changes["text"]
        post.save(update_fields=["text", "updated_at"])
    _record(post, request_id, ActionKind.EDIT, reports, planned)
    return ActionReport(
        post=Post.objects.prefetch_related("targets").get(pk=post.pk), request_id=request_id, entries=reports
    )


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
        if caps.delete_max_items is not None and len(post.media_urls or []) > caps.delete_max_items:
            report.outcome = SKIPPED
            report.reason = (
                f"{target.platform} deletes one message per call and this post went out as an album of "
                f"{len(post.media_urls)}; remove it in the app"
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


def _media_kinds(post: Post) -> list[str]:
    if not post.media_urls:
        return []
    try:
        return [info.kind for info in media_resolve(workspace_id=str(post.workspace_id), urls=list(post.media_urls))]
    except Exception:  # the media were removed since: the text limits without media apply
        return []


def _current(target: PostTarget) -> dict[str, Any]:
    title_key = TITLE_KEYS.get(target.platform)
    return {"text": target.text, "title": (target.config or {}).get(title_key) if title_key else None}


def _pending_values(targets: list[PostTarget]) -> dict[str, dict[str, Any]]:
    """Each entry's values as its open edits will leave them (an edit compares with those)."""
    values: dict[str, dict[str, Any]] = {}
    by_id = {t.id: t for t in targets}
    for action in PostTargetAction.objects.filter(
        target_id__in=list(by_id), kind=ActionKind.EDIT, status__in=[ActionStatus.PENDING, ActionStatus.SENDING]
    ).order_by("created_at", "id"):
        current = values.setdefault(action.target_id, _current(by_id[action.target_id]))
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
    return {k: v for k, v in data.items() if k in ("text", "platformTexts", "title", "platformTitles")}


__all__ = [
    "ActionReport",
    "EntryReport",
    "edit_changes_of",
    "is_published_post",
    "post_edit_published",
    "post_unpublish",
]
