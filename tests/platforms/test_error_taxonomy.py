"""One contract, every platform: an error answer the platform really gives (recorded in
``tests/platforms/recorded/<platform>/``, replayed with ``responses`` against the live client)
becomes the exception class and ErrorCode of the taxonomy, keeps the platform's own message, and
carries the retry time the platform announced.

Each row of ``CASES`` is one such answer. A row names its ``Trigger``: the call that fails, the
endpoint that answers with the error, and the calls the flow makes before it (each platform's own
suite provides its live client, credentials and base URL). Adding a platform or an error is adding
rows, not a test."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import responses

from platforms.base import (
    AuthError,
    ErrorCode,
    MediaItem,
    Permanent,
    Platform,
    PlatformError,
    PublishRequest,
    QuotaExhausted,
    RateLimited,
    Transient,
)
from tests.platforms import test_bluesky as bluesky
from tests.platforms import test_facebook as facebook
from tests.platforms import test_google_business as google_business
from tests.platforms import test_instagram as instagram
from tests.platforms import test_linkedin as linkedin
from tests.platforms import test_mastodon as mastodon
from tests.platforms import test_pinterest as pinterest
from tests.platforms import test_telegram as telegram
from tests.platforms import test_threads as threads
from tests.platforms import test_tiktok as tiktok
from tests.platforms import test_twitter as twitter
from tests.platforms import test_youtube as youtube
from tests.platforms.conftest import load_recorded

# retry_at, the time just before the failing call, the time just after it
RetryCheck = Callable[[dt.datetime | None, dt.datetime, dt.datetime], None]


@dataclass(frozen=True)
class Stub:
    """A successful answer the flow needs before it reaches the failing call."""

    method: str
    url: str
    json: Mapping[str, Any]


@dataclass(frozen=True)
class Trigger:
    """How to make one platform call fail: ``call`` runs the live client; the ``method`` ``url``
    answers with the error (plus ``headers``, which that endpoint sends with every answer);
    ``message_at`` reads the platform's message out of its error body."""

    platform: Platform
    call: Callable[[], object]
    method: str
    url: str
    message_at: Callable[[Any], str]
    before: tuple[Stub, ...] = ()
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Raw:
    """A body that is not JSON (a proxy's HTML page), sent as it is."""

    text: str


@dataclass(frozen=True)
class Case:
    trigger: Trigger
    body: str | Raw | Mapping[str, Any]  # a recorded file's name, a raw body, or a JSON body written here
    status: int
    error: type[PlatformError]
    code: ErrorCode
    message: str | None = None  # None: the message the body carries, read by the trigger
    headers: Mapping[str, str] = field(default_factory=dict)
    retry: RetryCheck | None = None  # how retry_at must relate to the call; None: not checked

    @property
    def id(self) -> str:
        return f"{self.trigger.platform.value}-{self.status}-{self.code.value.replace('_', '-')}"

    def payload(self) -> Any:
        if isinstance(self.body, Raw):
            return None
        if isinstance(self.body, str):
            return load_recorded(self.trigger.platform.slug, self.body)
        return dict(self.body)

    def expected_message(self) -> str:
        return self.message if self.message is not None else self.trigger.message_at(self.payload())


def retry_in(**wait: float) -> RetryCheck:
    """The platform said how long to wait: retry_at is that long after the moment of the call."""
    delay = dt.timedelta(**wait)

    def check(retry_at: dt.datetime | None, before: dt.datetime, after: dt.datetime) -> None:
        assert retry_at is not None
        assert before + delay <= retry_at <= after + delay, (before, retry_at, after)

    return check


def at_next_pacific_midnight(retry_at: dt.datetime | None, before: dt.datetime, after: dt.datetime) -> None:
    """Google's daily quotas reset at midnight Pacific time."""
    assert retry_at is not None
    local = retry_at.astimezone(ZoneInfo("America/Los_Angeles"))
    assert (local.hour, local.minute) == (0, 0), local
    assert before < retry_at <= after + dt.timedelta(hours=25), (before, retry_at, after)


def graph_message(body: Any) -> str:
    return str(body["error"]["message"])


def top_message(body: Any) -> str:
    return str(body["message"])


# --- how each platform's call is made to fail ---------------------------------------------------

BLUESKY = Trigger(
    Platform.BLUESKY,
    lambda: bluesky.live_client().publish(bluesky.CREDS, bluesky.TEXT, {}),
    responses.POST,
    bluesky.xrpc("com.atproto.repo.createRecord"),
    top_message,
)
FACEBOOK = Trigger(
    Platform.FACEBOOK,
    lambda: facebook.live_client().publish(facebook.CREDS, PublishRequest("t", "TEXT", "hello"), {}),
    responses.POST,
    f"{facebook.GRAPH}/1234567890/feed",
    graph_message,
)
GOOGLE_BUSINESS = Trigger(
    Platform.GOOGLE_BUSINESS,
    lambda: google_business.live_client().publish(google_business.CREDS, PublishRequest("t", "TEXT", "x"), {}),
    responses.POST,
    f"{google_business.LIVE}/v4/{google_business.LOCATION}/localPosts",
    graph_message,
)
INSTAGRAM = Trigger(  # the container is ready; publishing it fails
    Platform.INSTAGRAM,
    lambda: instagram.live_client().publish(
        instagram.CREDS, PublishRequest("t", "IMAGE", "x"), {"step": "container", "container_id": "1"}
    ),
    responses.POST,
    f"{instagram.GRAPH}/17841405822304914/media_publish",
    lambda body: str(body["error"].get("error_user_msg", body["error"]["message"])),
    before=(Stub(responses.GET, f"{instagram.GRAPH}/1", {"status_code": "FINISHED", "id": "1"}),),
)
LINKEDIN = Trigger(
    Platform.LINKEDIN,
    lambda: linkedin.live_client().publish(linkedin.CREDS, PublishRequest("t", "TEXT", "hi"), {}),
    responses.POST,
    f"{linkedin.LIVE}/rest/posts",
    top_message,
    headers={"Retry-After": "60"},
)
MASTODON = Trigger(
    Platform.MASTODON,
    lambda: mastodon.live_client().publish(mastodon.CREDS, mastodon.TEXT, {}),
    responses.POST,
    f"{mastodon.LIVE}/api/v1/statuses",
    lambda body: str(body["error"]),
)
MASTODON_TOKEN_CHECK = Trigger(
    Platform.MASTODON,
    lambda: mastodon.live_client().check_token(mastodon.CREDS),
    responses.GET,
    f"{mastodon.LIVE}/api/v1/accounts/verify_credentials",
    lambda body: str(body["error"]),
)
PINTEREST = Trigger(
    Platform.PINTEREST,
    lambda: pinterest.live_client().list_boards(pinterest.CREDS),
    responses.GET,
    f"{pinterest.LIVE}/boards",
    top_message,
)
TELEGRAM = Trigger(
    Platform.TELEGRAM,
    lambda: telegram.live_client().publish(telegram.CREDS, telegram.TEXT, {}),
    responses.POST,
    telegram.url("sendMessage"),
    lambda body: str(body["description"]),
)
THREADS = Trigger(  # the daily limit is read first; creating the container fails
    Platform.THREADS,
    lambda: threads.live_client().publish(threads.CREDS, PublishRequest("t", "TEXT", "hi"), {}),
    responses.POST,
    f"{threads.API}/17841400000000000/threads",
    graph_message,
    before=(
        Stub(
            responses.GET,
            f"{threads.API}/17841400000000000/threads_publishing_limit",
            load_recorded("threads", "publishing_limit.json"),
        ),
    ),
    headers={"Retry-After": "30"},
)
TIKTOK = Trigger(  # the creator info is read first; the upload's init fails
    Platform.TIKTOK,
    lambda: tiktok.live_client().publish(
        tiktok.CREDS,
        PublishRequest("t", "VIDEO", "x", media=(MediaItem("https://cdn.example/v.mp4", "video", "video/mp4"),)),
        {},
    ),
    responses.POST,
    tiktok.INIT,
    graph_message,
    before=(
        Stub(
            responses.POST,
            f"{tiktok.LIVE_BASE_URL}/v2/post/publish/creator_info/query/",
            load_recorded("tiktok", "creator_info.json"),
        ),
    ),
    headers={"Retry-After": "20"},
)
TWITTER = Trigger(
    Platform.TWITTER,
    lambda: twitter.live_client().publish(twitter.CREDS, twitter.TEXT, {}),
    responses.POST,
    f"{twitter.LIVE}/2/tweets",
    lambda body: str(body["detail"]),  # v2 problem details
)
YOUTUBE = Trigger(
    Platform.YOUTUBE,
    lambda: youtube.live_client().check_token(youtube.CREDS),
    responses.GET,
    f"{youtube.LIVE}/youtube/v3/channels",
    graph_message,
    headers={"Retry-After": "30"},
)

# --- the answers and what each becomes -----------------------------------------------------------

CASES = [
    Case(BLUESKY, "error_expired_token.json", 400, AuthError, ErrorCode.AUTH_EXPIRED),
    Case(BLUESKY, "error_auth_required.json", 401, AuthError, ErrorCode.AUTH_EXPIRED),
    Case(BLUESKY, "error_invalid_record.json", 400, Permanent, ErrorCode.CONTENT_REJECTED),
    Case(BLUESKY, "error_blob_too_large.json", 400, Permanent, ErrorCode.MEDIA_REJECTED),
    Case(BLUESKY, "error_upstream.json", 502, Transient, ErrorCode.PLATFORM_UNAVAILABLE),
    Case(FACEBOOK, "error_invalid_token.json", 400, AuthError, ErrorCode.AUTH_EXPIRED),
    Case(FACEBOOK, "error_transient.json", 500, Transient, ErrorCode.PLATFORM_UNAVAILABLE),
    Case(FACEBOOK, "error_duplicate.json", 400, Permanent, ErrorCode.DUPLICATE),
    Case(FACEBOOK, "error_permission.json", 403, Permanent, ErrorCode.PERMISSION_MISSING),
    Case(FACEBOOK, "error_invalid_parameter.json", 400, Permanent, ErrorCode.INVALID_REQUEST),
    Case(  # app usage at 100% over Meta's rolling hour
        FACEBOOK,
        "error_app_limit.json",
        403,
        RateLimited,
        ErrorCode.RATE_LIMITED,
        headers={"X-App-Usage": '{"call_count":100,"total_cputime":20,"total_time":30}'},
        retry=retry_in(hours=1),
    ),
    Case(GOOGLE_BUSINESS, "error_permission.json", 403, Permanent, ErrorCode.PERMISSION_MISSING),
    Case(GOOGLE_BUSINESS, "error_quota.json", 429, RateLimited, ErrorCode.RATE_LIMITED),
    Case(GOOGLE_BUSINESS, "error_invalid.json", 400, Permanent, ErrorCode.CONTENT_REJECTED),
    Case(GOOGLE_BUSINESS, "error_permission.json", 503, Transient, ErrorCode.PLATFORM_UNAVAILABLE),
    Case(INSTAGRAM, "error_publish_limit.json", 403, QuotaExhausted, ErrorCode.QUOTA_EXHAUSTED),
    Case(INSTAGRAM, "error_media_download.json", 400, Permanent, ErrorCode.MEDIA_REJECTED),
    Case(INSTAGRAM, "error_not_ready.json", 400, Transient, ErrorCode.PLATFORM_UNAVAILABLE),
    Case(INSTAGRAM, "error_invalid_token.json", 400, AuthError, ErrorCode.AUTH_EXPIRED),
    Case(INSTAGRAM, "error_rate_limit.json", 400, RateLimited, ErrorCode.RATE_LIMITED),
    Case(LINKEDIN, "error_401.json", 401, AuthError, ErrorCode.AUTH_EXPIRED),
    Case(LINKEDIN, "error_429.json", 429, RateLimited, ErrorCode.RATE_LIMITED, retry=retry_in(seconds=60)),
    Case(LINKEDIN, "error_duplicate.json", 422, Permanent, ErrorCode.DUPLICATE),
    Case(LINKEDIN, "error_403.json", 403, Permanent, ErrorCode.PERMISSION_MISSING),
    Case(LINKEDIN, "error_500.json", 500, Transient, ErrorCode.PLATFORM_UNAVAILABLE),
    Case(MASTODON_TOKEN_CHECK, "error_401.json", 401, AuthError, ErrorCode.AUTH_EXPIRED),
    Case(MASTODON, "error_422.json", 422, Permanent, ErrorCode.CONTENT_REJECTED),
    Case(MASTODON, "error_422_processing.json", 422, Permanent, ErrorCode.MEDIA_REJECTED),
    Case(MASTODON, Raw("<html>bad gateway</html>"), 502, Transient, ErrorCode.PLATFORM_UNAVAILABLE, "HTTP 502"),
    Case(MASTODON, {"error": "This action is not allowed"}, 403, Permanent, ErrorCode.PERMISSION_MISSING),
    Case(PINTEREST, "error_401.json", 401, AuthError, ErrorCode.AUTH_EXPIRED),
    Case(PINTEREST, "error_401.json", 403, Permanent, ErrorCode.PERMISSION_MISSING),
    Case(
        PINTEREST,
        "error_429.json",
        429,
        RateLimited,
        ErrorCode.RATE_LIMITED,
        headers={"Retry-After": "120"},
        retry=retry_in(seconds=120),
    ),
    Case(PINTEREST, "error_429.json", 503, Transient, ErrorCode.PLATFORM_UNAVAILABLE),
    Case(PINTEREST, "error_400_board.json", 400, Permanent, ErrorCode.INVALID_REQUEST),
    Case(TELEGRAM, "error_401.json", 401, AuthError, ErrorCode.AUTH_EXPIRED),
    Case(TELEGRAM, "error_400_chat_not_found.json", 400, Permanent, ErrorCode.INVALID_REQUEST),
    Case(TELEGRAM, "error_400_url_content.json", 400, Permanent, ErrorCode.MEDIA_REJECTED),
    Case(TELEGRAM, "error_400_too_long.json", 400, Permanent, ErrorCode.CONTENT_REJECTED),
    Case(TELEGRAM, "error_403_kicked.json", 403, Permanent, ErrorCode.PERMISSION_MISSING),
    Case(TELEGRAM, "error_502.json", 502, Transient, ErrorCode.PLATFORM_UNAVAILABLE),
    Case(THREADS, "error_invalid_token.json", 401, AuthError, ErrorCode.AUTH_EXPIRED),
    Case(THREADS, "error_rate_limit.json", 403, RateLimited, ErrorCode.RATE_LIMITED, retry=retry_in(seconds=30)),
    Case(THREADS, "error_invalid_parameter.json", 400, Permanent, ErrorCode.INVALID_REQUEST),
    Case(TIKTOK, "error_token_invalid.json", 401, AuthError, ErrorCode.AUTH_EXPIRED),
    Case(TIKTOK, "error_rate_limit.json", 429, RateLimited, ErrorCode.RATE_LIMITED, retry=retry_in(seconds=20)),
    Case(TIKTOK, "error_pending_shares.json", 403, QuotaExhausted, ErrorCode.QUOTA_EXHAUSTED),
    Case(TIKTOK, "error_privacy_mismatch.json", 400, Permanent, ErrorCode.INVALID_REQUEST),
    Case(TIKTOK, "error_unverified_url.json", 403, Permanent, ErrorCode.PERMISSION_MISSING),
    Case(TIKTOK, "error_internal.json", 500, Transient, ErrorCode.PLATFORM_UNAVAILABLE),
    Case(TWITTER, "error_401.json", 401, AuthError, ErrorCode.AUTH_EXPIRED),
    Case(TWITTER, "error_duplicate.json", 403, Permanent, ErrorCode.DUPLICATE),
    Case(TWITTER, "error_forbidden.json", 403, Permanent, ErrorCode.PERMISSION_MISSING),
    # the first entry of "errors" names the field; its message wins over the summary in "detail"
    Case(
        TWITTER, "error_invalid_request.json", 400, Permanent, ErrorCode.CONTENT_REJECTED, "Your media IDs are invalid."
    ),
    Case(TWITTER, "error_503.json", 503, Transient, ErrorCode.PLATFORM_UNAVAILABLE),
    Case(YOUTUBE, "error_401.json", 401, AuthError, ErrorCode.AUTH_EXPIRED),
    Case(YOUTUBE, "error_quota.json", 403, QuotaExhausted, ErrorCode.QUOTA_EXHAUSTED, retry=at_next_pacific_midnight),
    Case(
        YOUTUBE,
        "error_upload_limit.json",
        400,
        QuotaExhausted,
        ErrorCode.QUOTA_EXHAUSTED,
        retry=at_next_pacific_midnight,
    ),
    Case(YOUTUBE, "error_rate.json", 403, RateLimited, ErrorCode.RATE_LIMITED, retry=retry_in(seconds=30)),
    Case(YOUTUBE, "error_backend.json", 503, Transient, ErrorCode.PLATFORM_UNAVAILABLE),
    Case(YOUTUBE, "error_invalid_title.json", 400, Permanent, ErrorCode.CONTENT_REJECTED),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_platform_error_maps_to_the_taxonomy(case: Case) -> None:
    trigger = case.trigger
    body = {"body": case.body.text} if isinstance(case.body, Raw) else {"json": case.payload()}
    with responses.RequestsMock(assert_all_requests_are_fired=True) as platform:
        for stub in trigger.before:
            platform.add(stub.method, stub.url, json=dict(stub.json))
        platform.add(
            trigger.method, trigger.url, status=case.status, headers={**trigger.headers, **case.headers}, **body
        )
        before = dt.datetime.now(dt.UTC)
        with pytest.raises(case.error) as raised:
            trigger.call()
        after = dt.datetime.now(dt.UTC)
    assert (raised.value.error_code, raised.value.message) == (case.code, case.expected_message())
    if case.retry is not None:
        case.retry(raised.value.retry_at, before, after)
