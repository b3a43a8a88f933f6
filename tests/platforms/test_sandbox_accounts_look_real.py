"""What a person trying the sandbox sees of a connected account looks like a real account's: an
avatar they can open at the service's public address, a handle where the platform has one (the
Facebook page's from the moment it is connected), and no e-mail address passed off as one."""

from __future__ import annotations

from typing import Any

import requests

from platforms.registry import get_client


def test_the_mastodon_avatar_is_at_the_public_address_and_is_served(
    connect_one: Any, sandbox: str, settings: Any
) -> None:
    settings.PUBLIC_BASE_URL = "https://crosspost.example.com"
    profile = connect_one("MASTODON").profile
    assert profile.avatar_url == "https://crosspost.example.com/sandbox/mastodon/avatars/original/missing.png"
    served = requests.get(f"{sandbox}/mastodon/avatars/original/missing.png", timeout=10)
    assert (served.status_code, served.headers["Content-Type"]) == (200, "image/png")


def test_a_linkedin_member_has_no_username_rather_than_an_e_mail_address(connect_one: Any) -> None:
    profile = connect_one("LINKEDIN").profile
    assert profile.display_name and profile.username == ""


def test_a_facebook_page_has_its_username_from_the_moment_it_is_connected(connect_one: Any) -> None:
    identity = connect_one("FACEBOOK")
    assert identity.profile.username.startswith("sandboxpage")
    assert get_client("FACEBOOK").check_token(identity.credentials).username == identity.profile.username
