"""Run ingest stages with scripted models, optionally SIGKILLing the process at a chosen point.

`python tests/kill_stage.py STORE VIDEO... --stages caption --kill-at "INTO events:5"` dies, with
no clean-up of any kind, inside the 5th transaction whose statements include `INTO events` (its
rows written, its COMMIT not reached); `--kill-at index:events` dies while the `events` index is
being put in place (the index file replaced, its sidecar not yet). test_kill.py runs it, then resumes in-process with
`run_stages` and compares the store with a clean run.

The models are deterministic stand-ins (captions and object records from clip times, merges by
name, a hashed bag-of-words embedder), so the only thing under test is the stages' resumability.
"""

from __future__ import annotations

import argparse
import os
import signal
import zlib
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from videomem.config import ModelsConfig, PipelineConfig, RoleConfig
from videomem.models.engines import Batching
from videomem.models.tasks.objects import ClipNotes, ObjectRecord
from videomem.models.usage import UsageMeter
from videomem.core import ClipView
from videomem.pipeline.runner import ingest
from videomem.store import Store
from videomem.store import vectors
from videomem.video.transcripts import Segment

PIPELINE = PipelineConfig(clip_seconds=2.0, caption_batch_size=3, object_batch_size=4, object_summary_records=8, transcribe_chunk_seconds=8)


class HashEmbedder:
    """Bag of words hashed into 64 dimensions, L2-normalised: deterministic and instant."""

    dim = 64

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, zlib.crc32(word.encode()) % self.dim] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


class ScriptedVision:
    def batching(self, batch_size: int) -> Batching:
        return Batching(batch_size)

    def describe_clips(self, clips: Sequence[ClipView]) -> list[ClipNotes]:
        return [ClipNotes(caption=c, objects=o) for c, o in zip(self.caption_clips(clips), self.extract_objects(clips))]

    def caption_clips(self, clips: Sequence[ClipView]) -> list[str]:
        return [f"{c.video_id} from {c.t_start:g} to {c.t_end:g} shows {len(c.frames)} frames; heard: {c.transcript}" for c in clips]

    def extract_objects(self, clips: Sequence[ClipView]) -> list[list[ObjectRecord]]:
        return [
            [
                ObjectRecord(name="person 1", kind="person", appearance=["blue top"], value=f"walks at {c.t_start:g}"),
                ObjectRecord(name=f"box {int(c.t_start) // 6}", kind="object", appearance=["red"], value="on a table"),
            ]
            for c in clips
        ]


class ScriptedLanguage:
    def same_entity(self, pairs: Sequence[tuple[ObjectRecord, ObjectRecord]]) -> list[bool]:
        return [a.name == b.name for a, b in pairs]

    def summarise(self, groups: Sequence[Sequence[str]]) -> list[str]:
        return [" ".join(group) for group in groups]


class ScriptedRecognizer:
    """A segment per speech span, ending STRETCH seconds after it, as a model's timestamps may:
    conftest's speech video then has segments that reach into the next audio chunk's clips."""

    STRETCH = 3.0

    def transcribe(self, audio: np.ndarray, spans: Sequence[tuple[float, float]]) -> list[Segment]:
        return [Segment(a, b + self.STRETCH, f"spoken from {a:.2f} to {b:.2f}") for a, b in spans]


@dataclass
class ScriptedModels:
    cfg: ModelsConfig = field(
        default_factory=lambda: ModelsConfig(
            vlm=RoleConfig(backend="offline"), llm=RoleConfig(backend="offline"), text_embedder=RoleConfig(backend="offline")
        )
    )
    meter: UsageMeter = field(default_factory=UsageMeter)
    vision: ScriptedVision = field(default_factory=ScriptedVision)
    language: ScriptedLanguage = field(default_factory=ScriptedLanguage)
    text_embedder: HashEmbedder = field(default_factory=HashEmbedder)
    asr: ScriptedRecognizer = field(default_factory=ScriptedRecognizer)


def run_stages(store_dir: Path, videos: Sequence[Path], stages: Sequence[str], workers: int = 1) -> Path:
    with Store(store_dir, create=True) as store:
        report = ingest(videos, store, PIPELINE, ScriptedModels, stages=stages, workers=workers, show_progress=False)
    if not report.ok:
        raise SystemExit(f"ingest failed: {report.all_failures()}")
    return store_dir


def contents(root: Path) -> dict[str, list[tuple]]:
    """Everything sample, caption and objects write, by natural keys (row ids differ between runs)."""
    queries = {
        "clips": "SELECT video_id, idx, t_start, t_end FROM clips ORDER BY video_id, idx",
        "frames": "SELECT video_id, t, path, width, height FROM frames ORDER BY video_id, t",
        "transcripts": "SELECT video_id, t_start, t_end, text, source FROM transcripts ORDER BY video_id, t_start, text",
        "events": "SELECT video_id, t_start, t_end, text, source FROM events ORDER BY video_id, t_start",
        "observations": "SELECT b.video_id, b.t_start, b.name, b.value, o.name, o.first_seen FROM object_observations b "
        "LEFT JOIN objects o ON o.id = b.object_id ORDER BY b.video_id, b.t_start, b.name",
        "objects": "SELECT name, kind, first_seen, last_seen, appearance_json, summary FROM objects ORDER BY first_seen, name",
        "progress": "SELECT stage, unit FROM stage_progress ORDER BY stage, unit",
    }
    with Store(root) as store:
        return {name: [tuple(r) for r in store.query(sql)] for name, sql in queries.items()}


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class _Watched:
    """A connection that remembers the statements run through it."""

    def __init__(self, conn) -> None:
        self.conn, self.statements = conn, []

    def execute(self, sql: str, *args):
        self.statements.append(sql)
        return self.conn.execute(sql, *args)

    def executemany(self, sql: str, *args):
        self.statements.append(sql)
        return self.conn.executemany(sql, *args)

    def __getattr__(self, name: str):
        return getattr(self.conn, name)


def kill_in_transaction(pattern: str, number: int) -> None:
    """Die inside the `number`-th transaction that runs a statement containing `pattern`,
    after its rows and before its COMMIT."""
    opened = Store.transaction
    count = 0

    @contextmanager
    def transaction(self):
        nonlocal count
        with opened(self) as tx:
            watched = _Watched(tx)
            yield watched
            if any(pattern in sql for sql in watched.statements):
                count += 1
                if count == number:
                    _die()

    Store.transaction = transaction


def kill_while_saving(index: str) -> None:
    """Die after the index file of `index` is in place and before its sidecar is."""
    replace = os.replace

    def replacing(src, dst) -> None:
        replace(src, dst)
        if Path(dst).name == f"{index}.faiss":
            _die()

    vectors.os.replace = replacing


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store", type=Path)
    parser.add_argument("videos", type=Path, nargs="+")
    parser.add_argument("--stages", required=True)
    parser.add_argument("--kill-at", required=True, help="'SQL PATTERN:N' or 'index:NAME'")
    args = parser.parse_args()
    what, where = args.kill_at.rsplit(":", 1)
    if what == "index":
        kill_while_saving(where)
    else:
        kill_in_transaction(what, int(where))
    run_stages(args.store, args.videos, args.stages.split(","))


if __name__ == "__main__":
    main()
