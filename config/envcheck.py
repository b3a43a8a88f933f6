"""Settings that take one of a fixed set of values are checked when the settings load, so a
typo stops the process at start-up with a message naming the setting and what it accepts,
instead of surfacing later as a 500 or being read silently as a default."""

from __future__ import annotations

from collections.abc import Sequence

import environ

_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


def choice(env: environ.Env, name: str, allowed: Sequence[str], default: str) -> str:
    """The value of ``name`` (``default`` when unset), which must be one of ``allowed``."""
    value = env.str(name, default=default)
    if value not in allowed:
        raise environ.ImproperlyConfigured(f"{name} must be one of: {', '.join(allowed)} (got {value!r})")
    return value


def flag(env: environ.Env, name: str, default: bool) -> bool:
    """A boolean setting; anything but true/false/1/0/yes/no/on/off (any case) is refused, where
    django-environ would read it as false."""
    raw = env.str(name, default="").strip().lower()
    if not raw:
        return default
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise environ.ImproperlyConfigured(f"{name} must be one of: {', '.join(_TRUE + _FALSE)} (got {raw!r})")


def required_in_live(env: environ.Env, name: str, *, sandbox_value: str = "", listed: bool = False) -> str:
    """The value of ``name``, which live mode requires: unset or blank, or (``sandbox_value``)
    the sandbox's published value, stops start-up with a message naming the variable. With
    ``listed``, the value is a comma-separated list and no item may be the sandbox's value.
    (django-environ's own message would not say why, and it lets an empty value through.)"""
    value = env.str(name, default="").strip()
    items = [item.strip() for item in value.split(",") if item.strip()] if listed else [value] if value else []
    if not items:
        raise environ.ImproperlyConfigured(
            f"{name} must be set in live mode (PLATFORM_MODE=live); sandbox defaults never apply there"
        )
    if sandbox_value and sandbox_value in items:
        raise environ.ImproperlyConfigured(
            f"{name} holds the sandbox's published value; live mode (PLATFORM_MODE=live) needs its own"
        )
    return value
