"""Engagement on Facebook, Instagram, Threads, YouTube and Google Business: each real client reads
the comments (the reviews) the simulator's audience wrote, page by page with their nesting and
``since``, replies, hides, deletes and likes through its platform's own calls, over real HTTP; the
simulator reflects every action in its next listing and logs it; failures map onto the taxonomy.

A post is aged an hour and the audience paced a minute apart, so ``since`` has comments on both
sides of it; what the audience wrote is predicted with ``audience.expected`` and its ids rendered
as each simulator renders them."""

from __future__ import annotations

import datetime as dt
import importlib
from dataclasses import dataclass
from typing import Any

import pytest
import requests

from platforms.base import (
    AuthError,
    CommentPage,
    Credentials,
    ErrorCode,
    NotSupported,
    Permanent,
    Platform,
    PlatformClient,
    PostRef,
    PublishRequest,
    PublishResult,
    QuotaExhausted,
    RateLimited,
    RemoteComment,
    ReplyTo,
    Transient,
    UnknownOutcome,
)
from platforms.capabilities import CAPABILITIES
from platforms.registry import get_client
from platforms.sandbox import _meta_common as meta
from platforms.sandbox import audience
from platforms.sandbox import google_business as gb_sim
from platforms.sandbox import youtube as yt_sim
from platforms.sandbox.store import SandboxStore
from platforms.youtube import MODERATION_LISTINGS
from tests.e2e.harness import wait_for
from tests.platforms.conftest import connect_sandbox_account, drive, media_item, sim_requests

FIVE = [Platform.FACEBOOK, Platform.INSTAGRAM, Platform.THREADS, Platform.YOUTUBE, Platform.GOOGLE_BUSINESS]
PACE = 60.0  # seconds between one audience comment and the next
AGE = 3600.0  # how long ago the post was published
# What each platform needs published; the store kind keeping the post's publication time.
POSTS: dict[Platform, tuple[str, tuple[str, ...], str]] = {
    Platform.FACEBOOK: ("TEXT", (), "post"),
    Platform.INSTAGRAM: ("IMAGE", ("sample.jpg",), "media"),
    Platform.THREADS: ("TEXT", (), "thread"),
    Platform.YOUTUBE: ("VIDEO", ("sample.mp4",), "video"),
}
# The listing call and the reply call of each simulator (path part, method), for armed faults.
LIST_PATH = {
    Platform.FACEBOOK: ("/comments", "GET"),
    Platform.INSTAGRAM: ("/comments", "GET"),
    Platform.THREADS: ("/conversation", "GET"),
    Platform.YOUTUBE: ("/commentThreads", "GET"),
    Platform.GOOGLE_BUSINESS: ("/reviews", "GET"),
}
REPLY_PATH = {
    Platform.FACEBOOK: ("/comments", "POST"),
    Platform.INSTAGRAM: ("/replies", "POST"),
    Platform.THREADS: ("/threads_publish", "POST"),
    Platform.YOUTUBE: ("/youtube/v3/comments", "POST"),
    Platform.GOOGLE_BUSINESS: ("/reply", "PUT"),
}


@dataclass
class Subject:
    """One connected account, its published post (Google Business: its location) and the client."""

    platform: Platform
    sandbox: str
    client: Any
    creds: Credentials
    post_id: str  # what list_comments takes ("" for Google Business: the location's reviews)
    audience_post: str  # the audience's post id (Google Business: the location's name)
    kind: str
    store_id: str

    @property
    def slug(self) -> str:
        return self.platform.slug

    @property
    def published_at(self) -> float:
        doc = SandboxStore(self.slug).get(self.kind, self.store_id)
        assert doc is not None
        return float(doc["created"])

    def expected(self) -> list[dict[str, Any]]:
        return audience.expected(self.slug, self.audience_post, self.published_at)

    def wire(self, neutral: str, parent: str = "") -> str:
        """The platform's id of the audience comment ``neutral`` (``parent``: its parent's)."""
        simulator = importlib.import_module(f"platforms.sandbox.{self.slug}")
        return str(simulator.platform_comment_id(neutral, parent))

    def page_size(self, size: int) -> None:
        name = "review_page_size" if self.platform == Platform.GOOGLE_BUSINESS else "comment_page_size"
        setattr(self.client, name, size)

    def pages(self, since: dt.datetime | None = None) -> list[CommentPage]:
        found = [self.client.list_comments(self.creds, self.post_id, since=since)]
        while found[-1].cursor:
            assert len(found) < 50, found
            found.append(self.client.list_comments(self.creds, self.post_id, since=since, cursor=found[-1].cursor))
        return found

    def comments(self, since: dt.datetime | None = None) -> dict[str, RemoteComment]:
        every = [c for page in self.pages(since) for c in page.comments]
        by_id = {c.platform_comment_id: c for c in every}
        assert len(by_id) == len(every), "a comment listed twice"
        return by_id

    def reply(self, parent_id: str, text: str, key: str = "rp_1") -> PublishResult:
        request = reply_request(self, parent_id, text, key)
        results = [self.client.reply_comment(self.creds, request, {})]
        while not results[-1].done:
            assert len(results) < 10, results
            results.append(self.client.reply_comment(self.creds, request, results[-1].state))
        return results[-1]

    def arm(self, kind: str, *, path: str, method: str, seconds: float = 0.0) -> None:
        response = requests.post(
            f"{self.sandbox}/_control/{self.slug}/faults",
            json={"kind": kind, "path": path, "method": method, "seconds": seconds},
            timeout=10,
        )
        assert response.status_code == 201, response.text


def reply_request(subject: Subject, parent_id: str, text: str, key: str) -> PublishRequest:
    root = PostRef(subject.post_id)
    return PublishRequest(
        target_id=key, content_type="TEXT", text=text, reply_to=ReplyTo(root=root, parent=PostRef(parent_id))
    )


def _age(slug: str, kind: str, store_id: str) -> None:
    store = SandboxStore(slug)
    doc = store.get(kind, store_id)
    assert doc is not None
    store.update(kind, store_id, created=float(doc["created"]) - AGE)


def _subject(platform: Platform, sandbox: str, media_server: str) -> Subject:
    client = get_client(platform)
    if platform == Platform.GOOGLE_BUSINESS:
        # A location with two reviews at least, so a listing of one review a page has pages.
        for _ in range(10):
            for identity in connect_sandbox_account(platform):
                creds = identity.credentials
                location_id = creds.external_id.rsplit("/", 1)[-1]
                _age("google_business", "location", location_id)
                subject = Subject(platform, sandbox, client, creds, "", creds.external_id, "location", location_id)
                if len(subject.expected()) >= 2:
                    return subject
        raise AssertionError("no location with two reviews in ten connections")
    identity = connect_sandbox_account(platform)[0]
    content_type, files, kind = POSTS[platform]
    request = PublishRequest(
        target_id="tgt_eng",
        content_type=content_type,
        text="Our spring collection is here",
        media=tuple(media_item(f"{media_server}/{name}") for name in files),
    )
    post = drive(client, identity.credentials, request)[-1]
    _age(platform.slug, kind, post.platform_post_id)
    post_id = post.platform_post_id
    return Subject(platform, sandbox, client, identity.credentials, post_id, post_id, kind, post_id)


@pytest.fixture(params=FIVE, ids=lambda p: p.value)
def subject(request: Any, sandbox: str, media_server: str, settings: Any) -> Subject:
    settings.SANDBOX_AUDIENCE_PACE_SECONDS = PACE
    return _subject(request.param, sandbox, media_server)


@pytest.fixture
def threads(sandbox: str, media_server: str, settings: Any) -> Subject:
    settings.SANDBOX_AUDIENCE_PACE_SECONDS = PACE
    return _subject(Platform.THREADS, sandbox, media_server)


@pytest.fixture
def google_business(sandbox: str, media_server: str, settings: Any) -> Subject:
    settings.SANDBOX_AUDIENCE_PACE_SECONDS = PACE
    return _subject(Platform.GOOGLE_BUSINESS, sandbox, media_server)


def _tops(expected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in expected if not c["parentId"]]


def _successful(subject: Subject, flag: str) -> list[dict[str, Any]]:
    return [e for e in sim_requests(subject.sandbox, subject.slug) if e.get(flag) and int(e["status"]) < 300]


# --- reading ---------------------------------------------------------------------------------


def test_the_listing_pages_through_every_comment_with_its_nesting(subject: Subject) -> None:
    if subject.platform != Platform.GOOGLE_BUSINESS:  # a comment of the account's own besides
        on = PostRef(subject.post_id)
        first = PublishRequest(target_id="fc", content_type="TEXT", text="Ask us anything", reply_to=ReplyTo(on, on))
        results = [subject.client.comment(subject.creds, first, {})]
        while not results[-1].done:
            results.append(subject.client.comment(subject.creds, first, results[-1].state))
        own = results[-1].platform_post_id
    expected = subject.expected()
    subject.page_size(1)
    pages = subject.pages()
    got = {c.platform_comment_id: c for page in pages for c in page.comments}

    wanted = {subject.wire(c["id"], c["parentId"]): c for c in expected}
    if subject.platform != Platform.GOOGLE_BUSINESS:
        assert got[own].from_account and got[own].parent_id == "" and got[own].text == "Ask us anything"
        del got[own]
    assert set(got) == set(wanted)
    for wire, comment in got.items():
        doc = wanted[wire]
        assert comment.text == doc["text"]
        assert comment.parent_id == (subject.wire(doc["parentId"]) if doc["parentId"] else "")
        assert comment.platform_post_id == subject.post_id
        assert not comment.from_account and not comment.hidden
        assert comment.created_at == dt.datetime.fromtimestamp(int(doc["createdAt"]), dt.UTC)
        assert comment.author.name == doc["author"].name or comment.author.handle == doc["author"].handle
        replies = sum(1 for c in expected if c["parentId"] == doc["id"])
        assert comment.reply_count in (None, replies)
        if subject.platform == Platform.GOOGLE_BUSINESS:
            assert comment.rating == doc["rating"]
        elif subject.platform != Platform.THREADS:
            assert comment.like_count == doc["likeCount"]
    # one page per comment where replies come flattened, per top-level comment where they come
    # inside it; YouTube then reads the comments held for review (none here) as a last page
    per_page = {
        Platform.FACEBOOK: len(expected) + 1,
        Platform.THREADS: len(expected) + 1,
        Platform.INSTAGRAM: len(_tops(expected)) + 1,
        Platform.YOUTUBE: len(_tops(expected)) + 2,
        Platform.GOOGLE_BUSINESS: len(_tops(expected)),
    }[subject.platform]
    assert len(pages) == per_page >= 2
    assert all(len(page.comments) >= 1 for page in pages[: len(_tops(expected))])


def test_a_read_makes_the_list_calls_the_cadence_plans_for(subject: Subject) -> None:
    """At the client's own page size the audience fits one page; a read still makes the platform's
    ``comment_listings`` calls (YouTube: published, then held for review), each a read of the
    budget, and the cadence plans for that many (engagement.cadence.demand)."""
    assert len(subject.expected()) < 20
    assert len(subject.pages()) == CAPABILITIES[subject.platform].comment_listings
    if subject.platform == Platform.YOUTUBE:
        assert CAPABILITIES[subject.platform].comment_listings == len(MODERATION_LISTINGS) == 2


def test_since_keeps_only_the_newer_comments(subject: Subject) -> None:
    expected = subject.expected()
    assert len(expected) >= 1
    kept_from = len(expected) // 2
    # the comments are PACE apart in the order ``expected`` gives: the first ``kept_from`` are older
    since = dt.datetime.fromtimestamp(int(subject.published_at) + PACE * kept_from + PACE / 2, dt.UTC)
    requests.delete(f"{subject.sandbox}/_control/{subject.slug}/requests", timeout=10)
    subject.page_size(1)
    got = subject.comments(since=since)
    assert set(got) == {subject.wire(c["id"], c["parentId"]) for c in expected[kept_from:]}
    if subject.platform in (Platform.FACEBOOK, Platform.THREADS):
        # newest first: the listing stops at the first older comment, with no page after it
        path = LIST_PATH[subject.platform][0]
        reads = [e for e in sim_requests(subject.sandbox, subject.slug, path) if e["method"] == "GET"]
        assert len(reads) == len(expected) - kept_from + (1 if kept_from else 0)


def test_a_post_the_platform_no_longer_has_lists_no_comments(subject: Subject) -> None:
    missing = {
        Platform.FACEBOOK: "611234_999999",
        Platform.INSTAGRAM: "17999999999",
        Platform.THREADS: "18000000000000000",
        Platform.YOUTUBE: "dQw4w9WgXcQ",
        Platform.GOOGLE_BUSINESS: f"{subject.creds.external_id}/localPosts/1",  # reviews are on the location
    }[subject.platform]
    page = subject.client.list_comments(subject.creds, missing)
    assert page == CommentPage(())


# --- replying --------------------------------------------------------------------------------


def test_a_reply_shows_up_from_the_account_under_its_comment(subject: Subject) -> None:
    target = subject.wire(_tops(subject.expected())[0]["id"])
    reply = subject.reply(target, "Thanks, it ships next week!")
    got = subject.comments()
    mine = got[reply.platform_post_id]
    assert mine.from_account and mine.text == "Thanks, it ships next week!"
    assert mine.parent_id == target
    assert got[target].reply_count in (None, sum(1 for c in got.values() if c.parent_id == target))
    created = [e for e in sim_requests(subject.sandbox, subject.slug) if e.get("remoteId") == reply.platform_post_id]
    assert len([e for e in created if e.get("comment") or e.get("publish") or e.get("reply")]) == 1
    if subject.platform == Platform.GOOGLE_BUSINESS:
        return
    # a reply to that reply: Threads nests it under the reply, the others under the thread's top
    again = subject.reply(reply.platform_post_id, "And it comes in blue.", key="rp_2")
    nested = subject.comments()[again.platform_post_id]
    assert nested.from_account
    assert nested.parent_id == (reply.platform_post_id if subject.platform == Platform.THREADS else target)


def test_a_reviews_reply_is_set_once_and_replaced(google_business: Subject) -> None:
    subject = google_business
    review = subject.wire(subject.expected()[0]["id"])
    first = subject.reply(review, "Thank you for visiting!")
    second = subject.reply(review, "Thank you for visiting!", key="rp_again")
    assert first.platform_post_id == second.platform_post_id == f"{review}/reply"
    replies = [c for c in subject.comments().values() if c.parent_id == review]
    assert [(r.text, r.from_account) for r in replies] == [("Thank you for visiting!", True)]
    subject.reply(review, "Thank you, see you soon!", key="rp_new")
    replies = [c for c in subject.comments().values() if c.parent_id == review]
    assert [r.text for r in replies] == ["Thank you, see you soon!"]
    with pytest.raises(Permanent) as too_long:
        subject.reply(review, "x" * 4097, key="rp_long")
    assert too_long.value.error_code == ErrorCode.INVALID_REQUEST


def test_a_threads_reply_is_never_published_twice(threads: Subject) -> None:
    subject = threads
    target = subject.wire(_tops(subject.expected())[0]["id"])
    request = reply_request(subject, target, "Glad you like it", "rp_once")
    done = subject.client.reply_comment(subject.creds, request, {})  # container, then its publish
    assert done.done and done.platform_post_id
    (container,) = [c for c in SandboxStore("threads").all("container") if c.get("reply_to_id") == target]
    resumed = {"step": "container", "container_id": container["id"]}  # as if the answer was lost
    with pytest.raises(UnknownOutcome):
        subject.client.reply_comment(subject.creds, request, resumed)
    mine = [c for c in subject.comments().values() if c.from_account]
    assert [c.platform_comment_id for c in mine] == [done.platform_post_id]


# --- hiding, deleting, liking ------------------------------------------------------------------


def test_hide_and_show_again_are_reflected_in_the_listing(subject: Subject) -> None:
    target = subject.wire(_tops(subject.expected())[0]["id"])
    if "hide" not in CAPABILITIES[subject.platform].comment_actions:
        with pytest.raises(NotSupported):
            subject.client.set_comment_hidden(subject.creds, target, True)
        return
    subject.client.set_comment_hidden(subject.creds, target, True)
    subject.client.set_comment_hidden(subject.creds, target, True)  # the same state again: harmless
    assert subject.comments()[target].hidden
    subject.client.set_comment_hidden(subject.creds, target, False)
    assert not subject.comments()[target].hidden
    logged = [e for e in sim_requests(subject.sandbox, subject.slug) if "hide" in e or "moderate" in e]
    assert [bool(e.get("hide") or e.get("moderate") == "heldForReview") for e in logged] == [True, True, False]


def test_a_threads_reply_nested_below_another_cannot_be_hidden_alone(threads: Subject) -> None:
    subject = threads
    top = subject.wire(_tops(subject.expected())[0]["id"])
    mine = subject.reply(top, "Hi!")
    with pytest.raises(Permanent) as refused:
        subject.client.set_comment_hidden(subject.creds, mine.platform_post_id, True)
    assert refused.value.error_code == ErrorCode.INVALID_REQUEST
    subject.client.set_comment_hidden(subject.creds, top, True)
    got = subject.comments()
    assert got[top].hidden and got[mine.platform_post_id].hidden  # hidden with the reply it answers


def test_the_accounts_own_reply_is_deleted_and_a_gone_one_counts_as_deleted(subject: Subject) -> None:
    target = subject.wire(_tops(subject.expected())[0]["id"])
    mine = subject.reply(target, "Sent by mistake")
    assert mine.platform_post_id in subject.comments()
    subject.client.delete_comment(subject.creds, mine.platform_post_id, parent_id=target)
    assert mine.platform_post_id not in subject.comments()
    subject.client.delete_comment(subject.creds, mine.platform_post_id, parent_id=target)  # gone: done
    assert _successful(subject, "delete")


def test_another_persons_comment_is_deleted_where_the_platform_allows_it(subject: Subject) -> None:
    expected = subject.expected()
    top = _tops(expected)[0]
    target = subject.wire(top["id"])
    if "delete_others" not in CAPABILITIES[subject.platform].comment_actions:
        with pytest.raises(Permanent) as refused:
            subject.client.delete_comment(subject.creds, target)
        assert refused.value.error_code in (ErrorCode.PERMISSION_MISSING, ErrorCode.INVALID_REQUEST)
        assert target in subject.comments()
        return
    subject.client.delete_comment(subject.creds, target)
    after = subject.comments()
    assert target not in after
    assert not [c for c in after.values() if c.parent_id == target]  # its replies went with it
    subject.client.delete_comment(subject.creds, target)  # gone: done


def test_a_comment_is_liked_once_where_the_platform_has_likes(subject: Subject) -> None:
    top = _tops(subject.expected())[0]
    target = subject.wire(top["id"])
    if "like" not in CAPABILITIES[subject.platform].comment_actions:
        with pytest.raises(NotSupported):
            subject.client.like_comment(subject.creds, target)
        return
    subject.client.like_comment(subject.creds, target)
    subject.client.like_comment(subject.creds, target)  # liked already: harmless
    assert subject.comments()[target].like_count == top["likeCount"] + 1
    assert len(_successful(subject, "like")) == 2


@pytest.mark.parametrize("platform", FIVE, ids=lambda p: p.value)
def test_the_capability_table_names_exactly_the_actions_the_client_has(platform: Platform) -> None:
    actions = CAPABILITIES[platform].comment_actions
    client_class = type(get_client(platform))
    assert (
        {"read", "reply", "delete_own"} <= actions <= {"read", "reply", "hide", "delete_own", "delete_others", "like"}
    )
    assert CAPABILITIES[platform].comment_reads_per_hour > 0
    for action, method in (("hide", "set_comment_hidden"), ("like", "like_comment"), ("read", "list_comments")):
        overridden = getattr(client_class, method) is not getattr(PlatformClient, method)
        assert overridden == (action in actions), (platform, action)


# --- failures ----------------------------------------------------------------------------------


def test_failures_are_classified(subject: Subject) -> None:
    stranger = Credentials(access_token="sbx-not-a-token", external_id=subject.creds.external_id)
    with pytest.raises(AuthError):
        subject.client.list_comments(stranger, subject.post_id)
    path, method = LIST_PATH[subject.platform]
    subject.arm("rate_limited", path=path, method=method)
    with pytest.raises(RateLimited) as limited:
        subject.client.list_comments(subject.creds, subject.post_id)
    assert limited.value.error_code == ErrorCode.RATE_LIMITED
    target = subject.wire(_tops(subject.expected())[0]["id"])
    path, method = REPLY_PATH[subject.platform]
    subject.arm("server_error", path=path, method=method)
    with pytest.raises(Transient):
        subject.reply(target, "Platform down")
    assert not [c for c in subject.comments().values() if c.from_account]
    with pytest.raises(Permanent):
        subject.reply(target, "Refused #sandbox-fail", key="rp_fail")
    gone = {
        Platform.FACEBOOK: f"{subject.post_id}_204045",
        Platform.INSTAGRAM: meta.numeric_comment_id(audience.comment_id(subject.post_id, "zz")),
        Platform.THREADS: meta.numeric_comment_id(audience.comment_id(subject.post_id, "zz")),
        Platform.YOUTUBE: yt_sim.wire_comment_id(audience.comment_id(subject.post_id, "zz")),
        Platform.GOOGLE_BUSINESS: f"{subject.audience_post}/reviews/{gb_sim.REVIEW_ID_PREFIX}zz",
    }[subject.platform]
    with pytest.raises(Permanent):
        subject.reply(gone, "To nobody", key="rp_gone")


def test_youtubes_used_up_quota_is_quota_exhausted(sandbox: str, media_server: str, settings: Any) -> None:
    settings.SANDBOX_AUDIENCE_PACE_SECONDS = PACE
    subject = _subject(Platform.YOUTUBE, sandbox, media_server)
    subject.arm("quota_exhausted", path="/commentThreads", method="GET")
    with pytest.raises(QuotaExhausted):
        subject.client.list_comments(subject.creds, subject.post_id)


def test_a_reply_whose_answer_never_comes_is_an_unknown_outcome(subject: Subject, settings: Any) -> None:
    target = subject.wire(_tops(subject.expected())[0]["id"])
    request = reply_request(subject, target, "Slow platform", "rp_slow")
    settings.PLATFORM_HTTP_TIMEOUT = 2.0
    path, method = REPLY_PATH[subject.platform]
    subject.arm("timeout", path=path, method=method, seconds=3.0)
    with pytest.raises(UnknownOutcome):
        # Threads: the reply container is made, then its publish call is held
        get_client(subject.platform).reply_comment(subject.creds, request, {})
    (late,) = wait_for(
        lambda: [e for e in sim_requests(subject.sandbox, subject.slug) if e.get("fault") == "timeout"],
        timeout=30,
        what="the held reply in the simulator's log",
    )
    assert late["status"] < 300  # the platform did reply: never re-send blindly
    settings.PLATFORM_HTTP_TIMEOUT = 10.0
    assert [c.text for c in subject.comments().values() if c.from_account] == ["Slow platform"]
