"""API key secrets are letters and digits (issue 28 item 11): a redaction that keeps everything up
to a key's last ``_`` plus four characters shows four characters of the secret, not most of it.
Keys issued before, whose secrets hold ``_`` and ``-``, keep working."""

from __future__ import annotations

import re
from typing import Any

import pytest
from rest_framework.test import APIClient

from core.logs import redact
from workspaces.models import ApiKey
from workspaces.services import api_key_create, api_key_revoke, hash_secret, split_key

pytestmark = [pytest.mark.django_db]

NEW_KEY = re.compile(r"^cpk_[0-9a-f]{16}_[A-Za-z0-9]{43}$")
# A secret token_urlsafe(32) could have given, with both of the characters new secrets leave out.
OLD_SECRET = "Zm9v_YmFy-YmF6_cXV4-cXV1eA_x-Yy1ZWs2TXdfQ2h"


def _published_cli_redaction(key: str) -> str:
    """What the published CLI shows of a key in ``doctor`` and ``whoami``."""
    cut = key.rindex("_") + 1
    return key[: cut + 4] + "…"


def test_new_secrets_are_letters_and_digits_so_a_redacted_key_shows_four_of_them(workspace: Any) -> None:
    keys = [api_key_create(workspace=workspace, name=f"k{n}", role="viewer").plaintext for n in range(50)]
    assert all(NEW_KEY.match(key) for key in keys), [key for key in keys if not NEW_KEY.match(key)]
    for key in keys:
        public_part, secret = key.rsplit("_", 1)
        assert _published_cli_redaction(key) == f"{public_part}_{secret[:4]}…"
    assert len(set(keys)) == len(keys)


def _old_style_key(workspace: Any) -> str:
    ApiKey.objects.create(
        workspace=workspace,
        name="from before",
        role="admin",
        lookup="0123456789abcdef",
        secret_hash=hash_secret(OLD_SECRET),
    )
    return f"cpk_0123456789abcdef_{OLD_SECRET}"


def test_keys_whose_secret_holds_underscores_and_dashes_keep_working(workspace: Any) -> None:
    old = _old_style_key(workspace)
    assert split_key(old) == ("0123456789abcdef", OLD_SECRET)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {old}")
    response = client.get("/api/v1/me")
    assert response.status_code == 200 and response.json()["tokenType"] == "api_token"
    wrong = APIClient()
    wrong.credentials(HTTP_AUTHORIZATION=f"Bearer {old[:-1]}_")
    assert wrong.get("/api/v1/me").status_code == 401
    api_key_revoke(key_or_public_part=old)
    assert client.get("/api/v1/me").status_code == 401


def test_a_new_key_works_and_a_changed_character_does_not(workspace: Any) -> None:
    key = api_key_create(workspace=workspace, name="new", role="viewer").plaintext
    good, bad = APIClient(), APIClient()
    good.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    bad.credentials(HTTP_AUTHORIZATION=f"Bearer {key[:-1]}{'a' if key[-1] != 'a' else 'b'}")
    assert good.get("/api/v1/me").status_code == 200
    assert bad.get("/api/v1/me").status_code == 401


@pytest.mark.parametrize("secret", [OLD_SECRET, "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfG"])
def test_the_log_redaction_masks_the_whole_secret_of_old_and_new_keys(secret: str) -> None:
    key = f"cpk_0123456789abcdef_{secret}"
    pieces = [piece for piece in re.split(r"[_-]", secret) if len(piece) >= 4]
    for text in (key, f'{{"key": "{key}"}}', f"bad key {key}.", f"Authorization: Bearer {key}"):
        masked = redact(text)
        assert not any(piece in masked for piece in pieces), masked
        assert "Bearer" in text or "cpk_0123456789abcdef_[redacted]" in masked  # the public part stays
