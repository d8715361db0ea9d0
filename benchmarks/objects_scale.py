"""Does object consolidation grow linearly with the corpus? The objects stage on a small and a large corpus.

Both corpora are `corpus_scale.py`'s (one participant's 30-s captions as imported EgoLifeCap
text, no decoding), the large one holding the small one as its first hours. The objects stage
runs on each with the offline profile (records read from the caption text, consolidation in
batches of pipelines/egolife.yaml's `object_batch_size`, the observation index), each corpus with
freshly loaded models so that no embedding cached by one run serves the other. The small
corpus runs before and after the large one and its mean is the baseline, so that a change of
machine load during the run weighs on both sides.

Printed per corpus: seconds of extraction, consolidation and the observation index, objects and
records, and the characters the text embedder read (a measure of model work that machine load
does not change). Last line: `objects growth 1h->4h: N.Nx time for 4x captions (N.Nx
characters embedded)`: about 4x for 4x the captions is linear; before consolidation's work per
record was bounded, it was 23x (docs/scale.md).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from corpus_scale import write_corpus

from videomem.core import tune_process

tune_process()  # an entry point like `videomem`: OpenMP threads sleep while they wait (set before torch loads)

from videomem.config import default_path, load_pipeline
from videomem.memory.events import imported_captions
from videomem.memory.objects import ObjectMemory, write_records
from videomem.models.registry import ModelSet
from videomem.pipeline.base import StageContext
from videomem.store import Store


class CountingEmbedder:
    """The text embedder, counting the characters it reads."""

    def __init__(self, real) -> None:
        self.real, self.dim, self.chars = real, real.dim, 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.chars += sum(len(t) for t in texts)
        return self.real.embed(texts)


def run(hours: int) -> dict[str, float]:
    """The objects stage's three steps on `hours` of captions: seconds of each, counts, characters embedded."""
    pipeline = load_pipeline(default_path("pipelines", "egolife")).model_copy(update={"imported_caption_language": None})
    models = ModelSet.from_file(None)
    embedder = CountingEmbedder(models.text_embedder)
    models.__dict__["text_embedder"] = embedder  # the cached_property's slot, before any model uses it
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "store", create=True) as store:
        sources, captions = write_corpus(store, hours)
        memory = ObjectMemory(store, models)
        out: dict[str, float] = {"captions": len(captions)}
        started = time.perf_counter()
        ids, ctx = [s.video_id for s in sources], StageContext(store, pipeline, lambda: models, show_progress=False)
        imported = imported_captions(store, ids)  # the build's first step: records from the captions, else the frames
        result = memory.read_imported(pipeline, ids, imported, frozenset())
        result.failures += ctx.object_records(memory.name, write_records, ids, frozenset(imported)).failures
        out["extract"] = time.perf_counter() - started
        started = time.perf_counter()
        memory.consolidate(pipeline)
        out["consolidate"] = time.perf_counter() - started
        started = time.perf_counter()
        memory.index.ensure()
        out["index"] = time.perf_counter() - started
        if result.failures:
            raise SystemExit(f"objects stage failed at {hours} h: {result.failures[0]}")
        out.update(memory.stats())
    out["chars"] = embedder.chars
    out["total"] = out["extract"] + out["consolidate"] + out["index"]
    print(f"{hours} h: {out['captions']:,} captions, {out['records']:,} records, {out['objects']:,} objects; "
          f"extract {out['extract']:.1f} s, consolidate {out['consolidate']:.1f} s, index {out['index']:.1f} s "
          f"= {out['total']:.1f} s ({out['total'] / out['captions'] * 1e3:.0f} ms a caption); "
          f"{out['chars'] / out['captions']:,.0f} characters embedded a caption", flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=1, help="hours of the small corpus")
    parser.add_argument("--large", type=int, default=4, help="hours of the large corpus")
    args = parser.parse_args()
    before = run(args.small)
    large = run(args.large)
    after = run(args.small)
    small_seconds = (before["total"] + after["total"]) / 2
    print(f"small corpus twice: {before['total']:.1f} s before, {after['total']:.1f} s after the large one")
    print(f"objects growth {args.small}h->{args.large}h: {large['total'] / small_seconds:.1f}x time for "
          f"{large['captions'] / before['captions']:.0f}x captions "
          f"({large['chars'] / before['chars']:.1f}x characters embedded)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
