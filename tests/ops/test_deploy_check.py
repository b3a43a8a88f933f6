"""`manage.py check --deploy` is clean with the production environment that .env.example
documents (its `# NAME=value` lines; placeholders in <...> get generated values)."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

from cryptography.fernet import Fernet
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
DOCUMENTED = re.compile(r"^#\s*([A-Z][A-Z0-9_]*)=(\S*)")


def documented_environment() -> dict[str, str]:
    values = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        match = DOCUMENTED.match(line)
        if match and "<" not in match.group(2):
            values.setdefault(match.group(1), match.group(2))
    return values


def test_the_documented_production_environment_passes_the_deploy_check(tmp_path):
    documented = documented_environment()
    assert documented["PLATFORM_MODE"] == "live"
    assert documented["DEBUG"] == "0"
    # What a deployment must generate itself (the file shows how, in <...>):
    generated = {
        "SECRET_KEY": secrets.token_urlsafe(50),
        "FERNET_KEYS": Fernet.generate_key().decode(),
        "METRICS_TOKEN": secrets.token_urlsafe(32),
    }
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
        "CROSSPOST_VAR_DIR": str(tmp_path),  # its metrics and static directories, not the checkout's
        **documented,
        **generated,
        "STATIC_ROOT": str(tmp_path / "static"),
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
        "MEDIA_ROOT": str(tmp_path / "media"),
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "DEBUG"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout
