"""The default caption provider: composes a caption from the prompt without any network, so
sandbox runs and tests work without a key. Same input → same caption (nothing random or timed).

A prompt is an instruction ("Write a post announcing our spring sale"): the caption is about its
subject, never the instruction echoed back, and follows the platform's habits (how many hashtags
it uses, if any, and how a post there usually ends).

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
# Per platform: how many hashtags a post there carries (0: none) and the closers it ends with
# (None: the general ones). Platforms not listed get the general caption.
_STYLES: dict[str, tuple[int, tuple[str, ...] | None]] = {
    "TWITTER": (2, None),
    "BLUESKY": (1, None),
    "MASTODON": (2, None),
    "THREADS": (1, None),
    "INSTAGRAM": (5, ("Link in bio.", "Double-tap if you agree!", "Tag a friend who needs to see this.")),
    "TIKTOK": (4, ("Follow for more.", "Watch till the end!")),
    "PINTEREST": (3, ("Save this pin for later.", "Pin it for later.")),
    "LINKEDIN": (3, ("We'd love to hear your thoughts in the comments.", "What's your take?")),
    "YOUTUBE": (3, ("Subscribe for more.", "Tell us in the comments what you think.")),
    "FACEBOOK": (0, ("What do you think? Let us know in the comments.", "Share it with your friends!")),
    "GOOGLE_BUSINESS": (0, ("Visit us to find out more.", "We look forward to seeing you.")),
    "TELEGRAM": (0, None),
}
_GENERAL_STYLE: tuple[int, tuple[str, ...] | None] = (2, None)
# "Write a short caption for Instagram announcing", "Please draft a LinkedIn post about", ...
_INSTRUCTION = re.compile(
    r"^\s*(?:please\s+)?(?:can you\s+|could you\s+)?"
    r"(?:write|create|draft|generate|compose|make|craft|give me|come up with)\s+(?:me\s+|us\s+)?"
    r"(?:a|an|the|some|one)?\s*(?:(?:short|shorter|long|catchy|fun|funny|engaging|quick|punchy|friendly|formal|"
    r"professional|casual|playful|witty|creative|simple|great|good|nice|new)\s*,?\s+)*"
    r"(?:(?:social(?:\s+media)?|[a-z]+)\s+)?(?:caption|post|tweet|toot|status|update|announcement|message|text|copy|"
    r"description|blurb|thread)s?\b[\s,:]*"
    r"(?:(?:for|on)\s+(?:twitter|x|instagram|facebook|linkedin|tiktok|threads|bluesky|mastodon|pinterest|youtube|"
    r"telegram|google(?: business)?)\b\s*)?",
    re.IGNORECASE,
)
_ANNOUNCING = re.compile(
    r"^(?:(?:that\s+|to\s+)?(?:announc(?:e|es|ing)|introduc(?:e|es|ing)|launch(?:es|ing)?|unveil(?:s|ing)?)\s+)",
    re.IGNORECASE,
)
_ABOUT = re.compile(r"^(?:about|on|for|of|regarding|promoting|to promote|celebrating|that says)\s+", re.IGNORECASE)
_OPENERS = ("Big news: ", "It's here: ", "Introducing ")
_MAX_OVERLAP = 12
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
_WORD = re.compile(r"[^\W\d_]{4,}")
_COMMON_WORDS = (
    "about above after again also been before being below from have into just more most only other over "
    "same some such than that their them then there these they this those through under very what when "
    "where which while with would your write caption post make announce share launch until everything "
    "here today tomorrow"
)
_STOPWORDS = frozenset(_COMMON_WORDS.split())


class OfflineCaptionWriter:
    def generate(self, *, prompt: str, target: CaptionTarget) -> GeneratedCaption:
        tag_count, closers = _STYLES.get(target.platform or "", _GENERAL_STYLE)
        seed = hashlib.sha256(prompt.encode()).digest()[0]
        subject, announcing = _subject(" ".join(prompt.split()))
        sentence = _as_sentence(subject)
        if announcing and sentence:
            opener = _OPENERS[seed % len(_OPENERS)]
            sentence = opener + (sentence if opener == "Introducing " else sentence[0].lower() + sentence[1:])
        closer = (closers or _CLOSERS)[seed % len(closers or _CLOSERS)]
        tags = _hashtags(subject, tag_count) if tag_count else ""
        return GeneratedCaption(text=f"{sentence} {closer}".strip() + (f"\n\n{tags}" if tags else ""))

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


def _subject(prompt: str) -> tuple[str, bool]:
    """What the prompt asks a caption about, without the instruction around it, and whether it
    asks for an announcement. A prompt that is no instruction is its own subject."""
    rest = _INSTRUCTION.sub("", prompt, count=1)
    announcing = bool(_ANNOUNCING.match(rest))
    rest = _ABOUT.sub("", _ANNOUNCING.sub("", rest, count=1), count=1).strip()
    return (rest or prompt), announcing


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
    ``_MAX_OVERLAP``) that ends ``partial`` and also occurs in ``text``. Without such a run, the
    words ``partial`` already begins with as ``text`` does are not written twice: ``text`` goes on
    after them (nothing more when ``partial`` already says all of it)."""
    words = text.split()
    bare = [_bare(w) for w in words]
    partial_bare = [_bare(w) for w in partial.split()]
    tail = partial_bare[-_MAX_OVERLAP:]
    rest = None
    for size in range(min(len(tail), len(words)), 0, -1):
        wanted = tail[-size:]
        start = next((i for i in range(len(words) - size + 1) if bare[i : i + size] == wanted), None)
        if start is not None:
            rest = words[start + size :]
            break
    if rest is None:
        shared = 0
        while shared < min(len(bare), len(partial_bare)) and bare[shared] == partial_bare[shared]:
            shared += 1
        rest = words[shared:]
    if not rest:
        return partial
    joiner = "" if partial[-1:].isspace() else " "
    return partial + joiner + " ".join(rest)


def _bare(word: str) -> str:
    return word.strip(".,;:!?\"'()").casefold()
