"""Frame sampling for ingest vs decoding every frame, on the same work.

On a 5-minute 1280x720 30-fps H.264 video (testsrc, GOP 250; generated once and cached in the
temp directory) this times, interleaved for ROUNDS rounds so that all see the same load on a
shared machine (medians reported, CPU time of all threads and workers beside wall time):

  (a) videomem's `sample` stage with the default pipeline, one process (`--workers 1`): 2 frames
      per 10-s clip, snapped to keyframes within the pipeline's tolerance, scaled to 640 px,
      JPEGs written, rows committed — the code `videomem ingest --stages sample` runs;
  (a') the same with W worker processes (`videomem ingest`'s default, one per core);
  (b) decode-all with the same output, one process: PyAV, with the decoder settings videomem's
      reader uses (slice threads), decodes every frame in order and writes exactly the frames
      (a) stored, at the same size and JPEG quality;
  (c) TeleMem / Deep Video Discovery as shipped: OpenCV reads every frame and writes one JPEG
      every 0.5 s (2 fps) at full size, one process.

Lines: wall time (c)/(a), (b)/(a), CPU time (b)/(a), wall time (a)/(a'); the last line `speedup: N.Nx` is (b)/(a), the same-output,
one-process ratio. Target: at least 5x.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import av
import cv2
import imageio_ffmpeg
from PIL import Image

from videomem.core import tune_process

tune_process()  # an entry point like `videomem`: OpenMP threads sleep while they wait (set before torch loads)

from videomem.cli import DEFAULT_WORKERS
from videomem.config import load_pipeline
from videomem.core import VideoSource
from videomem.pipeline.base import StageContext
from videomem.pipeline.sample import SampleStage
from videomem.store import Store
from videomem.video.probe import probe

SECONDS, WIDTH, HEIGHT, FPS, GOP = 300, 1280, 720, 30, 250
ROUNDS = 3


def bench_video() -> Path:
    cache = Path(tempfile.gettempdir()) / "videomem-bench"
    path = cache / f"testsrc_{WIDTH}x{HEIGHT}_{FPS}fps_{SECONDS}s_gop{GOP}.mp4"
    if not path.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        print(f"generating {path} (once) ...", flush=True)
        partial_file = path.with_suffix(".part.mp4")
        subprocess.run(
            [
                imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-loglevel", "error", "-y",
                "-f", "lavfi", "-i", f"testsrc=size={WIDTH}x{HEIGHT}:rate={FPS}:duration={SECONDS}",
                "-c:v", "libx264", "-preset", "veryfast", "-g", str(GOP), "-pix_fmt", "yuv420p", str(partial_file),
            ],
            check=True,
        )
        partial_file.rename(path)
    return path


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the decode workers)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def timed(work: Callable[[], int]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, frames written)."""
    wall, cpu = time.perf_counter(), _cpu_seconds()
    frames = work()
    return time.perf_counter() - wall, _cpu_seconds() - cpu, frames


def run_sample_stage(video: Path, store_dir: Path, workers: int) -> int:
    with Store(store_dir, create=True) as store:
        ctx = StageContext(store, load_pipeline(), models_factory=lambda: None, workers=workers, show_progress=False)
        result = SampleStage().run(ctx, [VideoSource(video, video.stem)])
        if result.failures:
            sys.exit(f"sample stage failed: {result.failures}")
        return store.query("SELECT COUNT(*) AS n FROM frames")[0]["n"]


def stored_frames(store_dir: Path) -> dict[int, tuple[int, int]]:
    """Frame times (ms) → (width, height) of what the sample stage stored."""
    with Store(store_dir, read_only=True) as store:
        rows = store.query("SELECT t, width, height FROM frames")
    return {round(r["t"] * 1000): (r["width"], r["height"]) for r in rows}


def run_decode_all_same_output(video: Path, wanted: dict[int, tuple[int, int]], out_dir: Path) -> int:
    out_dir.mkdir(parents=True)
    start, quality = probe(video).start_time, load_pipeline().jpeg_quality
    written = 0
    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "SLICE"
        for frame in container.decode(stream):
            ms = round((frame.time - start) * 1000)
            if ms in wanted:
                width, height = wanted[ms]
                image = frame.to_ndarray(width=width, height=height, format="rgb24")
                Image.fromarray(image).save(out_dir / f"{ms:09d}.jpg", "JPEG", quality=quality)
                written += 1
    return written


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
    workers = DEFAULT_WORKERS
    one, many, same, shipped = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="videomem-bench-") as tmp:
        root = Path(tmp)
        for i in range(ROUNDS):
            one.append(timed(partial(run_sample_stage, video, root / f"one{i}", 1)))
            many.append(timed(partial(run_sample_stage, video, root / f"many{i}", workers)))
            wanted = stored_frames(root / f"one{i}")
            same.append(timed(partial(run_decode_all_same_output, video, wanted, root / f"same{i}")))
            shipped.append(timed(partial(run_opencv_every_frame, video, root / f"opencv{i}")))
            if same[-1][2] != len(wanted):
                sys.exit(f"decode-all found {same[-1][2]} of the {len(wanted)} frames the sample stage stored")

    def wall(runs: list) -> float:
        return statistics.median(r[0] for r in runs)

    def cpu(runs: list) -> float:
        return statistics.median(r[1] for r in runs)

    print(f"video: {video.name} ({SECONDS} s, {WIDTH}x{HEIGHT}, {FPS} fps, GOP {GOP}); medians of {ROUNDS} rounds")
    print(f"load average (1, 5, 15 min) at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"(a) videomem sample stage, one process: {wall(one):.2f} s wall, {cpu(one):.2f} s CPU, {one[0][2]} frames")
    print(f"(a') the same, {workers} workers: {wall(many):.2f} s wall, {cpu(many):.2f} s CPU, {many[0][2]} frames")
    print(f"(b) decode-all, same frames and size, one process: {wall(same):.2f} s wall, {cpu(same):.2f} s CPU, {same[0][2]} frames")
    print(f"(c) OpenCV decode-all, 2 fps JPEGs at {WIDTH}x{HEIGHT}: {wall(shipped):.2f} s wall, {cpu(shipped):.2f} s CPU, {shipped[0][2]} frames")
    print(f"vs TeleMem as shipped (decode all, 2 fps JPEGs at full size), one process: {wall(shipped) / wall(one):.1f}x")
    print(f"vs decode-all with the same output (same frames, same size), one process: {wall(same) / wall(one):.1f}x")
    print(f"CPU time, decode-all with the same output / videomem, one process: {cpu(same) / cpu(one):.1f}x")
    print(f"parallel scaling with {workers} workers: {wall(one) / wall(many):.1f}x")
    print(f"speedup: {wall(same) / wall(one):.1f}x")


if __name__ == "__main__":
    main()
