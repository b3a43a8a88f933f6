"""The simulators' audience: the same comments for the same post in every process, appearing with
the pace after publishing, and the account's replies, hides, likes and deletes laid over them."""

from __future__ import annotations

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
