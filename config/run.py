"""``make run``: embedded servers if needed, migrations, a demo workspace and key, then web +
worker + beat in the foreground. Ctrl-C (or SIGTERM) stops the three processes gracefully
(workers finish or requeue their tasks: acks are late) and then the embedded servers this
command started (ones already running, e.g. for a test run, are left alone)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import django

from config import embedded

BASE_DIR = Path(__file__).resolve().parent.parent


def _env() -> dict[str, str]:
    """The children's environment. The platform mode is the settings' decision (sandbox on the
    embedded default, live with DATABASE_URL/REDIS_URL set, or PLATFORM_MODE), read here and passed
    on, never forced; live settings missing their secrets stop the run here, before anything starts."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.conf import settings  # noqa: PLC0415 -- after DJANGO_SETTINGS_MODULE is set

    os.environ["PLATFORM_MODE"] = settings.PLATFORM_MODE
    if settings.SANDBOX:
        os.environ.setdefault("WEBHOOK_ALLOW_PRIVATE_URLS", "1")
    return dict(os.environ)


def _demo_key() -> str:
    """Reuse the demo key kept under var/ while it is still valid; otherwise mint a new one."""
    django.setup()
    # The apps' modules load their models, which needs the set-up above.
    from workspaces.principal import resolve_principal  # noqa: PLC0415 -- see above
    from workspaces.services import api_key_create, workspace_get_or_create  # noqa: PLC0415 -- see above

    key_file = embedded.VAR_DIR / "demo-api-key"
    if key_file.exists():
        saved = key_file.read_text().strip()
        if resolve_principal(f"Bearer {saved}") is not None:
            return saved
    workspace = workspace_get_or_create(name="Demo")
    issued = api_key_create(workspace=workspace, name="demo admin key (make run)", role="admin")
    key_file.write_text(issued.plaintext + "\n")
    key_file.chmod(0o600)
    return issued.plaintext


def metrics_line(base: str, *, sandbox: bool) -> str:
    """Where /metrics answers and how to ask (core.metrics): the token itself is never printed."""
    if sandbox:
        return f"{base}/metrics (open from this machine; elsewhere: Authorization: Bearer $METRICS_TOKEN)"
    return f"{base}/metrics (Authorization: Bearer $METRICS_TOKEN)"


def fresh_metrics_dir(env: dict[str, str]) -> Path:
    """The run's Prometheus directory, emptied: files of an earlier run's processes would be
    added to this run's figures."""
    directory = Path(env.get("PROMETHEUS_MULTIPROC_DIR") or embedded.VAR_DIR / "metrics" / "run")
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    return directory


def start_children(commands: dict[str, list[str]], env: dict[str, str]) -> dict[str, subprocess.Popen[bytes]]:
    """Each child in a process group of its own: a terminal's Ctrl-C then reaches only this
    supervisor, which passes exactly one SIGTERM to each child. Had the children shared the
    terminal's group, each would get the terminal's SIGINT and then a second signal (ours, or
    gunicorn's master forwarding it to its workers); gunicorn's gthread worker can deadlock in
    its own quit handler when a second signal lands inside the first, and then hangs until its
    master kills it after the graceful timeout."""
    # Out of the terminal's foreground group a child must never read the terminal (it would be
    # stopped by SIGTTIN): none of them needs stdin.
    return {
        name: subprocess.Popen(command, cwd=BASE_DIR, env=env, process_group=0, stdin=subprocess.DEVNULL)
        for name, command in commands.items()
    }


def catch_stop_signals() -> threading.Event:
    """From here on SIGINT and SIGTERM only ask ``supervise`` to stop. Installed before the
    children start, so a Ctrl-C between the two cannot leave children running."""
    stop_requested = threading.Event()
    signal.signal(signal.SIGINT, lambda signum, frame: stop_requested.set())
    signal.signal(signal.SIGTERM, lambda signum, frame: stop_requested.set())
    return stop_requested


def supervise(
    children: dict[str, subprocess.Popen[bytes]], stop_requested: threading.Event, grace_seconds: float = 30.0
) -> int:
    """Wait until a stop is requested (or a child exits on its own), then stop every child with
    one SIGTERM and wait for it: 0 when asked to stop, 1 when a child exited by itself. A child
    still running after ``grace_seconds`` is killed."""
    exit_code = 0
    while not stop_requested.is_set():
        for name, child in children.items():
            if child.poll() is not None:
                print(f"{name} exited with {child.returncode}; stopping the rest", flush=True)
                exit_code = 1
                stop_requested.set()
        stop_requested.wait(0.2)
    for child in children.values():
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace_seconds
    for name, child in children.items():
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            print(f"{name} did not stop within {grace_seconds:.0f} s; killing it", flush=True)
            child.kill()
            child.wait()
    return exit_code


def main() -> int:
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
    # The admin's and the API reference's files, served by WhiteNoise from the web process.
    subprocess.run([python, "manage.py", "collectstatic", "--no-input", "-v", "0"], cwd=BASE_DIR, env=env, check=True)
    env["PROMETHEUS_MULTIPROC_DIR"] = str(fresh_metrics_dir(env))
    key = _demo_key()
    port = env.get("PORT", "8000")
    # Every process logs at LOG_LEVEL (INFO unless set): publishes, retries and deliveries each
    # leave a line. gunicorn reads it from the settings (config/gunicorn.py).
    log_level = env.get("LOG_LEVEL", "INFO")
    base = env.get("PUBLIC_BASE_URL", f"http://127.0.0.1:{port}")
    procs = {
        "web": [
            python,
            "-m",
            "gunicorn",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            env.get("WEB_CONCURRENCY", "2"),
            "--graceful-timeout",
            "20",
        ],
        # --quiet: no plain-text banner; each process logs its start as a JSON line instead.
        "worker": [
            python,
            "-m",
            "celery",
            "--quiet",
            "-A",
            "config",
            "worker",
            "-Q",
            "publish,webhooks,analytics,default",
            "--concurrency",
            env.get("WORKER_CONCURRENCY", "4"),
            "--loglevel",
            log_level,
            "-n",
            f"worker-{port}@%h",
        ],
        # Media fitting (mediaFit auto) on its own worker, so a long re-encode never delays publishing.
        "worker-media": [
            python,
            "-m",
            "celery",
            "--quiet",
            "-A",
            "config",
            "worker",
            "-Q",
            "media",
            "--concurrency",
            env.get("MEDIA_WORKER_CONCURRENCY", "1"),
            "--loglevel",
            log_level,
            "-n",
            f"media-{port}@%h",
        ],
        "beat": [
            python,
            "-m",
            "celery",
            "--quiet",
            "-A",
            "config",
            "beat",
            "--loglevel",
            log_level,
            "--schedule",
            str(embedded.VAR_DIR / "celerybeat-schedule"),
        ],
    }
    stop_requested = catch_stop_signals()
    children = start_children(procs, env)
    print(
        f"\nCrosspost is running (sandbox platforms: {env['PLATFORM_MODE'] == 'sandbox'})\n"
        f"  base URL:  {base}/api/v1\n"
        f"  OpenAPI:   {base}/api/v1/openapi.json\n"
        f"  API docs:  {base}/api/v1/docs/ (Swagger UI), {base}/api/v1/redoc/\n"
        f"  admin:     {base}/admin/ (dashboard: {base}/admin/dashboard/; a login: manage.py createsuperuser)\n"
        f"  metrics:   {metrics_line(base, sandbox=env['PLATFORM_MODE'] == 'sandbox')}\n"
        f"  demo workspace admin API key:\n{key}\n",
        flush=True,
    )
    exit_code = supervise(children, stop_requested)
    if ours:
        embedded.stop(only=ours)
    print("stopped", flush=True)
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
