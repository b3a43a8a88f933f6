"""What YouTube and Google Business share: Google OAuth 2.0 (consent at accounts.google.com with
``access_type=offline``, tokens at oauth2.googleapis.com, the refresh_token grant) and the
Google API error envelope ``{"error": {"code", "message", "errors": [{"reason", "domain"}]}}``.

In sandbox mode the consent page and the token endpoint live under the simulator base
(``<base>/o/oauth2/v2/auth`` and ``<base>/token``)."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

import requests

from platforms.base import (
    AuthError,
    Credentials,
    ErrorCode,
    Permanent,
    PlatformClient,
    PlatformError,
    QuotaExhausted,
    RateLimited,
    Transient,
)
from platforms.http import host_url, json_or_empty, retry_at_from, send, token_credentials

LIVE_AUTHORIZE_URL = "https://accounts.google.com/o/oauth2/v2/auth"
LIVE_TOKEN_URL = "https://oauth2.googleapis.com/token"
LIVE_REVOKE_URL = "https://oauth2.googleapis.com/revoke"
PACIFIC = ZoneInfo("America/Los_Angeles")

QUOTA_REASONS = {"quotaExceeded", "dailyLimitExceeded", "uploadLimitExceeded"}
RATE_REASONS = {"rateLimitExceeded", "userRateLimitExceeded", "RATE_LIMIT_EXCEEDED"}
PERMISSION_REASONS = {"forbidden", "insufficientPermissions", "PERMISSION_DENIED", "channelNotFound"}
MEDIA_REASONS = {"mediaBodyRequired", "invalidVideoMetadata", "uploadLimitExceeded", "invalidFilename"}


def next_pacific_midnight(now: dt.datetime | None = None) -> dt.datetime:
    """Google API daily quotas reset at midnight Pacific time."""
    local = (now or dt.datetime.now(dt.UTC)).astimezone(PACIFIC)
    tomorrow = (local + dt.timedelta(days=1)).date()
    return dt.datetime.combine(tomorrow, dt.time(0, 0), PACIFIC).astimezone(dt.UTC)


def rate_limit_retry_at(response: requests.Response, error: dict[str, Any]) -> dt.datetime | None:
    """When a rate-limited call may be retried: ``Retry-After``, else the ``google.rpc.RetryInfo``
    detail's ``retryDelay``, else the start of the next minute for a per-minute quota (named in
    the ``google.rpc.ErrorInfo`` detail's ``quota_limit``); None (back off) otherwise."""
    retry_at = retry_at_from(response.headers, "Retry-After")
    if retry_at is not None:
        return retry_at
    now = dt.datetime.now(dt.UTC)
    details = [d for d in error.get("details") or [] if isinstance(d, dict)]
    for detail in details:
        delay = str(detail.get("retryDelay") or "")
        if delay.endswith("s"):
            try:
                return now + dt.timedelta(seconds=float(delay[:-1]))
            except ValueError:
                pass
    for detail in details:
        metadata = detail.get("metadata")
        if isinstance(metadata, dict) and "PerMinute" in str(metadata.get("quota_limit") or ""):
            return now.replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
    return None


def google_error(response: requests.Response) -> PlatformError:
    """Classify a Google API error answer; the platform's message is kept."""
    body = json_or_empty(response)
    error = body.get("error")
    if isinstance(error, str):  # the OAuth endpoints: {"error": "invalid_grant", "error_description": ...}
        message = str(body.get("error_description") or error)
        if response.status_code >= 500:
            return Transient(message, http_status=response.status_code)
        return AuthError(message, http_status=response.status_code)
    error = error if isinstance(error, dict) else {}
    status = response.status_code
    message = str(error.get("message") or response.reason or "Google API error")
    reasons = {str(e.get("reason")) for e in error.get("errors") or [] if isinstance(e, dict)}
    reasons.update(str(d.get("reason")) for d in error.get("details") or [] if isinstance(d, dict) and d.get("reason"))
    if status == 401:
        return AuthError(message, http_status=status)
    if reasons & QUOTA_REASONS:
        return QuotaExhausted(message, http_status=status, retry_at=next_pacific_midnight())
    if status == 429 or reasons & RATE_REASONS:
        return RateLimited(message, http_status=status, retry_at=rate_limit_retry_at(response, error))
    if status >= 500:
        return Transient(message, http_status=status)
    if status == 403 or reasons & PERMISSION_REASONS:
        return Permanent(message, error_code=ErrorCode.PERMISSION_MISSING, http_status=status)
    if reasons & MEDIA_REASONS:
        return Permanent(message, error_code=ErrorCode.MEDIA_REJECTED, http_status=status)
    if status in (404, 409) or "badRequest" in reasons:
        return Permanent(message, error_code=ErrorCode.INVALID_REQUEST, http_status=status)
    return Permanent(message, error_code=ErrorCode.CONTENT_REJECTED, http_status=status)


class GoogleClient(PlatformClient):
    """The Google OAuth flow and authenticated JSON calls; subclasses name their ``scopes``."""

    scopes: tuple[str, ...] = ()
    live_base_url: str = ""

    def _url(self, path: str) -> str:
        return path if path.startswith("http") else f"{self.base_url}{path}"

    def _call(
        self, method: str, url: str, creds: Credentials, *, creates: bool = False, **kwargs: Any
    ) -> requests.Response:
        headers = {"Authorization": f"Bearer {creds.access_token}", **kwargs.pop("headers", {})}
        response = send(
            self.session, method, self._url(url), timeout=self.timeout, creates=creates, headers=headers, **kwargs
        )
        if response.status_code >= 400:
            raise google_error(response)
        return response

    def _json(self, method: str, url: str, creds: Credentials, **kwargs: Any) -> dict[str, Any]:
        return json_or_empty(self._call(method, url, creds, **kwargs))

    # --- OAuth ---------------------------------------------------------------------------
    def authorize_url(self, *, redirect_uri: str, state: str, code_challenge: str = "") -> str:
        query = {
            "client_id": self.app.client_id,
            "redirect_uri": redirect_uri,
            "response_type": "code",
            "scope": " ".join(self.scopes),
            "access_type": "offline",
            "prompt": "consent",
            "include_granted_scopes": "true",
            "state": state,
        }
        if code_challenge:
            query.update(code_challenge=code_challenge, code_challenge_method="S256")
        base = host_url(self.base_url, self.live_base_url, LIVE_AUTHORIZE_URL, "/o/oauth2/v2/auth")
        return f"{base}?{urlencode(query)}"

    def _token(self, form: dict[str, str]) -> dict[str, Any]:
        url = host_url(self.base_url, self.live_base_url, LIVE_TOKEN_URL, "/token")
        data = {"client_id": self.app.client_id, "client_secret": self.app.client_secret, **form}
        response = send(self.session, "POST", url, timeout=self.timeout, data=data)
        if response.status_code >= 400:
            raise google_error(response)
        return json_or_empty(response)

    def exchange_tokens(
        self, *, code: str, redirect_uri: str, code_verifier: str = ""
    ) -> tuple[Credentials, tuple[str, ...]]:
        """The code → tokens step of ``exchange_code`` (the account id is filled by the caller)."""
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
        if code_verifier:
            form["code_verifier"] = code_verifier
        token = self._token(form)
        return _credentials(token, external_id="", previous_refresh=""), tuple(str(token.get("scope", "")).split())

    def refresh_token(self, creds: Credentials) -> Credentials:
        if not creds.refresh_token:
            raise AuthError("no refresh token was issued for this account")
        token = self._token({"grant_type": "refresh_token", "refresh_token": creds.refresh_token})
        return _credentials(
            token, external_id=creds.external_id, previous_refresh=creds.refresh_token, extra=creds.extra
        )

    def revoke_token(self, creds: Credentials) -> None:
        """``POST https://oauth2.googleapis.com/revoke`` with the refresh token (else the access
        token): the whole grant ends, both tokens with it. A token Google no longer knows answers
        400 ``invalid_token``: counted as revoked."""
        url = host_url(self.base_url, self.live_base_url, LIVE_REVOKE_URL, "/revoke")
        token = creds.refresh_token or creds.access_token
        response = send(self.session, "POST", url, timeout=self.timeout, creates=True, data={"token": token})
        if response.status_code == 400 and json_or_empty(response).get("error") == "invalid_token":
            return
        if response.status_code >= 400:
            raise google_error(response)

    def read_resource(self, url: str, creds: Credentials, **kwargs: Any) -> dict[str, Any] | None:
        """``GET`` of one resource; None where it answers 404 (it does not exist, or was deleted)."""
        try:
            return self._json("GET", url, creds, **kwargs)
        except Permanent as exc:
            if exc.http_status == 404:
                return None
            raise

    def delete_resource(self, url: str, creds: Credentials, **kwargs: Any) -> None:
        """``DELETE`` of one resource; a 404 (it is gone already) counts as deleted."""
        try:
            self._call("DELETE", url, creds, creates=True, **kwargs)
        except Permanent as exc:
            if exc.http_status != 404:
                raise


def _credentials(
    token: dict[str, Any], *, external_id: str, previous_refresh: str, extra: dict[str, str] | None = None
) -> Credentials:
    if not token.get("access_token"):
        raise AuthError("the token endpoint answered without an access token")
    return token_credentials(token, external_id=external_id, previous_refresh=previous_refresh, extra=extra)
