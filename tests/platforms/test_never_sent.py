"""The transport tells a request that never left (safe to retry: ``Transient``) from one that may
have reached the platform (``UnknownOutcome`` for a call that creates something), per class of
failure, over real sockets: refused, DNS failure, TLS handshake failure and timeout, no connection
from the pool; the request read and the connection dropped or reset, no answer in time. urllib3
re-sends nothing by itself, and a keep-alive connection the server closed is not reused."""

from __future__ import annotations

import pytest
import requests

from platforms.base import (
    AppCredentials,
    Credentials,
    ErrorCode,
    PublishRequest,
    Transient,
    UnknownOutcome,
    thread_session,
)
from platforms.telegram import Client
from platforms.transport import TrackingAdapter, tracking_adapter
from tests.platforms import wire

TOKEN = "123456:" + "A" * 35
CREDS = Credentials(access_token=TOKEN, external_id="-1001")
REQUEST = PublishRequest(target_id="pt_wire", content_type="TEXT", text="hello")


def _client(base_url: str, *, timeout: float = 5.0) -> Client:
    session = requests.Session()
    session.trust_env = False
    session.mount("http://", tracking_adapter())  # the platform sessions' own adapter
    session.mount("https://", tracking_adapter())
    return Client(base_url=base_url, app=AppCredentials(), timeout=timeout, session=session)


def _never_sent(base_url: str, *, timeout: float = 5.0, client: Client | None = None) -> Transient:
    with pytest.raises(Transient) as failed:
        (client or _client(base_url, timeout=timeout)).publish(CREDS, REQUEST, {})
    assert not isinstance(failed.value, UnknownOutcome)
    assert failed.value.error_code == ErrorCode.PLATFORM_UNAVAILABLE
    assert "nothing was sent" in failed.value.message
    return failed.value


def _maybe_sent(base_url: str, *, timeout: float = 5.0) -> UnknownOutcome:
    with pytest.raises(UnknownOutcome) as unknown:
        _client(base_url, timeout=timeout).publish(CREDS, REQUEST, {})
    assert unknown.value.error_code == ErrorCode.UNKNOWN_OUTCOME
    return unknown.value


# --- never sent: safe to retry ---------------------------------------------------------------


def test_a_refused_connection_is_never_sent(refused_port: int) -> None:
    _never_sent(f"http://127.0.0.1:{refused_port}")


def test_a_name_that_does_not_resolve_is_never_sent() -> None:
    _never_sent("http://api.telegram.invalid")


def test_a_failed_tls_handshake_is_never_sent() -> None:
    with wire.serving(wire.plain_text_to_tls) as (port, seen):
        _never_sent(f"https://127.0.0.1:{port}")
        assert seen.ended.acquire(timeout=10)
    assert b"POST" not in b"".join(seen.connections)  # only the client's hello came


def test_a_tls_handshake_that_times_out_is_never_sent() -> None:
    """urllib3 reports it as a read timeout, yet no byte of the request was written."""
    with wire.serving(wire.hold_silent) as (port, seen):
        _never_sent(f"https://127.0.0.1:{port}", timeout=0.5)
    assert b"POST" not in b"".join(seen.connections)


def test_no_connection_from_the_pool_is_never_sent() -> None:
    with wire.serving(wire.drop_after_request) as (port, seen):
        client = _client(f"http://127.0.0.1:{port}")
        url = f"{client.base_url}/bot{TOKEN}/sendMessage"
        adapter = client.session.get_adapter(url)
        assert isinstance(adapter, TrackingAdapter)
        prepared = requests.Request("POST", url).prepare()
        adapter.get_connection_with_tls_context(prepared, verify=True).close()  # the pool the call will use
        _never_sent(client.base_url, client=client)
    assert seen.connections == []


# --- sent, the answer lost: never re-sent blindly ---------------------------------------------


def test_a_connection_dropped_after_the_request_was_read_is_unknown_and_not_resent() -> None:
    with wire.serving(wire.drop_after_request) as (port, seen):
        _maybe_sent(f"http://127.0.0.1:{port}")
        assert seen.ended.acquire(timeout=10)
    assert seen.requests() == 1  # urllib3 did not send it again by itself
    assert b"POST /bot" in seen.connections[0] and b"hello" in seen.connections[0]


def test_a_connection_reset_after_the_request_was_read_is_unknown() -> None:
    with wire.serving(wire.reset_after_request) as (port, seen):
        _maybe_sent(f"http://127.0.0.1:{port}")
    assert seen.requests() == 1


def test_no_answer_in_time_after_sending_is_unknown() -> None:
    with wire.serving(wire.hold_after_request) as (port, seen):
        _maybe_sent(f"http://127.0.0.1:{port}", timeout=0.5)
    assert seen.requests() == 1


def test_a_dropped_answer_to_a_call_that_creates_nothing_is_transient() -> None:
    with wire.serving(wire.drop_after_request) as (port, _), pytest.raises(Transient) as failed:
        _client(f"http://127.0.0.1:{port}").check_token(CREDS)
    assert not isinstance(failed.value, UnknownOutcome)


def test_a_keep_alive_connection_the_server_closed_is_not_reused() -> None:
    """The pooled connection is seen to be closed before the next request is written on it: the
    request goes out once, on a new connection, and is answered."""
    with wire.serving(wire.answer_then_close) as (port, seen):
        client = _client(f"http://127.0.0.1:{port}")
        assert client.publish(CREDS, REQUEST, {}).platform_post_id == "7"
        assert seen.ended.acquire(timeout=10)  # the server closed the kept-alive connection
        assert client.publish(CREDS, REQUEST, {}).platform_post_id == "7"
        assert seen.ended.acquire(timeout=10)
    assert [data.count(b"POST /bot") for data in seen.connections] == [1, 1]


def test_the_platform_sessions_retry_nothing_themselves() -> None:
    adapter = thread_session().get_adapter("https://api.telegram.org")
    assert isinstance(adapter, TrackingAdapter)
    assert adapter.max_retries.total == 0 and adapter.max_retries.read is False
