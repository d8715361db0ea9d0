"""A week of one participant's captions (44 h, EgoLife-sized) built into a store with every memory.

No video is decoded: `benchmarks/ppr.py`'s generator writes 44 h / 30 s = 5,280 captions
(power-law entities, about 50,000 facts) and they are stored the way `ingest --captions` stores
EgoLifeCap's: one video per recorded hour on the week's timeline (DAYd_..._HH0000), one 30-s
clip per caption with `events.source = 'egolifecap'`, and one small frame per clip (a colour
swatch) so that visual memory has segments to embed. Then the corpus-level stages run with the
project's code and the offline profile (MiniLM text embeddings, spaCy triplets, extractive
summaries) under pipelines/egolife.yaml: `caption` (only the caption index: imported captions
need no vision call), `objects` (records read from the caption text, then consolidation),
`episodic` (30 s, 3 min, 10 min, 1 h, a graph per scale), `semantic`, `timeline` and `visual`. Visual
memory's embedder is a 4x4-thumbnail stand-in (the offline one runs its detectors on every frame,
model time this benchmark does not measure); every other model is the offline profile's.

Printed: seconds per stage (wall, and outside model calls: every call of the text embedder, the
language model and the visual embedder is timed, a call inside another once), peak RSS of the
process, bytes on disk, then p50 / p95 of each memory tool's `retrieve` (QUERIES queries with a
query time in the second half of the corpus, after one warm-up call that loads the indexes) and
of a whole offline `ask` with agents/full.yaml (ASKS questions). Targets (issue 14): build
excluding model calls < 120 s, RSS < 2 GB, each tool p50 < 100 ms, ask p50 < 1 s.

With the semantic stage built, the same corpus at half the hours is built first (fresh models,
stages up to semantic) and the two semantic stages are compared in one line, `semantic growth
Nh->2Nh: N.Nx time, N.Nx texts embedded for 2x captions` (texts the embedding model was given;
its time depends on the machine's load, the count does not).

Last line: `corpus 44h: build N s (N s outside model calls), rss N MB, ask p50 N ms` (build = wall
seconds of all stages). `--hours 4` measures the 4-hour corpus the growth in docs/scale.md
compares with; `--stages` builds some of the stages only (a memory not built is still timed,
empty).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import hashlib
import io
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from PIL import Image
from ppr import passages

from videomem.core import tune_process

tune_process()  # an entry point like `videomem`: OpenMP threads sleep while they wait (set before torch loads)

from videomem.agent.react import Agent
from videomem.config import default_path, load_agent, load_pipeline
from videomem.memory.registry import MEMORIES
from videomem.models.registry import ModelSet
from videomem.pipeline.base import StageContext
from videomem.core import VideoSource
from videomem.pipeline.runner import build_stage
from videomem.store import Store
from videomem.video.egolifecap import SOURCE

CLIP = 30.0
DAY_HOURS = range(10, 21)
"""Recorded hours of a day (11 a day, 44 h over four days, as EgoLife's participants)."""
STAGES = ("caption", "objects", "episodic", "semantic", "timeline", "visual")
QUERIES, ASKS, TOP_K = 30, 8, 5


class ThumbnailEmbedder:
    """Visual embedder stand-in: a frame's 4x4 colour thumbnail; a text is hashed to a unit vector."""

    dim = 48

    def embed_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        out = np.stack([np.asarray(i.convert("RGB").resize((4, 4)), np.float32).ravel() + 1.0 for i in images])
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), np.float32)
        for row, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
            out[row] = np.abs(np.random.default_rng(seed).standard_normal(self.dim))
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def hours_of_week(hours: int) -> list[tuple[str, float]]:
    """(video id, offset) of each recorded hour, day by day."""
    slots = [(day, hour) for day in range(1, 8) for hour in DAY_HOURS][:hours]
    return [(f"DAY{day}_A1_JAKE_{hour:02d}000000", (day - 1) * 86400.0 + hour * 3600.0) for day, hour in slots]


def swatch(text: str) -> bytes:
    """A 32x18 JPEG of one colour picked by the caption's first entity."""
    digest = hashlib.blake2b(text.split(":", 1)[-1].split(" holds")[0].encode(), digest_size=3).digest()
    buffer = io.BytesIO()
    Image.new("RGB", (32, 18), tuple(digest)).save(buffer, "JPEG", quality=85)
    return buffer.getvalue()


def write_corpus(store: Store, hours: int) -> tuple[list[VideoSource], list[str]]:
    """Videos, clips, one frame and one imported caption per clip, one transaction per hour."""
    captions = [p.text for p in passages(np.random.default_rng(0), hours)]
    per_video = int(3600 / CLIP)
    sources = []
    for v, (video_id, offset) in enumerate(hours_of_week(hours)):
        (store.frames_dir / video_id).mkdir(parents=True, exist_ok=True)
        with store.transaction() as tx:
            tx.execute(
                "INSERT INTO videos (id, path, t_offset, duration, fps, n_frames, width, height, rotation, probe_json)"
                " VALUES (?, ?, ?, 3600, 20, 72000, 32, 18, 0, '{}')",
                (video_id, f"{video_id}.mp4", offset),
            )
            for idx in range(per_video):
                text = captions[v * per_video + idx]
                t0 = offset + idx * CLIP
                clip_id = tx.execute(
                    "INSERT INTO clips (video_id, idx, t_start, t_end) VALUES (?, ?, ?, ?)", (video_id, idx, t0, t0 + CLIP)
                ).lastrowid
                relative = f"frames/{video_id}/{idx:06d}_0.jpg"
                (store.root / relative).write_bytes(swatch(text))
                tx.execute(
                    "INSERT INTO frames (clip_id, video_id, t, path, width, height) VALUES (?, ?, ?, ?, 32, 18)",
                    (clip_id, video_id, t0 + CLIP / 2, relative),
                )
                tx.execute(
                    "INSERT INTO events (clip_id, video_id, t_start, t_end, text, source) VALUES (?, ?, ?, ?, ?, ?)",
                    (clip_id, video_id, t0, t0 + CLIP, text, SOURCE),
                )
                Store.mark_done(tx, "sample", f"{video_id}:{idx}")
                Store.mark_done(tx, "caption", f"{video_id}:{idx}")
        sources.append(VideoSource(Path(f"{video_id}.mp4"), video_id, offset))
    return sources, captions


class CountingEmbedder:
    """The text embedding model, counting the texts it is given."""

    def __init__(self, model) -> None:  # noqa: ANN001 - a TextEmbedder
        self.model, self.dim, self.texts = model, model.dim, 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += len(texts)
        return self.model.embed(texts)


class ModelClock:
    """Wall seconds inside model calls, a call made inside another counted once (the offline
    language model's tasks embed texts and run spaCy within their own time)."""

    def __init__(self) -> None:
        self.seconds, self._depth = 0.0, 0

    def timed(self, call):  # noqa: ANN001, ANN201 - any model method
        def run(*args, **kwargs):  # noqa: ANN202
            self._depth += 1
            started = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self.seconds += time.perf_counter() - started

        return run


class Timed:
    """A model whose methods are timed by a `ModelClock`."""

    def __init__(self, model, clock: ModelClock) -> None:  # noqa: ANN001 - any model
        self._model, self._clock = model, clock

    def __getattr__(self, name: str):  # noqa: ANN204
        value = getattr(self._model, name)
        return self._clock.timed(value) if callable(value) else value


def offline_models() -> tuple[ModelSet, CountingEmbedder, ModelClock]:
    """The offline profile with the stand-in visual embedder, the counter of its text model
    (under the memory of recent texts, so texts answered from memory are not counted) and the
    clock of every model call the stages make."""
    models = ModelSet.from_file(None)
    clock = ModelClock()
    models.__dict__["visual_embedder"] = Timed(ThumbnailEmbedder(), clock)  # the cached_property's slot
    counter = CountingEmbedder(models.text_embedder.embedder)
    models.text_embedder.embedder = counter
    models.text_embedder.embed = clock.timed(models.text_embedder.embed)  # the language model's too: one object
    models.__dict__["language"] = Timed(models.language, clock)
    return models, counter, clock


def semantic_cost(hours: int, pipeline) -> tuple[float, int]:  # noqa: ANN001 - PipelineConfig
    """Seconds and embedded texts of the semantic stage on the corpus of `hours` (built up to it)."""
    models, counter, _ = offline_models()
    stages = ("caption", "episodic", "semantic")
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "store", create=True) as store:
        sources, _ = write_corpus(store, hours)
        ctx = StageContext(store, pipeline, lambda: models, show_progress=False, stages=stages)
        for name in stages[:-1]:
            build_stage(name).run(ctx, sources)
        texts, started = counter.texts, time.perf_counter()
        build_stage("semantic").run(ctx, sources)
        return time.perf_counter() - started, counter.texts - texts


def percentiles(seconds: list[float]) -> tuple[float, float]:
    ms = sorted(s * 1e3 for s in seconds)
    return statistics.median(ms), ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def disk_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def build(store: Store, models: ModelSet, counter: CountingEmbedder, clock: ModelClock, hours: int,
          stages: tuple[str, ...], pipeline, half: tuple[float, int] | None) -> tuple[float, float]:  # noqa: ANN001
    """Writes the corpus and runs `stages` over it, printing each; returns the build's wall seconds
    and those outside model calls."""
    started = time.perf_counter()
    sources, captions = write_corpus(store, hours)
    print(f"corpus: {hours} h, {len(sources)} videos, {len(captions):,} captions of {CLIP:g} s "
          f"(written in {time.perf_counter() - started:.1f} s)")
    ctx = StageContext(store, pipeline, lambda: models, show_progress=False, stages=stages)
    total = total_model = 0.0
    for name in stages:
        spent, started, texts = clock.seconds, time.perf_counter(), counter.texts
        result = build_stage(name).run(ctx, sources)
        wall, model = time.perf_counter() - started, clock.seconds - spent
        total, total_model = total + wall, total_model + model
        failed = f", {len(result.failures)} failed: {result.failures[0]}" if result.failures else ""
        print(f"stage {name}: {wall:.1f} s, {wall - model:.1f} s outside model calls, {counter.texts - texts:,} texts "
              f"embedded, {result.done} done{failed}, peak RSS so far {peak_rss_mb():,.0f} MB", flush=True)
        if name == "semantic" and half is not None:
            print(f"semantic growth {hours // 2}h->{hours}h: {wall / half[0]:.1f}x time ({half[0]:.1f} -> {wall:.1f} s), "
                  f"{(counter.texts - texts) / max(half[1], 1):.1f}x texts embedded ({half[1]:,} -> "
                  f"{counter.texts - texts:,}) for {hours / (hours // 2):g}x captions", flush=True)
    print(f"build: {total:.1f} s, {total - total_model:.1f} s outside model calls (model calls: {total_model:.1f} s)")
    return total, total - total_model


def time_queries(store: Store, models: ModelSet, hours: int) -> float:
    """Prints p50 / p95 of each memory tool and of a whole `ask`; returns the ask p50 in ms."""
    rng = np.random.default_rng(1)
    captions = [p.text for p in passages(np.random.default_rng(0), hours)]
    offsets = [offset for _, offset in hours_of_week(hours)]
    start, end = min(offsets), max(offsets) + 3600
    agent_cfg = load_agent(default_path("agents", "full"))
    facts = [c.split(": ", 1)[1].split("; ")[0] for c in captions if c.split(": ", 1)[1]]
    picks = [facts[i] for i in rng.choice(len(facts), QUERIES + ASKS, replace=False)]
    untils = rng.uniform((start + end) / 2, end, QUERIES + ASKS)  # the second half of the footage
    for name, registered in MEMORIES.items():
        memory = registered.open(store, models, agent_cfg)
        started = time.perf_counter()
        memory.retrieve(picks[0], TOP_K, float(untils[0]))
        first = time.perf_counter() - started
        timings = []
        for query, until in zip(picks[:QUERIES], untils[:QUERIES]):
            started = time.perf_counter()
            memory.retrieve(query, TOP_K, float(until))
            timings.append(time.perf_counter() - started)
        p50, p95 = percentiles(timings)
        print(f"tool memory.{name}: p50 {p50:.1f} ms, p95 {p95:.1f} ms (first call {first * 1e3:.0f} ms)", flush=True)
    agent = Agent(store, models, agent_cfg)
    timings = []
    for fact, until in zip(picks[QUERIES:], untils[QUERIES:]):
        started = time.perf_counter()
        agent.ask(f"When did {fact} happen?", None, float(until))
        timings.append(time.perf_counter() - started)
    ask_p50, ask_p95 = percentiles(timings)
    print(f"ask (agents/full.yaml, offline): p50 {ask_p50:.0f} ms, p95 {ask_p95:.0f} ms over {ASKS} questions")
    return ask_p50


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hours", type=int, default=44)
    parser.add_argument("--stages", default=",".join(STAGES), help="stages to build (default: all of them)")
    parser.add_argument("--store", type=Path, help="keep the store at this path; a store already there (built by "
                        "an earlier run with the same --hours) is not rebuilt, only queried")
    args = parser.parse_args()
    hours, stages = args.hours, tuple(s for s in STAGES if s in args.stages.split(","))
    pipeline = load_pipeline(default_path("pipelines", "egolife")).model_copy(update={"imported_caption_language": None})
    reuse = args.store is not None and args.store.exists()
    half = None
    if "semantic" in stages and hours >= 2 and not reuse:  # in a process of its own: this one's peak RSS is the corpus's
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            half = pool.submit(semantic_cost, hours // 2, pipeline).result()
    models, counter, clock = offline_models()
    print(f"before the corpus (libraries and the text embedding model loaded): peak RSS {peak_rss_mb():,.0f} MB", flush=True)
    with tempfile.TemporaryDirectory() as tmp, Store(args.store or Path(tmp) / "store", create=not reuse) as store:
        if reuse:
            print(f"store: {store.root} reused, not rebuilt (build figures are those of the run that built it)")
            total = outside = 0.0
        else:
            total, outside = build(store, models, counter, clock, hours, stages, pipeline, half)
        for name, stats in ((n, MEMORIES[n].open(store, models, load_agent()).stats()) for n in MEMORIES):
            print(f"memory {name}: " + ", ".join(f"{k} {v}" for k, v in stats.items()))
        print(f"disk: {disk_bytes(store.root) / 2**20:,.1f} MB")
        ask_p50 = time_queries(store, models, hours)
    rss_mb = peak_rss_mb()
    print(f"load average (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"peak RSS: {rss_mb:,.0f} MB")
    print(f"corpus {hours}h: build {total:.0f} s ({outside:.0f} s outside model calls), rss {rss_mb:.0f} MB, "
          f"ask p50 {ask_p50:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
