from __future__ import annotations

from collections.abc import Callable

import pytest

from platforms.base import PlatformClient
from posts.pipeline import publisher


@pytest.fixture
def use_client(monkeypatch: pytest.MonkeyPatch) -> Callable[[PlatformClient], PlatformClient]:
    """Route every platform call of the pipeline to the given (scripted) client."""

    def install(client: PlatformClient) -> PlatformClient:
        monkeypatch.setattr(publisher.registry, "get_client", lambda platform: client)
        return client

    return install
