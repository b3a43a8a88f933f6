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
with its reason; none has so far.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from tests.replay import driver
from tests.replay.recorder import dump_entries

# Corpus index → why its answer may differ from 26fc3dc's.
EXCLUDED: dict[int, str] = {}
SHOWN = 5


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
    differing = [
        i for i, (want, got) in enumerate(zip(golden, answers, strict=True)) if want != got and i not in EXCLUDED
    ]
    report = [_describe(i, corpus[i], golden[i], answers[i]) for i in differing[:SHOWN]]
    assert not differing, (
        f"{len(differing)} of {len(corpus)} replayed requests answer differently from 26fc3dc "
        f"(entries {differing[:50]}); the first {min(SHOWN, len(differing))}:\n" + "\n".join(report)
    )
