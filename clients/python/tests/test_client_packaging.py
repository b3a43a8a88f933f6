"""What the package ships beside the code: the platform capabilities (the MCP resources) equal
the service's own table, and the CLI's credentials file is private."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from crosspost import config
from crosspost.mcp_server import capabilities
from server_capabilities import server_capabilities


def test_shipped_capabilities_equal_the_service_table() -> None:
    assert capabilities() == server_capabilities(), "regenerate clients/python/crosspost/capabilities.json"


def test_credentials_file_is_created_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSPOST_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.delenv("CROSSPOST_API_KEY", raising=False)
    monkeypatch.delenv("CROSSPOST_BASE_URL", raising=False)
    path = config.save("key_a_b", "https://host/api/v1/", None)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert config.resolve() == {"api_key": "key_a_b", "base_url": "https://host/api/v1", "workspace_id": None}
    monkeypatch.setenv("CROSSPOST_API_KEY", "key_env")
    assert config.resolve()["api_key"] == "key_env"
    assert config.remove() and not path.exists()
