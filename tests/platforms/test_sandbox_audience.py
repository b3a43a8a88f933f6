"""The simulators' audience: the same comments for the same post in every process, appearing with
the pace after publishing, and the account's replies, hides, likes and deletes laid over them (for
many posts at once in three store reads)."""

from __future__ import annotations

from typing import Any

from django.test import override_settings

from platforms.sandbox import audience
from platforms.sandbox.store import SandboxStore


def test_the_same_post_has_the_same_audience_and_another_post_another() -> None:
    first = audience.expected("mastodon", "1001", 0.0, now=10**9)
    again = audience.expected("mastodon", "1001", 0.0, now=10**9)
    other = audience.expected("mastodon", "1002", 0.0, now=10**9)
    assert [(c["id"], c["text"], c["author"]) for c in first] == [(c["id"], c["text"], c["author"]) for c in again]
    assert [c["id"] for c in first] != [c["id"] for c in other] or [c["text"] for c in first] != [
        c["text"] for c in other
    ]
    tops = [c for c in first if not c["parentId"]]
    assert 1 <= len(tops) <= 5
    assert all(c["parentId"] in {t["id"] for t in tops} for c in first if c["parentId"])
    assert all(audience.split_id(c["id"]) == ("1001", c["key"]) for c in first)


@override_settings(SANDBOX_AUDIENCE_PACE_SECONDS=60.0)
def test_comments_appear_one_pace_apart_after_publishing() -> None:
    every = audience.expected("twitter", "77", 1000.0, now=10**9)
    assert [c["createdAt"] for c in every] == [1000.0 + 60.0 * rank for rank in range(1, len(every) + 1)]
    assert audience.expected("twitter", "77", 1000.0, now=1000.0 + 60.0) == every[:1]
    assert audience.expected("twitter", "77", 1000.0, now=1059.0) == []


def test_reviews_carry_a_rating_and_no_audience_replies() -> None:
    reviews = audience.expected("google_business", "locations/1", 0.0, now=10**9)
    assert reviews and all(1 <= c["rating"] <= 5 and not c["parentId"] for c in reviews)


def test_replies_hides_likes_and_deletes_are_laid_over_the_audience() -> None:
    store = SandboxStore("sim-audience-test")
    post = "5005"
    tops = [c for c in audience.thread(store, "mastodon", post, 0.0) if not c["parentId"]]
    target = tops[0]
    me = audience.Person("acct-1", "Our Brand", "ourbrand", "")
    reply = audience.add_reply(
        store, post, target["id"], "Thanks!", author=me, reply_id=audience.comment_id(post, "a1")
    )
    assert audience.add_reply(store, post, target["id"], "Thanks!", author=me, reply_id=reply["id"]) == reply
    audience.set_state(store, target["id"], hidden=True, liked=True)
    shown = {c["id"]: c for c in audience.thread(store, "mastodon", post, 0.0)}
    assert shown[reply["id"]]["fromAccount"] and shown[reply["id"]]["parentId"] == target["id"]
    assert shown[target["id"]]["hidden"] and shown[target["id"]]["liked"]
    assert shown[target["id"]]["likeCount"] == target["likeCount"] + 1
    assert shown[target["id"]]["replyCount"] == target["replyCount"] + 1
    audience.set_state(store, target["id"], deleted=True)
    after = {c["id"] for c in audience.thread(store, "mastodon", post, 0.0)}
    assert target["id"] not in after and reply["id"] not in after
    assert audience.find(store, "mastodon", target["id"], 0.0) is None


def test_the_threads_of_many_posts_are_read_in_three_store_reads() -> None:
    """``audience.threads`` of many posts lays what the account did over each post's audience, as
    :func:`audience.thread` does, in three store reads whatever their number (the account's replies
    of every post, those replies, the states of every comment), so a metrics call stays cheap."""
    store = SandboxStore("sim-count-test")
    posts = [(f"90{n}", 0.0) for n in range(40)]
    written = {post_id: audience.expected("mastodon", post_id, at) for post_id, at in posts}
    first, second = posts[0][0], posts[1][0]
    me = audience.Person("acct-1", "Our Brand", "ourbrand", "")
    reply = audience.add_reply(store, first, written[first][0]["id"], "Thanks!", author=me, reply_id=f"{first}_a1")
    audience.set_state(store, written[first][0]["id"], liked=True)
    audience.set_state(store, written[second][0]["id"], deleted=True)

    calls: list[str] = []
    redis = store.redis

    class Counted:
        def __getattr__(self, name: str) -> Any:
            calls.append(name)
            return getattr(redis, name)

    store.redis = Counted()  # type: ignore[assignment]
    many = audience.threads(store, "mastodon", posts)
    store.redis = redis
    assert calls == ["pipeline", "mget", "mget"]

    assert [c["id"] for c in many[first]] == [c["id"] for c in written[first]] + [reply["id"]]
    assert many[first][0]["liked"] and many[first][0]["replyCount"] == _replies_to_first(written[first]) + 1
    gone = {c["id"] for c in written[second] if written[second][0]["id"] in (c["id"], c["parentId"])}
    assert [c["id"] for c in many[second]] == [c["id"] for c in written[second] if c["id"] not in gone]
    for post_id, _ in posts[2:]:
        assert [c["id"] for c in many[post_id]] == [c["id"] for c in written[post_id]]
        assert not any(c["hidden"] or c["liked"] or c["fromAccount"] for c in many[post_id])
    assert audience.comment_count(many[first]) == len(written[first]) + 1
    assert audience.comment_count(many[first], direct_only=True) == sum(1 for c in written[first] if not c["parentId"])


def _replies_to_first(comments: list[dict[str, Any]]) -> int:
    """How many of the audience's replies answer its first comment."""
    return sum(1 for c in comments if c["parentId"] == comments[0]["id"])
