from __future__ import annotations

import hashlib
import hmac
import time

from webhooks.delivery.signing import sign, signed_headers


def test_known_answer_vector() -> None:
    body = b'{"id":"evt_0001","event":"webhook.test","createdAt":"2026-01-01T00:00:00Z","data":{}}'
    signature = sign(secret="whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYX", timestamp="1767225600", body=body)
    assert signature == "sha256=b74d9747f7d569fbac06bd7bd06196850571265d9980d7f56c27e7514ab2dceb"


def test_headers_carry_a_fresh_timestamp_and_its_signature() -> None:
    body = '{"a":"é😀\u2028"}'.encode()
    before = int(time.time())
    headers = signed_headers(secret="whsec_x", webhook_id="wh_1", event_name="post.failed", body=body)
    timestamp = headers["x-service-timestamp"]
    assert before <= int(timestamp) <= int(time.time())
    expected = hmac.new(b"whsec_x", timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    assert headers == {
        "Content-Type": "application/json",
        "User-Agent": "Crosspost-Webhooks/1.0",
        "x-service-event": "post.failed",
        "x-service-webhook-id": "wh_1",
        "x-service-timestamp": timestamp,
        "x-service-signature": f"sha256={expected}",
    }
