"""The e2e harness's own guarantees: the chaos tests' verdicts rest on them."""

import socket

from tests.e2e.harness import WebhookReceiver, wait_for


def test_a_request_torn_by_a_killed_sender_is_not_recorded_as_a_delivery() -> None:
    receiver = WebhookReceiver()
    try:
        host, port = receiver.server.server_address[:2]
        with socket.create_connection((host, port)) as torn:
            torn.sendall(
                b"POST /hook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n"
            )
            torn.sendall(b'{"id": "evt_')  # the worker is killed here
        wait_for(lambda: receiver.torn == 1, timeout=30, interval=0.01, what="the torn request handled")
        with socket.create_connection((host, port)) as whole:
            body = b'{"id": "evt_1", "event": "post.published"}'
            whole.sendall(
                b"POST /hook HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
                % (len(body), body)
            )
            answer = whole.makefile("rb").read()
        assert answer.startswith(b"HTTP/1.0 200") or answer.startswith(b"HTTP/1.1 200")
        assert [r.envelope["id"] for r in receiver.events()] == ["evt_1"]
    finally:
        receiver.close()
