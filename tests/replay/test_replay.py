"""Issue 18's "Done when": every request body that was valid before it gives a byte-identical
response after it. The bodies the suite sent to the posts endpoints at 26fc3dc (the commit
before issue 18, ``corpus.json``), replayed in a fixed world (``driver.py``), must answer exactly
what 26fc3dc answered (``golden.json``): same status, same body text (byte for byte, but the ids
minted while replaying), and the same post records when read back. Invalid bodies are part of
the corpus too: an error answer must not change either.

Regenerating both files (only when the corpus itself should change: golden.json is always
26fc3dc's answers, never those of the code under test), from the root of this checkout::

    NEW=$PWD OLD=$PWD-replay-old
    git worktree add -q --detach $OLD 26fc3dc && ln -s $NEW/.venv $OLD/.venv
    cp -r tests/replay $OLD/tests/            # uncommitted there
    cd $OLD
    REPLAY_RECORD_TO=/tmp/recorded.jsonl .venv/bin/python -m pytest -n 0 -p no:randomly \\
        -p tests.replay.recorder -q $(cat tests/replay/RECORDED_TESTS)
    .venv/bin/python -m tests.replay.recorder /tmp/recorded.jsonl tests/replay/corpus.json
    REPLAY_WRITE_GOLDEN=1 .venv/bin/python -m pytest -n 0 tests/replay -q
    .venv/bin/python -m pytest -n 0 tests/replay -q       # the old code agrees with itself
    cp tests/replay/corpus.json tests/replay/golden.json $NEW/tests/replay/
    .venv/bin/python -c "from config import embedded; embedded.stop()"
    cd $NEW && git worktree remove --force $OLD && rm /tmp/recorded.jsonl

(3,110 requests were recorded, 2,014 kept: see ``recorder.build_corpus``.) ``RECORDED_TESTS``
lists the test paths recorded: every module of 26fc3dc that sends bodies to the posts endpoints
through the in-process stack (the e2e and browser tests, which go through real servers, cannot
be recorded this way).

An entry whose answer changed on purpose (a change of another issue) goes in :data:`EXCLUDED`,
with its reason (issue 32's edits of published posts, so far). A change of the answers' shape that a later issue made on
purpose, for every answer alike, is applied to 26fc3dc's answers by :func:`as_changed_since`
before they are compared, so the comparison stays byte for byte for everything else:

* issue 29 (the published clients): instants carry milliseconds (``…:19Z`` → ``…:19.000Z``); an
  entry's ``text`` is its override, null when it is the post's text; entries carry
  ``createdAt``, ``updatedAt`` (after ``tiktokDraftFallback``) and ``mediaAltTexts`` (last);
  ``previewUrls`` lists only the previews that exist (no null); ``queuedPlatforms`` is empty for
  a post that is not going out now (SCHEDULED, DRAFT); a series' ``nextOccurrenceAt`` is the next
  occurrence not yet created: the slot after the one 26fc3dc answered (null once the series has
  made ``maxOccurrences``).
* issue 31 (organizations): nothing to apply. It adds ``organizationId`` (and
  ``organizationPermissions``) to ``/me`` and ``organization`` to each ``/workspaces`` item,
  answers the corpus holds none of; the world's two workspaces get an organization each.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from typing import Any

import pytest
from rest_framework.renderers import JSONRenderer

from posts.recurrence.rules import Rule
from tests.replay import driver
from tests.replay.recorder import dump_entries

# Corpus index → why its answer may differ from 26fc3dc's.
EXCLUDED: dict[int, str] = {
    # issue 32 (after publishing): a PATCH of a COMPLETED or PARTIAL_FAILURE post edits it on its
    # platforms (200 with an editReport) instead of answering 400 post_not_editable.
    337: "issue 32: PATCH of a COMPLETED post edits it",
    338: "issue 32: PATCH of a PARTIAL_FAILURE post edits it",
    390: "issue 32: PATCH of a COMPLETED post edits it",
}
SHOWN = 5


_WHOLE_SECOND = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_NOT_GOING_OUT_NOW = ("SCHEDULED", "DRAFT")


def _render(document: Any) -> str:
    """As the API renders JSON (DRF's JSONRenderer: compact, UTF-8)."""
    return JSONRenderer().render(document).decode()


def _with_milliseconds(value: Any) -> Any:
    """Every instant written to the second (``…:19Z``) as issue 29 writes it (``…:19.000Z``)."""
    if isinstance(value, dict):
        return {key: _with_milliseconds(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_milliseconds(item) for item in value]
    if isinstance(value, str) and _WHOLE_SECOND.fullmatch(value):
        return f"{value[:-1]}.000Z"
    return value


def _without_null_previews(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: [url for url in item if url is not None]
            if key == "previewUrls" and isinstance(item, list)
            else _without_null_previews(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_without_null_previews(item) for item in value]
    return value


def _entries_as_after_issue_29(post: Any) -> Any:
    if not isinstance(post, dict) or not isinstance(post.get("platforms"), list):
        return post
    entries = []
    for entry in post["platforms"]:
        if not isinstance(entry, dict) or "platformId" not in entry:
            entries.append(entry)
            continue
        changed: dict[str, Any] = {}
        for key, value in entry.items():
            changed[key] = None if key == "text" and value == post.get("text") else value
            if key == "tiktokDraftFallback":  # the clock is frozen: created and updated alike
                changed["createdAt"] = changed["updatedAt"] = post.get("createdAt")
        changed["mediaAltTexts"] = post.get("mediaAltTexts", [])
        entries.append(changed)
    return {**post, "platforms": entries}


def _instant(value: dt.datetime) -> str:
    return value.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _next_not_created(series: Any) -> Any:
    """A series record's ``nextOccurrenceAt`` as issue 29 answers it, from 26fc3dc's record
    alone: the slot of its rule after the occurrence 26fc3dc named (which is created), null when
    the series is not ACTIVE or ``maxOccurrences`` is reached (``_next_not_created`` of
    ``posts/recurrence/rendering.py``; the slots' rule itself is unchanged since 26fc3dc)."""
    if not isinstance(series, dict) or "nextOccurrenceAt" not in series or "frequency" not in series:
        return series
    created = series["nextOccurrenceAt"]
    count, cap = series["occurrenceCount"], series["maxOccurrences"]
    if series["status"] != "ACTIVE" or created is None or (cap is not None and count >= cap):
        return {**series, "nextOccurrenceAt": None}
    rule = Rule(
        frequency=series["frequency"],
        interval=series["interval"],
        weekdays=tuple(series["weekdays"]),
        starts_at=dt.datetime.fromisoformat(series["startsAt"]),
        timezone=series["timezone"],
        ends_on=dt.date.fromisoformat(series["endsOn"]) if series["endsOn"] else None,
    )
    after = rule.next_after(dt.datetime.fromisoformat(created))
    return {**series, "nextOccurrenceAt": None if after is None else _instant(after)}


def as_changed_since(exchange: dict[str, Any]) -> dict[str, Any]:
    """26fc3dc's ``exchange`` with issue 29's changes listed in the module docstring applied,
    from 26fc3dc's answer alone, and rendered again as the API renders (every golden body is
    JSON that renders back to the same bytes; one that did not would be kept as it is)."""
    try:
        document = json.loads(exchange["body"])
    except ValueError:
        return exchange
    if _render(document) != exchange["body"]:
        return exchange
    document = _next_not_created(_entries_as_after_issue_29(_without_null_previews(_with_milliseconds(document))))
    if isinstance(document, dict) and "queuedPlatforms" in document and document.get("status") in _NOT_GOING_OUT_NOW:
        document["queuedPlatforms"] = []
    return {**exchange, "body": _render(document)}


def _describe(index: int, entry: dict[str, Any], expected: list[Any], actual: list[Any]) -> str:
    """Where entry ``index`` first answers differently: the exchange, and both bodies from a
    little before their first differing character."""
    lines = [f"corpus entry {index} ({entry['operation']}, recorded by {entry['test']}):"]
    lines.append(f"  body sent: {json.dumps(entry['body'], sort_keys=True)[:300]}")
    none: dict[str, Any] = {"request": "(none)", "status": None, "body": ""}
    for number in range(max(len(expected), len(actual))):
        want: dict[str, Any] = expected[number] if number < len(expected) else none
        got: dict[str, Any] = actual[number] if number < len(actual) else none
        if want == got:
            continue
        at = next((i for i, (a, b) in enumerate(zip(want["body"], got["body"], strict=False)) if a != b), None)
        at = min(len(want["body"]), len(got["body"])) if at is None else at
        start = max(0, at - 200)
        lines.append(f"  exchange {number}: 26fc3dc {want['request']} -> {want['status']}")
        lines.append(f"  {' ' * len(str(number))}           now {got['request']} -> {got['status']}")
        lines.append(f"    26fc3dc body[{start}:]: {want['body'][start : at + 600]}")
        lines.append(f"    now     body[{start}:]: {got['body'][start : at + 600]}")
        break
    return "\n".join(lines)


def test_old_bodies_answer_as_before_issue_18(db: Any, settings: Any) -> None:
    settings.PUBLIC_BASE_URL = driver.PUBLIC_BASE_URL
    corpus = driver.load_corpus()
    answers = driver.replay(corpus)
    if os.environ.get("REPLAY_WRITE_GOLDEN"):
        header = {"source": "tests/replay/driver.py run at 26fc3dc over corpus.json"}
        driver.GOLDEN.write_text(dump_entries(header, answers), encoding="utf-8")
        pytest.skip(f"wrote {driver.GOLDEN}")
    golden = driver.load_golden()
    assert len(golden) == len(corpus), "golden.json is not corpus.json's: regenerate both (see above)"
    golden = [[as_changed_since(exchange) for exchange in exchanges] for exchanges in golden]
    differing = [
        i for i, (want, got) in enumerate(zip(golden, answers, strict=True)) if want != got and i not in EXCLUDED
    ]
    report = [_describe(i, corpus[i], golden[i], answers[i]) for i in differing[:SHOWN]]
    assert not differing, (
        f"{len(differing)} of {len(corpus)} replayed requests answer differently from 26fc3dc "
        f"(entries {differing[:50]}); the first {min(SHOWN, len(differing))}:\n" + "\n".join(report)
    )
