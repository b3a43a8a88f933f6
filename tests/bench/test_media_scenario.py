"""The bench's media scenario (issue 34) on a tiny corpus: a fit measured through the same child
the fit task starts, reaped for its own CPU time and peak RSS, its output checked against the
rules; the probe throughput counted over every round."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench.scenarios import media


def test_a_fit_is_measured_through_its_own_child_and_checked(tmp_path: Path) -> None:
    video = media.make_video(tmp_path / "small.mp4", (240, 300), 3.2, fps=24)  # 4:5, long enough for a Reel
    sample = media.Sample("small 4:5 video", "video", "INSTAGRAM", "REEL", video)
    fitted = media.fit_one(sample, tmp_path)
    assert fitted["rulesFixed"] == ["media_aspect_ratio"] and fitted["output"] == "240x426"  # padded to 9:16
    assert fitted["stillBroken"] == [] and fitted["error"] is None
    assert fitted["cpuSeconds"] > 0
    assert 20 < fitted["peakRssMB"] < 1536  # the child's own (it loads PyAV), under its cap


def test_a_file_that_needs_no_fit_is_not_a_fit_to_measure(tmp_path: Path) -> None:
    image = media.make_image(tmp_path / "square.jpg", (400, 400), "JPEG")
    with pytest.raises(RuntimeError, match="needs no fit"):
        media.fit_one(media.Sample("square", "image", "INSTAGRAM", "FEED", image), tmp_path)


def test_probes_count_every_round(tmp_path: Path) -> None:
    image = media.make_image(tmp_path / "photo.jpg", (300, 200), "JPEG")
    samples = [media.Sample("photo", "image", "INSTAGRAM", "FEED", image)] * 2  # one file, named twice
    probes = media.measure_probes(samples, rounds=3)
    assert probes["files"] == 3 and probes["bytes"] == 3 * image.stat().st_size
    assert probes["filesPerSecond"] > 0


def test_a_child_that_fails_is_reported_with_its_reason(tmp_path: Path) -> None:
    source = tmp_path / "empty"
    source.write_bytes(b"")
    run = media.run_child(
        [sys.executable, "-c", "import sys; print('too long', file=sys.stderr); sys.exit(1)"], tmp_path, source
    )
    assert run.error == "exited 1: too long"
    ok = media.run_child([sys.executable, "-c", "pass"], tmp_path, source)
    assert ok.error is None


def test_a_childs_peak_rss_is_its_own_not_the_process_it_was_forked_from(tmp_path: Path) -> None:
    source = tmp_path / "empty"
    source.write_bytes(b"")
    ballast = bytearray(200 * 1024 * 1024)  # this process: far larger than the children
    ballast[::4096] = b"\x01" * len(ballast[::4096])
    small = media.run_child([sys.executable, "-c", "import time; time.sleep(1)"], tmp_path, source)
    grown = media.run_child(
        [
            sys.executable,
            "-c",
            "import time; b = bytearray(120 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); time.sleep(1)",
        ],
        tmp_path,
        source,
    )
    assert small.peak_rss_mb < 100  # a bare interpreter; ru_maxrss would say 200 MB and more
    assert 120 < grown.peak_rss_mb < 200
    del ballast
