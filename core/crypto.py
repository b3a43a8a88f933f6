"""Encryption at rest for secrets we must be able to read back (platform tokens, webhook
secrets): Fernet with the keys of ``FERNET_KEYS``; the first encrypts, every key decrypts, so
keys rotate without downtime (``manage.py rotate_encryption_keys`` re-encrypts rows)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.db import models


@lru_cache(maxsize=4)
def _fernet(keys: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(key.encode()) for key in keys])


def fernet() -> MultiFernet:
    return _fernet(tuple(settings.FERNET_KEYS))


def encrypt(plaintext: str) -> str:
    return fernet().encrypt(plaintext.encode()).decode()


def decrypt(token: str) -> str:
    return fernet().decrypt(token.encode()).decode()


def rotate(token: str) -> str:
    """Re-encrypt with the current primary key."""
    return fernet().rotate(token.encode()).decode()


class EncryptedTextField(models.TextField):
    """A text column stored as Fernet ciphertext; Python code sees the plaintext."""

    def from_db_value(self, value: str | None, expression: Any, connection: Any) -> str | None:
        if value is None or value == "":
            return value
        try:
            return decrypt(value)
        except InvalidToken as exc:
            raise ValueError("cannot decrypt column: no configured FERNET_KEYS key matches") from exc

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        if value is None or value == "":
            return value
        return encrypt(str(value))
