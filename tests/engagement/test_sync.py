"""The comment sync against the simulators over real HTTP: what the audience wrote is stored once,
as a tree, each comment named in exactly one ``comment.received`` event; incremental reads ask for
what is newer than the last one seen; the hourly read budget cuts a pass short and the next hour
resumes it; a rate-limited platform holds the account's reads; a daily full pass finds what the
platform deleted; the review feed of a Google Business location; and ``POST /comments/sync``."""

from __future__ import annotations

import dataclasses
import datetime as dt
from types import SimpleNamespace
from typing import Any

import pytest
from django.utils import timezone

from engagement import budget, cadence, sync
from engagement.models import Comment, CommentSource, SyncStatus
from platforms import facebook, registry
from platforms.base import CommentAuthor, CommentPage, Platform, PlatformClient, RemoteComment
from platforms.capabilities import CAPABILITIES
from platforms.sandbox import audience, faults
from platforms.sandbox import google_business as gb_sim
from platforms.sandbox.store import SandboxStore
from tests.engagement.conftest import (
    Live,
    due_now,
    publish_until,
    received,
)
from tests.pipeline.helpers import connect_account
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db(transaction=True)


class Spy:
    """The real client (real HTTP), with the ``since`` and ``cursor`` of each comment read noted."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reads: list[tuple[str, dt.datetime | None, str]] = []
        real = registry.get_client

        def spying(platform: Any) -> PlatformClient:
            client = real(platform)
            listing = client.list_comments

            def list_comments(creds: Any, post_id: str, *, since: Any = None, cursor: str = "") -> Any:
                self.reads.append((post_id, since, cursor))
                return listing(creds, post_id, since=since, cursor=cursor)

            client.list_comments = list_comments  # type: ignore[method-assign]
            return client

        monkeypatch.setattr(registry, "get_client", spying)


def _stored(live: Live) -> dict[str, Comment]:
    return {c.platform_comment_id: c for c in Comment.objects.filter(target=live.target).select_related("parent")}


def test_a_sync_stores_the_audiences_comments_as_a_tree_and_names_each_once(
    workspace: Workspace, facebook: Live
) -> None:
    wired = facebook.wired()
    assert sync.sources_discover() == 1
    assert sync.sources_discover() == 0  # one source per entry
    source = CommentSource.objects.get()
    assert (source.target_id, source.platform_post_id) == (facebook.target.id, facebook.remote_id)
    due = due_now()

    report = sync.sync_account(account_id=facebook.account.id)

    stored = _stored(facebook)
    assert set(stored) == set(wired)
    for wire, doc in wired.items():
        comment = stored[wire]
        assert (comment.text, comment.author_name) == (doc["text"], doc["author"].name)
        assert comment.created_at == dt.datetime.fromtimestamp(int(doc["createdAt"]), dt.UTC)
        assert comment.like_count == doc["likeCount"]
        assert comment.post_id == facebook.post.id and comment.workspace_id == workspace.id
        assert not comment.from_account and not comment.answered and not comment.hidden
        parent = facebook.wire(doc["parentId"]) if doc["parentId"] else None
        assert (comment.parent.platform_comment_id if comment.parent else None) == parent
    [event] = received(workspace)
    assert event["accountId"] == facebook.account.id and event["platform"] == "FACEBOOK"
    assert sorted(c["platformCommentId"] for c in event["comments"]) == sorted(wired)
    assert report.announced == len(wired) and report.stopped == ""
    source.refresh_from_db()
    assert source.status == SyncStatus.IDLE and source.full_synced_at is not None and source.lease_until is None
    assert source.since == max(c.created_at for c in stored.values())
    assert source.next_due_at == due + dt.timedelta(minutes=5)  # a young post, from when it was due

    # Run twice: nothing stored twice, nothing named again.
    rows = Comment.objects.count()
    due_now()
    again = sync.sync_account(account_id=facebook.account.id)
    assert again.announced == 0 and Comment.objects.count() == rows
    assert len(received(workspace)) == 1


def test_a_later_sync_asks_for_what_is_newer_and_names_only_the_new_comments(
    workspace: Workspace, sandbox: str, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.SANDBOX_AUDIENCE_PACE_SECONDS = 60.0
    live = publish_until(workspace, Platform.FACEBOOK, lambda comments: len(comments) >= 3)
    clock = [live.published_at + 90]  # the audience's clock: one pace and a half after publishing
    monkeypatch.setattr(audience, "time", SimpleNamespace(time=lambda: clock[0]))
    first = live.wired()
    assert len(first) == 1  # the first comment is written, the others not yet
    spy = Spy(monkeypatch)
    sync.sources_discover()
    due_now()
    sync.sync_account(account_id=live.account.id)
    assert set(_stored(live)) == set(first)
    newest = CommentSource.objects.get().since
    assert newest == dt.datetime.fromtimestamp(int(live.published_at + 60), dt.UTC)
    assert spy.reads == [(live.remote_id, None, "")]  # the first pass reads everything

    clock[0] += 10 * 3600  # the audience has written everything since
    everything = live.wired()
    assert len(everything) >= 3
    due_now()
    sync.sync_account(account_id=live.account.id)

    assert set(_stored(live)) == set(everything)
    assert spy.reads[1] == (live.remote_id, newest, "")  # incremental: from the newest seen
    first_event, second_event = received(workspace)
    assert {c["platformCommentId"] for c in first_event["comments"]} == set(first)
    assert {c["platformCommentId"] for c in second_event["comments"]} == set(everything) - set(first)


def test_the_hourly_budget_cuts_a_pass_short_and_the_next_hour_resumes_it(
    workspace: Workspace, sandbox: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = publish_until(workspace, Platform.FACEBOOK, lambda comments: len(comments) >= 3)
    monkeypatch.setattr(facebook.Client, "comment_page_size", 1)  # one comment a page: a page per read
    tight = dataclasses.replace(CAPABILITIES[Platform.FACEBOOK], comment_reads_per_hour=2)
    monkeypatch.setitem(CAPABILITIES, Platform.FACEBOOK, tight)
    spy = Spy(monkeypatch)
    sync.sources_discover()
    due_now()

    report = sync.sync_account(account_id=live.account.id)

    assert report.stopped == "budget" and report.pages == 2 and len(spy.reads) == 2
    assert budget.used(live.account.id) == 2
    source = CommentSource.objects.get()
    assert source.page_cursor and source.since is None and source.full_synced_at is None
    assert source.next_due_at == budget.next_window(timezone.now())
    assert len(_stored(live)) == 2
    assert sync.sync_account(account_id=live.account.id).pages == 0  # nothing due, nothing read

    redis = budget.get_redis()
    redis.delete(*redis.keys("engagement:reads:*"))  # the next hour: the budget is whole again
    # (and large enough for the rest of the pass)
    monkeypatch.setitem(CAPABILITIES, Platform.FACEBOOK, dataclasses.replace(tight, comment_reads_per_hour=100))
    due_now()
    sync.sync_account(account_id=live.account.id)

    assert spy.reads[2] == (live.remote_id, None, source.page_cursor)  # resumed where it stopped
    assert set(_stored(live)) == set(live.wired())
    source.refresh_from_db()
    assert source.page_cursor == "" and source.since is not None and source.last_synced_at is not None
    named = [c["platformCommentId"] for event in received(workspace) for c in event["comments"]]
    assert sorted(named) == sorted(live.wired())  # each once, over both runs


def test_a_rate_limited_platform_holds_the_accounts_reads_until_its_time(workspace: Workspace, facebook: Live) -> None:
    faults.arm("facebook", "rate_limited", path="/comments", method="GET")
    sync.sources_discover()
    due_now()

    report = sync.sync_account(account_id=facebook.account.id)

    assert report.stopped == "rate_limited"
    source = CommentSource.objects.get()
    held = budget.held_until(facebook.account.id)
    assert held is not None and held > timezone.now()
    assert source.status == SyncStatus.FAILED and source.error_code == "rate_limited"
    assert source.next_due_at is not None and source.next_due_at > timezone.now()
    reads = [e for e in SandboxStore("facebook").requests() if "/comments" in e["path"] and e["method"] == "GET"]
    due_now()
    assert sync.sync_account(account_id=facebook.account.id).stopped == "rate_limited"  # held: no call
    assert len([e for e in SandboxStore("facebook").requests() if "/comments" in e["path"]]) == len(reads)
    assert Comment.objects.count() == 0


def test_a_full_pass_marks_what_the_platform_no_longer_has(workspace: Workspace, facebook: Live) -> None:
    sync.sources_discover()
    due_now()
    sync.sync_account(account_id=facebook.account.id)
    top = next(c for c in facebook.expected() if not c["parentId"])
    audience.set_state(SandboxStore("facebook"), top["id"], deleted=True)  # removed on the platform
    gone = {facebook.wire(top["id"])} | {
        facebook.wire(c["id"], top["id"]) for c in facebook.expected() if c["parentId"] == top["id"]
    }

    due_now()
    sync.sync_account(account_id=facebook.account.id)  # incremental: it cannot tell
    assert not Comment.objects.filter(deleted_at__isnull=False).exists()
    CommentSource.objects.update(full_synced_at=timezone.now() - sync.FULL_PASS_EVERY, next_due_at=timezone.now())
    sync.sync_account(account_id=facebook.account.id)  # a day later: a full pass

    deleted = set(Comment.objects.filter(deleted_at__isnull=False).values_list("platform_comment_id", flat=True))
    assert deleted == gone


def test_a_google_business_locations_reviews_are_one_feed(workspace: Workspace, sandbox: str) -> None:
    account = connect_account(workspace, Platform.GOOGLE_BUSINESS)
    location = account.external_id.rsplit("/", 1)[-1]
    created = float(SandboxStore("google_business").get("location", location)["created"])
    reviews = audience.expected("google_business", account.external_id, created)
    sync.sources_discover()
    source = CommentSource.objects.get()
    due = source.next_due_at
    assert due is not None
    assert (source.target_id, source.platform_post_id, source.account_id) == (None, "", account.id)

    sync.sync_account(account_id=account.id)

    stored = {c.platform_comment_id: c for c in Comment.objects.filter(account=account)}
    assert set(stored) == {gb_sim.platform_comment_id(r["id"]) for r in reviews}
    for review in reviews:
        comment = stored[gb_sim.platform_comment_id(review["id"])]
        assert (comment.rating, comment.text, comment.post_id, comment.target_id) == (
            review["rating"],
            review["text"],
            None,
            None,
        )
    source.refresh_from_db()
    assert source.next_due_at == due + dt.timedelta(hours=1)
    assert sum(len(e["comments"]) for e in received(workspace)) == len(reviews)


def test_beat_queues_each_due_account_once(workspace: Workspace, facebook: Live) -> None:
    from tests.engagement.conftest import queued_syncs

    sync.sources_discover()
    due_now()
    assert sync.syncs_queue_due() == 1
    assert sync.syncs_queue_due() == 0  # queued already: not again
    assert queued_syncs() == [facebook.account.id]
    CommentSource.objects.update(queued_at=timezone.now() - sync.QUEUED_PATIENCE - dt.timedelta(seconds=1))
    assert sync.syncs_queue_due() == 1  # its task was lost: queued again


def test_request_comment_sync_queues_every_tracked_post_then_cools_down(
    workspace: Workspace, facebook: Live, api: Any
) -> None:
    from tests.engagement.conftest import queued_syncs

    old = timezone.now() - dt.timedelta(days=45)  # past the scheduled period: read on demand only
    type(facebook.target).objects.filter(id=facebook.target.id).update(published_at=old)
    sync.sources_discover()
    assert CommentSource.objects.get().next_due_at is None

    first = api.post("/api/v1/comments/sync", {}, format="json")
    assert (first.status_code, first.json()) == (
        202,
        {"queued": True, "message": "Comment sync queued", "cooldownSecondsRemaining": None},
    )
    assert CommentSource.objects.get().next_due_at is not None
    assert queued_syncs() == [facebook.account.id]
    again = api.post("/api/v1/comments/sync", {}, format="json").json()
    assert again["queued"] is False and 0 < again["cooldownSecondsRemaining"] <= sync.SYNC_COOLDOWN_SECONDS
    assert again["message"].startswith("A comment sync was requested recently")
    sync.sync_account(account_id=facebook.account.id)
    assert set(_stored(facebook)) == set(facebook.wired())


@pytest.mark.django_db
def test_beat_looks_at_recent_entries_and_once_an_hour_at_every_tracked_day(workspace: Workspace) -> None:
    from tests.factories.posts import PostFactory, PostTargetFactory

    def entry(age: dt.timedelta) -> Any:
        return PostTargetFactory(
            post=PostFactory(workspace=workspace, status="COMPLETED"),
            platform="FACEBOOK",
            status="PUBLISHED",
            platform_post_id=f"remote-{age.total_seconds():.0f}",
            published_at=timezone.now() - age,
        )

    entry(dt.timedelta(days=2))
    assert sync.sources_discover_due() == 1  # the first run of the hour looks at every tracked day
    old, recent = entry(dt.timedelta(days=3)), entry(dt.timedelta(minutes=2))
    assert sync.sources_discover_due() == 1  # then only the recent entries
    assert set(CommentSource.objects.values_list("target_id", flat=True)) >= {recent.id}
    assert not CommentSource.objects.filter(target=old).exists()
    budget.get_redis().delete("engagement:discover-all")  # an hour later
    assert sync.sources_discover_due() == 1
    assert CommentSource.objects.filter(target=old).exists()
    too_old = entry(dt.timedelta(days=sync.TRACK_DAYS + 1))
    budget.get_redis().delete("engagement:discover-all")
    assert sync.sources_discover_due() == 0
    assert not CommentSource.objects.filter(target=too_old).exists()


# --- the cadence bends to the budget; reads at their due time; nothing new, nothing extra ---------


@pytest.mark.django_db
def test_the_demand_is_counted_by_the_age_of_each_scheduled_source(workspace: Workspace) -> None:
    from tests.factories.accounts import SocialAccountFactory
    from tests.factories.posts import PostFactory, PostTargetFactory

    account = SocialAccountFactory(workspace=workspace, platform="GOOGLE_BUSINESS")
    now = timezone.now()

    def source(age: dt.timedelta | None, *, scheduled: bool = True) -> None:
        entry = None
        if age is not None:
            post = PostFactory(workspace=workspace, status="COMPLETED")
            entry = PostTargetFactory(post=post, platform=account.platform, account=account)
        CommentSource.objects.create(
            workspace=workspace,
            account=account,
            platform=account.platform,
            target=entry,
            published_at=None if age is None else now - age,
            next_due_at=now if scheduled else None,
        )

    for _ in range(3):
        source(dt.timedelta(hours=2))  # young: 12 an hour each
    source(dt.timedelta(days=3))  # first week: 1
    source(dt.timedelta(days=10))  # to 30 days: 1/24
    source(dt.timedelta(days=45), scheduled=False)  # on demand only: none
    source(None)  # the review feed: 1
    assert sync.account_demand(account.id, now=now) == pytest.approx(36 + 1 + 1 / 24 + 1)
    assert sync.account_demand(account.id, now=now, listings=2) == pytest.approx(2 * (36 + 1 + 1 / 24 + 1))


@pytest.mark.parametrize("listings", [1, 2])
def test_a_tight_account_has_its_intervals_stretched_evenly(
    workspace: Workspace, facebook: Live, monkeypatch: pytest.MonkeyPatch, listings: int
) -> None:
    # ``listings``: the calls a read makes at the least (2: as YouTube's); each spends a read.
    tight = dataclasses.replace(CAPABILITIES[Platform.FACEBOOK], comment_reads_per_hour=10, comment_listings=listings)
    monkeypatch.setitem(CAPABILITIES, Platform.FACEBOOK, tight)
    sync.sources_discover()
    due = due_now()

    report = sync.sync_account(account_id=facebook.account.id)

    assert report.stopped == "" and report.pages == 1
    source = CommentSource.objects.get()
    factor = 12 * listings / (cadence.HEADROOM * 10)  # one young post wants 12 reads an hour; 9 fit
    assert source.next_due_at == due + dt.timedelta(minutes=5) * factor


def test_sources_coming_due_before_the_next_tick_are_queued_for_their_second(
    workspace: Workspace, facebook: Live
) -> None:
    from tests.engagement.conftest import queued_sync_etas

    sync.sources_discover()
    now = timezone.now()
    due = now + dt.timedelta(seconds=120)
    CommentSource.objects.update(next_due_at=due)
    assert sync.syncs_queue_due(now=now, ahead=dt.timedelta(seconds=60)) == 0  # past this tick's reach
    assert sync.syncs_queue_due(now=now, ahead=dt.timedelta(seconds=180)) == 1
    [(account_id, eta)] = queued_sync_etas()
    assert account_id == facebook.account.id and eta is not None
    # The countdown runs from the moment it is sent, just after this run's commit.
    assert due <= dt.datetime.fromisoformat(eta) < due + dt.timedelta(seconds=60)
    assert sync.syncs_queue_due(now=now, ahead=dt.timedelta(seconds=180)) == 0  # queued already

    # The task arrives early, by more than a sync reads ahead (a clock ahead, a countdown cut
    # short): it claims nothing and the source stays queued and due as it was.
    early = sync.sync_account(account_id=facebook.account.id)
    assert (early.sources, early.pages) == (0, 0)
    source = CommentSource.objects.get()
    assert source.next_due_at == due and source.queued_at == now
    assert source.lease_until is None and source.last_synced_at is None
    assert not Comment.objects.exists()

    due_now()  # its second has come
    assert sync.sync_account(account_id=facebook.account.id).pages == 1
    assert CommentSource.objects.get().queued_at is None


def test_one_wakeup_covers_the_sources_due_within_a_sync_s_reach() -> None:
    now = timezone.now()
    later = [("acc_a", now + dt.timedelta(seconds=s)) for s in (50.2, 5.5, 20, 36)] + [("acc_b", now)]
    overdue = [("acc_c", now - dt.timedelta(seconds=90)), ("acc_c", now + dt.timedelta(seconds=40))]
    # acc_a: 5.5 s → woken at 6 s, which reads up to 36 s; 50.2 s needs a wakeup of its own.
    # acc_c: long overdue → at once (reading up to 30 s); 40 s → its own wakeup.
    assert sync._wakeups(later + overdue, now=now) == [
        ("acc_c", 0.0),
        ("acc_b", 0.0),
        ("acc_a", 6.0),
        ("acc_c", 40.0),
        ("acc_a", 51.0),
    ]


def test_a_source_read_early_plans_its_next_read_from_when_it_was_due(workspace: Workspace, facebook: Live) -> None:
    sync.sources_discover()
    due = timezone.now() + dt.timedelta(seconds=20)  # within the sync's reach
    CommentSource.objects.update(next_due_at=due)

    report = sync.sync_account(account_id=facebook.account.id)

    assert report.pages == 1
    source = CommentSource.objects.get()
    assert source.last_synced_at is not None and source.last_synced_at < due
    assert source.next_due_at == due + dt.timedelta(minutes=5)  # not read time + 5 minutes


@pytest.mark.parametrize("late_seconds", [90, 299])
def test_a_source_read_late_keeps_its_schedule(workspace: Workspace, facebook: Live, late_seconds: int) -> None:
    # A worker behind by less than an interval: the next read stays one interval after this one
    # was due, so the lag is not added to every interval (the rate the budget planned is kept).
    sync.sources_discover()
    now = timezone.now()
    due = now - dt.timedelta(seconds=late_seconds)
    CommentSource.objects.update(next_due_at=due)

    assert sync.sync_account(account_id=facebook.account.id, now=now).pages == 1

    source = CommentSource.objects.get()
    assert source.last_synced_at is not None and source.last_synced_at > due
    assert source.next_due_at == due + dt.timedelta(minutes=5)


def test_a_source_a_whole_interval_behind_drops_the_missed_reads(workspace: Workspace, facebook: Live) -> None:
    # Behind by more than an interval (a stopped worker): no burst of catch-up reads; the next
    # is one interval after this one.
    sync.sources_discover()
    now = timezone.now()
    CommentSource.objects.update(next_due_at=now - dt.timedelta(minutes=12))

    assert sync.sync_account(account_id=facebook.account.id, now=now).pages == 1

    source = CommentSource.objects.get()
    assert source.last_synced_at is not None
    assert source.next_due_at == source.last_synced_at + dt.timedelta(minutes=5)


def test_a_sync_that_finds_nothing_new_links_and_answers_nothing(
    workspace: Workspace, facebook: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real = sync._link_and_answer

    def counting(source: Any, **changed: Any) -> None:
        calls.append(source.id)
        real(source, **changed)

    monkeypatch.setattr(sync, "_link_and_answer", counting)
    sync.sources_discover()
    due_now()
    sync.sync_account(account_id=facebook.account.id)
    assert len(calls) == 1  # comments came: linked

    due_now()
    again = sync.sync_account(account_id=facebook.account.id)  # incremental: the newest one again
    assert again.pages == 1 and again.comments >= 1
    assert len(calls) == 1


def test_a_pass_writes_only_the_comments_that_are_new_or_changed(workspace: Workspace, sandbox: str) -> None:
    live = publish_until(workspace, Platform.FACEBOOK, lambda comments: len(comments) >= 2)
    sync.sources_discover()
    due_now()
    sync.sync_account(account_id=live.account.id)
    stored = _stored(live)
    assert len(stored) >= 2
    long_ago = timezone.now() - dt.timedelta(days=1)
    Comment.objects.filter(target=live.target).update(updated_at=long_ago)
    stale, *unchanged = sorted(stored)
    Comment.objects.filter(platform_comment_id=stale).update(text="an edit the platform no longer has", like_count=-1)
    CommentSource.objects.update(full_synced_at=None)  # the next pass reads everything again

    due_now()
    report = sync.sync_account(account_id=live.account.id)

    assert report.comments == len(stored)
    again = _stored(live)
    assert (again[stale].text, again[stale].like_count) == (stored[stale].text, stored[stale].like_count)
    assert again[stale].updated_at > long_ago  # refreshed
    assert {again[key].updated_at for key in unchanged} == {long_ago}  # as they were: not written


def test_a_sync_claims_once_when_all_it_has_due_fits_a_chunk_and_reads_a_long_pass_to_its_end(
    workspace: Workspace, sandbox: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = publish_until(workspace, Platform.FACEBOOK, lambda comments: len(comments) >= 3)
    claims: list[int] = []
    real = sync._claim

    def counting(*args: Any, **kwargs: Any) -> Any:
        claimed = real(*args, **kwargs)
        claims.append(len(claimed))
        return claimed

    monkeypatch.setattr(sync, "_claim", counting)
    sync.sources_discover()
    due_now()
    sync.sync_account(account_id=live.account.id)
    assert claims == [1]  # fewer than a chunk due: no second claim to find nothing

    monkeypatch.setattr(facebook.Client, "comment_page_size", 1)
    monkeypatch.setattr(sync, "MAX_PAGES_PER_PASS", 1)  # each claim reads one page of the pass
    CommentSource.objects.update(full_synced_at=None)
    due_now()
    claims.clear()
    report = sync.sync_account(account_id=live.account.id)

    pages = len(live.wired())  # one comment a page, the last page without a next cursor
    assert (report.pages, report.cut_short, claims) == (pages, pages - 1, [1] * pages)  # all in this sync
    source = CommentSource.objects.get()
    assert source.page_cursor == "" and source.since is not None  # the pass read to its end


def test_links_and_answers_follow_what_each_pass_brought(
    workspace: Workspace, facebook: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reply listed before its parent is linked when the parent comes; a reply of the account's
    own, found by a sync, answers its comment; gone in a full pass, the comment is unanswered."""
    at = timezone.now() - dt.timedelta(minutes=30)

    def remote(cid: str, parent: str = "", *, own: bool = False, minute: int = 0) -> RemoteComment:
        author = CommentAuthor(id="page" if own else f"fan-{cid}", name="Us" if own else "A fan")
        return RemoteComment(
            platform_comment_id=cid,
            platform_post_id=facebook.remote_id,
            text=f"text of {cid}",
            created_at=at + dt.timedelta(minutes=minute),
            author=author,
            parent_id=parent,
            from_account=own,
        )

    listed: list[RemoteComment] = []
    real = registry.get_client

    def scripted(platform: Any) -> PlatformClient:
        client = real(platform)
        client.list_comments = lambda *args, **kwargs: CommentPage(tuple(listed))  # type: ignore[method-assign]
        return client

    monkeypatch.setattr(registry, "get_client", scripted)
    sync.sources_discover()

    def read(*comments: RemoteComment, full: bool = False) -> dict[str, Comment]:
        listed[:] = comments
        if full:
            CommentSource.objects.update(full_synced_at=None)
        due_now()
        sync.sync_account(account_id=facebook.account.id)
        return {c.platform_comment_id: c for c in Comment.objects.select_related("parent")}

    first = read(remote("A"), remote("R", "P", minute=1), full=True)
    assert first["R"].parent is None  # its parent is not stored yet

    second = read(remote("P", minute=2), remote("O", "A", own=True, minute=3))
    assert second["R"].parent == second["P"] and second["O"].parent == second["A"]
    assert (second["A"].answered, second["P"].answered) == (True, False)

    third = read(remote("A"), remote("R", "P", minute=1), remote("P", minute=2), full=True)
    assert third["O"].deleted_at is not None  # our reply is gone from the platform
    assert not third["A"].answered
