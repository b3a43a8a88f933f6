"""Building a post's targeting and content type from accounts and media."""

from __future__ import annotations

from crosspost.targets import content_type_for, targets_for


def test_targets_for_accounts() -> None:
    accounts = [
        {"id": "acc_1", "platform": "BLUESKY"},
        {"id": "acc_2", "platform": "BLUESKY"},
        {"id": "acc_3", "platform": "FACEBOOK", "pageId": "page_9"},
        {"id": "acc_4", "platform": "GOOGLE_BUSINESS"},
    ]
    assert targets_for(accounts) == {
        "platforms": ["BLUESKY", "FACEBOOK", "GOOGLE_BUSINESS"],
        "blueskyConnectionIds": ["acc_1", "acc_2"],
        "pageIds": ["page_9"],
        "googleBusinessConnectionIds": ["acc_4"],
    }


def test_content_type_from_media() -> None:
    assert content_type_for([]) == "TEXT"
    assert content_type_for(["https://cdn/a.jpg?sig=1"]) == "IMAGE"
    assert content_type_for(["https://cdn/a.mp4"]) == "VIDEO"
    assert content_type_for(["https://cdn/deck.pdf"]) == "DOCUMENT"
    assert content_type_for(["https://cdn/a.jpg", "https://cdn/b.png"]) == "CAROUSEL"
