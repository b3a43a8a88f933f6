"""Every platform's error classes over real HTTP: the real client against its simulator, with the
failure produced by the simulator in the platform's own envelope and headers (armed through
``/sandbox/_control/<slug>/faults``, or a ``#sandbox-*`` marker in the text sent), mapped onto
the taxonomy: auth, rate limit with its retry time, quota, transient 5xx and timeout, permanent
validation."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import requests

from platforms.base import (
    AuthError,
    Credentials,
    ErrorCode,
    Permanent,
    Platform,
    QuotaExhausted,
    RateLimited,
    Transient,
    UnknownOutcome,
)
from platforms.registry import get_client
from tests.e2e.harness import wait_for
from tests.platforms.conftest import Harness, connect_sandbox_account, drive, sim_requests

# The client's timeout in the timeout tests applies to every call of the flow, not only to the
# one the simulator holds back: far above what an ordinary simulator answer takes on a loaded
# machine (tens of milliseconds), and the held answer comes later still.
CLIENT_TIMEOUT = 2.0
HELD_FOR = 3.0


def _in_future(when: dt.datetime | None, *, within: dt.timedelta) -> None:
    now = dt.datetime.now(dt.UTC)
    assert when is not None
    assert now < when <= now + within, when


# --- auth ------------------------------------------------------------------------------------


def test_rejected_token_is_auth_error_on_check_and_publish(harness: Harness) -> None:
    client = harness.client
    assert client.check_token(harness.creds).external_id
    stranger = Credentials(access_token="sbx-not-a-token", external_id=harness.creds.external_id)
    if harness.case.platform != Platform.TELEGRAM:  # the bot token is the credential itself
        with pytest.raises(AuthError) as rejected:
            client.check_token(stranger)
        assert rejected.value.error_code == ErrorCode.AUTH_EXPIRED
    with pytest.raises(AuthError) as unauthorized:
        harness.publish("token gone #sandbox-unauthorized")
    assert unauthorized.value.error_code == ErrorCode.AUTH_EXPIRED
    assert harness.created() == []


# --- rate limit, quota -----------------------------------------------------------------------


def test_rate_limit_is_rate_limited_with_the_platforms_retry_time(harness: Harness) -> None:
    harness.arm("rate_limited")
    with pytest.raises(RateLimited) as limited:
        harness.client.check_token(harness.creds)
    assert limited.value.error_code == ErrorCode.RATE_LIMITED
    assert limited.value.message
    if harness.case.retry_within is None:
        assert limited.value.retry_at is None
    else:
        _in_future(limited.value.retry_at, within=harness.case.retry_within)
    if harness.case.platform == Platform.LINKEDIN:
        assert limited.value.retry_at is not None and limited.value.retry_at.time() == dt.time(0, 0)
    assert harness.client.check_token(harness.creds).external_id  # the limit was for that one call
    (logged,) = [e for e in sim_requests(harness.sandbox, harness.slug) if e.get("fault")]
    assert (logged["fault"], logged["status"]) == ("rate_limited", limited.value.http_status)


def test_used_up_quota_is_quota_exhausted_until_it_resets(harness: Harness) -> None:
    supported = requests.get(f"{harness.sandbox}/_control/{harness.slug}/faults", timeout=10).json()["supported"]
    if not harness.case.quota:
        assert "quota_exhausted" not in supported  # the platform has no quota apart from its rate limits
        return
    harness.arm("quota_exhausted", path=harness.case.create_path, method="POST")
    with pytest.raises(QuotaExhausted) as quota:
        harness.publish("one too many")
    assert quota.value.error_code == ErrorCode.QUOTA_EXHAUSTED
    _in_future(quota.value.retry_at, within=dt.timedelta(days=1, minutes=1))
    assert harness.created() == []


# --- transient: 5xx and timeouts -------------------------------------------------------------


def test_server_error_is_transient_and_the_next_call_works(harness: Harness) -> None:
    harness.arm("server_error")
    with pytest.raises(Transient) as failed:
        harness.client.check_token(harness.creds)
    assert failed.value.error_code == ErrorCode.PLATFORM_UNAVAILABLE
    assert failed.value.http_status is not None and failed.value.http_status >= 500
    assert harness.client.check_token(harness.creds).external_id


def test_server_error_on_the_create_call_is_transient_and_a_retry_posts_once(harness: Harness) -> None:
    harness.arm("server_error", path=harness.case.create_path, method="POST")
    request = harness.request("after a hiccup")
    with pytest.raises(Transient):
        drive(harness.client, harness.creds, request)
    assert harness.created() == []
    assert drive(harness.client, harness.creds, request)[-1].done
    assert len(harness.created()) == 1


def test_timeout_on_a_read_is_transient(harness: Harness, settings: Any) -> None:
    settings.PLATFORM_HTTP_TIMEOUT = CLIENT_TIMEOUT
    harness.arm("timeout", seconds=HELD_FOR)
    with pytest.raises(Transient):
        harness.client.check_token(harness.creds)


def test_timeout_after_sending_the_create_call_is_unknown_outcome(harness: Harness, settings: Any) -> None:
    request = harness.request("slow platform")
    state: dict[str, Any] = {}
    if harness.case.platform in (Platform.INSTAGRAM, Platform.THREADS, Platform.YOUTUBE):
        state = harness.client.publish(harness.creds, request, {}).state  # the container / upload session
    settings.PLATFORM_HTTP_TIMEOUT = CLIENT_TIMEOUT
    method = "PUT" if harness.case.platform == Platform.YOUTUBE else "POST"
    harness.arm("timeout", path=harness.case.create_path, method=method, seconds=HELD_FOR)
    if harness.case.platform == Platform.YOUTUBE:
        # A resumable upload session answers how much it holds: a timeout there is retryable, and
        # the resumed upload finishes the one video.
        with pytest.raises(Transient):
            harness.client.publish(harness.creds, request, state)
        settings.PLATFORM_HTTP_TIMEOUT = 10
        assert drive(harness.client, harness.creds, request, state)[-1].done
        assert len(harness.created()) == 1
        return
    with pytest.raises(UnknownOutcome) as unknown:
        drive(harness.client, harness.creds, request, state)
    assert unknown.value.error_code == ErrorCode.UNKNOWN_OUTCOME
    # The simulator logs the call when it has carried it out, which on a loaded machine may be
    # after the client gave up: wait for the entry instead of assuming it is there.
    (late,) = wait_for(
        lambda: [e for e in sim_requests(harness.sandbox, harness.slug) if e.get("fault") == "timeout"],
        timeout=30,
        what="the held call in the simulator's log",
    )
    assert late["status"] < 300  # the platform did act on it: never re-send blindly


# --- permanent -------------------------------------------------------------------------------


def test_refused_content_is_permanent(harness: Harness) -> None:
    with pytest.raises(Permanent) as refused:
        harness.publish("not allowed #sandbox-fail")
    assert refused.value.error_code in (ErrorCode.CONTENT_REJECTED, ErrorCode.MEDIA_REJECTED)
    assert refused.value.message
    if harness.case.platform != Platform.TIKTOK:  # TikTok accepts the upload, then its status says FAILED
        assert harness.created() == []


def test_flaky_fails_the_first_attempt_only(harness: Harness) -> None:
    request = harness.request("wobbly #sandbox-flaky")
    with pytest.raises(Transient):
        drive(harness.client, harness.creds, request)
    assert drive(harness.client, harness.creds, request)[-1].done
    assert len(harness.created()) == 1


# --- the control endpoint ----------------------------------------------------------------------


def test_faults_control_lists_refuses_unknown_kinds_and_clears(sandbox: str) -> None:
    base = f"{sandbox}/_control/mastodon/faults"
    refused = requests.post(base, json={"kind": "quota_exhausted"}, timeout=10)
    assert refused.status_code == 400 and "quota_exhausted" not in refused.json()["supported"]
    assert requests.post(base, json={"kind": "timeout", "seconds": 99}, timeout=10).status_code == 400
    for odd in ({"times": "many"}, {"times": None}, {"seconds": [1]}):
        assert requests.post(base, json={"kind": "timeout", **odd}, timeout=10).status_code == 400
    huge = b'{"kind": "timeout", "times": 1e400}'  # json reads it as infinity
    assert requests.post(base, data=huge, headers={"Content-Type": "application/json"}, timeout=10).status_code == 400
    assert requests.post(base, json={"kind": "rate_limited", "times": 2, "path": "/statuses"}, timeout=10).ok
    (armed,) = requests.get(base, timeout=10).json()["faults"]
    assert (armed["kind"], armed["left"], armed["path"]) == ("rate_limited", 2, "/statuses")
    assert requests.delete(base, timeout=10).ok
    assert requests.get(base, timeout=10).json()["faults"] == []
    assert requests.get(f"{sandbox}/_control/myspace/faults", timeout=10).status_code == 404


def test_request_log_lists_every_call_and_clears(sandbox: str) -> None:
    identity = connect_sandbox_account(Platform.MASTODON)[0]
    get_client(Platform.MASTODON).check_token(identity.credentials)
    log = requests.get(f"{sandbox}/_control/mastodon/requests", timeout=10).json()["requests"]
    assert [(e["method"], e["path"], e["status"]) for e in log][-1] == (
        "GET",
        "/sandbox/mastodon/api/v1/accounts/verify_credentials",
        200,
    )
    assert all(isinstance(e["at"], float) for e in log)
    assert requests.delete(f"{sandbox}/_control/mastodon/requests", timeout=10).ok
    assert requests.get(f"{sandbox}/_control/mastodon/requests", timeout=10).json()["requests"] == []
    assert requests.get(f"{sandbox}/_control/myspace/requests", timeout=10).status_code == 404


def test_sandbox_latency_delays_every_simulated_call(sandbox: str, settings: Any) -> None:
    identity = connect_sandbox_account(Platform.TELEGRAM)[0]
    client = get_client(Platform.TELEGRAM)
    settings.SANDBOX_LATENCY_MS = 400
    started = dt.datetime.now(dt.UTC)
    client.check_token(identity.credentials)
    assert dt.datetime.now(dt.UTC) - started >= dt.timedelta(milliseconds=400)
