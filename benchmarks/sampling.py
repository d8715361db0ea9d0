"""Frame sampling for ingest vs decoding every frame.

On a 5-minute 1280x720 30-fps H.264 video (testsrc, GOP 250; generated once and cached in the
temp directory) this times

  (a) videomem's `sample` stage with the default pipeline: 2 frames per 10-s clip, snapped to
      keyframes within the pipeline's tolerance, JPEGs written, rows committed — the same code
      `videomem ingest --stages sample` runs;
  (b) the approach of TeleMem / Deep Video Discovery: OpenCV reads every frame in order and
      writes one JPEG every 0.5 s (2 fps).

Both run on the same file, interleaved for ROUNDS rounds so that both see the same load on a
shared machine; medians are reported, with CPU time (all threads, and (a)'s decode workers —
as many as `videomem ingest` starts by default, one per core) beside wall time. The last line is `speedup: N.Nx` = median wall time (b) / (a).
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import cv2
import imageio_ffmpeg

from videomem.cli import DEFAULT_WORKERS
from videomem.config import load_pipeline
from videomem.pipeline.base import StageContext, VideoSource
from videomem.pipeline.sample import SampleStage
from videomem.store import Store

SECONDS, WIDTH, HEIGHT, FPS, GOP = 300, 1280, 720, 30, 250
ROUNDS = 3


def bench_video() -> Path:
    cache = Path(tempfile.gettempdir()) / "videomem-bench"
    path = cache / f"testsrc_{WIDTH}x{HEIGHT}_{FPS}fps_{SECONDS}s_gop{GOP}.mp4"
    if not path.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        print(f"generating {path} (once) ...", flush=True)
        partial = path.with_suffix(".part.mp4")
        subprocess.run(
            [
                imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-loglevel", "error", "-y",
                "-f", "lavfi", "-i", f"testsrc=size={WIDTH}x{HEIGHT}:rate={FPS}:duration={SECONDS}",
                "-c:v", "libx264", "-preset", "veryfast", "-g", str(GOP), "-pix_fmt", "yuv420p", str(partial),
            ],
            check=True,
        )
        partial.rename(path)
    return path


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the decode workers)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def timed(work) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, frames written)."""
    wall, cpu = time.perf_counter(), _cpu_seconds()
    frames = work()
    return time.perf_counter() - wall, _cpu_seconds() - cpu, frames


def run_sample_stage(video: Path, store_dir: Path) -> int:
    with Store(store_dir, create=True) as store:
        ctx = StageContext(
            store, load_pipeline(), models_factory=lambda: None, workers=DEFAULT_WORKERS, show_progress=False
        )
        result = SampleStage().run(ctx, [VideoSource(video, video.stem)])
        if result.failures:
            sys.exit(f"sample stage failed: {result.failures}")
        return store.query("SELECT COUNT(*) AS n FROM frames")[0]["n"]


def run_opencv_every_frame(video: Path, out_dir: Path) -> int:
    out_dir.mkdir(parents=True)
    capture = cv2.VideoCapture(str(video))
    step = max(1, round(capture.get(cv2.CAP_PROP_FPS) / 2))
    index = written = 0
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        if index % step == 0:
            cv2.imwrite(str(out_dir / f"{index:06d}.jpg"), frame)
            written += 1
        index += 1
    capture.release()
    return written


def main() -> None:
    video = bench_video()
    runs_a, runs_b = [], []
    with tempfile.TemporaryDirectory(prefix="videomem-bench-") as tmp:
        for i in range(ROUNDS):
            store_dir, frames_dir = Path(tmp) / f"store{i}", Path(tmp) / f"opencv{i}"
            runs_a.append(timed(partial(run_sample_stage, video, store_dir)))
            runs_b.append(timed(partial(run_opencv_every_frame, video, frames_dir)))
    wall_a, cpu_a = (statistics.median(r[k] for r in runs_a) for k in (0, 1))
    wall_b, cpu_b = (statistics.median(r[k] for r in runs_b) for k in (0, 1))
    print(f"video: {video.name} ({SECONDS} s, {WIDTH}x{HEIGHT}, {FPS} fps, GOP {GOP}); medians of {ROUNDS} rounds")
    print(f"(a) videomem sample stage: {wall_a:.2f} s wall, {cpu_a:.2f} s CPU, {runs_a[0][2]} frames")
    print(f"(b) OpenCV, every frame decoded, JPEG at 2 fps: {wall_b:.2f} s wall, {cpu_b:.2f} s CPU, {runs_b[0][2]} frames")
    print(f"CPU time ratio: {cpu_b / cpu_a:.1f}x")
    print(f"speedup: {wall_b / wall_a:.1f}x")


if __name__ == "__main__":
    main()
