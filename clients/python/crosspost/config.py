"""Where the CLI and the MCP server find their credentials: ``CROSSPOST_API_KEY`` /
``CROSSPOST_BASE_URL`` / ``CROSSPOST_WORKSPACE_ID`` first, then the file ``auth login`` wrote
(``config.json`` in the user's config directory, or ``$CROSSPOST_CONFIG_DIR``), mode 0600."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from platformdirs import user_config_dir

from crosspost._http import DEFAULT_BASE_URL
from crosspost.client import Client
from crosspost.errors import ConfigurationError


def config_path() -> Path:
    directory = os.environ.get("CROSSPOST_CONFIG_DIR") or user_config_dir("crosspost")
    return Path(directory) / "config.json"


def load() -> dict[str, Any]:
    path = config_path()
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except ValueError as exc:
        raise ConfigurationError(f"{path} is not valid JSON; run `crosspost auth login` again") from exc
    return data if isinstance(data, dict) else {}


def save(api_key: str, base_url: str, workspace_id: str | None) -> Path:
    """Write the credentials readable by the user alone (created 0600, never widened)."""
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = {"apiKey": api_key, "baseUrl": base_url.rstrip("/"), "workspaceId": workspace_id}
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(data, handle)
    os.chmod(path, 0o600)
    return path


def remove() -> bool:
    path = config_path()
    if path.exists():
        path.unlink()
        return True
    return False


def resolve() -> dict[str, Any]:
    stored = load()
    api_key = os.environ.get("CROSSPOST_API_KEY") or stored.get("apiKey")
    if not api_key:
        raise ConfigurationError("not logged in: run `crosspost auth login` or set CROSSPOST_API_KEY")
    return {
        "api_key": api_key,
        "base_url": os.environ.get("CROSSPOST_BASE_URL") or stored.get("baseUrl") or DEFAULT_BASE_URL,
        "workspace_id": os.environ.get("CROSSPOST_WORKSPACE_ID") or stored.get("workspaceId"),
    }


def client(**options: Any) -> Client:
    return Client(**resolve(), **options)
