"""``Idempotency-Key`` for POST endpoints (CONTRACT.md §5).

The same key with the same request within 24 h returns the stored first response (status and
body) with ``Idempotent-Replayed: true`` and never runs the operation again; the same key with
a different request is 422; a duplicate that arrives while the first is still running is 409
(retry shortly). Keys are scoped to the workspace. Responses with a 5xx status are not stored,
so the client can retry them. A record left in progress by a crashed process for longer than
``ABANDONED_AFTER`` is taken over.

The stored body is encrypted at rest (``IdempotencyRecord.response_json``, the key ring of
``FERNET_KEYS``), whatever the endpoint: a response that shows a secret once (a connect link's
token and URL, a webhook secret, any key or token minted later) replays it without the secret
ever being kept in the clear, and no endpoint has to declare that it mints one. It is kept as the
JSON text the client was sent, so the replay answers the same bytes (key order included).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from core.errors import BadRequest, Conflict, Unprocessable
from core.exception_handler import handle_exception, to_application_error
from core.models import IdempotencyRecord

HEADER = "Idempotency-Key"
REPLAY_HEADER = "Idempotent-Replayed"
ABANDONED_AFTER = dt.timedelta(minutes=2)
KEY_PATTERN = r"^[!-~]{1,255}$"  # printable ASCII (0x21-0x7e), no spaces; also in the OpenAPI description
_KEY_SHAPE = re.compile(KEY_PATTERN)


@dataclass(frozen=True)
class Outcome:
    status: int
    body: Any
    replayed: bool


def fingerprint_of(*parts: Any) -> str:
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def validate_key(key: str) -> str:
    if not _KEY_SHAPE.match(key):
        raise BadRequest(
            f"{HEADER} must be 1 to 255 printable ASCII characters without spaces", code="invalid_idempotency_key"
        )
    return key


def _claim(workspace_id: str, key: str, fingerprint: str) -> IdempotencyRecord | None:
    """Insert the in-progress record; None when another request already holds the key."""
    now = timezone.now()
    IdempotencyRecord.objects.filter(workspace_id=workspace_id, key=key, expires_at__lte=now).delete()
    IdempotencyRecord.objects.filter(
        workspace_id=workspace_id, key=key, in_progress=True, created_at__lte=now - ABANDONED_AFTER
    ).delete()
    try:
        with transaction.atomic():
            return IdempotencyRecord.objects.create(
                workspace_id=workspace_id,
                key=key,
                fingerprint=fingerprint,
                expires_at=now + dt.timedelta(seconds=settings.IDEMPOTENCY_TTL_SECONDS),
            )
    except IntegrityError:
        return None


def run_once(*, workspace_id: str, key: str, fingerprint: str, execute: Callable[[], tuple[int, Any]]) -> Outcome:
    """Run ``execute`` (returning status and JSON-ready body) at most once per (workspace, key)."""
    record = _claim(workspace_id, key, fingerprint)
    if record is None:
        existing = IdempotencyRecord.objects.filter(workspace_id=workspace_id, key=key).first()
        if existing is None:  # expired and purged between our two queries: try once more
            return run_once(workspace_id=workspace_id, key=key, fingerprint=fingerprint, execute=execute)
        if existing.fingerprint != fingerprint:
            raise Unprocessable(
                f"This {HEADER} was already used with a different request", code="idempotency_key_reused"
            )
        if existing.in_progress:
            raise Conflict(
                f"A request with this {HEADER} is still being processed; retry shortly",
                code="idempotency_in_progress",
            )
        return Outcome(status=existing.response_status or 200, body=_stored_body(existing), replayed=True)
    try:
        # The operation's writes and the stored response commit together: a process that dies in
        # between leaves neither, so the claim it abandoned is taken over and runs the operation
        # once. (Stored after a separate commit, a crash there let the takeover run it twice.)
        with transaction.atomic():
            status, body = execute()
            if status < 500:
                _store_response(record, status, body)
    except BaseException:
        record.delete()
        raise
    if status >= 500:
        record.delete()
    return Outcome(status=status, body=body, replayed=False)


def _store_response(record: IdempotencyRecord, status: int, body: Any) -> None:
    IdempotencyRecord.objects.filter(pk=record.pk).update(
        in_progress=False,
        response_status=status,
        response_json=json.dumps(body, ensure_ascii=False, separators=(",", ":")),
    )


def _stored_body(record: IdempotencyRecord) -> Any:
    return None if record.response_json is None else json.loads(record.response_json)


def _json_ready(data: Any) -> Any:
    return json.loads(JSONRenderer().render(data)) if data is not None else None


def _workspace_id(request: Request) -> str:
    """Where the keys of an authenticated request are kept apart: the workspace it acts in (the
    workspaces app's ``Access`` in ``request.auth`` carries it), or for an organization key on an
    organization operation its organization (ids of the two never collide: their prefixes differ)."""
    scope = getattr(request.auth, "workspace", None) or getattr(request.auth, "organization", None)
    assert scope is not None, "view reached without authentication"
    return str(scope.id)


def idempotent(view_method: Callable[..., Response]) -> Callable[..., Response]:
    """Decorate a DRF view method handling POST. Without the header it simply runs; the
    application errors it raises are rendered and stored like any other response."""

    @wraps(view_method)
    def wrapper(view: Any, request: Request, *args: Any, **kwargs: Any) -> Response:
        raw_key = request.headers.get(HEADER)
        if raw_key is None:
            return view_method(view, request, *args, **kwargs)
        key = validate_key(raw_key.strip())
        fingerprint = fingerprint_of(request.method, request.path, request.data)

        def execute() -> tuple[int, Any]:
            try:
                with transaction.atomic():  # a savepoint: a failed view leaves the outer block usable
                    response = view_method(view, request, *args, **kwargs)
            except Exception as exc:
                if to_application_error(exc) is None:
                    raise
                response = handle_exception(exc, {"view": view})
            return response.status_code, _json_ready(response.data)

        outcome = run_once(workspace_id=_workspace_id(request), key=key, fingerprint=fingerprint, execute=execute)
        response = Response(outcome.body, status=outcome.status)
        if outcome.replayed:
            response[REPLAY_HEADER] = "true"
        return response

    wrapper.idempotent = True  # type: ignore[attr-defined]  # read by the OpenAPI generator
    return wrapper
