"""Event memory (TeleMem): one caption per clip, fixed once written, searchable by meaning.

Captions are written by the vision pass (`memory/vision_pass.py`: in batches, together with the
clip's object records when the run builds both) and committed one clip per transaction together
with the clip's progress, so a killed ingest loses at most the batches in flight and never
writes a caption twice.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from videomem.config import PipelineConfig
from videomem.evidence import Evidence
from videomem.memory.clips import ClipRow, clips_of, scope_sql
from videomem.memory.vision_pass import Output, describe_pending
from videomem.models.registry import ModelSet
from videomem.pipeline.base import StageResult
from videomem.store import Store
from videomem.store.vectors import ProgressFactory, VectorIndex, embedder_identity

STAGE = "caption"
INDEX_NAME = "events"


class EventMemory:
    """Event memory: one caption per short clip saying who does what, with which objects, and
    any on-screen text or speech. Query by action, person, object or written words."""

    def __init__(self, store: Store, models: ModelSet) -> None:
        self.store = store
        self.models = models
        self._index: VectorIndex | None = None

    @property
    def index(self) -> VectorIndex:
        if self._index is None:
            embedder = self.models.text_embedder
            self._index = VectorIndex(
                self.store,
                INDEX_NAME,
                lambda: ((r["id"], r["text"]) for r in self.store.query("SELECT id, text FROM events ORDER BY id")),
                embedder,
                embedder_identity(self.models.cfg.text_embedder, embedder.dim),
            )
        return self._index

    def build(self, cfg: PipelineConfig, video_ids: Sequence[str], progress: ProgressFactory | None = None) -> StageResult:
        """Caption every clip of these videos that has no caption yet, then refresh the index."""
        result = describe_pending(
            self.store, lambda: self.models.vision, video_ids, cfg.caption_batch_size, progress, caption=OUTPUT
        )[STAGE]
        self.refresh(progress)
        return result

    def refresh(self, progress: ProgressFactory | None = None) -> None:
        """Bring the caption index up to date with the stored captions."""
        self.index.refresh()
        self.index.ensure(progress)

    def stats(self) -> dict[str, int]:
        return {"captions": self.store.query("SELECT COUNT(*) AS n FROM events")[0]["n"]}

    def retrieve(
        self, query: str, top_k: int, until: float | None = None, video_id: str | None = None
    ) -> list[Evidence]:
        """The `top_k` captions closest in meaning to `query` among those visible to the question."""
        where, params = scope_sql(until, video_id)
        allowed = [r["id"] for r in self.store.query(f"SELECT id FROM events WHERE {where}", params)] if where else None
        hits = self.index.search(query, top_k, allowed)
        if not hits:
            return []
        scores = dict(hits)
        marks = ",".join("?" * len(hits))
        rows = self.store.query(
            f"SELECT id, video_id, t_start, t_end, text FROM events WHERE id IN ({marks})", tuple(scores)
        )
        evidence = [Evidence(r["t_start"], r["t_end"], r["text"], "event", scores[r["id"]], r["video_id"]) for r in rows]
        return sorted(evidence, key=lambda e: (-e.score, e.t_start))


def write_caption(tx: sqlite3.Connection, clip: ClipRow, caption: str) -> None:
    tx.execute(
        "INSERT OR REPLACE INTO events (clip_id, video_id, t_start, t_end, text) VALUES (?, ?, ?, ?, ?)",
        (clip.id, clip.video_id, clip.t_start, clip.t_end, caption.strip()),
    )


OUTPUT = Output(STAGE, write_caption)
"""What the vision pass fills for this memory."""


def reset(store: Store, video_ids: Sequence[str]) -> None:
    """Forget the captions of these videos so the next build writes them again (the index
    notices the change through its fingerprint)."""
    units = [c.unit for c in clips_of(store, video_ids)]
    with store.transaction() as tx:
        tx.executemany("DELETE FROM events WHERE video_id = ?", [(v,) for v in video_ids])
        tx.executemany("DELETE FROM stage_progress WHERE stage = ? AND unit = ?", [(STAGE, u) for u in units])
        tx.executemany("DELETE FROM stage_failures WHERE stage = ? AND unit = ?", [(STAGE, u) for u in units])
