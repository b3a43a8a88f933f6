"""Errors of the accounts app, on top of the shared hierarchy in ``core.errors``."""

from __future__ import annotations

from core.errors import ApplicationError, BadRequest, NotFound


class AccountNotFound(NotFound):
    default_message = "Account not found"


class AccountDisconnected(AccountNotFound):
    code = "account_disconnected"
    default_message = "The account was disconnected"


class ConnectLinkNotFound(NotFound):
    default_message = "Connect link not found"


class NotFacebookPage(BadRequest):
    code = "not_facebook_page"
    default_message = "Only FACEBOOK page accounts can be checked"


class AudioUnavailable(BadRequest):
    code = "instagram_audio_unavailable"
    default_message = (
        "Audio search works only for INSTAGRAM accounts connected through FACEBOOK login that support audio"
    )


class AudioSearchRejected(BadRequest):
    code = "audio_search_rejected"


class BoardRequestRefused(BadRequest):
    code = "board_request_refused"


class AccountUnauthorized(BadRequest):
    code = "account_unauthorized"


class PlatformUnavailable(ApplicationError):
    """The platform did not answer usefully (5xx, timeout, rate limit): try again later."""

    status_code = 502
    code = "platform_unavailable"
    default_message = "The platform is unavailable right now; try again later"
