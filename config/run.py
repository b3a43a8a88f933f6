"""``make run``: embedded servers if needed, migrations, a demo workspace and key, then web +
worker + beat in the foreground. Ctrl-C (or SIGTERM) stops the three processes gracefully
(workers finish or requeue their tasks: acks are late) and then the embedded servers this
command started (ones already running, e.g. for a test run, are left alone)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


def _env() -> dict[str, str]:
    os.environ.setdefault("PLATFORM_MODE", "sandbox")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if os.environ["PLATFORM_MODE"] == "sandbox":
        os.environ.setdefault("WEBHOOK_ALLOW_PRIVATE_URLS", "1")
    return dict(os.environ)


def _demo_key() -> str:
    """Reuse the demo key kept under var/ while it is still valid; otherwise mint a new one."""
    import django

    django.setup()
    from config.embedded import VAR_DIR
    from workspaces.principal import resolve_principal
    from workspaces.services import api_key_create, workspace_get_or_create

    key_file = VAR_DIR / "demo-api-key"
    if key_file.exists():
        saved = key_file.read_text().strip()
        if resolve_principal(f"Bearer {saved}") is not None:
            return saved
    workspace = workspace_get_or_create(name="Demo")
    issued = api_key_create(workspace=workspace, name="demo admin key (make run)", role="admin")
    key_file.write_text(issued.plaintext + "\n")
    key_file.chmod(0o600)
    return issued.plaintext


def main() -> int:
    from config import embedded

    env = _env()
    already_up = embedded.running()
    configured = embedded.ensure_services()
    env.update(configured)
    # Stop on exit only the embedded servers this command started: a test run or a second
    # command of this checkout may be using ones that were already up.
    ours = ({"postgres"} if "DATABASE_URL" in configured else set()) | (
        {"redis"} if "REDIS_URL" in configured else set()
    )
    ours -= already_up
    python = sys.executable
    subprocess.run([python, "manage.py", "migrate", "--no-input", "-v", "0"], cwd=BASE_DIR, env=env, check=True)
    key = _demo_key()
    port = env.get("PORT", "8000")
    base = env.get("PUBLIC_BASE_URL", f"http://127.0.0.1:{port}")
    procs = {
        "web": [
            python,
            "-m",
            "gunicorn",
            "config.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            env.get("WEB_CONCURRENCY", "2"),
            "--threads",
            "8",
            "--worker-class",
            "gthread",
            "--graceful-timeout",
            "20",
            "--access-logfile",
            "-",
        ],
        "worker": [
            python,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-Q",
            "publish,webhooks,analytics,default",
            "--concurrency",
            env.get("WORKER_CONCURRENCY", "4"),
            "--loglevel",
            env.get("WORKER_LOG_LEVEL", "WARNING"),
            "-n",
            f"worker-{port}@%h",
        ],
        "beat": [
            python,
            "-m",
            "celery",
            "-A",
            "config",
            "beat",
            "--loglevel",
            "WARNING",
            "--schedule",
            str(embedded.VAR_DIR / "celerybeat-schedule"),
        ],
    }
    children = {name: subprocess.Popen(cmd, cwd=BASE_DIR, env=env) for name, cmd in procs.items()}
    print(
        f"\nCrosspost is running (sandbox platforms: {env['PLATFORM_MODE'] == 'sandbox'})\n"
        f"  base URL:  {base}/api/v1\n"
        f"  OpenAPI:   {base}/api/v1/openapi.json\n"
        f"  demo workspace admin API key:\n{key}\n",
        flush=True,
    )
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    exit_code = 0
    while not stopping:
        for name, child in children.items():
            if child.poll() is not None:
                print(f"{name} exited with {child.returncode}; stopping the rest", flush=True)
                exit_code = 1
                stopping = True
        time.sleep(0.5)
    for child in children.values():
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 30
    for child in children.values():
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
    if ours:
        embedded.stop(only=ours)
    print("stopped", flush=True)
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
