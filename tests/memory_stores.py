"""Stores for the memory, agent and `ask` tests.

* `hand_store`: rows written directly (videos, clips, frames with rendered text), for unit tests
  of the memories and the agent loop that must not depend on the video pipeline;
  `picture_store` does the same with any pictures (coloured shapes, scenes) as the frames.
* `scripted_store`: the shortest scripted video from `videomem.synth`, ingested end to end
  with the offline models. It is built once per test session, so every test module that
  needs it shares one ingest.
* `offline_models`: one offline ModelSet per session (loading OCR and MiniLM takes seconds).
* `built`: a memory's build as `ingest` runs it (its stage's context), with the memory's own
  store and models.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from videomem.config import PipelineConfig, load_models, load_pipeline
from videomem.core import StageResult
from videomem.eval.questions import Question
from videomem.synth import MIN_MINUTES, ScriptedEvent, SynthCorpus, synth
from videomem.models.registry import ModelSet
from videomem.pipeline.base import StageContext
from videomem.pipeline.runner import ingest
from videomem.store import Store

CLIP = 10.0


@functools.cache
def offline_models() -> ModelSet:
    return ModelSet(load_models())


def built(memory, cfg: PipelineConfig, video_ids: Sequence[str] = ()) -> StageResult:
    """`memory.build` in a stage's context over `video_ids` (the corpus-wide memories look at the
    whole store), with the memory's own store and models and no progress bars."""
    return memory.build(StageContext(memory.store, cfg, lambda: memory.models, show_progress=False), video_ids)


class CountingEmbedder:
    """A text embedder that counts the texts (and their characters) it is given and passes them to `real`."""

    def __init__(self, real) -> None:
        self.real, self.dim, self.texts, self.chars = real, real.dim, 0, 0

    def embed(self, texts):
        self.texts += len(texts)
        self.chars += sum(len(t) for t in texts)
        return self.real.embed(texts)


def text_picture(text: str | None) -> Image.Image:
    """A 320×180 frame showing `text` in black on a light panel (a plain blue-grey frame for None)."""
    image = Image.new("RGB", (320, 180), (90, 110, 150))
    if text:
        draw = ImageDraw.Draw(image)
        draw.rectangle([10, 50, 310, 130], fill=(245, 245, 240))
        draw.text((160, 90), text, fill=(0, 0, 0), anchor="mm", font=ImageFont.load_default(size=22))
    return image


def hand_store(root: Path, texts: list[str | None], video_id: str = "v", t_offset: float = 0.0) -> Store:
    """One video of len(texts) 10-s clips, 2 frames each showing that clip's text."""
    return picture_store(root, [text_picture(text) for text in texts], video_id, t_offset)


def picture_store(root: Path, pictures: list[Image.Image], video_id: str = "v", t_offset: float = 0.0) -> Store:
    """One video of len(pictures) 10-s clips, 2 frames each showing that clip's picture (320×180).
    A store directory may hold several such videos (call again with another `video_id`)."""
    store = Store(root, create=True)
    frames_dir = store.frames_dir / video_id
    frames_dir.mkdir(parents=True, exist_ok=True)
    with store.transaction() as tx:
        tx.execute(
            "INSERT INTO videos (id, path, t_offset, duration, fps, n_frames, width, height, rotation, probe_json)"
            " VALUES (?, ?, ?, ?, 25, ?, 320, 180, 0, '{}')",
            (video_id, f"{video_id}.mp4", t_offset, CLIP * len(pictures), int(25 * CLIP * len(pictures))),
        )
        for idx, picture in enumerate(pictures):
            t0 = t_offset + idx * CLIP
            clip_id = tx.execute(
                "INSERT INTO clips (video_id, idx, t_start, t_end) VALUES (?, ?, ?, ?)", (video_id, idx, t0, t0 + CLIP)
            ).lastrowid
            for k, dt in enumerate((2.5, 7.5)):
                relative = f"frames/{video_id}/{idx:05d}_{k}.jpg"
                picture.save(store.root / relative, quality=90)
                tx.execute(
                    "INSERT INTO frames (clip_id, video_id, t, path, width, height) VALUES (?, ?, ?, ?, 320, 180)",
                    (clip_id, video_id, t0 + dt, relative),
                )
    return store


def events_store(root: Path, captions: list[str]) -> Store:
    """`hand_store` of blank clips whose event captions are `captions`."""
    store = hand_store(root, [None] * len(captions))
    with store.transaction() as tx:
        for clip, text in zip(store.query("SELECT * FROM clips ORDER BY idx"), captions):
            tx.execute(
                "INSERT INTO events (clip_id, video_id, t_start, t_end, text) VALUES (?, 'v', ?, ?, ?)",
                (clip["id"], clip["t_start"], clip["t_end"], text),
            )
    return store


def captioned_store(root: Path, texts: list[str]) -> Store:
    """`events_store` whose captions say the on-screen `texts`."""
    return events_store(root, [f"On-screen text reads '{text}'." for text in texts])


@functools.cache
def scripted_store(base: Path) -> tuple[Path, SynthCorpus]:
    """(store directory, corpus) of the session's ingested scripted video: generated and
    ingested on the first call, shared by every later one."""
    root = base / "scripted"
    corpus = synth(root / "corpus", minutes=MIN_MINUTES, seed=0)
    store_dir = root / "store"
    with Store(store_dir, create=True) as store:
        report = ingest(corpus.videos, store, load_pipeline(corpus.pipeline), offline_models, show_progress=False)
    assert report.ok, report.all_failures()
    return store_dir, corpus


SINGLE_EVENT = {"key information retrieval", "entity recognition", "event understanding"}
"""Question categories whose answer lies in one scripted event."""


def late_question(corpus: SynthCorpus, after: float = 120.0) -> tuple[Question, ScriptedEvent]:
    """A question about one event that happens after `after` seconds, and that event."""
    for q in corpus.questions:
        if set(q.categories) <= SINGLE_EVENT and len(q.targets) == 1 and q.targets[0][0] >= after:
            t_start, t_end = q.targets[0]
            event = next(e for e in corpus.events if e.t_start == t_start and e.t_end == t_end)
            return q, event
    raise AssertionError("the scripted corpus has no single-event question after 2 minutes")
