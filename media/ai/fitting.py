"""Shorten a caption to a platform's text limit, counted as post validation counts it.

The limits and the counting (X's weighted length, Bluesky graphemes, UTF-8 bytes where a
platform caps those too) come from ``platforms.capabilities``, the one table. A caption is only
ever cut where a word ends: before whitespace, or between two wide characters (CJK, which is
written without spaces, and emoji). A cut therefore never splits a word, a URL or a grapheme."""

from __future__ import annotations

import itertools
import unicodedata

import grapheme
from twitter_text import extract_urls_with_indices

from platforms.base import Platform
from platforms.capabilities import CAPABILITIES, text_length


def text_limit(platform: Platform) -> int:
    return CAPABILITIES[platform].text_limit


def fits(platform: Platform, text: str) -> bool:
    caps = CAPABILITIES[platform]
    if text_length(platform, text) > caps.text_limit:
        return False
    return caps.text_byte_limit is None or len(text.encode()) <= caps.text_byte_limit


def fit_to_platform(platform: Platform, text: str) -> str:
    """The longest start of ``text`` that fits, ending where a word ends; "" when not even its
    first word fits. Words too long for the platform on their own are dropped first, since no
    caption there could hold them whole."""
    text = text.strip()
    if fits(platform, text):
        return text
    clusters = list(grapheme.graphemes(text))
    words = [w for w in _words(clusters) if fits(platform, "".join(clusters[w[0] : w[1]]))]
    if not words:
        return ""
    kept = "".join(clusters[words[0][0] : words[0][1]])
    for (_, previous_end), (start, end) in itertools.pairwise(words):
        gap = "".join(clusters[previous_end:start])
        # a dropped word leaves its surrounding whitespace behind as a single space
        separator = gap if gap.isspace() or gap == "" else " "
        candidate = kept + separator + "".join(clusters[start:end])
        if not fits(platform, candidate):
            break
        kept = candidate
    return kept.rstrip()


def _is_space(cluster: str) -> bool:
    return cluster.isspace()


def _is_wide(cluster: str) -> bool:
    return unicodedata.east_asian_width(cluster[0]) in ("W", "F")


def _words(clusters: list[str]) -> list[tuple[int, int]]:
    """(start, end) cluster indices of the words: runs without whitespace, further split
    between two wide characters unless the run holds a URL."""
    words: list[tuple[int, int]] = []
    index = 0
    while index < len(clusters):
        if _is_space(clusters[index]):
            index += 1
            continue
        start = index
        while index < len(clusters) and not _is_space(clusters[index]):
            index += 1
        words.extend(_split_wide(clusters, start, index))
    return words


def _split_wide(clusters: list[str], start: int, end: int) -> list[tuple[int, int]]:
    run = "".join(clusters[start:end])
    if "://" in run or extract_urls_with_indices(run):
        return [(start, end)]
    pieces: list[tuple[int, int]] = []
    piece_start = start
    for index in range(start + 1, end):
        if _is_wide(clusters[index - 1]) and _is_wide(clusters[index]):
            pieces.append((piece_start, index))
            piece_start = index
    pieces.append((piece_start, end))
    return pieces
