"""Probe, clip planner and frame sampling, checked against an independent full decode."""

from __future__ import annotations

import subprocess
from pathlib import Path

import av
import numpy as np
import pytest

from conftest import FFMPEG, make_audio_only, make_video
from videomem.errors import VideoError
from videomem.video import decode
from videomem.video.clips import ClipSpan, plan_clips
from videomem.video.decode import FrameRequest, FrameSampler, output_size
from videomem.video.probe import probe


def all_frames(path: Path) -> tuple[list[float], list[np.ndarray], list[bool]]:
    """Every frame in presentation order, decoded front to back with no seeking: the reference."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        decoded = [(float(f.pts * stream.time_base), f.to_ndarray(format="rgb24"), f.key_frame) for f in container.decode(stream)]
    start = decoded[0][0]
    return [t - start for t, _, _ in decoded], [im for _, im, _ in decoded], [k for _, _, k in decoded]


def frame_on_screen(times: list[float], t: float) -> int:
    return max(i for i, ft in enumerate(times) if ft <= t + 1e-6)


def best_match(image: np.ndarray, references: list[np.ndarray]) -> int:
    return int(np.argmin([np.abs(image.astype(np.int16) - ref).mean() for ref in references]))


@pytest.fixture(scope="module")
def cfr_video(video_dir: Path) -> Path:
    return make_video(video_dir / "cfr.mp4", seconds=8, fps=25, gop=30)


# --- probe -------------------------------------------------------------------------------


def test_probe_real_files(bikes: Path, bigbuckbunny: Path) -> None:
    info = probe(bikes)
    assert (info.duration, info.fps, info.n_frames) == (10.0, 25.0, 250)
    assert (info.width, info.height, info.rotation, info.has_audio) == (640, 272, 0, False)
    bunny = probe(bigbuckbunny)
    assert bunny.has_audio and (bunny.width, bunny.height) == (1280, 720)
    assert bunny.duration == pytest.approx(5.28, abs=0.01)


def test_probe_vtest(vtest: Path) -> None:
    info = probe(vtest)
    assert (info.duration, info.fps, info.width, info.height) == (79.5, 10.0, 768, 576)


def test_probe_rotation_swaps_display_size(rotated_video: Path) -> None:
    info = probe(rotated_video)
    assert info.rotation == 90
    assert (info.coded_width, info.coded_height) == (160, 120)
    assert (info.width, info.height) == (120, 160)


def test_probe_vfr_reports_average_rate(vfr_video: Path) -> None:
    info = probe(vfr_video)
    times, _, _ = all_frames(vfr_video)
    assert info.n_frames == len(times)
    assert info.duration == pytest.approx(12.0, abs=0.05)
    assert info.fps == pytest.approx(len(times) / info.duration, rel=0.05)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p, "no such file"),
        (lambda p: (p.write_bytes(b""), p)[1], "empty file"),
        (lambda p: (p.write_text("hello, I am not a video\n" * 50), p)[1], "not a video file"),
        (lambda p: make_audio_only(p), "audio only"),
    ],
    ids=["missing", "empty", "text", "audio-only"],
)
def test_probe_rejects_bad_files(tmp_path: Path, make, message: str) -> None:
    path = make(tmp_path / "bad.mp4")
    with pytest.raises(VideoError) as err:
        probe(path)
    text = str(err.value)
    assert message in text and str(path) in text and "\n" not in text


def test_probe_rejects_truncated_mp4(tmp_path: Path, short_video: Path) -> None:
    # ffmpeg writes the moov index last: cutting the tail removes it.
    data = short_video.read_bytes()
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(VideoError, match="truncated or damaged MP4"):
        probe(cut)
    # With faststart the index comes first and still opens; it points past the end.
    fast = make_video(tmp_path / "fast.mp4", seconds=3, faststart=True)
    data = fast.read_bytes()
    cut.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(VideoError, match="truncated: its index needs"):
        probe(cut)


def test_probe_rejects_video_without_frames(tmp_path: Path) -> None:
    path = tmp_path / "zero.mp4"
    subprocess.run(
        [FFMPEG, "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=1",
         "-frames:v", "0", "-c:v", "libx264", str(path)],
        check=True,
    )
    with pytest.raises(VideoError, match="zero duration|no video stream|cannot be decoded"):
        probe(path)


# --- clip planner ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("duration", "n", "last"),
    [(3.0, 1, (0, 3.0)), (10.0, 1, (0, 10.0)), (10.3, 1, (0, 10.3)), (10.6, 2, (10, 10.6)),
     (79.5, 8, (70, 79.5)), (1800.0, 180, (1790, 1800.0)), (1800.04, 180, (1790, 1800.04))],
)
def test_plan_clips_counts_and_last_clip(duration: float, n: int, last: tuple[float, float]) -> None:
    clips = plan_clips(duration, 10.0)
    assert len(clips) == n
    assert [c.index for c in clips] == list(range(n))
    assert (clips[-1].t_start, clips[-1].t_end) == pytest.approx(last)
    assert all(a.t_end == b.t_start for a, b in zip(clips, clips[1:]))


def test_frame_times_are_subinterval_centres() -> None:
    clip = ClipSpan(3, 30.0, 40.0)
    assert clip.frame_times(2) == [32.5, 37.5]
    assert clip.frame_times(4) == [31.25, 33.75, 36.25, 38.75]
    exact = clip.frame_requests(2, 0.0)
    assert all(r.is_exact for r in exact) and [r.t for r in exact] == [32.5, 37.5]
    wide = clip.frame_requests(2, 10.0)  # windows never leave their own half-open half of the clip
    assert [x for r in wide for x in (r.lo, r.hi)] == pytest.approx([30.0, 34.999, 35.0, 39.999])
    narrow = clip.frame_requests(2, 1.0)
    assert [(r.lo, r.hi) for r in narrow] == [(31.5, 33.5), (36.5, 38.5)]


# --- decoding ------------------------------------------------------------------------------

TIMES = [0.0, 0.5, 1.01, 2.5, 3.3, 4.99, 6.25, 7.9]


@pytest.mark.parametrize("backend", ["decord", "pyav", "opencv"])
def test_exact_frames_match_full_decode(cfr_video: Path, backend: str) -> None:
    times, images, _ = all_frames(cfr_video)
    with FrameSampler(probe(cfr_video), backends=[backend]) as sampler:
        frames = sampler.read([FrameRequest.at(t) for t in TIMES])
        assert sampler.used == backend
    for t, frame in zip(TIMES, frames):
        want = frame_on_screen(times, t)
        assert best_match(frame.image, images) == want, f"{backend} at {t}s"
        assert frame.t == pytest.approx(times[want], abs=1e-3)


@pytest.mark.parametrize("backend", ["decord", "pyav"])
def test_variable_frame_rate_uses_timestamps(vfr_video: Path, backend: str) -> None:
    times, images, _ = all_frames(vfr_video)
    assert times[1] - times[0] == pytest.approx(0.2, abs=1e-3)  # 5 fps part
    assert times[-1] - times[-2] == pytest.approx(0.04, abs=1e-3)  # 25 fps part
    wanted = [0.1, 1.0, 3.3, 5.9, 6.5, 9.02, 11.9]
    with FrameSampler(probe(vfr_video), backends=[backend]) as sampler:
        frames = sampler.read([FrameRequest.at(t) for t in wanted])
    for t, frame in zip(wanted, frames):
        want = frame_on_screen(times, t)
        assert best_match(frame.image, images) == want, f"{backend} at {t}s"
        assert frame.t == pytest.approx(times[want], abs=1e-3)


def test_windowed_requests_snap_to_keyframes(tmp_path: Path) -> None:
    video = make_video(tmp_path / "gop1s.mp4", seconds=20, fps=20, gop=20)
    times, images, keys = all_frames(video)
    key_times = [t for t, k in zip(times, keys) if k]
    clips = plan_clips(20.0, 10.0)
    requests = [r for c in clips for r in c.frame_requests(2, 2.0)]
    with FrameSampler(probe(video)) as sampler:
        frames = sampler.read(requests)
        assert sampler.used == "pyav"
    assert all(f.keyframe for f in frames)  # a keyframe every second: nothing else is decoded
    for req, frame in zip(requests, frames):
        assert req.lo <= frame.t <= req.hi
        assert frame.t == pytest.approx(min(key_times, key=lambda k: abs(k - req.t)), abs=1e-3)
        assert best_match(frame.image, images) == times.index(min(times, key=lambda x: abs(x - frame.t)))


def test_windowed_request_without_keyframe_decodes_into_window(tmp_path: Path) -> None:
    video = make_video(tmp_path / "gop10s.mp4", seconds=20, fps=20, gop=200)
    times, images, _ = all_frames(video)
    request = FrameRequest(12.5, 10.5, 14.5)  # keyframes at 0 and 10 only
    with FrameSampler(probe(video)) as sampler:
        (frame,) = sampler.read([request])
    assert not frame.keyframe
    assert request.lo <= frame.t <= request.lo + 0.25  # the cheapest frame: the first in the window
    assert best_match(frame.image, images) == times.index(min(times, key=lambda x: abs(x - frame.t)))


@pytest.fixture(scope="module")
def rotated_videos(rotated_video: Path, video_dir: Path) -> dict[int, Path]:
    return {
        90: rotated_video,
        180: make_video(video_dir / "phone180.mp4", seconds=6, fps=10, rotation=180),
        270: make_video(video_dir / "phone270.mp4", seconds=6, fps=10, rotation=270),
    }


@pytest.mark.parametrize("rotation", [90, 180, 270])
@pytest.mark.parametrize("backend", ["pyav", "decord", "opencv"])
def test_rotated_video_comes_out_upright(rotated_videos: dict[int, Path], backend: str, rotation: int) -> None:
    video = rotated_videos[rotation]
    # ffmpeg applies the display matrix itself when it converts to raw pixels.
    raw = subprocess.run(
        [FFMPEG, "-v", "error", "-ss", "4", "-i", str(video), "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        capture_output=True,
        check=True,
    ).stdout
    shape = (120, 160, 3) if rotation == 180 else (160, 120, 3)
    upright = np.frombuffer(raw, np.uint8).reshape(shape)
    with FrameSampler(probe(video), backends=[backend]) as sampler:
        (frame,) = sampler.read([FrameRequest.at(4.0)])
    assert frame.image.shape == shape
    assert np.abs(frame.image.astype(np.int16) - upright).mean() < 3


def test_max_side_keeps_aspect(bikes: Path) -> None:
    info = probe(bikes)
    assert output_size(info, 320) == (320, 136)
    assert output_size(info, 4096) == (640, 272)
    with FrameSampler(info, max_side=320) as sampler:
        frames = sampler.read([FrameRequest(2.5, 0.5, 4.5), FrameRequest(7.5, 5.5, 9.5)])
    assert [f.image.shape for f in frames] == [(136, 320, 3)] * 2


def test_real_footage_exact_frames(bikes: Path) -> None:
    times, images, _ = all_frames(bikes)
    wanted = [0.5, 3.33, 6.0, 9.9]
    with FrameSampler(probe(bikes)) as sampler:
        frames = sampler.read([FrameRequest.at(t) for t in wanted])
        assert sampler.used == "decord"
    assert [best_match(f.image, images) for f in frames] == [frame_on_screen(times, t) for t in wanted]


class _Broken:
    name = "broken"

    def __init__(self, *args: object) -> None:
        raise RuntimeError("cannot open this file")


def test_falls_back_when_decord_fails(cfr_video: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    times, images, _ = all_frames(cfr_video)
    monkeypatch.setitem(decode._BACKENDS, "decord", _Broken)
    with FrameSampler(probe(cfr_video)) as sampler:
        frames = sampler.read([FrameRequest.at(2.5), FrameRequest.at(5.0)])
        assert sampler.used == "pyav"
    assert [best_match(f.image, images) for f in frames] == [frame_on_screen(times, 2.5), frame_on_screen(times, 5.0)]


def test_all_backends_failing_is_one_video_error(cfr_video: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("decord", "pyav", "opencv"):
        monkeypatch.setitem(decode._BACKENDS, name, _Broken)
    with FrameSampler(probe(cfr_video)) as sampler, pytest.raises(VideoError) as err:
        sampler.read([FrameRequest.at(1.0)])
    message = str(err.value)
    assert str(cfr_video) in message and "\n" not in message
    assert all(f"{name}: cannot open this file" in message for name in ("decord", "pyav", "opencv"))
