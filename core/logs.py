"""Log lines without secrets, each carrying the request id, the workspace and the key prefix.

Every formatter of the service (web, worker, beat and gunicorn's access log) passes its final
text through :func:`redact`, so a capability token, an OAuth code, a signature or a key never
reaches a log, whichever logger wrote it and whatever it quoted (an exception's text, a URL)."""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import json
import logging
import logging.config
import os
import re
import sys
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from pythonjsonlogger.json import JsonFormatter

from core.middleware import request_id_var

workspace_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("workspace_id", default="-")
key_prefix_var: contextvars.ContextVar[str] = contextvars.ContextVar("key_prefix", default="-")
# The web front's holder for what its access-log line says about the request's principal: set by
# the front (core.front) for each request, filled by LogContextMiddleware on the thread that runs
# Django (a2wsgi runs it in a copy of the front's context, so both see the one dict).
access_context_var: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "access_context", default=None
)
CONTEXT_FIELDS = ("request_id", "workspace_id", "key_prefix")

MASK = "[redacted]"

# Every URL path that carries a capability (whoever holds the URL may use it): the path segment
# right after one of these prefixes is the token. One rule for all of them, wherever the path is
# quoted (access log, Django's "Not Found: <path>", an exception's text, a full URL):
# - ``/connect/<token>[/<PLATFORM>]``: the hosted connect pages (not ``/connect/callback/``, whose
#   capability, ``code`` and ``state``, is in the query);
# - ``/connect-links/<token>``: ``DELETE /api/v1/connect-links/<token>``, refused calls included;
# - ``/bot<token>/<method>``: Telegram's Bot API and its simulator (``/sandbox/telegram/bot…``).
# Upload URLs carry theirs in the query (``signature=``, below). tests/core/test_log_redaction.py
# walks the URL configuration: a new route with a ``token`` or ``secret`` in its path fails there
# until it is listed here.
CAPABILITY_PATH_PREFIXES = (r"/connect/(?!callback(?:[/?#\s\"'\\]|$))", r"/connect-links/", r"/bot(?=\d+:)")

_CAPABILITY_PATH = re.compile("(" + "|".join(CAPABILITY_PATH_PREFIXES) + r")[^/\s?#\"'\\]+")

# Each pattern keeps what identifies the kind of value (the path, the parameter name) and masks
# the value itself.
_REDACTIONS: list[tuple[re.Pattern[str], str]] = [
    (_CAPABILITY_PATH, rf"\1{MASK}"),
    # Query and form parameters that carry a credential or a capability.
    (
        re.compile(
            r"(?i)([?&;\s\"']|^)((?:code|state|token|access_token|refresh_token|id_token|client_secret|password|"
            r"secret|signature|sig|expires_sig|x-amz-signature|x-amz-credential|x-amz-security-token|"
            r"api_key|apikey|key|oauth_token|oauth_verifier|code_verifier)=)[^&\s\"'#\\]+"
        ),
        rf"\1\2{MASK}",
    ),
    # Authorization headers and bearer tokens, wherever they are quoted.
    (re.compile(r"(?i)(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{8,}"), rf"\1\2{MASK}"),
    # Our API keys: cpk_<lookup>_<secret> keeps its public part (cpk_<lookup>), masks the secret.
    (re.compile(r"(cpk_[A-Za-z0-9]+)_[A-Za-z0-9_-]+"), rf"\1_{MASK}"),
    # Fernet tokens (encrypted credentials) and JWTs.
    (re.compile(r"gAAAAA[A-Za-z0-9_=-]{20,}"), MASK),
    (re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+"), MASK),
]


# Every pattern above needs one of these; most text has none, and one search is cheaper than six.
_MAYBE_SECRET = re.compile(r"(?i)/connect|/bot\d|=|bearer|basic|cpk_|gAAAAA|eyJ")


def configure(config: dict[str, Any]) -> None:
    """``settings.LOGGING_CONFIG``: the dictConfig, and Python's warnings (a library's, Celery's
    start-up SecurityWarning) written as log lines of the same format instead of bare text."""
    logging.config.dictConfig(config)
    logging.captureWarnings(True)


def say(message: str, *, logger: str) -> None:
    """One line of the JSON format written to standard error with a single ``os.write``, taking
    no lock: for what is said inside a signal handler (the worker's shutdown), where the logging
    module's locks could deadlock."""
    line = {
        "time": dt.datetime.now(dt.UTC).isoformat(),
        "level": "INFO",
        "logger": logger,
        "message": redact(str(message).strip()),
        **dict.fromkeys(CONTEXT_FIELDS, "-"),
    }
    target = sys.__stderr__
    if target is None:
        return
    # Like Celery's own: losing this line must never break the shutdown.
    with contextlib.suppress(OSError, AttributeError, ValueError):
        os.write(target.fileno(), (json.dumps(line, ensure_ascii=False) + "\n").encode())


def redact(text: str) -> str:
    """``text`` with every credential-shaped value masked."""
    if not _MAYBE_SECRET.search(text):
        return text
    for pattern, replacement in _REDACTIONS:
        text = pattern.sub(replacement, text)
    return text


class LogContextFilter(logging.Filter):
    """Puts the request id, workspace id and key prefix of the current request (or of the request
    whose task this worker runs) on every record, unless the line names them itself (``extra``:
    the access log, written by the front after Django answered, names the request's)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, var in (
            ("request_id", request_id_var),
            ("workspace_id", workspace_id_var),
            ("key_prefix", key_prefix_var),
        ):
            if not hasattr(record, name):
                setattr(record, name, var.get())
        return True


class RedactingJsonFormatter(JsonFormatter):
    """One JSON object a line: time, level, logger, message and the request context."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("timestamp", "time")
        kwargs.setdefault("rename_fields", {"levelname": "level", "name": "logger"})
        super().__init__("%(levelname)s %(name)s %(message)s %(request_id)s %(workspace_id)s %(key_prefix)s", **kwargs)

    def format(self, record: logging.LogRecord) -> str:
        for name in CONTEXT_FIELDS:
            if not hasattr(record, name):  # a handler configured without the context filter
                setattr(record, name, "-")
        return super().format(record)

    def process_log_record(self, log_data: dict[str, Any]) -> dict[str, Any]:
        # Each value is redacted before it is encoded (redacting the encoded line could cut an
        # escape sequence in half); values JSON cannot hold are redacted as their text. The time
        # leads; uvicorn's copy of its message with terminal colours is dropped.
        log_data.pop("color_message", None)
        ordered = {"time": log_data.pop("time", None), **log_data}
        return {key: _redacted_value(value) for key, value in ordered.items()}


def _redacted_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {str(key): _redacted_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted_value(item) for item in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, dt.datetime):
        return value.isoformat()
    return redact(str(value))


class RedactingPlainFormatter(logging.Formatter):
    """``LOG_FORMAT=plain``: the classic text line, redacted the same way."""

    def format(self, record: logging.LogRecord) -> str:
        for name in CONTEXT_FIELDS:
            if not hasattr(record, name):
                setattr(record, name, "-")
        return redact(super().format(record))


class LogContextMiddleware:
    """After the principal is known: its workspace and key prefix go on every log line of the
    request (and into the tasks it queues)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        principal = getattr(request, "principal", None)
        workspace_id, key_prefix = _workspace_of(request, principal), _key_prefix_of(principal)
        workspace_token = workspace_id_var.set(workspace_id)
        key_token = key_prefix_var.set(key_prefix)
        access_context = access_context_var.get()
        if access_context is not None:
            access_context.update(workspace_id=workspace_id, key_prefix=key_prefix)
        try:
            return self.get_response(request)
        finally:
            workspace_id_var.reset(workspace_token)
            key_prefix_var.reset(key_token)


def _workspace_of(request: HttpRequest, principal: Any) -> str:
    if principal is None:
        return "-"
    api_key = getattr(principal, "api_key", None)
    if api_key is not None:
        # An organization key's workspace is the X-Workspace-Id it sends, not yet checked here.
        return str(api_key.workspace_id or "-")
    chosen = request.headers.get("X-Workspace-Id", "")
    memberships = getattr(principal, "memberships", ())
    for membership in memberships:
        if membership.workspace_id == chosen or (not chosen and membership.is_default):
            return str(membership.workspace_id)
    return "-"


def _key_prefix_of(principal: Any) -> str:
    api_key = getattr(principal, "api_key", None)
    if api_key is None:
        return "-"
    return str(api_key.public_part)


# --- the request's context carried into the tasks it queues (Celery message headers) ----------

CONTEXT_HEADERS = {"x_request_id": request_id_var, "x_workspace_id": workspace_id_var, "x_key_prefix": key_prefix_var}


def context_headers() -> dict[str, str]:
    """The headers a task message carries: the context of whatever queued it."""
    return {header: var.get() for header, var in CONTEXT_HEADERS.items() if var.get() != "-"}


def enter_task_context(request_headers: Callable[[str], Any]) -> list[tuple[contextvars.ContextVar[str], Any]]:
    """Adopt the queuing request's context for the task about to run; returns the tokens to reset."""
    tokens = []
    for header, var in CONTEXT_HEADERS.items():
        value = request_headers(header)
        tokens.append((var, var.set(str(value) if value else "-")))
    return tokens


def leave_task_context(tokens: list[tuple[contextvars.ContextVar[str], Any]]) -> None:
    for var, token in reversed(tokens):
        var.reset(token)


# --- the access log ----------------------------------------------------------------------------


def access_fields(atoms: dict[str, Any]) -> dict[str, Any]:
    """The fields of one access-log line (``extra`` of its record) from the front's atoms (named
    as gunicorn's): the request, its answer, and whose it was. The formatter redacts them."""
    return {
        "remote": atoms.get("h", "-"),
        "method": atoms.get("m", "-"),
        "path": atoms.get("U", "-"),
        "query": atoms.get("q", ""),
        "status": atoms.get("s", "-"),
        "bytes": atoms.get("B"),
        "duration_ms": round(float(atoms.get("D", 0)) / 1000, 1),
        "request_id": atoms.get("{x-request-id}o", "-"),
        "workspace_id": atoms.get("workspace_id", "-"),
        "key_prefix": atoms.get("key_prefix", "-"),
        "user_agent": atoms.get("a", "-"),
        "referer": atoms.get("f", "-"),
    }


def log_access(logger: logging.Logger, atoms: dict[str, Any]) -> None:
    """One access-log line: ``METHOD path status`` with :func:`access_fields` on the record, so it
    is written by the process's one formatter (JSON, or the plain line) like every other line."""
    fields = access_fields(atoms)
    logger.info("%s %s %s", fields["method"], fields["path"], fields["status"], extra=fields)
