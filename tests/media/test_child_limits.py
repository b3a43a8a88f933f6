"""The probe and fit children are limited by CPU time, with a wall-clock backstop (issue 34): a
child over its CPU budget is stopped with a reason naming the limit, a child that waits longer
than its CPU budget (a loaded machine, a slow read) but under the backstop finishes, and the
fit task fails a variant whose child its CPU limit stopped."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from media.children import Limits, run_child
from media.fitting import fit_limits
from media.models import VariantStatus
from media.probing import probe_limits
from media.storage import get_media_storage
from media.tasks import fit_media
from tests.factories.media import MediaFileFactory
from tests.media import corpus
from webhooks.models import Event

ROOT = Path(__file__).resolve().parents[2]
LIMITED = "from media.children import limit_own_cpu\nlimit_own_cpu(99)\n"
SPIN = LIMITED + "while True:\n    pass\n"
WAIT = LIMITED + "import time\ntime.sleep({seconds})\nprint('done', end='')\n"


def _run(code: str, limits: Limits) -> bytes:
    with open(__file__, "rb") as stdin:  # any file: these children do not read it
        return run_child([sys.executable, "-c", code], stdin=stdin, cwd=ROOT, limits=limits)


def _limits(cpu_seconds: int, wall_seconds: float) -> Limits:
    return Limits("the fit", cpu_seconds, wall_seconds, "MEDIA_FIT_CPU_SECONDS", "MEDIA_FIT_WALL_SECONDS")


@pytest.mark.parametrize(
    ("limits_of", "cpu", "wall", "what"),
    [
        (probe_limits, "MEDIA_PROBE_CPU_SECONDS", "MEDIA_PROBE_WALL_SECONDS", "the probe"),
        (fit_limits, "MEDIA_FIT_CPU_SECONDS", "MEDIA_FIT_WALL_SECONDS", "the fit"),
    ],
)
def test_a_child_over_its_cpu_budget_is_stopped_with_a_reason_naming_the_limit(
    limits_of: Any, cpu: str, wall: str, what: str
) -> None:
    with override_settings(**{cpu: 1, wall: 600}):
        limits = limits_of()
    with pytest.raises(ValueError, match="stopped") as stopped:
        _run(SPIN, limits)
    assert str(stopped.value) == f"{what} was stopped by its CPU-time limit of 1 s ({cpu})"


def test_a_child_that_waits_longer_than_its_cpu_budget_but_under_the_backstop_finishes() -> None:
    assert _run(WAIT.format(seconds=3), _limits(cpu_seconds=1, wall_seconds=300)) == b"done"


def test_a_child_that_outlives_the_backstop_is_killed_with_a_reason_naming_it() -> None:
    with pytest.raises(ValueError) as stopped:
        _run(WAIT.format(seconds=120), _limits(cpu_seconds=60, wall_seconds=2))
    assert str(stopped.value) == (
        "the fit was stopped by its wall-clock backstop of 2 s (MEDIA_FIT_WALL_SECONDS) before using its 60 s of CPU"
    )


def test_the_defaults_give_the_backstop_a_generous_multiple_of_the_cpu_budget() -> None:
    for limits in (probe_limits(), fit_limits()):
        assert limits.wall_seconds >= 5 * limits.cpu_seconds
    assert fit_limits().cpu_seconds >= 120  # the 1-minute 1080p fit takes about 60 s of one core


@pytest.mark.django_db
@override_settings(MEDIA_FIT_CPU_SECONDS=1)
def test_a_fit_stopped_by_its_cpu_limit_fails_its_variant_naming_the_limit(workspace: Any, tmp_path: Path) -> None:
    # 24 s of 640x480 padded to 640x1136 for a Reel: about 3 s of one core (1 s is its budget here).
    data = corpus.video(tmp_path / "clip.mp4", size=(640, 480), fps=25, frames=600)
    original = MediaFileFactory(
        workspace=workspace, file_name="clip.mp4", mime_type="video/mp4", kind="video", uploaded=True
    )
    get_media_storage().save(original.key, io.BytesIO(data), content_type="video/mp4")
    variant = original.variants.create(workspace=workspace, platform="INSTAGRAM", post_type="REEL")
    assert fit_media(variant.id) == VariantStatus.FAILED
    variant.refresh_from_db()
    assert variant.error.endswith("the fit was stopped by its CPU-time limit of 1 s (MEDIA_FIT_CPU_SECONDS)")
    assert variant.output is None
    assert list(Event.objects.filter(workspace=workspace).values_list("name", flat=True)) == ["media.failed"]
