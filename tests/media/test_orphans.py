"""Objects in storage that no media file row names (a worker killed between its write to
storage and its database commit) are collected once their grace period has passed; everything a
row names, and everything not written by this app, stays."""

from __future__ import annotations

import datetime as dt
import io
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from botocore.exceptions import ClientError
from django.conf import settings as django_settings
from django.db import connection
from django.utils import timezone

from media.files import new_key
from media.lifecycle import ORPHAN_GRACE, collect_orphans
from media.models import AiJobStatus, MediaFile
from media.storage import get_media_storage
from media.tasks import collect_orphans as collect_orphans_task
from tests.factories.media import AiImageJobFactory, MediaFileFactory

LATER = ORPHAN_GRACE + dt.timedelta(hours=1)

# A worker that dies (SIGKILL: no cleanup runs) after the image is written to storage and before
# the transaction that records it commits.
DIE_BEFORE_COMMIT = """
import os, signal, sys
import django
django.setup()
import media.ai.services as services
services.emit_event = lambda **kwargs: os.kill(os.getpid(), signal.SIGKILL)
services.ai_image_job_run(job_id=sys.argv[1])
"""


def _worker_env(media_root: Path) -> dict[str, str]:
    """This test's database and media directory, for a process started outside pytest."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    database_url = urlunsplit((parts.scheme, parts.netloc, f"/{connection.settings_dict['NAME']}", parts.query, ""))
    drop = ("PYTEST", "TEST_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(DATABASE_URL=database_url, MEDIA_ROOT=str(media_root), STORAGE="local", AI_IMAGE_PROVIDER="offline")
    return env


def files_under(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


@pytest.mark.django_db(transaction=True)
def test_an_ai_image_left_by_a_killed_worker_is_collected_after_its_grace(workspace, local_media: Path) -> None:
    job = AiImageJobFactory(workspace=workspace)
    worker = subprocess.run(
        [sys.executable, "-c", DIE_BEFORE_COMMIT, job.id],
        cwd=django_settings.BASE_DIR,
        env=_worker_env(local_media),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert worker.returncode == -9, worker.stderr
    [orphan] = files_under(local_media)
    assert orphan.startswith(f"{workspace.id}/") and orphan.endswith("/ai-image.png")
    assert not MediaFile.objects.exists()
    job.refresh_from_db()
    assert job.status == AiJobStatus.PROCESSING  # its lease will expire and the job run again

    assert collect_orphans() == 0  # within the grace period: maybe still on its way to a commit
    assert files_under(local_media) == [orphan]
    assert collect_orphans_task.run() == 0
    later = timezone.now() + LATER
    assert collect_orphans(now=later) == 1
    assert files_under(local_media) == []
    assert collect_orphans(now=later) == 0


@pytest.mark.django_db
def test_what_a_row_names_and_what_is_not_ours_stays(workspace, local_media: Path) -> None:
    storage = get_media_storage()
    row = MediaFileFactory(workspace=workspace, uploaded=True)
    pending_preview = MediaFileFactory(workspace=workspace, uploaded=True)
    orphan = new_key(workspace_id=workspace.id, file_name="lost.png")
    for key in (row.key, f"{row.key}.preview.webp", pending_preview.key, f"{pending_preview.key}.preview.webp", orphan):
        storage.save(key, io.BytesIO(b"bytes"), content_type="image/png")
    MediaFile.objects.filter(id=row.id).update(preview_key=f"{row.key}.preview.webp")
    foreign = local_media / "backups" / "dump.sql"
    foreign.parent.mkdir(parents=True)
    foreign.write_bytes(b"not ours")

    assert collect_orphans(now=timezone.now() + LATER) == 1
    assert orphan not in files_under(local_media)
    assert set(files_under(local_media)) == {
        row.key,
        f"{row.key}.preview.webp",
        pending_preview.key,
        f"{pending_preview.key}.preview.webp",
        "backups/dump.sql",
    }


@pytest.mark.django_db
def test_orphans_on_s3(workspace, s3) -> None:
    storage = get_media_storage()
    row = MediaFileFactory(workspace=workspace, uploaded=True)
    orphan = new_key(workspace_id=workspace.id, file_name="lost.png")
    for key in (row.key, orphan):
        storage.save(key, io.BytesIO(b"bytes"), content_type="image/png")
    assert collect_orphans() == 0
    assert collect_orphans(now=timezone.now() + LATER) == 1
    s3.client.head_object(Bucket=s3.bucket, Key=row.key)
    with pytest.raises(ClientError):
        s3.client.head_object(Bucket=s3.bucket, Key=orphan)
    assert collect_orphans(now=timezone.now() + LATER) == 0
