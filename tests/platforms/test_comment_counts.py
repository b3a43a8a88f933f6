"""The comment count each simulator reports for a post (the ``comments`` of its metrics, or the
count on its post object where the platform has no metrics of comments) is the comments its own
listing shows, counted the way the platform counts them (docs/contract.md, "Analytics comment
counts vs the inbox"), over real HTTP through each client: after publishing, and still after the
account comments on the post, replies to a comment, hides one and deletes some.

Google Business counts reviews (``totalReviewCount`` of the reviews listing): its reviews are on
the location, not on a published local post, so the location is the "post" here. Mastodon
reports no analytics (its client has no metrics read): its statuses' ``replies_count`` is what is
compared."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import requests

from platforms.base import Credentials, Platform, PostRef, PublishRequest, PublishResult, RemoteComment, ReplyTo
from platforms.capabilities import CAPABILITIES
from platforms.registry import get_client
from platforms.sandbox import audience
from tests.platforms.comment_helpers import every_comment
from tests.platforms.conftest import CASES, connect_sandbox_account, drive, media_item


@dataclass(frozen=True)
class Counting:
    """How a platform counts a post's comments."""

    direct_only: bool  # those on the post itself, not the replies to them
    public_only: bool = False  # without the hidden ones, nor those under a hidden one


COUNTING = {
    Platform.FACEBOOK: Counting(direct_only=True),  # comments.summary.total_count, filter toplevel
    Platform.INSTAGRAM: Counting(direct_only=False),  # the comments insight (and comments_count)
    Platform.THREADS: Counting(direct_only=True),  # the replies insight: top-level replies only
    Platform.YOUTUBE: Counting(direct_only=False, public_only=True),  # statistics.commentCount
    Platform.GOOGLE_BUSINESS: Counting(direct_only=True),  # totalReviewCount: the reviews, not replies
    Platform.TWITTER: Counting(direct_only=True),  # public_metrics.reply_count
    Platform.BLUESKY: Counting(direct_only=True),  # replyCount
    Platform.MASTODON: Counting(direct_only=True),  # replies_count
    Platform.LINKEDIN: Counting(direct_only=False),  # commentsSummary.aggregatedTotalComments
}


def documented(platform: Platform, listed: list[RemoteComment]) -> int:
    """The platform's count of ``listed`` (the comments its listing gave, in any order)."""
    counting = COUNTING[platform]
    by_id = {c.platform_comment_id: c for c in listed}

    def off(comment: RemoteComment) -> bool:
        parent = by_id.get(comment.parent_id)
        return comment.hidden or (parent is not None and off(parent))

    return sum(
        1 for c in listed if (not counting.direct_only or not c.parent_id) and not (counting.public_only and off(c))
    )


@dataclass
class Subject:
    platform: Platform
    sandbox: str
    client: Any
    creds: Credentials
    post_id: str  # what list_comments takes ("" for Google Business: the location's reviews)

    def listed(self) -> list[RemoteComment]:
        return every_comment(self.client, self.creds, self.post_id)[0]

    def reported(self) -> int:
        """The count the platform reports for the post, read as the service reads it (or, where the
        service reads none, as the platform answers it)."""
        if self.platform == Platform.GOOGLE_BUSINESS:
            body = self._get(f"/google_business/v4/{self.creds.external_id}/reviews", pageSize=1)
            return int(body["totalReviewCount"])
        if self.platform == Platform.MASTODON:
            return int(self._get(f"/mastodon/api/v1/statuses/{self.post_id}")["replies_count"])
        metrics = self.client.fetch_post_metrics(self.creds, [self.post_id])
        value = metrics[self.post_id].comments
        assert isinstance(value, int), metrics
        return value

    def _get(self, path: str, **params: Any) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.creds.access_token}"}
        response = requests.get(f"{self.sandbox}{path}", headers=headers, params=params, timeout=10)
        assert response.status_code == 200, response.text
        body = response.json()
        assert isinstance(body, dict)
        return body

    def agree(self) -> tuple[int, list[RemoteComment]]:
        """The reported count, which must be the listed comments counted as the platform counts."""
        listed = self.listed()
        reported = self.reported()
        assert reported == documented(self.platform, listed), (reported, listed)
        self._agree_elsewhere(listed)
        return reported, listed

    def _agree_elsewhere(self, listed: list[RemoteComment]) -> None:
        """The platform's other figures of the same comments agree as well."""
        if self.platform == Platform.FACEBOOK:  # filter(stream): every comment, replies included
            fields = "comments.filter(stream).summary(total_count).limit(0)"
            node = self.client.graph.call("GET", self.post_id, token=self.creds.access_token, params={"fields": fields})
            assert node["comments"]["summary"]["total_count"] == len(listed)
        if self.platform == Platform.INSTAGRAM:  # comments_count on the media
            post = self.client.fetch_post(self.creds, self.post_id)
            assert post is not None and post.metrics.comments == len(listed)

    def send(self, call: Callable[[Credentials, PublishRequest, dict[str, Any]], PublishResult], **request: Any) -> str:
        """A comment or reply sent as the worker sends it (resumed until done); its id."""
        sent = PublishRequest(target_id=request.pop("key"), content_type="TEXT", **request)
        results = [call(self.creds, sent, {})]
        while not results[-1].done:
            assert len(results) < 10, results
            results.append(call(self.creds, sent, results[-1].state))
        return str(results[-1].platform_post_id)


def _suitable(slug: str, audience_post: str) -> bool:
    """The audience wrote two comments on the post at least, and a reply to one of them."""
    written = audience.expected(slug, audience_post, 0.0)
    return sum(1 for c in written if not c["parentId"]) >= 2 and any(c["parentId"] for c in written)


def _subject(platform: Platform, sandbox: str, media_server: str) -> Subject:
    client = get_client(platform)
    if platform == Platform.GOOGLE_BUSINESS:
        for _ in range(10):
            for identity in connect_sandbox_account(platform):
                if len(audience.expected(platform.slug, identity.credentials.external_id, 0.0)) >= 2:
                    return Subject(platform, sandbox, client, identity.credentials, "")
        raise AssertionError("no location with two reviews in ten connections")
    case = next(c for c in CASES if c.platform == platform)
    creds = connect_sandbox_account(platform)[0].credentials
    for number in range(30):
        request = PublishRequest(
            target_id=f"tgt_count_{number}",
            content_type=case.content_type,
            text=f"Counting the comments, take {number}",
            media=tuple(media_item(f"{media_server}/{name}") for name in case.media),
            options=dict(case.options),
        )
        post_id = str(drive(client, creds, request)[-1].platform_post_id)
        if _suitable(platform.slug, post_id):
            return Subject(platform, sandbox, client, creds, post_id)
    raise AssertionError("no post of 30 drew two comments and a reply")


@pytest.fixture(params=list(COUNTING), ids=lambda p: p.value)
def subject(request: Any, sandbox: str, media_server: str) -> Subject:
    return _subject(request.param, sandbox, media_server)


def test_the_reported_count_is_the_listed_comments_as_the_platform_counts_them(subject: Subject) -> None:
    platform, actions = subject.platform, CAPABILITIES[subject.platform].comment_actions
    counting = COUNTING[platform]
    count, listed = subject.agree()
    tops = [c for c in listed if not c.parent_id and not c.from_account]
    assert count >= 2 and len(tops) >= 2
    answered = {c.parent_id for c in listed if c.parent_id}
    target = next((c for c in tops if c.platform_comment_id in answered), tops[0])
    other = next(c for c in tops if c is not target)

    own = ""
    if platform != Platform.GOOGLE_BUSINESS:  # the account's own comment on the post
        on = PostRef(subject.post_id)
        own = subject.send(subject.client.comment, key="cc_own", text="Ask us anything", reply_to=ReplyTo(on, on))
        after, listed = subject.agree()
        assert own in {c.platform_comment_id for c in listed} and after == count + 1
        count = after

    root = PostRef(subject.post_id)
    reply = subject.send(
        subject.client.reply_comment,
        key="cc_reply",
        text="Thanks, it ships next week!",
        reply_to=ReplyTo(root, PostRef(target.platform_comment_id)),
    )
    after, listed = subject.agree()
    assert reply in {c.platform_comment_id for c in listed}
    assert after == count + (0 if counting.direct_only else 1)
    count = after

    if "hide" in actions:  # the comment just answered: its replies are hidden with it where so
        subject.client.set_comment_hidden(subject.creds, target.platform_comment_id, True)
        after, listed = subject.agree()
        shown = next(c for c in listed if c.platform_comment_id == target.platform_comment_id)
        assert shown.hidden or platform == Platform.TWITTER  # recent search does not say which are hidden
        assert (after < count) if counting.public_only else (after == count)
        count = after

    if own:
        subject.client.delete_comment(subject.creds, own)
        after, listed = subject.agree()
        assert own not in {c.platform_comment_id for c in listed} and after == count - 1
        count = after
    subject.client.delete_comment(subject.creds, reply, parent_id=target.platform_comment_id)
    _, listed = subject.agree()
    assert reply not in {c.platform_comment_id for c in listed}

    if "delete_others" in actions:  # another person's comment, with the replies under it
        subject.client.delete_comment(subject.creds, other.platform_comment_id)
        after, listed = subject.agree()
        assert other.platform_comment_id not in {c.platform_comment_id for c in listed}
        assert after < count


@pytest.mark.parametrize(
    "platform", [Platform.THREADS, Platform.TWITTER, Platform.BLUESKY, Platform.MASTODON], ids=lambda p: p.value
)
def test_the_accounts_own_comment_reports_the_replies_under_it(
    platform: Platform, sandbox: str, media_server: str
) -> None:
    """A comment of the account's is a post of its own on these platforms: its count (its
    insights, its lookup, its status) is the replies the listing shows under it."""
    subject = _subject(platform, sandbox, media_server)
    on = PostRef(subject.post_id)
    own = subject.send(subject.client.comment, key="cc_own", text="Ask us anything", reply_to=ReplyTo(on, on))
    subject.send(
        subject.client.reply_comment, key="cc_reply", text="Also: we ship worldwide", reply_to=ReplyTo(on, PostRef(own))
    )
    listed = subject.listed()
    under = sum(1 for c in listed if c.parent_id == own)
    assert under == 1
    assert Subject(platform, sandbox, subject.client, subject.creds, own).reported() == under
    assert next(c for c in listed if c.platform_comment_id == own).reply_count in (None, under)
