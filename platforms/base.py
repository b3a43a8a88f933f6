"""The interface every platform client implements, in plain data (no Django models).

A client speaks one platform's documented HTTP API with ``requests`` against a base URL (the
real host in live mode, ``<SANDBOX_BASE_URL>/<platform lower case>`` in sandbox mode) and maps
the platform's errors onto the taxonomy below. Operations a platform does not offer raise
``NotSupported``.
"""

from __future__ import annotations

import datetime as dt
import enum
import threading
from dataclasses import dataclass, field
from typing import Any

import requests

from platforms.transport import platform_session


class Platform(enum.StrEnum):
    FACEBOOK = "FACEBOOK"
    INSTAGRAM = "INSTAGRAM"
    THREADS = "THREADS"
    TIKTOK = "TIKTOK"
    TWITTER = "TWITTER"
    BLUESKY = "BLUESKY"
    LINKEDIN = "LINKEDIN"
    PINTEREST = "PINTEREST"
    YOUTUBE = "YOUTUBE"
    MASTODON = "MASTODON"
    TELEGRAM = "TELEGRAM"
    GOOGLE_BUSINESS = "GOOGLE_BUSINESS"

    @property
    def slug(self) -> str:
        """Path segment of the simulator: ``/sandbox/<slug>/``."""
        return self.value.lower()


class ErrorCode(enum.StrEnum):
    """The normalized ``errorCode`` of CONTRACT.md §10."""

    AUTH_EXPIRED = "auth_expired"
    PERMISSION_MISSING = "permission_missing"
    MEDIA_REJECTED = "media_rejected"
    RATE_LIMITED = "rate_limited"
    QUOTA_EXHAUSTED = "quota_exhausted"
    CONTENT_REJECTED = "content_rejected"
    DUPLICATE = "duplicate"
    PLATFORM_UNAVAILABLE = "platform_unavailable"
    UNKNOWN_OUTCOME = "unknown_outcome"
    INVALID_REQUEST = "invalid_request"


# --- the error taxonomy ------------------------------------------------------------------


class PlatformError(Exception):
    """Base of every classified platform failure. ``message`` is the platform's own words."""

    default_code: ErrorCode = ErrorCode.INVALID_REQUEST

    def __init__(
        self,
        message: str,
        *,
        error_code: ErrorCode | None = None,
        http_status: int | None = None,
        retry_at: dt.datetime | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.error_code = error_code or self.default_code
        self.http_status = http_status
        self.retry_at = retry_at


class AuthError(PlatformError):
    """The platform rejected the token: the account must be reconnected."""

    default_code = ErrorCode.AUTH_EXPIRED


class RateLimited(PlatformError):
    """Too many requests; try again at ``retry_at`` (None: use backoff)."""

    default_code = ErrorCode.RATE_LIMITED


class QuotaExhausted(PlatformError):
    """A daily/periodic quota is used up until ``retry_at``."""

    default_code = ErrorCode.QUOTA_EXHAUSTED


class Transient(PlatformError):
    """5xx, connection failure before sending, or a documented retryable error."""

    default_code = ErrorCode.PLATFORM_UNAVAILABLE


class Permanent(PlatformError):
    """The platform refused the content or the request; retrying the same thing will not help."""

    default_code = ErrorCode.CONTENT_REJECTED


class UnknownOutcome(PlatformError):
    """The request may have been accepted (e.g. timeout after sending): never re-send blindly."""

    default_code = ErrorCode.UNKNOWN_OUTCOME


class NotSupported(Exception):
    """The platform has no such operation."""


# --- plain data in and out ---------------------------------------------------------------


@dataclass(frozen=True)
class AppCredentials:
    """The service's own app registration on a platform (client id/secret, bot token…)."""

    client_id: str = ""
    client_secret: str = ""
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Credentials:
    """One connected account's tokens and identifiers, decrypted, as the client needs them."""

    access_token: str
    external_id: str  # the platform's id of the account (user, page, chat, location…)
    refresh_token: str = ""
    expires_at: dt.datetime | None = None
    extra: dict[str, str] = field(default_factory=dict)  # e.g. Bluesky did/handle, Mastodon instance


@dataclass(frozen=True)
class MediaItem:
    url: str  # publicly fetchable URL
    kind: str  # "image" | "video" | "document"
    mime_type: str
    size: int | None = None
    alt_text: str = ""


@dataclass(frozen=True)
class PostRef:
    """A post on the platform that another one replies to. ``cid``: Bluesky's content id of the
    record (a reply's strong references need it); empty elsewhere."""

    platform_post_id: str
    cid: str = ""


@dataclass(frozen=True)
class ReplyTo:
    """Where a thread item goes: under ``parent`` (the item before it), in the thread of ``root``
    (the first item)."""

    root: PostRef
    parent: PostRef


@dataclass(frozen=True)
class ThreadPart:
    """One reply of a thread after the post itself, with its own text and media."""

    text: str
    media: tuple[MediaItem, ...] = ()


@dataclass(frozen=True)
class PublishRequest:
    target_id: str  # our platform entry id: the idempotency key / marker where the platform allows
    content_type: str  # TEXT | IMAGE | VIDEO | CAROUSEL | DOCUMENT
    text: str
    media: tuple[MediaItem, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)  # the platform's config values (camelCase keys)
    thumbnail_url: str = ""
    reply_to: ReplyTo | None = None  # publish as a reply (a thread item); None: a post of its own
    thread: tuple[ThreadPart, ...] = ()  # the replies after this post (the pipeline sends them one by one)


@dataclass(frozen=True)
class PublishResult:
    """``done`` False means a multi-step flow is under way: persist ``state`` on the target and
    call ``publish`` again with it after ``poll_after`` seconds (never sleep in a worker)."""

    done: bool
    platform_post_id: str = ""
    url: str = ""
    published_at: dt.datetime | None = None
    state: dict[str, Any] = field(default_factory=dict)
    poll_after: float = 0.0
    draft_fallback: bool = False  # TikTok: delivered to the creator's inbox as a draft
    cid: str = ""  # Bluesky: the record's content id (what a reply to it must name)
    # A thread: every item the platform confirmed so far, in order, as stored on the entry
    # (``{platformPostId, postUrl, publishedAt, cid}``); empty for a post without a thread.
    thread_items: tuple[dict[str, str], ...] = ()


@dataclass(frozen=True)
class EditRequest:
    """A change to a post already on the platform. ``None`` leaves a field as it is; which fields a
    platform can change is its capabilities' ``edit_fields``. ``media`` replaces the post's media
    (``()`` removes them); a media edit also carries in ``text`` the text the post is to keep (a
    caption goes with its media on some platforms: Telegram's InputMedia replaces it)."""

    target_id: str  # our platform entry id
    platform_post_id: str
    text: str | None = None
    title: str | None = None
    media: tuple[MediaItem, ...] | None = None
    options: dict[str, Any] = field(default_factory=dict)  # the entry's platform config (camelCase keys)
    cid: str = ""  # Bluesky: the record's content id
    # The entry's content type (TEXT | IMAGE | …) where the platform edits a text and a caption
    # with different calls (Telegram); "" when unknown (the client then finds out).
    content_type: str = ""
    # What the last call returned in ``EditResult.state`` (empty at first): an edit that uploads
    # media the platform processes in the background resumes from it instead of uploading again.
    state: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EditResult:
    """The platform's answer to an edit: the post's (possibly new) url and when it was edited.
    ``done`` False (only where an edit uploads new media the platform still processes, e.g. a
    Mastodon video): nothing is changed yet; persist ``state`` and call ``edit`` again with it in
    ``EditRequest.state`` after ``poll_after`` seconds, as for :class:`PublishResult`."""

    url: str = ""
    edited_at: dt.datetime | None = None
    done: bool = True
    state: dict[str, Any] = field(default_factory=dict)
    poll_after: float = 0.0


@dataclass(frozen=True)
class Metrics:
    """None means the platform does not report that figure (distinct from 0)."""

    views: int | None = None
    likes: int | None = None
    comments: int | None = None
    shares: int | None = None
    # Where the platform reports them (Pinterest saves/clicks/impressions, Instagram reach/saves,
    # LinkedIn impressions/reach, Facebook impressions/reach).
    saves: int | None = None
    clicks: int | None = None
    impressions: int | None = None
    reach: int | None = None


@dataclass(frozen=True)
class RemotePost:
    platform_post_id: str
    published_at: dt.datetime
    text: str = ""
    permalink: str = ""
    thumbnail_url: str = ""
    metrics: Metrics = field(default_factory=Metrics)
    title: str = ""  # the platform's own title of the post, where it has one (YouTube, Pinterest)


@dataclass(frozen=True)
class CommentAuthor:
    """Who wrote a comment, as the platform names them."""

    id: str
    name: str = ""
    handle: str = ""
    avatar_url: str = ""


@dataclass(frozen=True)
class RemoteComment:
    """One comment (or a reply to one, or a Google Business review or its reply) as the platform
    has it. ``platform_post_id`` is the post it is under ("" for a Google Business review: reviews
    are on the location, not on a post); ``parent_id`` the comment it answers ("" when it is under
    the post itself), so a sync keeps the platform's reply nesting as a tree. Counts are the
    platform's own (None: not reported). ``from_account``: the connected account itself wrote it
    (one of our replies, or the owner's reply to a review)."""

    platform_comment_id: str
    platform_post_id: str
    text: str
    created_at: dt.datetime
    author: CommentAuthor
    parent_id: str = ""
    like_count: int | None = None
    reply_count: int | None = None
    hidden: bool = False
    permalink: str = ""
    from_account: bool = False
    rating: int | None = None  # a Google Business review's stars, 1 to 5


@dataclass(frozen=True)
class CommentPage:
    """One page of :meth:`PlatformClient.list_comments`; ``cursor`` fetches the next page ("" when
    this was the last)."""

    comments: tuple[RemoteComment, ...]
    cursor: str = ""


@dataclass(frozen=True)
class AccountProfile:
    """What a token check or a connect flow learns about an account."""

    external_id: str
    display_name: str
    username: str = ""
    avatar_url: str = ""
    page_id: str = ""  # FACEBOOK pages
    supports_instagram_audio: bool = False


@dataclass(frozen=True)
class ConnectedIdentity:
    """One account a connect flow yields (FACEBOOK: one per managed page)."""

    profile: AccountProfile
    credentials: Credentials
    scopes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Board:
    id: str
    name: str
    description: str = ""
    privacy: str = "PUBLIC"  # PUBLIC | PROTECTED | SECRET


@dataclass(frozen=True)
class AudioItem:
    audio_id: str
    title: str
    artist: str = ""
    duration_ms: int | None = None
    cover_url: str = ""
    audio_type: str = "music"  # music | original_sound


_local = threading.local()


def thread_session() -> requests.Session:
    """This thread's pooled session (made on first use, kept for the thread's life, so keep-alive
    connections are reused by its next calls); proxies from the environment are ignored, and
    urllib3 retries nothing by itself."""
    session: requests.Session | None = getattr(_local, "session", None)
    if session is None:
        # Its connections note when a request is first written (never sent vs maybe sent), and its
        # plain calls take a shorter path than requests' own (platforms.transport.PlatformSession).
        session = platform_session()
        _local.session = session
    return session


class PlatformClient:
    """Base class. Subclasses set ``platform`` and implement what their platform offers."""

    platform: Platform
    # How an account connects: "oauth" (authorize_url → consent → exchange_code) or
    # "credentials" (the user types ``credential_fields`` into the connect page, e.g. a Bluesky
    # handle and app password, or a Telegram bot token and chat id).
    connect_method: str = "oauth"
    credential_fields: tuple[str, ...] = ()

    def __init__(
        self, *, base_url: str, app: AppCredentials, timeout: float, session: requests.Session | None = None
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.app = app
        self._session = session
        self.timeout = timeout

    @property
    def session(self) -> requests.Session:
        """The session given to the client, else the calling thread's own: a client built on one
        thread is called from the worker's threads, and a ``requests.Session`` (its connection
        pool, its cookies) is not to be shared between threads."""
        return self._session if self._session is not None else thread_session()

    # publishing
    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """Start or resume publishing. ``state`` is what the last call returned (empty at first);
        a resumed call continues the flow and never creates a second post."""
        raise NotSupported

    def lookup(self, creds: Credentials, request: PublishRequest) -> PublishResult | None:
        """Find a post this target already created (after an unknown outcome); None if absent.
        Raises NotSupported where the platform offers no way to look."""
        raise NotSupported

    def comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """Post ``request.text`` as a comment (or reply) under ``request.reply_to.parent``, the
        published post. ``request.target_id`` is the comment's own idempotency key where the
        platform takes one. The result's ``platform_post_id`` is the comment's id; ``done`` False
        (a multi-step flow) as for :meth:`publish`. Raises NotSupported where the platform has no
        comment API."""
        raise NotSupported

    # after publishing
    def edit(self, creds: Credentials, request: EditRequest) -> EditResult:
        """Change a published post in place (only the fields of ``request`` that are not None).
        Raises NotSupported where the platform cannot edit, Permanent with the platform's words
        where it refuses this edit (an edit window closed, a field it does not change on this
        kind of post); otherwise errors as for :meth:`publish`: the call that changes the post is
        sent as one that ``creates`` (:func:`platforms.http.before_creates` runs before it, and a
        failure after it may have left is UnknownOutcome). Setting the same values again is
        harmless on every platform that edits in place."""
        raise NotSupported

    def delete(self, creds: Credentials, platform_post_id: str) -> None:
        """Remove a published post. A post the platform no longer has counts as deleted (returns
        normally), so a delete whose answer was lost (UnknownOutcome) can safely be sent again.
        Raises NotSupported where the platform cannot delete, Permanent where it refuses (e.g.
        Telegram after 48 hours). The deleting call is sent as one that ``creates``, as for
        :meth:`edit`."""
        raise NotSupported

    def fetch_post(self, creds: Credentials, platform_post_id: str) -> RemotePost | None:
        """Read one published post as the platform has it now (its text and, where it has one, its
        title): the lookup that settles an edit or a delete whose outcome is unknown (the worker was
        lost mid-call). None: the platform says the post does not exist (never published, or
        deleted). Raises NotSupported where the platform has no read of one post; errors
        otherwise as for :meth:`publish` (the read changes nothing, so it is never one that
        ``creates``)."""
        raise NotSupported

    # engagement (comments and reviews)
    def list_comments(
        self, creds: Credentials, platform_post_id: str, *, since: dt.datetime | None = None, cursor: str = ""
    ) -> CommentPage:
        """One page of the comments under a published post, replies included (each naming its
        ``parent_id``), in the platform's own order. ``since``: only comments created at or after
        it are wanted (the client asks the platform to filter where it can and otherwise drops
        the older ones itself, stopping early where the order allows); the caller still dedupes by
        ``platform_comment_id``. ``platform_post_id`` "" lists the account's own (Google Business:
        the location's reviews with their replies). A post the platform no longer has gives an
        empty last page. Raises NotSupported where the platform has no comment read; errors
        otherwise as for :meth:`fetch_post` (a read, never one that ``creates``)."""
        raise NotSupported

    def reply_comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """Post ``request.text`` as the account's reply to the comment ``request.reply_to.parent``,
        under the post ``request.reply_to.root`` (Google Business: the parent is the review and the
        root is empty; a review has one reply, which this sets). ``request.target_id`` is the
        reply's own idempotency key where the platform takes one. The result's
        ``platform_post_id`` is the reply's comment id. Sent as one that ``creates``, as for
        :meth:`publish`."""
        raise NotSupported

    def set_comment_hidden(self, creds: Credentials, platform_comment_id: str, hidden: bool) -> None:
        """Hide (or show again) a comment on the account's post. Setting the state it already has is
        harmless. Raises NotSupported where the platform cannot hide comments."""
        raise NotSupported

    def delete_comment(self, creds: Credentials, platform_comment_id: str, *, parent_id: str = "") -> None:
        """Delete a comment: the account's own reply everywhere with a comment API, another person's
        comment where the platform lets a post's owner do it (Permanent where it refuses). A comment
        the platform no longer has counts as deleted. ``parent_id``: the comment or review it
        answers, where the platform's call names it (Google Business deletes a review's reply by the
        review). Sent as one that ``creates``."""
        raise NotSupported

    def like_comment(self, creds: Credentials, platform_comment_id: str) -> None:
        """Like a comment as the account; liking one already liked is harmless. Raises NotSupported
        where the platform has no such call."""
        raise NotSupported

    def revoke_token(self, creds: Credentials) -> None:
        """Revoke the account's token at the platform (on disconnect); a token the platform
        already forgot counts as revoked. Raises NotSupported where the platform has no revoke
        call."""
        raise NotSupported

    # accounts
    def check_token(self, creds: Credentials) -> AccountProfile:
        """Raise AuthError if the platform rejects the token."""
        raise NotSupported

    def refresh_token(self, creds: Credentials) -> Credentials:
        raise NotSupported

    def authorize_url(self, *, redirect_uri: str, state: str, code_challenge: str = "") -> str:
        raise NotSupported

    def exchange_code(self, *, code: str, redirect_uri: str, code_verifier: str = "") -> list[ConnectedIdentity]:
        raise NotSupported

    def connect_with_credentials(self, fields: dict[str, str]) -> list[ConnectedIdentity]:
        """For ``connect_method == "credentials"``: validate the fields against the platform."""
        raise NotSupported

    def sandbox_credentials(self) -> dict[str, str]:
        """Sandbox mode only: credential fields that connect a new simulated account with no
        typing (used by ``GET /connect/<token>/<PLATFORM>`` and by tests)."""
        raise NotSupported

    # analytics
    def list_recent_posts(self, creds: Credentials, since: dt.datetime) -> list[RemotePost]:
        raise NotSupported

    def fetch_post_metrics(self, creds: Credentials, platform_post_ids: list[str]) -> dict[str, Metrics]:
        raise NotSupported

    def fetch_followers(self, creds: Credentials) -> int | None:
        raise NotSupported

    # helpers
    def list_boards(self, creds: Credentials) -> list[Board]:
        raise NotSupported

    def search_audio(self, creds: Credentials, *, audio_type: str, query: str = "") -> list[AudioItem]:
        raise NotSupported
