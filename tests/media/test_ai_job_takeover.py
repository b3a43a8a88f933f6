"""A worker whose lease on an image job ran out while the provider was still working: another
worker took the job over and finished it. The late worker's result changes nothing, and the job
still emits exactly one ``image.*`` event."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from media.ai.offline import OfflineRenderer
from media.ai.providers import GeneratedImage, ProviderError
from media.ai.services import ai_image_job_run
from media.models import AiImageJob, MediaFile
from tests.factories.media import AiImageJobFactory
from webhooks.models import Event

pytestmark = pytest.mark.django_db


class _SlowFirstWorker:
    """The provider as the first worker sees it: while it is still generating, its lease runs
    out and a second worker runs the job to the end; then the first call returns ``outcome``."""

    def __init__(self, job_id: str, outcome: str) -> None:
        self.job_id = job_id
        self.outcome = outcome
        self.calls = 0
        self.takeover_status = ""

    def generate(self, *, prompt: str, aspect_ratio: str) -> GeneratedImage:
        self.calls += 1
        if self.calls == 1:
            AiImageJob.objects.filter(id=self.job_id).update(lease_until=timezone.now() - dt.timedelta(seconds=1))
            self.takeover_status = ai_image_job_run(job_id=self.job_id).status
            if self.outcome == "error":
                raise ProviderError("AI image provider rejected the request: too late")
        return OfflineRenderer().generate(prompt=prompt, aspect_ratio=aspect_ratio)


def _events(workspace: Any) -> list[dict[str, Any]]:
    return [json.loads(e.payload) for e in Event.objects.filter(workspace=workspace)]


@pytest.mark.parametrize("late_outcome", ["image", "error"])
def test_a_late_worker_adds_no_event_and_no_file(
    workspace: Any, local_media: Path, monkeypatch: pytest.MonkeyPatch, late_outcome: str
) -> None:
    job = AiImageJobFactory(workspace=workspace)
    provider = _SlowFirstWorker(job.id, late_outcome)
    monkeypatch.setattr("media.ai.services.get_provider", lambda: provider)

    late = ai_image_job_run(job_id=job.id)

    assert provider.takeover_status == "completed"
    assert late.status == "completed"  # the job's status, left as the second worker set it
    job.refresh_from_db()
    media = MediaFile.objects.get()
    assert (job.status, job.image_id, job.error, job.attempts) == ("completed", media.id, "", 2)
    events = _events(workspace)
    assert [e["event"] for e in events] == ["image.completed"]
    assert events[0]["data"]["image"]["imageId"] == media.id
    # The late worker's upload was removed: only the kept image is in storage.
    stored = [p for p in local_media.rglob("*") if p.is_file()]
    assert stored == [local_media / media.key]
