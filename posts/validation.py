"""Payload → normalized plan. The one validation shared by create, publish, bulk and
``/validate``: accounts are resolved, media looked up, and (unless the post is a draft, whose
platform validation waits for publish) every platform's rules checked through
``platforms.capabilities``. Problems are collected as :class:`Issue`s, never raised here."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.conf import settings

from accounts.models import AccountStatus, SocialAccount
from accounts.selectors import accounts_by_ids, facebook_accounts_by_page_ids
from core.errors import ValidationFailed
from core.fields import format_instant
from media.fitting import fittable
from media.services import MediaInfo, media_resolve
from platforms.base import Platform
from platforms.capabilities import (
    CAPABILITIES,
    PostedFile,
    text_length,
    validate_comment,
    validate_content,
    validate_media,
)
from platforms.media_rules import RULE_CODES
from posts.fitting import thread_item_type
from posts.models import ContentType, LatePolicy
from posts.payloads import CONFIG_FIELDS, CONNECTION_FIELDS
from posts.queues import missing_queues, queue_missing_message

NO_CONNECTION = "No valid connection found"
TIKTOK_PRIVACY_REQUIRED = "Privacy level is required for TikTok posts"
# The config key of each platform whose posts have a title (what a title edit after publishing changes).
TITLE_KEYS = {"TIKTOK": "title", "YOUTUBE": "videoTitle", "PINTEREST": "title", "LINKEDIN": "documentTitle"}
TITLE_KEYS["FACEBOOK"] = "videoTitle"
_TITLE_KEYS = TITLE_KEYS
# When several issues carry codes, the error answered names the first of these that occurs.
_CODE_PRIORITY = (
    "connection_not_found",
    "account_unauthorized",
    "media_not_found",
    "media_too_large",
    *RULE_CODES,
)


@dataclass(frozen=True)
class Issue:
    message: str
    platform: str | None = None
    field: str | None = None
    code: str | None = None

    @classmethod
    def from_message(cls, message: str, code: str | None = None) -> Issue:
        """An issue of no particular platform whose field is the message's ``field:`` prefix."""
        head, sep, _ = message.partition(":")
        return cls(message, None, head if sep and " " not in head else None, code)

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"platform": self.platform, "message": self.message}
        if self.field:
            body["field"] = self.field
        return body


@dataclass
class TargetPlan:
    platform: str
    account: SocialAccount
    requested_id: str
    page_id: str
    text: str
    config: dict[str, Any] = field(default_factory=dict)
    first_comment_text: str = ""  # its platform's platformFirstComments text ("": the post's firstComment's)
    media_fit: bool = False  # mediaFit auto (the post's, or its platform's platformMediaFit item)


class EntryContent(Protocol):
    """What the platform rules read of an entry: its platform, text, config (its title among them)
    and whether its media are fitted (a :class:`TargetPlan`, or a published entry being edited)."""

    @property
    def platform(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def config(self) -> dict[str, Any]: ...

    @property
    def media_fit(self) -> bool: ...


@dataclass(frozen=True)
class EditedEntry:
    """A published entry as an edit would leave it (its new text and title in ``config``). Its
    media are sent as they are: ``mediaFit`` does not apply to an edit."""

    platform: str
    text: str
    config: dict[str, Any]
    media_fit: bool = False


@dataclass
class PostPlan:
    content_type: str
    text: str
    timezone: str
    scheduled_at: dt.datetime | None
    save_as_draft: bool
    media_urls: list[str]
    media_alt_texts: list[str]
    thumbnail_url: str
    thumbnail_timestamp_ms: int | None
    targets: list[TargetPlan] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    recurrence: dict[str, Any] | None = None
    queue: bool = False
    late_policy: str = "publish"
    max_lateness_seconds: int | None = None
    thread: list[dict[str, Any]] = field(default_factory=list)  # [{text, mediaUrls}] as stored on the post
    first_comment: dict[str, Any] = field(default_factory=dict)  # {text, delaySeconds} as stored ({}: none)

    @property
    def valid(self) -> bool:
        return not self.issues

    def raise_if_invalid(self) -> None:
        """400 listing every issue; its code is the most telling one (connection_not_found,
        account_unauthorized, media_not_found) or validation_error."""
        raise_issues(self.issues)


def raise_issues(issues: Sequence[Issue]) -> None:
    """400 listing every issue (nothing when there is none); its code is the most telling one
    (connection_not_found, account_unauthorized, media_not_found, a media rule) or validation_error."""
    if not issues:
        return
    codes = {i.code for i in issues if i.code}
    code = next((c for c in _CODE_PRIORITY if c in codes), None)
    raise ValidationFailed([i.message for i in issues], code=code)


def _plan_lateness(plan: PostPlan, data: dict[str, Any]) -> None:
    """``latePolicy`` and ``maxLatenessSeconds``: the limit only with skip or draft, defaulted there."""
    plan.late_policy = data.get("latePolicy") or LatePolicy.PUBLISH.value
    limit = data.get("maxLatenessSeconds")
    if plan.late_policy == LatePolicy.PUBLISH:
        if limit is not None:
            plan.issues.append(
                Issue("maxLatenessSeconds: applies only with latePolicy skip or draft", None, "maxLatenessSeconds")
            )
        return
    plan.max_lateness_seconds = limit if limit is not None else settings.LATE_POLICY_DEFAULT_SECONDS


def build_plan(*, workspace_id: str, data: dict[str, Any], full: bool) -> PostPlan:
    """``data`` is validated by ``PostCreateInput``. ``full=False`` (drafts) resolves accounts and
    media but postpones the platform rules and the account-authorization check to publish."""
    plan = PostPlan(
        content_type=data["contentType"],
        text=data.get("text") or "",
        timezone=data["timezone"],
        scheduled_at=data.get("scheduledAt"),
        save_as_draft=bool(data.get("saveAsDraft")),
        media_urls=list(data.get("mediaUrls") or []),
        media_alt_texts=list(data.get("mediaAltTexts") or []),
        thumbnail_url=data.get("thumbnailUrl") or "",
        thumbnail_timestamp_ms=data.get("thumbnailTimestampMs"),
        recurrence=data.get("recurrence"),
        queue=bool(data.get("queue")),
        thread=[
            {"text": item["text"], "mediaUrls": list(item.get("mediaUrls") or [])} for item in data.get("thread") or []
        ],
    )
    _plan_lateness(plan, data)
    comment = data.get("firstComment")
    if comment:
        plan.first_comment = {"text": comment["text"], "delaySeconds": int(comment.get("delaySeconds") or 0)}
    _check_alt_texts(plan)
    _resolve_targets(plan, workspace_id, data, full)
    if plan.queue:
        _check_queue(plan)
    media = _resolve_media(plan, workspace_id)
    media_kinds = None if media is None else [m.kind for m in media]
    thread_media = _resolve_thread_media(plan, workspace_id)
    thread_kinds = [None if item is None else [m.kind for m in item] for item in thread_media]
    _attach_configs(plan, data)
    if plan.thread and plan.recurrence:
        plan.issues.append(Issue("thread: a recurring series cannot publish a thread", None, "thread"))
    if full:
        _check_content(plan, media_kinds)
        for target in plan.targets:
            _check_target(plan, target, media_kinds)
            _check_media(plan, target, media or [], thread_media)
            _check_thread(plan, target, thread_kinds)
            _check_first_comment(plan, target)
    return plan


def validate_published_media(
    *,
    workspace_id: str,
    content_type: str,
    media_urls: list[str],
    media_alt_texts: list[str],
    entries: Sequence[EntryContent],
) -> list[Issue]:
    """New media for a published post (a PATCH of its media), checked as publishing checks a
    post: the files looked up in the workspace's uploads (``media_not_found``, ``media_too_large``;
    a file seen for the first time is probed, as at create), the content type against them, at
    most one alt text per file, then for each entry that is to take them its text and title within
    its platform's limits with these media, its options, and every file within its platform's
    media rules for its post type (in full once probed). Every problem found, as the create
    words it (each names the field, and the platform where it is one's)."""
    plan = PostPlan(
        content_type=content_type,
        text="",
        timezone="UTC",
        scheduled_at=None,
        save_as_draft=False,
        media_urls=list(media_urls),
        media_alt_texts=list(media_alt_texts),
        thumbnail_url="",
        thumbnail_timestamp_ms=None,
    )
    _check_alt_texts(plan)
    media = _resolve_media(plan, workspace_id)
    if media is None:
        return plan.issues
    kinds = [m.kind for m in media]
    _check_content_of(plan, kinds, [entry.platform for entry in entries])
    for entry in entries:
        _check_target(plan, entry, kinds)
        _check_media(plan, entry, media, [])
    return plan.issues


def _check_alt_texts(plan: PostPlan) -> None:
    if len(plan.media_alt_texts) > len(plan.media_urls):
        plan.issues.append(Issue("mediaAltTexts: must not have more items than mediaUrls", None, "mediaAltTexts"))


def _check_first_comment(plan: PostPlan, target: TargetPlan) -> None:
    """The comment an entry gets (its platform's platformFirstComments text, else the post's
    firstComment text) only where the platform has a comment API, within its comment limit; an
    issue names the field the text came from."""
    if target.first_comment_text:
        text, field_name = target.first_comment_text, "platformFirstComments"
    elif plan.first_comment:
        text, field_name = plan.first_comment["text"], "firstComment"
    else:
        return
    platform = Platform(target.platform)
    for message in validate_comment(platform, text):
        plan.issues.append(Issue(f"{field_name}: {message}", platform.value, field_name))
    if str(target.config.get("postType") or "").upper() == "STORY":
        # A story takes no comments on either platform (its replies are private messages).
        message = f"{field_name}: {platform.value} stories cannot be commented on (postType STORY)"
        plan.issues.append(Issue(message, platform.value, field_name))


def _resolve_thread_media(plan: PostPlan, workspace_id: str) -> list[list[MediaInfo] | None]:
    """The media of each thread item (None: its media could not be resolved, reported)."""
    found: list[list[MediaInfo] | None] = []
    for index, item in enumerate(plan.thread):
        if not item["mediaUrls"]:
            found.append([])
            continue
        try:
            found.append(media_resolve(workspace_id=workspace_id, urls=item["mediaUrls"]))
        except ValidationFailed as exc:
            messages = exc.message if isinstance(exc.message, list) else [exc.message]
            plan.issues.extend(Issue(f"thread[{index}].mediaUrls: {m}", None, "thread", exc.code) for m in messages)
            found.append(None)
    return found


def _check_media(
    plan: PostPlan, target: EntryContent, media: list[MediaInfo], thread_media: list[list[MediaInfo] | None]
) -> None:
    """Every file of the post (and of its thread, where the platform publishes one) within what
    the entry's platform takes for the post type its options select (``platforms.media_rules``:
    size always; format, ratio, resolution, duration, frame rate, bit rate and codecs once the
    file is probed; an unusable file is refused with the probe's reason). Each issue names the
    platform, the file and the rule, and carries the rule as its code."""
    platform = Platform(target.platform)
    for broken, message in validate_media(
        platform, content_type=plan.content_type, options=target.config, media=_posted(media)
    ):
        if target.media_fit and fittable(broken):
            continue  # mediaFit auto: a variant made for this platform repairs it (media.fitting)
        plan.issues.append(Issue(f"mediaUrls: {message}", platform.value, "mediaUrls", broken.code))
    if not CAPABILITIES[platform].threads:
        return
    for index, item in enumerate(thread_media):
        kinds = [m.kind for m in item or []]
        for broken, message in validate_media(
            platform, content_type=thread_item_type(kinds), options={}, media=_posted(item or [])
        ):
            if target.media_fit and fittable(broken):
                continue  # as the post's own media: each item's files are fitted for this platform
            plan.issues.append(Issue(f"thread[{index}].mediaUrls: {message}", platform.value, "thread", broken.code))


def _posted(media: list[MediaInfo]) -> list[PostedFile]:
    return [PostedFile(url=m.url, kind=m.kind, size=m.size, facts=m.probe, unusable=m.unusable) for m in media]


def _check_thread(plan: PostPlan, target: TargetPlan, kinds: list[list[str] | None]) -> None:
    """A thread only where the platform publishes one, and every item within its limits."""
    if not plan.thread:
        return
    platform = Platform(target.platform)
    if not CAPABILITIES[platform].threads:
        supported = ", ".join(p.value for p, caps in CAPABILITIES.items() if caps.threads)
        plan.issues.append(
            Issue(f"thread: {platform.value} does not publish threads (only {supported})", platform.value, "thread")
        )
        return
    for index, (item, item_kinds) in enumerate(zip(plan.thread, kinds, strict=True)):
        if item_kinds is None:
            continue
        for message in validate_content(
            platform, content_type=thread_item_type(item_kinds), text=item["text"], media_kinds=item_kinds
        ):
            plan.issues.append(Issue(f"thread[{index}]: {message}", platform.value, "thread"))


def _resolve_targets(plan: PostPlan, workspace_id: str, data: dict[str, Any], full: bool) -> None:
    """CONTRACT §4, in this order: ids that are no account of that platform in this workspace
    are dropped (clients may send every account id in every ``*ConnectionIds`` array); a
    platform left with none is skipped ("No valid connection found"); then one account per
    platform per post applies to what is left."""
    platforms = list(dict.fromkeys(data["platforms"]))
    requested = {p: list(dict.fromkeys(data.get(CONNECTION_FIELDS[p]) or [])) for p in platforms}
    known = accounts_by_ids(workspace_id=workspace_id, ids=[i for ids in requested.values() for i in ids])
    pages = facebook_accounts_by_page_ids(workspace_id=workspace_id, page_ids=requested.get(Platform.FACEBOOK, []))
    overrides = {t["platform"]: t["text"] for t in data.get("platformTexts") or []}
    # As platformTexts: an item for a platform that is not targeted (or is skipped) is not used.
    comments = {c["platform"]: c["text"] for c in data.get("platformFirstComments") or []}
    fits = {f["platform"]: f["mediaFit"] for f in data.get("platformMediaFit") or []}
    for platform in platforms:
        # account id → the first id the request named it by (a page may be named twice: by its
        # account id and by its pageId; that is still one account)
        resolved: dict[str, tuple[SocialAccount, str]] = {}
        for requested_id in requested[platform]:
            account = _account_for(platform, requested_id, known, pages)
            if account is not None:
                resolved.setdefault(account.id, (account, requested_id))
        if not resolved:
            plan.skipped.append({"platform": platform, "reason": NO_CONNECTION})
            continue
        if len(resolved) > 1:
            plan.issues.append(
                Issue(
                    f"{CONNECTION_FIELDS[platform]}: one account per platform per post",
                    platform,
                    CONNECTION_FIELDS[platform],
                )
            )
            continue
        [(account, requested_id)] = resolved.values()
        if full and account.status == AccountStatus.UNAUTHORIZED:
            plan.issues.append(
                Issue(
                    f"{CONNECTION_FIELDS[platform]}: the {platform} account {account.id} is unauthorized; reconnect it",
                    platform,
                    CONNECTION_FIELDS[platform],
                    "account_unauthorized",
                )
            )
        plan.targets.append(
            TargetPlan(
                platform=platform,
                account=account,
                requested_id=requested_id,
                page_id=account.page_id if platform == Platform.FACEBOOK else "",
                text=overrides.get(platform, plan.text),
                first_comment_text=comments.get(platform, ""),
                media_fit=fits.get(platform, data.get("mediaFit") or "off") == "auto",
            )
        )
    if not plan.targets and not any(i.platform for i in plan.issues):
        plan.issues.append(
            Issue(
                "platforms: no valid connection found for any requested platform",
                None,
                "platforms",
                "connection_not_found",
            )
        )


def _check_queue(plan: PostPlan) -> None:
    """``queue: true`` takes its time from the accounts' queues: alone, and only for accounts
    that have slots (the slot itself is claimed at create, under a lock: posts.queues)."""
    given = {"scheduledAt": plan.scheduled_at, "saveAsDraft": plan.save_as_draft, "recurrence": plan.recurrence}
    for other in (name for name, value in given.items() if value):
        plan.issues.append(Issue(f"queue: cannot be combined with {other}", None, "queue"))
    for account in missing_queues([t.account for t in plan.targets]):
        plan.issues.append(Issue(queue_missing_message(account), account.platform, "queue"))


def _account_for(
    platform: str, requested_id: str, known: dict[str, SocialAccount], pages: dict[str, SocialAccount]
) -> SocialAccount | None:
    account = known.get(requested_id)
    if (account is None or account.platform != platform) and platform == Platform.FACEBOOK:
        account = pages.get(requested_id)
    if account is None or account.platform != platform:
        return None
    return account


def _resolve_media(plan: PostPlan, workspace_id: str) -> list[MediaInfo] | None:
    if not plan.media_urls:
        return []
    try:
        return media_resolve(workspace_id=workspace_id, urls=plan.media_urls)
    except ValidationFailed as exc:
        messages = exc.message if isinstance(exc.message, list) else [exc.message]
        plan.issues.extend(Issue(m, None, "mediaUrls", exc.code) for m in messages)
        return None


def _attach_configs(plan: PostPlan, data: dict[str, Any]) -> None:
    for platform, field_name in CONFIG_FIELDS.items():
        targets = [t for t in plan.targets if t.platform == platform]
        requested = list(dict.fromkeys(data.get(CONNECTION_FIELDS[platform]) or []))
        key = "pageId" if platform == Platform.FACEBOOK else "connectionId"
        for index, config in enumerate(data.get(field_name) or []):
            wanted = config.get(key)
            # A page may be named by its pageId or its account id, in pageIds and in its config
            # alike (a change is merged into account ids), so a config reaches its target either way.
            matching = [t for t in targets if wanted is None or wanted in _names_of(t)]
            if wanted is not None and not matching and wanted not in requested:
                plan.issues.append(
                    Issue(
                        f"{field_name}[{index}].{key}: {wanted} is not among {CONNECTION_FIELDS[platform]}",
                        platform,
                        f"{field_name}.{key}",
                    )
                )
                continue
            for target in matching:
                target.config = _stored_config(config, key)


def _names_of(target: TargetPlan) -> set[str]:
    return {name for name in (target.requested_id, target.account.id, target.page_id) if name}


def _stored_config(config: dict[str, Any], key: str) -> dict[str, Any]:
    stored: dict[str, Any] = {}
    for name, value in config.items():
        if name == key or value is None:
            continue
        stored[name] = format_instant(value) if isinstance(value, dt.datetime) else value
    return stored


def _check_content(plan: PostPlan, kinds: list[str] | None) -> None:
    if kinds is None:
        return  # media could not be resolved; already reported
    _check_content_of(plan, kinds, [target.platform for target in plan.targets])


def _check_content_of(plan: PostPlan, kinds: list[str], platforms: list[str]) -> None:
    """The content type against the media's kinds, and a DOCUMENT post's platforms."""
    issue = _content_type_issue(plan.content_type, kinds)
    if issue:
        plan.issues.append(Issue(issue, None, "contentType" if kinds else "mediaUrls"))
    if plan.content_type == ContentType.DOCUMENT:
        for platform in platforms:
            if platform != Platform.LINKEDIN:
                plan.issues.append(
                    Issue(f"contentType: DOCUMENT posts go to LINKEDIN only, not {platform}", platform, "contentType")
                )


def _content_type_issue(content_type: str, kinds: list[str]) -> str | None:
    if content_type == ContentType.TEXT and kinds:
        return "mediaUrls: TEXT posts take no media (use IMAGE, VIDEO, CAROUSEL or DOCUMENT)"
    if content_type == ContentType.CAROUSEL and len(kinds) < 2:
        return "mediaUrls: CAROUSEL posts need at least 2 media items"
    if content_type in (ContentType.IMAGE, ContentType.VIDEO, ContentType.DOCUMENT):
        kind = content_type.lower()
        if not kinds:
            return f"mediaUrls: {content_type} posts need media"
        if any(k != kind for k in kinds):
            return f"mediaUrls: every media item of a {content_type} post must be a {kind}"
        if content_type == ContentType.DOCUMENT and len(kinds) != 1:
            return "mediaUrls: DOCUMENT posts take exactly one document"
    return None


def _check_target(plan: PostPlan, target: EntryContent, kinds: list[str] | None) -> None:
    platform, config = target.platform, target.config
    title_key = _TITLE_KEYS.get(platform)
    title = config.get(title_key) if title_key else None
    if kinds is not None:
        for message in validate_content(
            Platform(platform), content_type=plan.content_type, text=target.text, media_kinds=kinds, title=title
        ):
            plan.issues.append(Issue(message, platform, "text" if "text is" in message else None))
    for message, field_name in _config_rules(plan, target, kinds or []):
        plan.issues.append(Issue(message, platform, field_name))


def _config_rules(plan: PostPlan, target: EntryContent, kinds: list[str]) -> list[tuple[str, str]]:
    platform, config, content = target.platform, target.config, plan.content_type
    field_name = CONFIG_FIELDS.get(platform, "")
    found: list[tuple[str, str]] = []
    post_type = config.get("postType")
    if platform in (Platform.INSTAGRAM, Platform.FACEBOOK):
        if post_type == "REEL" and content != ContentType.VIDEO:
            found.append((f"{field_name}.postType: REEL needs a VIDEO post", f"{field_name}.postType"))
        if post_type == "STORY" and content not in (ContentType.IMAGE, ContentType.VIDEO):
            found.append((f"{field_name}.postType: STORY needs an IMAGE or VIDEO post", f"{field_name}.postType"))
    if platform == Platform.INSTAGRAM and config.get("trialGraduation"):
        single_video = content == ContentType.VIDEO and len(kinds) == 1
        if not single_video or post_type not in (None, "FEED", "REEL"):
            found.append(
                (
                    f"{field_name}.trialGraduation: only for a single video posted as REEL or FEED",
                    f"{field_name}.trialGraduation",
                )
            )
    if platform == Platform.TIKTOK:
        if not config.get("privacyLevel"):
            found.append((TIKTOK_PRIVACY_REQUIRED, f"{field_name}.privacyLevel"))
        caption = config.get("caption")
        limit = CAPABILITIES[Platform.TIKTOK].text_limit
        if caption and text_length(Platform.TIKTOK, caption) > limit:
            found.append(
                (f"{field_name}.caption: TIKTOK caption is longer than {limit} characters", f"{field_name}.caption")
            )
    if platform == Platform.PINTEREST and not config.get("boardId"):
        found.append((f"{field_name}.boardId: boardId is required for PINTEREST posts", f"{field_name}.boardId"))
    if platform == Platform.LINKEDIN and config.get("documentTitle") and content != ContentType.DOCUMENT:
        found.append((f"{field_name}.documentTitle: only for DOCUMENT posts", f"{field_name}.documentTitle"))
    if platform == Platform.GOOGLE_BUSINESS:
        found.extend(_google_business_rules(config, field_name))
    return found


def _google_business_rules(config: dict[str, Any], field_name: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if config.get("topicType") in ("EVENT", "OFFER"):
        for key in ("eventTitle", "eventStart", "eventEnd"):
            if not config.get(key):
                found.append((f"{field_name}.{key}: required for {config['topicType']} posts", f"{field_name}.{key}"))
        start, end = config.get("eventStart"), config.get("eventEnd")
        if start and end and end < start:
            found.append((f"{field_name}.eventEnd: must not be before eventStart", f"{field_name}.eventEnd"))
    cta = config.get("callToActionType")
    if cta and cta != "CALL" and not config.get("callToActionUrl"):
        found.append(
            (f"{field_name}.callToActionUrl: required with callToActionType {cta}", f"{field_name}.callToActionUrl")
        )
    if config.get("callToActionUrl") and not cta:
        found.append(
            (f"{field_name}.callToActionType: required with callToActionUrl", f"{field_name}.callToActionType")
        )
    return found
