"""What both key-minting commands (workspace and organization keys) take beyond their owner:
a rate limit and an expiry, checked before anything is written."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils import timezone


def add_limit_arguments(parser: CommandParser) -> None:
    parser.add_argument("--rate-limit", type=int, default=None, help="requests per 60 s window")
    parser.add_argument("--expires-in-days", type=int, default=None)


def limits_from(options: dict[str, Any]) -> tuple[int | None, dt.datetime | None]:
    """The key's rate limit and expiry instant; a CommandError for a number below 1."""
    if options["rate_limit"] is not None and options["rate_limit"] < 1:
        raise CommandError("--rate-limit must be at least 1")
    days = options["expires_in_days"]
    if days is not None and days < 1:
        raise CommandError("--expires-in-days must be at least 1")
    return options["rate_limit"], None if days is None else timezone.now() + dt.timedelta(days=days)
