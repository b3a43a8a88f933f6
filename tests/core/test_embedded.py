"""The embedded default (config/embedded.py): real PostgreSQL and Redis under a var/ directory,
whose data survives a stop and a restart; and ``make run``'s demo key, kept under var/."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from config import embedded, run
from workspaces.models import ApiKey, Workspace
from workspaces.principal import resolve_principal
from workspaces.services import api_key_revoke

PHASE = """
import sys
import psycopg, redis
from config import embedded

phase = sys.argv[1]
assert embedded.running() == set(), embedded.running()
embedded.ensure_services()
assert embedded.running() == {"postgres", "redis"}
with psycopg.connect(host=str(embedded.PG_DIR), user="postgres", dbname=embedded.DATABASE_NAME) as db:
    if phase == "write":
        db.execute("CREATE TABLE kept (v text)")
        db.execute("INSERT INTO kept VALUES ('row written before the restart')")
    else:
        print(db.execute("SELECT v FROM kept").fetchone()[0])
cache = redis.Redis(unix_socket_path=str(embedded.REDIS_SOCKET))
if phase == "write":
    cache.set("kept", "key written before the restart")
else:
    print(cache.get("kept").decode())
embedded.stop()
assert embedded.running() == set(), embedded.running()
"""


@pytest.fixture
def var_dir() -> Iterator[Path]:
    # Under the checkout's var/ rather than pytest's tmp_path: as root, pgserver runs PostgreSQL
    # as its own system user, which cannot enter pytest's private (0700) temporary directories.
    path = Path(settings.BASE_DIR) / "var" / f"embedded-test-{uuid.uuid4().hex[:8]}"
    path.mkdir(parents=True)
    yield path
    env = {**os.environ, "CROSSPOST_VAR_DIR": str(path)}
    subprocess.run([sys.executable, "-c", "from config import embedded; embedded.stop()"], env=env, timeout=120)
    shutil.rmtree(path, ignore_errors=True)


def _phase(var_dir: Path, phase: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["CROSSPOST_VAR_DIR"] = str(var_dir)
    done = subprocess.run(
        [sys.executable, "-c", PHASE, phase],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


@pytest.mark.xdist_group("embedded")
def test_data_under_var_survives_a_stop_and_a_restart(var_dir: Path) -> None:
    assert _phase(var_dir, "write") == []
    assert _phase(var_dir, "read") == ["row written before the restart", "key written before the restart"]
    assert (var_dir / "pg" / "PG_VERSION").exists() and (var_dir / "redis").is_dir()


@pytest.mark.django_db
def test_make_run_keeps_its_demo_key_until_it_stops_working(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second ``make run`` prints the same key (so scripts keep working); a revoked key is
    replaced by a new one, never printed again."""
    monkeypatch.setattr(embedded, "VAR_DIR", tmp_path)
    first = run._demo_key()
    assert resolve_principal(f"Bearer {first}") is not None
    assert (tmp_path / "demo-api-key").read_text().strip() == first
    assert oct((tmp_path / "demo-api-key").stat().st_mode & 0o777) == "0o600"
    assert run._demo_key() == first
    assert ApiKey.objects.count() == 1

    api_key_revoke(key_or_public_part=first)
    second = run._demo_key()
    assert second != first and resolve_principal(f"Bearer {second}") is not None
    assert ApiKey.objects.filter(revoked_at__isnull=True).get().workspace == Workspace.objects.get(name="Demo")
    assert ApiKey.objects.get(revoked_at__isnull=True).role == "admin"
