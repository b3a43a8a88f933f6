"""Fitting a caption to a platform: the limits and counting of the capabilities table, cut only
where a word ends, never inside a word, a URL or a grapheme."""

from __future__ import annotations

import grapheme
import pytest
from twitter_text import parse_tweet

from media.ai.fitting import fit_to_platform, fits
from platforms.base import Platform
from platforms.capabilities import CAPABILITIES

FAMILY = "👩\u200d👩\u200d👧\u200d👦"  # one grapheme, seven code points, 25 UTF-8 bytes


@pytest.mark.parametrize("platform", list(CAPABILITIES))
def test_text_within_the_limit_comes_back_unchanged_but_stripped(platform):
    assert fit_to_platform(platform, "  Hello there, world.\n") == "Hello there, world."


@pytest.mark.parametrize("platform", list(CAPABILITIES))
def test_every_limit_of_the_table_is_the_one_applied(platform):
    limit = CAPABILITIES[platform].text_limit
    text = "ab " * limit
    fitted = fit_to_platform(platform, text)
    assert fits(platform, fitted)
    # "ab" words: two characters each plus a space; one more word would pass the limit
    assert 0 <= limit - len(fitted) < 3
    assert fitted == text[: len(fitted)] and fitted.endswith("ab")


def test_x_counts_urls_as_23_and_cuts_before_them_not_inside():
    url = "https://example.com/" + "p" * 300
    text = ("word " * 50) + url + " tail"
    fitted = fit_to_platform(Platform.TWITTER, text)
    assert fitted == ("word " * 50) + url + " tail"  # 250 + 23 + 5 = 278 weighted
    text = ("word " * 52) + url
    fitted = fit_to_platform(Platform.TWITTER, text)
    assert fitted == ("word " * 52).rstrip()
    assert parse_tweet(fitted).weightedLength <= 280


def test_x_weighs_cjk_and_emoji_as_two():
    text = " ".join(["日本"] * 100)  # each word weighs 4, each space 1
    fitted = fit_to_platform(Platform.TWITTER, text)
    assert parse_tweet(fitted).weightedLength <= 280
    assert parse_tweet(fitted + " 日本").weightedLength > 280


def test_bluesky_counts_graphemes_and_never_splits_one():
    text = " ".join([FAMILY] * 200)  # 399 graphemes but 5199 bytes: the 3000-byte cap binds first
    fitted = fit_to_platform(Platform.BLUESKY, text)
    assert len(fitted.encode()) <= 3000 and len((fitted + " " + FAMILY).encode()) > 3000
    assert all(g in (FAMILY, " ") for g in grapheme.graphemes(fitted))
    accented = " ".join(["cafe\u0301"] * 100)  # 5 graphemes per word, 6 code points
    fitted = fit_to_platform(Platform.BLUESKY, accented)
    assert grapheme.length(fitted) == 299  # 50 words and 49 spaces
    assert fitted.endswith("cafe\u0301")


def test_cjk_written_without_spaces_is_cut_between_characters():
    text = "日本語のキャプション" * 100
    fitted = fit_to_platform(Platform.BLUESKY, text)
    assert fitted == text[:300]


def test_emoji_without_spaces_are_cut_between_whole_emoji():
    fitted = fit_to_platform(Platform.BLUESKY, FAMILY * 200)
    assert fitted == FAMILY * 120  # 120 × 25 bytes = the 3000-byte cap


def test_a_url_inside_cjk_text_is_kept_whole():
    url = "https://例え.jp/ページ"
    # 484 + 1 + 19 characters: the run holding the URL would pass 500, and its wide characters
    # (ページです) are not cut points, since they belong to the URL's run
    fitted = fit_to_platform(Platform.MASTODON, "お知らせ" * 121 + " " + url + "です")
    assert fitted == "お知らせ" * 121


def test_a_word_too_long_for_the_platform_is_dropped_rather_than_cut():
    fitted = fit_to_platform(Platform.MASTODON, "Intro " + "x" * 600 + " and the rest")
    assert fitted == "Intro and the rest"


def test_nothing_fits_gives_an_empty_caption():
    assert fit_to_platform(Platform.MASTODON, "y" * 501) == ""
