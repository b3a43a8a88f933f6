"""The default caption provider: composes a caption from the prompt without any network, so
sandbox runs and tests work without a key. Same input → same caption (nothing random or timed).

It follows a few refine instructions literally: shorter (first sentence), hashtags, a question,
emoji, playful, formal; other instructions leave the wording as it is."""

from __future__ import annotations

import hashlib
import re

from media.ai.interface import CaptionTarget, GeneratedCaption

_CLOSERS = (
    "Tell us what you think!",
    "More soon.",
    "Don't miss it.",
    "Share it with someone who needs this.",
    "Save this for later.",
)
_MAX_OVERLAP = 12
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
_WORD = re.compile(r"[^\W\d_]{4,}")
_COMMON_WORDS = (
    "about above after again also been before being below from have into just more most only other over "
    "same some such than that their them then there these they this those through under very what when "
    "where which while with would your write caption post make announce share launch"
)
_STOPWORDS = frozenset(_COMMON_WORDS.split())


class OfflineCaptionWriter:
    def generate(self, *, prompt: str, target: CaptionTarget) -> GeneratedCaption:
        sentence = _as_sentence(" ".join(prompt.split()))
        closer = _CLOSERS[hashlib.sha256(prompt.encode()).digest()[0] % len(_CLOSERS)]
        tags = _hashtags(prompt)
        return GeneratedCaption(text=f"{sentence} {closer}" + (f"\n\n{tags}" if tags else ""))

    def refine(
        self, *, instruction: str, original_text: str, partial_text: str, target: CaptionTarget
    ) -> GeneratedCaption:
        wanted = instruction.lower()
        text = original_text.strip()
        if any(word in wanted for word in ("short", "concise", "brief", "trim")):
            text = _SENTENCE_END.split(text, maxsplit=1)[0]
        if "formal" in wanted:
            text = text.replace("!", ".")
        if "emoji" in wanted:
            text = f"✨ {text}"
        if "playful" in wanted or "fun" in wanted:
            text = f"{text} 🎉"
        if "question" in wanted and not text.endswith("?"):
            text = f"{text} What do you think?"
        if "hashtag" in wanted and "#" not in text:
            tags = _hashtags(original_text)
            text = f"{text}\n\n{tags}" if tags else text
        if partial_text:
            text = _continue(partial_text, text)
        return GeneratedCaption(text=text)


def _as_sentence(text: str) -> str:
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?…" else f"{text}."


def _hashtags(text: str, count: int = 2) -> str:
    words: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group().lower()
        if word not in _STOPWORDS and word not in words:
            words.append(word)
    ranked = sorted(words, key=lambda w: (-len(w), words.index(w)))[:count]
    return " ".join(f"#{w}" for w in sorted(ranked, key=words.index))


def _continue(partial: str, text: str) -> str:
    """``partial`` exactly, then ``text`` from just after the longest run of words (up to
    ``_MAX_OVERLAP``) that ends ``partial`` and also occurs in ``text``; all of ``text`` when
    nothing overlaps."""
    words = text.split()
    bare = [_bare(w) for w in words]
    tail = [_bare(w) for w in partial.split()[-_MAX_OVERLAP:]]
    rest = words
    for size in range(min(len(tail), len(words)), 0, -1):
        wanted = tail[-size:]
        start = next((i for i in range(len(words) - size + 1) if bare[i : i + size] == wanted), None)
        if start is not None:
            rest = words[start + size :]
            break
    if not rest:
        return partial
    joiner = "" if partial[-1:].isspace() else " "
    return partial + joiner + " ".join(rest)


def _bare(word: str) -> str:
    return word.strip(".,;:!?\"'()").casefold()
