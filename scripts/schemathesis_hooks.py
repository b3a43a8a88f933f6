"""Schemathesis hooks (loaded through schemathesis.toml): the few rules of the service that an
OpenAPI description cannot state, applied to every generated case before it is sent, so that a
rejection schemathesis reports is always a constraint missing from the description. Each rule
is also written in the operation's description. Schemathesis checks the case against the
description again after the hook, so a schema-violating case stays one and must still be refused.

- ``from``/``to`` and ``startDate``/``endDate``: the end is not before the start.
- ``/analytics/timeseries``: at most 1000 buckets of the granularity in the window.
- ``Idempotency-Key``: a well-behaved client sends a new key with a new request (the same key
  with another request is the documented 422 ``idempotency_key_reused``).
- ``platformTexts`` and ``platformFirstComments``: each platform at most once (uniqueness by one
  key of the items).
- Webhook URLs: the host must resolve to public addresses (or, in the sandbox, loopback); a
  generated host name resolves to nothing here, so it is replaced by 127.0.0.1.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import MutableMapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import schemathesis

IDEMPOTENCY_KEY = re.compile(r"^[!-~]{1,255}$")
WINDOWS = (("from", "to"), ("startDate", "endDate"))
MAX_BUCKETS = 1000
BUCKET_DAYS = {"DAILY": 1, "WEEKLY": 7, "MONTHLY": 28, "DAY": 1, "WEEK": 7, "MONTH": 28}
UNREACHABLE_RECEIVER = "127.0.0.1:9"  # the discard port: nothing listens, a test send fails fast


def _instant(text: Any) -> dt.datetime | None:
    """The instant the service reads (a date-time, naive meaning UTC, or a date), or None."""
    if not isinstance(text, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(text)
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    except ValueError:
        return None


def _order_windows(case: Any) -> None:
    query = case.query
    if not isinstance(query, MutableMapping):
        return
    for start_name, end_name in WINDOWS:
        start, end = _instant(query.get(start_name)), _instant(query.get(end_name))
        if start is not None and end is not None and end < start:
            query[start_name], query[end_name] = query[end_name], query[start_name]
            start, end = end, start
        if case.path.endswith("/timeseries") and start is not None and end is not None:
            granularity = query.get("granularity") or query.get("interval") or "DAILY"
            per_bucket = BUCKET_DAYS.get(granularity, 1) if isinstance(granularity, str) else 1
            if (end - start).days / per_bucket > MAX_BUCKETS:
                query[start_name] = query[end_name]  # one bucket: always within the limit


def _fresh_idempotency_key(case: Any) -> None:
    headers = case.headers
    if isinstance(headers, MutableMapping):  # a case-insensitive dict
        for name, value in headers.items():
            if name.lower() == "idempotency-key" and isinstance(value, str) and IDEMPOTENCY_KEY.match(value):
                headers[name] = uuid.uuid4().hex


def _reachable_webhook_url(case: Any) -> None:
    body = case.body
    if case.path.startswith("/webhooks") and isinstance(body, MutableMapping) and isinstance(body.get("url"), str):
        try:
            parts = urlsplit(body["url"])
        except ValueError:
            return  # not a URL at all: the service must refuse it as it is
        body["url"] = urlunsplit(parts._replace(netloc=UNREACHABLE_RECEIVER))


PER_PLATFORM_LISTS = ("platformTexts", "platformFirstComments")


def _one_item_per_platform(case: Any) -> None:
    body = case.body
    for name in PER_PLATFORM_LISTS:
        items = body.get(name) if isinstance(body, MutableMapping) else None
        if not isinstance(items, list):
            continue
        seen: set[Any] = set()
        kept = []
        for item in items:
            key = item.get("platform") if isinstance(item, MutableMapping) else None
            if not isinstance(key, str) or key not in seen:
                kept.append(item)
            if isinstance(key, str):
                seen.add(key)
        body[name] = kept


def _tests_a_missing_parameter(case: Any) -> bool:
    data = getattr(getattr(case.meta, "phase", None), "data", None)
    return str(getattr(data, "scenario", "")) == "missing_parameter"


@schemathesis.hook
def before_call(ctx: Any, case: Any, **kwargs: Any) -> None:
    if _tests_a_missing_parameter(case):
        # Left exactly as generated: schemathesis adds the -H headers (Authorization) back to a
        # case a hook changed, which would spoil a case that leaves out a required header.
        return
    _order_windows(case)
    _fresh_idempotency_key(case)
    _reachable_webhook_url(case)
    _one_item_per_platform(case)
