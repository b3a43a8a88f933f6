"""``crosspost.verify_webhook``: the known vector of CONTRACT.md §10 and the rotation header."""

from __future__ import annotations

import pytest
from crosspost import InvalidSignature, verify_webhook
from crosspost.webhooks import sign

SECRET = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYX"
TIMESTAMP = "1767225600"
BODY = b'{"id":"evt_0001","event":"webhook.test","createdAt":"2026-01-01T00:00:00Z","data":{}}'
KNOWN = "sha256=b74d9747f7d569fbac06bd7bd06196850571265d9980d7f56c27e7514ab2dceb"
EVENT = {"id": "evt_0001", "event": "webhook.test", "createdAt": "2026-01-01T00:00:00Z", "data": {}}
NOW = 1767225600 + 30


def headers(signature: str, timestamp: str = TIMESTAMP) -> dict[str, str]:
    return {"X-Service-Timestamp": timestamp, "X-Service-Signature": signature, "Content-Type": "application/json"}


def test_known_vector() -> None:
    assert sign(SECRET, TIMESTAMP, BODY) == KNOWN
    assert verify_webhook(headers(KNOWN), BODY, SECRET, now=NOW) == EVENT


def test_header_names_in_any_case() -> None:
    lowered = {"x-service-timestamp": TIMESTAMP, "x-service-signature": KNOWN}
    assert verify_webhook(lowered, BODY, SECRET, now=NOW) == EVENT


@pytest.mark.parametrize("order", ["new-old", "old-new"])
def test_rotation_header_with_two_values(order: str) -> None:
    new_secret = "whsec_bmV3LXNlY3JldC1uZXctc2VjcmV0LW5ldy0="
    new = sign(new_secret, TIMESTAMP, BODY)
    header = f"{new} {KNOWN}" if order == "new-old" else f"{KNOWN} {new}"
    # A receiver holding either secret accepts the delivery during the grace period.
    assert verify_webhook(headers(header), BODY, SECRET, now=NOW) == EVENT
    assert verify_webhook(headers(header), BODY, new_secret, now=NOW) == EVENT
    with pytest.raises(InvalidSignature, match="does not match"):
        verify_webhook(headers(header), BODY, "whsec_other", now=NOW)


def test_several_secrets_on_the_receiver_side() -> None:
    assert verify_webhook(headers(KNOWN), BODY, ["whsec_new", SECRET], now=NOW) == EVENT


@pytest.mark.parametrize(
    ("given_headers", "body", "message"),
    [
        (headers(KNOWN), BODY.replace(b"evt_0001", b"evt_0002"), "does not match"),
        (headers(KNOWN.replace("b74d", "b74e")), BODY, "does not match"),
        (headers(KNOWN, timestamp="1767225601"), BODY, "does not match"),
        (headers(KNOWN[len("sha256=") :]), BODY, "does not match"),
        ({"X-Service-Timestamp": TIMESTAMP}, BODY, "missing x-service-signature"),
        ({"X-Service-Signature": KNOWN}, BODY, "x-service-timestamp"),
        (headers(KNOWN, timestamp="soon"), BODY, "x-service-timestamp"),
    ],
)
def test_refused(given_headers: dict[str, str], body: bytes, message: str) -> None:
    with pytest.raises(InvalidSignature, match=message):
        verify_webhook(given_headers, body, SECRET, now=NOW)


def test_stale_timestamp_refused_unless_the_check_is_off() -> None:
    later = 1767225600 + 301
    with pytest.raises(InvalidSignature, match="300 s"):
        verify_webhook(headers(KNOWN), BODY, SECRET, now=later)
    assert verify_webhook(headers(KNOWN), BODY, SECRET, now=later, tolerance_seconds=None) == EVENT


def test_signed_non_json_body_is_refused() -> None:
    body = b"not json"
    with pytest.raises(InvalidSignature, match="not JSON"):
        verify_webhook(headers(sign(SECRET, TIMESTAMP, body)), body, SECRET, now=NOW)
