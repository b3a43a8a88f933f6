"""The simulators' audience: the people who comment on a published post (and review a Google
Business location), the same for every simulator and predictable from the post's id.

What a post's audience writes is derived from ``(slug, post id)`` alone, so a test computes the
comments a sync must find with :func:`expected` before it syncs. A comment appears
``SANDBOX_AUDIENCE_PACE_SECONDS`` × its rank after the post was published (0: all at once), so a
sync of a young post finds new comments on every run. What changes a comment (the account's
replies, hiding, deleting, liking) is kept in the simulator's :class:`~platforms.sandbox.store.SandboxStore`
and laid over the generated ones by :func:`thread` (:func:`threads` for many posts at once, in three
store reads); :func:`comment_count` counts a thread the way a platform counts a post's comments.

Each simulator renders these neutral documents in its platform's own shapes and id formats
(:func:`comment_id` joins a post id and a comment's key; :func:`split_id` takes one apart).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from platforms.sandbox import pages
from platforms.sandbox.store import SandboxStore

_FIRST = ("Ana", "Ben", "Chloé", "Dev", "Emeka", "Farah", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lena", "Mo", "Noor")
_LAST = ("Alvarez", "Brandt", "Cho", "Diallo", "Eriksen", "Fujita", "García", "Haddad", "Ito", "Jansen", "Kowalski")
_TOP = (
    "Love this!",
    "Where can I buy it?",
    "Is this available in Europe?",
    "Great news, congratulations to the whole team 👏",
    "How much does it cost?",
    "This is exactly what I needed today.",
    "Do you ship to Canada?",
    "Beautiful shot 😍",
    "When does it start?",
    "Saved for later.",
    "Can you share more details?",
    "Been waiting for this!",
)
_REPLIES = (
    "Same question here.",
    "Agreed!",
    "I got mine last week, it's great.",
    "+1",
    "Following for the answer.",
)
_REVIEWS = (
    (5, "Friendly staff and quick service. Will come back."),
    (4, "Good value, a bit crowded at lunchtime."),
    (5, "Best in the neighbourhood!"),
    (3, "Decent, but the wait was long."),
    (2, "Not what I expected, the order was wrong."),
    (5, "Lovely place, highly recommended."),
)
SEPARATOR = "_"


@dataclass(frozen=True)
class Person:
    id: str
    name: str
    handle: str
    avatar_url: str


def person(slug: str, rng: random.Random) -> Person:
    first, last = rng.choice(_FIRST), rng.choice(_LAST)
    number = rng.randrange(10, 9999)
    handle = f"{first}{last[0]}{number}".lower().replace("é", "e").replace("í", "i")
    person_id = f"{rng.randrange(10**14, 10**15)}"
    return Person(person_id, f"{first} {last}", handle, pages.avatar_url(slug, f"fan-{person_id}"))


def comment_id(post_id: str, key: str) -> str:
    """The id of the comment ``key`` (``c0``, ``c0r1``…) under ``post_id``."""
    return f"{post_id}{SEPARATOR}{key}"


def split_id(comment: str) -> tuple[str, str]:
    """``(post id, key)`` of a comment id made by :func:`comment_id`."""
    post_id, _, key = comment.rpartition(SEPARATOR)
    return post_id, key


def _pace() -> float:
    return float(getattr(settings, "SANDBOX_AUDIENCE_PACE_SECONDS", 0.0))


def expected(slug: str, post_id: str, published_at: float, *, now: float | None = None) -> list[dict[str, Any]]:
    """The comments the audience has written under ``post_id`` by ``now`` (default: the time now),
    oldest first, before anything the account did to them. Each is ``{id, key, postId, parentId,
    author: Person, text, createdAt (Unix time), likeCount, rating}``: 1 to 5 comments under the
    post, each with 0 to 2 replies (a ``rating`` only on Google Business reviews, where the "post"
    id is the location's)."""
    rng = random.Random(f"{slug}:{post_id}")
    reviews = slug == "google_business"
    pace = _pace()
    now = time.time() if now is None else now
    rank = 0
    found: list[dict[str, Any]] = []
    for index in range(rng.randint(1, 5)):
        rank += 1
        key = f"c{index}"
        author = person(slug, rng)
        rating, text = rng.choice(_REVIEWS) if reviews else (None, rng.choice(_TOP))
        top = {
            "id": comment_id(post_id, key),
            "key": key,
            "postId": post_id,
            "parentId": "",
            "author": author,
            "text": text,
            "createdAt": published_at + pace * rank,
            "likeCount": rng.randrange(0, 40),
            "rating": rating,
        }
        found.append(top)
        for reply in range(0 if reviews else rng.randint(0, 2)):
            rank += 1
            reply_key = f"{key}r{reply}"
            found.append(
                {
                    "id": comment_id(post_id, reply_key),
                    "key": reply_key,
                    "postId": post_id,
                    "parentId": top["id"],
                    "author": person(slug, rng),
                    "text": rng.choice(_REPLIES),
                    "createdAt": published_at + pace * rank,
                    "likeCount": rng.randrange(0, 5),
                    "rating": None,
                }
            )
    return [c for c in found if c["createdAt"] <= now]


# --- what the account did to them (kept in the store) -------------------------------------------

_STATE = "comment-state"


def _replies_kind(post_id: str) -> str:
    return f"comment-replies:{post_id}"


def add_reply(
    store: SandboxStore, post_id: str, parent_id: str, text: str, *, author: Person, reply_id: str = ""
) -> dict[str, Any]:
    """Store the account's reply to ``parent_id`` under ``post_id``; ``reply_id`` names it (default:
    a new key ``a<n>``). Returns the stored document, shaped as :func:`expected`'s."""
    reply_id = reply_id or comment_id(post_id, f"a{store.new_id()}")
    doc = {
        "id": reply_id,
        "key": split_id(reply_id)[1],
        "postId": post_id,
        "parentId": parent_id,
        "author": author.__dict__,
        "text": text,
        "createdAt": time.time(),
        "likeCount": 0,
        "rating": None,
        "fromAccount": True,
    }
    stored, _ = store.create_once(_replies_kind(post_id), reply_id, doc)
    return stored


def set_state(store: SandboxStore, comment: str, **changes: Any) -> dict[str, Any]:
    """Record ``hidden``, ``deleted`` or ``liked`` of one comment (the audience's or a reply)."""
    current = store.get(_STATE, comment) or {}
    current.update(changes)
    return store.put(_STATE, comment, current)


def thread(store: SandboxStore, slug: str, post_id: str, published_at: float) -> list[dict[str, Any]]:
    """Every comment under ``post_id`` as the platform shows it now, oldest first: the audience's
    and the account's replies, each with ``hidden``, ``liked`` and ``fromAccount``, without the
    deleted ones (nor the replies under a deleted one); ``author`` as a plain dict;
    ``replyCount`` counts each comment's visible direct replies."""
    return threads(store, slug, [(post_id, published_at)])[post_id]


def threads(store: SandboxStore, slug: str, posts: list[tuple[str, float]]) -> dict[str, list[dict[str, Any]]]:
    """:func:`thread` of each ``(post id, published at)`` of ``posts``, by post id, in at most three
    store reads whatever their number (the ids of the account's replies under every post, those
    replies, the states of every comment), so a call that reports the comments of many posts stays
    cheap."""
    generated = {
        post_id: [{**c, "author": c["author"].__dict__, "fromAccount": False} for c in expected(slug, post_id, at)]
        for post_id, at in posts
    }
    replies = store.all_of_kinds([_replies_kind(post_id) for post_id in generated])
    every = {
        post_id: sorted(shown + replies[_replies_kind(post_id)], key=lambda c: (c["createdAt"], c["id"]))
        for post_id, shown in generated.items()
    }
    ids = [c["id"] for comments in every.values() for c in comments]
    states = dict(zip(ids, store.get_many(_STATE, ids), strict=True))
    return {post_id: _overlaid(comments, states) for post_id, comments in every.items()}


def _overlaid(every: list[dict[str, Any]], states: dict[str, dict[str, Any] | None]) -> list[dict[str, Any]]:
    """``every`` comment of a post (oldest first) with what the account did to it laid over."""
    gone: set[str] = set()
    shown: list[dict[str, Any]] = []
    for comment in every:
        state = states[comment["id"]] or {}
        if state.get("deleted") or comment["parentId"] in gone:
            gone.add(comment["id"])
            continue
        shown.append(
            {
                **comment,
                "hidden": bool(state.get("hidden")),
                "liked": bool(state.get("liked")),
                "likeCount": comment["likeCount"] + (1 if state.get("liked") else 0),
            }
        )
    counts: dict[str, int] = {}
    for comment in shown:
        if comment["parentId"]:
            counts[comment["parentId"]] = counts.get(comment["parentId"], 0) + 1
    return [{**c, "replyCount": counts.get(c["id"], 0)} for c in shown]


def comment_count(comments: list[dict[str, Any]], *, direct_only: bool = False, public_only: bool = False) -> int:
    """How many of a post's comments (as :func:`thread` shows them) a platform's own count of them
    holds: every one, or (``direct_only``) those under the post itself, not the replies to them;
    ``public_only`` leaves out the hidden ones and every one under a hidden one (a platform whose
    hidden comments are off the post, such as YouTube's held for review)."""
    off: set[str] = set()
    counted = 0
    for comment in comments:  # oldest first: a parent comes before its replies
        if public_only and (comment["hidden"] or comment["parentId"] in off):
            off.add(comment["id"])
            continue
        if not direct_only or not comment["parentId"]:
            counted += 1
    return counted


def find(store: SandboxStore, slug: str, comment: str, published_at: float) -> dict[str, Any] | None:
    """One comment as :func:`thread` shows it (None: never written, not yet written, or deleted)."""
    post_id, _ = split_id(comment)
    return next((c for c in thread(store, slug, post_id, published_at) if c["id"] == comment), None)
