"""How simulators whose platform numbers its comments name the audience's (:mod:`platforms.sandbox.audience`):
a comment's key (``c0``, ``c0r1``) as a small number and back, so a numeric comment id can carry
its post and key and be read back without a lookup table; the key of the account's own reply
(``a<its id on the platform>``); and the page size a comment listing answers with.

``SANDBOX_COMMENT_PAGE_SIZE`` (a setting, 0 or absent: none) caps every comment page the
simulators answer, below what the client asked for, so a test sees a short thread span several
pages as a long one would."""

from __future__ import annotations

import re

from django.conf import settings

KEY_DIGITS = 4  # a key's number fits in four decimal digits
_KEY = re.compile(r"c(\d{1,2})(?:r(\d{1,2}))?")
_OWN = "a"


def key_number(key: str) -> int | None:
    """``c<i>`` → (i + 1) × 100, ``c<i>r<j>`` → (i + 1) × 100 + j + 1; None for any other key (the
    account's own replies are named by their platform id instead)."""
    match = _KEY.fullmatch(key)
    if match is None:
        return None
    top, reply = int(match.group(1)), match.group(2)
    return (top + 1) * 100 + (int(reply) + 1 if reply is not None else 0)


def key_of_number(number: int) -> str | None:
    """The key :func:`key_number` made ``number`` from; None when no key makes it."""
    top, reply = divmod(number, 100)
    if not 1 <= top <= 99:
        return None
    return f"c{top - 1}" if reply == 0 else f"c{top - 1}r{reply - 1}"


def own_key(platform_id: str) -> str:
    """The audience key of the account's own reply whose id on the platform is ``platform_id``."""
    return f"{_OWN}{platform_id}"


def own_platform_id(key: str) -> str | None:
    """The platform id an :func:`own_key` names (None for the audience's keys)."""
    return key[len(_OWN) :] if key.startswith(_OWN) and len(key) > len(_OWN) else None


def page_size(asked: int) -> int:
    """How many comments a page holds when the client asked for ``asked``."""
    cap = int(getattr(settings, "SANDBOX_COMMENT_PAGE_SIZE", 0) or 0)
    return min(asked, cap) if cap > 0 else asked
