"""Identifiers: URL-safe strings with a type prefix, e.g. ``post_9f2c…``."""

from __future__ import annotations

import secrets


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}"


def id_factory(prefix: str):  # type: ignore[no-untyped-def]
    """A callable for a model field default (migrations need a module-level reference)."""
    return _IdFactory(prefix)


class _IdFactory:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def __call__(self) -> str:
        return new_id(self.prefix)

    def deconstruct(self) -> tuple[str, tuple[str], dict[str, str]]:
        return ("core.ids._IdFactory", (self.prefix,), {})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _IdFactory) and other.prefix == self.prefix

    def __hash__(self) -> int:
        return hash(self.prefix)
