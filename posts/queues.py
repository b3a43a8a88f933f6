"""Posting queues (issue 18): an account's weekly wall-clock slots, the instants they fall on,
which of those are free, and the claim of the earliest free slot by a post created with
``queue: true``.

- Slots keep their local time of day across DST exactly as recurring series do
  (``posts.recurrence.rules.to_instant``): a time that does not exist on a day (spring forward)
  moves forward to the first valid instant; a time that happens twice (fall back) is the first
  of the two. Two slots that land on the same instant that way are one slot.
- A slot is taken for an account when a live post of that account is scheduled at that instant:
  any post but a FAILED one (deleted posts are gone; an undated draft has no instant).
- :func:`queue_claim` locks the queue rows of the post's accounts (``SELECT … FOR UPDATE``, in
  account id order) until the creating transaction ends, so two queued creates for one account
  are serialized and the second sees the first's post: a slot is never given twice by the queue.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import PostingQueue, QueueSlot, SocialAccount
from accounts.selectors import account_get
from core.errors import ValidationFailed
from posts.models import PostStatus, PostTarget
from posts.recurrence.rules import to_instant

DAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
_SCAN_BATCH_DAYS = 28


def queue_get(*, workspace_id: str, account_id: str) -> PostingQueue | None:
    """The account's queue with its slots, None when it has none; 404 for an account that is not
    in this workspace."""
    account = account_get(workspace_id=workspace_id, account_id=account_id)
    return PostingQueue.objects.filter(account=account).prefetch_related("slots").first()


@transaction.atomic
def queue_set(
    *, workspace_id: str, account_id: str, timezone_name: str, slots: list[tuple[int, dt.time]]
) -> PostingQueue:
    """Replace the account's queue (created on first use) by ``timezone_name`` and ``slots``
    (weekday 0 = Monday, distinct). The queue row is locked while its slots are replaced, so a
    queued create never reads half a queue. Setting the same queue twice changes nothing."""
    account = account_get(workspace_id=workspace_id, account_id=account_id)
    queue, _ = PostingQueue.objects.get_or_create(account=account, defaults={"timezone": timezone_name})
    queue = PostingQueue.objects.select_for_update().get(pk=queue.pk)
    queue.timezone = timezone_name
    queue.save(update_fields=["timezone", "updated_at"])
    queue.slots.all().delete()
    QueueSlot.objects.bulk_create(QueueSlot(queue=queue, weekday=day, local_time=time) for day, time in slots)
    return PostingQueue.objects.prefetch_related("slots").get(pk=queue.pk)


def slot_instants(queue: PostingQueue, *, after: dt.datetime, days: int) -> Iterator[dt.datetime]:
    """The queue's slots strictly after ``after`` and within ``days`` local days of it, as UTC
    instants in order, each once."""
    zone = ZoneInfo(queue.timezone)
    by_weekday: dict[int, list[dt.time]] = {}
    for slot in queue.slots.all():
        by_weekday.setdefault(slot.weekday, []).append(slot.local_time)
    first_day = after.astimezone(zone).date()
    last: dt.datetime | None = None
    for offset in range(days + 1):
        day = first_day + dt.timedelta(days=offset)
        for moment in sorted(
            {to_instant(dt.datetime.combine(day, t), zone) for t in by_weekday.get(day.weekday(), [])}
        ):
            if moment > after and (last is None or moment > last):
                last = moment
                yield moment


def _taken(account_ids: Iterable[str], after: dt.datetime, until: dt.datetime) -> dict[str, set[dt.datetime]]:
    rows = (
        PostTarget.objects.filter(
            account_id__in=list(account_ids), post__scheduled_at__gt=after, post__scheduled_at__lte=until
        )
        .exclude(post__status=PostStatus.FAILED)
        .values_list("account_id", "post__scheduled_at")
    )
    taken: dict[str, set[dt.datetime]] = {}
    for account_id, moment in rows:
        if moment is not None:
            taken.setdefault(str(account_id), set()).add(moment)
    return taken


def free_slots(
    queues: list[PostingQueue], *, after: dt.datetime, count: int, days: int | None = None
) -> list[dt.datetime]:
    """The first ``count`` instants after ``after`` that are a slot of every queue and free for
    every queue's account, looking ``days`` ahead (POSTING_QUEUE_HORIZON_DAYS by default)."""
    if not queues:
        return []
    days = settings.POSTING_QUEUE_HORIZON_DAYS if days is None else days
    until = after + dt.timedelta(days=days + 1)
    others = [set(slot_instants(q, after=after, days=days)) for q in queues[1:]]
    taken = _taken((q.account_id for q in queues), after, until)
    found: list[dt.datetime] = []
    for moment in slot_instants(queues[0], after=after, days=days):
        if all(moment in slots for slots in others) and not any(moment in taken.get(q.account_id, ()) for q in queues):
            found.append(moment)
            if len(found) == count:
                break
    return found


def queue_next(*, workspace_id: str, account_id: str, count: int, now: dt.datetime | None = None) -> list[dt.datetime]:
    """The account's next ``count`` free slots after now (none without a queue)."""
    queue = queue_get(workspace_id=workspace_id, account_id=account_id)
    if queue is None:
        return []
    return free_slots([queue], after=now or timezone.now(), count=count)


def missing_queues(accounts: list[SocialAccount]) -> list[SocialAccount]:
    """Those of ``accounts`` that have no queue or a queue without slots."""
    with_slots = set(
        QueueSlot.objects.filter(queue__account__in=accounts).values_list("queue__account_id", flat=True).distinct()
    )
    return [a for a in accounts if a.id not in with_slots]


def queue_claim(*, accounts: list[SocialAccount], now: dt.datetime) -> dt.datetime:
    """The earliest slot free for every one of ``accounts`` (400 naming the ``queue`` field when
    there is none within the horizon), with their queue rows locked until the caller's
    transaction ends: call inside the transaction that creates the post."""
    ids = sorted({a.id for a in accounts})
    queues = list(
        PostingQueue.objects.select_for_update()
        .filter(account_id__in=ids)
        .order_by("account_id")
        .prefetch_related("slots")
    )
    missing = missing_queues(accounts)
    if missing:
        raise ValidationFailed([queue_missing_message(a) for a in missing])
    found = free_slots(queues, after=now, count=1)
    if not found:
        names = ", ".join(ids)
        raise ValidationFailed(
            [f"queue: no slot is free for every account ({names}) within {settings.POSTING_QUEUE_HORIZON_DAYS} days"]
        )
    return found[0]


def queue_missing_message(account: SocialAccount) -> str:
    return f"queue: the {account.platform} account {account.id} has no posting queue slots (PUT /social-accounts/{account.id}/queue)"
