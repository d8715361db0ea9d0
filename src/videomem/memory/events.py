"""Event memory (TeleMem): one caption per clip, fixed once written, searchable by meaning.

Captions are written by the vision pass (`pipeline/vision_pass.py`: in batches, together with the
clip's object records when the run builds both) and committed one clip per transaction together
with the clip's progress, so a killed ingest loses at most the batches in flight and never
writes a caption twice.

A caption's `source` says where it came from: `generated` by this stage, or imported from a
dataset's own captions (`pipeline/imports.py` marks those clips captioned, so this stage makes
no vision call for them, and its `--force` reset leaves them to the import).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from videomem.core import ProgressFactory
from videomem.evidence import Evidence
from videomem.memory import recency
from videomem.models.registry import ModelSet
from videomem.store import Store
from videomem.store.clips import ClipRow, clips_of, speech_in, transcript_of, visible_ids
from videomem.store.lexical import LexicalIndex, fused_top
from videomem.store.vectors import VectorIndex, embedder_identity

INDEX_NAME = "events"
GENERATED = "generated"
"""`events.source` of captions this stage writes."""
FUSION_POOL = 50
"""Captions each ranking (embedding, keywords) proposes before fusion, for any `top_k` up to it."""


class EventMemory:
    """Event memory: one caption per short clip saying who does what, with which objects, and
    any on-screen text or speech. Query by action, person, object or written words."""

    name = "events"
    stage = "caption"
    """The pipeline stage that writes the captions (whose progress marks say which clips have
    one): the event memory has no build of its own."""

    def __init__(
        self, store: Store, models: ModelSet, lexical: bool = True, recency_half_life_s: float | None = None
    ) -> None:
        self.store = store
        self.models = models
        self.lexical = lexical
        """Fuse a keyword (BM25) ranking with the embedding ranking (`store/lexical.py`)."""
        self.recency_half_life_s = recency_half_life_s
        """Rank a question asked at a moment by recency as well (`memory/recency.py`); None: relevance alone."""
        self._index: VectorIndex | None = None
        self._words: LexicalIndex | None = None

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

    @property
    def words(self) -> LexicalIndex:
        if self._words is None:
            rows = self.store.query("SELECT id, text FROM events ORDER BY id")
            self._words = LexicalIndex([r["id"] for r in rows], [r["text"] for r in rows])
        return self._words

    def refresh(self, progress: ProgressFactory | None = None) -> None:
        """Bring the caption index up to date with the stored captions."""
        self.index.refresh()
        self.index.ensure(progress)
        self._words = None

    def stats(self) -> dict[str, int]:
        """Captions in all, and per source (generated, egolifecap, ...)."""
        rows = self.store.query("SELECT source, COUNT(*) AS n FROM events GROUP BY source ORDER BY source")
        return {"captions": sum(r["n"] for r in rows), **{f"{r['source']} captions": r["n"] for r in rows}}

    def retrieve(
        self, query: str, top_k: int, until: float | None = None, video_id: str | None = None
    ) -> list[Evidence]:
        """The `top_k` captions closest to `query` among those visible to the question: by
        meaning, fused with the keyword ranking when `lexical` (scores then relative to the best);
        for a question asked at `until`, by recency as well when the memory has a half-life."""
        visible = visible_ids(self.store, "events", until, video_id)
        wanted = recency.pool_size(top_k, until, self.recency_half_life_s)
        if self.lexical:
            pool = max(wanted, FUSION_POOL)
            meaning = [i for i, _ in self.index.search(query, pool, visible)]
            words = [i for i, _ in self.words.search(query, pool, visible)]
            hits = fused_top(wanted, meaning, words)
        else:
            hits = self.index.search(query, wanted, visible)
        if not hits:
            return []
        marks = ",".join("?" * len(hits))
        rows = {
            r["id"]: r
            for r in self.store.query(
                f"SELECT id, video_id, t_start, t_end, text FROM events WHERE id IN ({marks})", tuple(i for i, _ in hits)
            )
        }
        ends = {i: r["t_end"] for i, r in rows.items()}
        hits = recency.reranked(hits, ends, until, self.recency_half_life_s)
        evidence = [self._evidence(rows[i], score) for i, score in hits[:top_k]]
        return sorted(evidence, key=lambda e: (-e.score, e.t_start))

    def _evidence(self, row: sqlite3.Row, score: float) -> Evidence:
        return Evidence(
            row["t_start"], row["t_end"], row["text"], "event", score, row["video_id"],
            speech=speech_in(self.store, row["video_id"], row["t_start"], row["t_end"]),
        )

    @staticmethod
    def reset(store: Store, video_ids: Sequence[str]) -> None:
        """Forget the captions this stage wrote for these videos so the next build writes them
        again (the index notices the change through its fingerprint). Imported captions stay."""
        imported = {r["clip_id"] for r in store.query("SELECT clip_id FROM events WHERE source != ?", (GENERATED,))}
        units = [c.unit for c in clips_of(store, video_ids) if c.id not in imported]
        with store.transaction() as tx:
            tx.executemany("DELETE FROM events WHERE video_id = ? AND source = ?", [(v, GENERATED) for v in video_ids])
            tx.executemany("DELETE FROM stage_progress WHERE stage = ? AND unit = ?", [(EventMemory.stage, u) for u in units])
            tx.executemany("DELETE FROM stage_failures WHERE stage = ? AND unit = ?", [(EventMemory.stage, u) for u in units])


def write_caption(tx: sqlite3.Connection, clip: ClipRow, caption: str) -> None:
    tx.execute(
        "INSERT OR REPLACE INTO events (clip_id, video_id, t_start, t_end, text, source) VALUES (?, ?, ?, ?, ?, ?)",
        (clip.id, clip.video_id, clip.t_start, clip.t_end, caption.strip(), GENERATED),
    )


def imported_captions(store: Store, video_ids: Sequence[str]) -> dict[str, str]:
    """Clip unit → caption, for the clips of these videos whose caption was imported (not
    written by this stage): their object records are read from that text, not from the frames.

    The import appends a frameless clip's speech to its caption (`pipeline/imports.py`); that
    part is left out here, since the people heard are records of their own with what they said
    (`memory/speakers.py`), and a phrase someone said is not a thing seen."""
    if not video_ids:
        return {}
    marks = ",".join("?" * len(video_ids))
    rows = store.query(
        "SELECT c.id, c.video_id, c.idx, c.t_start, c.t_end, e.text FROM events e JOIN clips c ON c.id = e.clip_id "
        f"WHERE e.source != ? AND c.video_id IN ({marks})",
        (GENERATED, *video_ids),
    )
    out = {}
    for r in rows:
        text, speech = r["text"], transcript_of(store, [r["id"]])
        if speech and text.endswith(speech):
            text = text[: -len(speech)].rstrip()
        out[ClipRow(r["id"], r["video_id"], r["idx"], r["t_start"], r["t_end"]).unit] = text
    return out
