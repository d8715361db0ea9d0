"""Episodic memory (WorldMM Sec. 3.1–3.2): captions at several time scales, one graph per scale.

**Windows.** Each scale of the pipeline (default 10 s, 30 s, 3 min, 10 min) cuts the timeline
into windows [k·s, (k+1)·s). Every video has its own timeline when all start at 0 (LVBench,
Video-MME); an EgoLife corpus shares one week-long timeline, so its windows may hold several
files, and none can bridge a gap longer than itself. A window's inputs are the captions of the
coarsest finer scale whose windows nest in it (10 min from 30 s, not from 3 min, which does not
divide 10 min; the finest scale from the clip captions), each in the window holding its
midpoint, so a window summarises exactly its own footage. A window's caption summarises its
inputs (language model, `summarise`); a window holding one input takes it as it is, so a
finest scale equal to the clip length costs no model call. A window stores the footage it actually holds (first start to last end), so a question
asked before that end cannot see it — finer windows answer for the part already recorded.

**Imported scales.** A scale whose captions were imported as released (WorldMM's EgoLife
captions, pipeline/imports.py) keeps them: each is a window of its own, taken as it is, and only
its entities and triplets are read; the next scale up builds on them like on built captions.

**Speakers.** The named speakers heard in a window join its entities, and on the scale built
from the clips each line they said is a `(speaker, said, words)` triplet (memory/speakers.py).

**Incremental.** Each window stores a digest of its inputs. A run recomputes the digests from
SQLite, scale by scale, and rewrites only windows whose inputs changed (new footage, or a
partial window that filled up) together with their entities and triplets, one window per
transaction: a killed run resumes without duplicating anything, and ingesting a corpus in
parts gives what ingesting it at once gives.

**Graphs and retrieval.** Every caption gets entities, then triplets conditioned on them, in
whole batches. Each scale is a HippoRAG-2 graph (`memory/graph.py`), saved under `index/`
and rebuilt only when its rows change. A query ranks each scale's visible captions by
Personalized PageRank (fused with a keyword ranking of the same captions when the agent says
`lexical`, `store/lexical.py`), the best `per_scale_k` of every scale go to a cross-scale re-rank
(`CaptionRanking.rerank`), and the first `top_k` of its order are returned with their scale.
A query that is a time range ("DAY1 16:30:30 - DAY1 18:30:30", "00:19:50 - 00:25:00",
`timeline.parse_range`) asks what was recorded from its start on: the finest scale's visible
windows that overlap it, in time order, consecutive windows that say the same as one, the first
`top_k`. What came right after a happening is what follows it in time, which no similarity to
a query finds (the windows in between may say nothing the query says, and the one right after
is no likelier to be ranked than one an hour on).

**Intervals.** A window of a coarser scale carries, as `Evidence.intervals`, the captions of the
next finer scale that nests in it, inside its range: which stretches of its footage recorded
what. A reader that counts or measures reads the stretches whose caption names what it asks
about (a 10-min window where the cup is picked up in three separate 30-s windows: three
stretches; a 10-min window painting a fence throughout: one stretch of 10 min), which the
window's one summary cannot tell. Choosing them is the reader's, by the question's words:
picking them here by the query's retrieval scores would cut a long activity to the few finer
windows that made a scale's `per_scale_k`. A window of the finest scale has no finer captions
and is its own one interval.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from videomem.config import EpisodicSettings, PipelineConfig
from videomem.core import ProgressFactory, StageResult
from videomem.errors import ModelError
from videomem.evidence import Evidence, Span
from videomem.memory import recency
from videomem.memory.build import BuildContext
from videomem.memory.events import EventMemory
from videomem.memory.speakers import said_between, speaker_entities, speech_triplets
from videomem.memory.graph import Passage, PassageGraph, SavedGraph, TextVectors, fingerprint, saved_sizes
from videomem.models.tasks import require
from videomem.models.tasks.episodic import CaptionRanking, EpisodicTasks, RankCandidate
from videomem.models.registry import ModelSet
from videomem.store import Store
from videomem.store.clips import scope_sql, speech_in, timeline_kind
from videomem.store.lexical import LexicalIndex, fused_top
from videomem.store.vectors import embedder_identity
from videomem.timeline import parse_range

SOURCE = "episodic"
IMPORTED = "imported:"
"""`inputs_hash` prefix of a caption imported as it is (WorldMM's released scales, written by
pipeline/imports.py): its scale is not built from finer captions; after the prefix, the digest
of the text its entities and triplets were read from (empty until they are)."""
_EPS = 1e-6
"""Slack on stored window bounds (floats) when finding the finer windows inside one."""
SETTINGS_KEY = "episodic_build"
"""`meta` row holding the build settings the graphs need at query time (synonym threshold)."""


@dataclass(frozen=True)
class _Item:
    """A caption feeding the next scale up."""

    scope: str
    videos: tuple[str, ...]
    t_start: float
    t_end: float
    text: str


@dataclass
class _Window:
    scale: float
    scope: str
    idx: int
    inputs: list[_Item]
    imported: bool = False

    @property
    def key(self) -> tuple[str, int]:
        return self.scope, self.idx

    @property
    def t_start(self) -> float:
        return min(i.t_start for i in self.inputs)

    @property
    def t_end(self) -> float:
        return max(i.t_end for i in self.inputs)

    @property
    def videos(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(v for i in self.inputs for v in i.videos))

    @property
    def digest(self) -> str:
        digest = fingerprint(self.scale, [[list(i.videos), i.t_start, i.t_end, i.text] for i in self.inputs])
        return IMPORTED + digest if self.imported else digest

    def as_item(self, text: str) -> _Item:
        return _Item(self.scope, self.videos, self.t_start, self.t_end, text)


def nests(finer: float, coarser: float) -> bool:
    """Whether every window of `coarser` is a whole number of windows of `finer`."""
    ratio = coarser / finer
    return abs(ratio - round(ratio)) < 1e-9


def windows_of(items: Sequence[_Item], scale: float) -> dict[tuple[str, int], _Window]:
    """Items grouped into the windows of `scale` holding their midpoints, in time order."""
    windows: dict[tuple[str, int], _Window] = {}
    for item in sorted(items, key=lambda i: (i.t_start, i.t_end, i.scope, i.videos)):
        idx = math.floor((item.t_start + item.t_end) / 2 / scale)
        windows.setdefault((item.scope, idx), _Window(scale, item.scope, idx, [])).inputs.append(item)
    return windows


def _seen(scale: float, until: float | None, video_id: str | None) -> tuple[str, tuple]:
    """SQL condition and parameters: the windows of `scale` a question may see."""
    where, params = scope_sql(until, None)
    terms = ["scale = ?", *([where] if where else []), *(["video_id = ? AND n_videos = 1"] if video_id else [])]
    return " AND ".join(terms), (scale, *params, *((video_id,) if video_id else ()))


class EpisodicMemory:
    """Episodic memory (WorldMM): captions of the footage at several time scales, from seconds
    to minutes or an hour, searched as knowledge graphs. Finds single moments and longer
    activities alike, each with its time range and scale; query by event, action, person,
    object or on-screen text, or by a time range ('DAY1 11:00:00 - DAY1 12:00:00') for the
    finest captions from its start on, in time order."""

    name = "episodic"

    def __init__(
        self,
        store: Store,
        models: ModelSet,
        settings: EpisodicSettings | None = None,
        lexical: bool = True,
        recency_half_life_s: float | None = None,
    ) -> None:
        self.store = store
        self.models = models
        self.settings = settings or EpisodicSettings()
        self.lexical = lexical
        self.recency_half_life_s = recency_half_life_s
        """Rank each scale's windows for a question asked at a moment by recency as well (`memory/recency.py`)."""
        self._graphs: dict[float, SavedGraph] = {}
        self._words: dict[float, tuple[PassageGraph, LexicalIndex]] = {}

    # ------------------------------------------------------------ build

    def build(self, ctx: BuildContext, video_ids: Sequence[str]) -> StageResult:
        """Bring every scale of the pipeline up to date with the clip captions, then the graphs.
        It works on the whole store, not only `video_ids`: on a corpus timeline a window may hold
        footage of several videos, and only windows whose inputs changed are rewritten."""
        cfg, progress = ctx.pipeline, ctx.progress
        result = StageResult(self.name)
        with self.store.transaction() as tx:
            tx.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                (SETTINGS_KEY, json.dumps({"synonym_threshold": cfg.episodic_synonym_threshold})),
            )
            placeholders = ",".join("?" * len(cfg.episodic_scales))
            tx.execute(f"DELETE FROM episodic_captions WHERE scale NOT IN ({placeholders})", cfg.episodic_scales)
        clips = self._clip_items()
        built: dict[float, list[_Item]] = {}
        for scale in cfg.episodic_scales:
            finer = [f for f in built if nests(f, scale)]
            written = self._build_scale(scale, built[finer[-1]] if finer else clips, cfg.episodic_batch_size,
                                        progress, result, from_clips=not finer)
            if written is None:
                break
            built[scale] = written
        vectors = TextVectors(self.models.text_embedder)  # scales share most entities and facts
        self._take_caption_vectors(vectors)
        for scale in self.scales():
            self._graph(scale).ensure(vectors)
        return result

    def _take_caption_vectors(self, vectors: TextVectors) -> None:
        """The clip captions are the finest scale's passages, and the caption index holds their
        vectors already: a week of captions is not embedded a second time."""
        ids, stored = EventMemory(self.store, self.models).index.stored()
        text_of = {r["id"]: r["text"].strip() for r in self.store.query("SELECT id, text FROM events")}
        vectors.take([text_of[int(i)] for i in ids], stored)

    def _clip_items(self) -> list[_Item]:
        corpus = timeline_kind(self.store) == "egolife"
        rows = self.store.query("SELECT video_id, t_start, t_end, text FROM events ORDER BY t_start, video_id")
        return [
            _Item("" if corpus else r["video_id"], (r["video_id"],), r["t_start"], r["t_end"], r["text"].strip())
            for r in rows
            if r["text"].strip()
        ]

    def _build_scale(
        self,
        scale: float,
        items: list[_Item],
        batch_size: int,
        progress: ProgressFactory | None,
        result: StageResult,
        *,
        from_clips: bool,
    ) -> list[_Item] | None:
        """Rewrite the windows of one scale whose inputs changed; their captions as the next
        scale's items, or None when a model failure stopped the run."""
        windows = self._imported_windows(scale) or windows_of(items, scale)
        stored = {
            (r["scope"], r["idx"]): (r["id"], r["inputs_hash"], r["text"])
            for r in self.store.query("SELECT id, scope, idx, inputs_hash, text FROM episodic_captions WHERE scale = ?", (scale,))
        }
        gone = [row[0] for key, row in stored.items() if key not in windows]
        if gone:
            with self.store.transaction() as tx:
                tx.executemany("DELETE FROM episodic_captions WHERE id = ?", [(i,) for i in gone])
        todo = [w for key, w in windows.items() if key not in stored or stored[key][1] != w.digest]
        result.skipped += len(windows) - len(todo)
        texts = {key: row[2] for key, row in stored.items() if key in windows}
        bar = progress(len(todo), f"{self.name} {scale:g} s", unit="window") if progress and todo else None
        try:
            for start in range(0, len(todo), batch_size):
                batch = todo[start : start + batch_size]
                try:
                    texts |= self._write_batch(batch, from_clips)
                except ModelError as exc:
                    left = len(todo) - start
                    result.failures.append(
                        (self.name, f"{exc} ({left} windows of the {scale:g} s scale left; re-run ingest to resume)")
                    )
                    return None
                result.done += len(batch)
                if bar is not None:
                    bar.update(len(batch))
        finally:
            if bar is not None:
                bar.close()
        return [w.as_item(texts[key]) for key, w in windows.items()]

    def _imported_windows(self, scale: float) -> dict[tuple[str, int], _Window]:
        """The captions imported at this scale, each a window of its own (its one input taken
        as it is, so no summary is written); none when the scale was not imported."""
        rows = self.store.query(
            "SELECT scope, idx, video_id, t_start, t_end, text FROM episodic_captions "
            "WHERE scale = ? AND inputs_hash LIKE ? ORDER BY t_start, idx",
            (scale, IMPORTED + "%"),
        )
        return {
            (r["scope"], r["idx"]): _Window(
                scale, r["scope"], r["idx"], [_Item(r["scope"], (r["video_id"],), r["t_start"], r["t_end"], r["text"])], True
            )
            for r in rows
        }

    def _write_batch(self, batch: list[_Window], from_clips: bool) -> dict[tuple[str, int], str]:
        """Caption, entities and triplets of each window (model calls on the whole batch), then
        one transaction per window. The speakers heard in a window join its entities; on the
        scale built from the clips, each line they said is a triplet too (`memory/speakers.py`)."""
        language = require(self.models.language, EpisodicTasks)
        merged = [w for w in batch if len(w.inputs) > 1]
        summaries = language.summarise([[i.text for i in w.inputs] for w in merged]) if merged else []
        if len(summaries) != len(merged):
            raise RuntimeError(f"summarise returned {len(summaries)} summaries for {len(merged)} windows")
        summary_of = {w.key: s.strip() for w, s in zip(merged, summaries)}
        texts = [summary_of.get(w.key, w.inputs[0].text) for w in batch]
        entities = language.extract_entities(texts)
        triplets = language.extract_triplets(texts, entities)
        if not len(entities) == len(triplets) == len(texts):
            raise RuntimeError(f"{len(texts)} captions got {len(entities)} entity lists and {len(triplets)} triplet lists")
        for window, text, names, facts in zip(batch, texts, entities, triplets):
            videos = window.videos
            said = said_between(self.store, videos, window.t_start, window.t_end)
            names = speaker_entities(names, said)
            if from_clips:
                facts = [*facts, *speech_triplets(said)]
            with self.store.transaction() as tx:
                tx.execute(
                    "DELETE FROM episodic_captions WHERE scale = ? AND scope = ? AND idx = ?",
                    (window.scale, window.scope, window.idx),
                )
                caption_id = tx.execute(
                    "INSERT INTO episodic_captions (scale, scope, idx, video_id, n_videos, t_start, t_end, text, "
                    "inputs_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (window.scale, window.scope, window.idx, videos[0], len(videos), window.t_start, window.t_end,
                     text, window.digest),
                ).lastrowid
                tx.executemany(
                    "INSERT INTO episodic_entities (caption_id, position, name) VALUES (?, ?, ?)",
                    [(caption_id, n, name) for n, name in enumerate(names)],
                )
                tx.executemany(
                    "INSERT INTO episodic_triplets (caption_id, subject, relation, object) VALUES (?, ?, ?, ?)",
                    [(caption_id, t.subject, t.relation, t.object) for t in facts],
                )
        return {w.key: text for w, text in zip(batch, texts)}

    # ------------------------------------------------------------ graphs

    def scales(self) -> list[float]:
        return [r[0] for r in self.store.query("SELECT DISTINCT scale FROM episodic_captions ORDER BY scale")]

    def _graph(self, scale: float) -> SavedGraph:
        if scale not in self._graphs:
            embedder = self.models.text_embedder
            row = self.store.query("SELECT value FROM meta WHERE key = ?", (SETTINGS_KEY,))
            threshold = json.loads(row[0]["value"])["synonym_threshold"] if row else PipelineConfig().episodic_synonym_threshold
            self._graphs[scale] = SavedGraph(
                self._graph_path(scale),
                lambda: self._passages(scale),
                embedder,
                {"embedder": embedder_identity(self.models.cfg.text_embedder, embedder.dim)},
                threshold,
            )
        return self._graphs[scale]

    def _graph_path(self, scale: float) -> Path:
        return self.store.index_dir / f"episodic_{scale:g}s"

    def graph(self, scale: float) -> PassageGraph:
        """The graph of one scale, loaded (or rebuilt when stale) on first use in this process."""
        return self._graph(scale).graph

    def refresh(self) -> None:
        """Forget loaded graphs so the next query checks them against SQLite again."""
        for saved in self._graphs.values():
            saved.refresh()

    def _passages(self, scale: float) -> list[Passage]:
        captions = self.store.query(
            "SELECT id, text FROM episodic_captions WHERE scale = ? ORDER BY t_start, scope, idx", (scale,)
        )
        names: dict[int, list[str]] = {}
        for r in self.store.query(
            "SELECT e.caption_id, e.name FROM episodic_entities e JOIN episodic_captions c ON c.id = e.caption_id "
            "WHERE c.scale = ? ORDER BY e.caption_id, e.position",
            (scale,),
        ):
            names.setdefault(r[0], []).append(r[1])
        facts: dict[int, list[tuple[str, str, str]]] = {}
        for r in self.store.query(
            "SELECT t.caption_id, t.subject, t.relation, t.object FROM episodic_triplets t "
            "JOIN episodic_captions c ON c.id = t.caption_id WHERE c.scale = ? ORDER BY t.caption_id, t.id",
            (scale,),
        ):
            facts.setdefault(r[0], []).append((r[1], r[2], r[3]))
        return [Passage(r["id"], r["text"], names.get(r["id"], []), facts.get(r["id"], [])) for r in captions]

    # ------------------------------------------------------------ retrieve

    def stats(self) -> dict[str, int]:
        """Captions per scale, triplets, and the nodes and edges of the graphs as last saved
        (counted without loading a model or a graph)."""
        counts = self.store.query("SELECT scale, COUNT(*) AS n FROM episodic_captions GROUP BY scale ORDER BY scale")
        sizes = {f"captions {r['scale']:g}s": r["n"] for r in counts}
        sizes["triplets"] = self.store.query("SELECT COUNT(*) AS n FROM episodic_triplets")[0]["n"]
        saved = [saved_sizes(self._graph_path(r["scale"])) for r in counts]
        sizes["graph nodes"] = sum(nodes for nodes, _ in saved)
        sizes["graph edges"] = sum(edges for _, edges in saved)
        return sizes

    def retrieve(
        self, query: str, top_k: int, until: float | None = None, video_id: str | None = None
    ) -> list[Evidence]:
        """PPR candidates of every scale, re-ranked across scales; the first `top_k`. A time
        range: the finest scale's windows from its start on (`_from`)."""
        scales = self.scales()
        if not scales:
            return []
        span = parse_range(query)
        if span is not None:
            return self._from(*span, scales[0], top_k, until, video_id)
        vector = np.asarray(self.models.text_embedder.embed([query])[0], dtype=np.float32)
        candidates: list[RankCandidate] = []
        rows: dict[int, sqlite3.Row] = {}
        scores: dict[int, float] = {}
        for scale in scales:
            graph = self.graph(scale)
            visible = self._visible(graph, scale, until, video_id)
            if visible is not None and not visible.any():
                continue
            pool = recency.pool_size(self.settings.per_scale_k, until, self.recency_half_life_s)
            ranked = graph.rank(
                vector,
                pool,
                damping=self.settings.damping,
                passage_node_weight=self.settings.passage_node_weight,
                linking_top_k=self.settings.linking_top_k,
                visible=visible,
            )
            if self.lexical:
                ranked = self._with_words(ranked, query, scale, graph, visible, pool)
            found = self._rows([i for i, _ in ranked])  # a window rewritten since the graph was loaded is gone
            ends = {i: row["t_end"] for i, row in found.items()}
            ranked = recency.reranked(ranked, ends, until, self.recency_half_life_s)[: self.settings.per_scale_k]
            embedded = graph.vectors_of([i for i, _ in ranked])
            best = max((s for _, s in ranked), default=0.0) or 1.0
            for rank, ((caption_id, score), embedding) in enumerate(zip(ranked, embedded), start=1):
                row = found[caption_id]
                rows[caption_id], scores[caption_id] = row, score / best
                candidates.append(
                    RankCandidate(
                        caption_id, row["text"], row["t_start"], row["t_end"], scale, rank, row["scope"], embedding
                    )
                )
        if not candidates:
            return []
        order = require(self.models.language, CaptionRanking).rerank(query, candidates)
        return [
            Evidence(
                r["t_start"], r["t_end"], r["text"], SOURCE, scores[i], r["video_id"], scale=r["scale"],
                speech=speech_in(self.store, r["video_id"], r["t_start"], r["t_end"]),
                intervals=self._nested(r, scales),
            )
            for i in order[:top_k]
            if (r := rows.get(i)) is not None
        ]

    def _from(
        self, start: float, end: float, scale: float, top_k: int, until: float | None, video_id: str | None
    ) -> list[Evidence]:
        """The visible windows of `scale` that overlap [start, end], in time order, consecutive
        windows that say the same merged into one (a room shown still for a minute is one
        happening, not six), the first `top_k`; each scored 1 (time, not similarity, ranks them)."""
        where, args = _seen(scale, until, video_id)
        rows = self.store.query(
            f"SELECT id, scale, scope, video_id, t_start, t_end, text FROM episodic_captions WHERE {where} "
            "AND t_end > ? AND t_start < ? ORDER BY t_start, t_end, id",
            (*args, start, end),
        )
        runs: list[list] = []
        for r in rows:
            if runs and runs[-1][0]["text"] == r["text"] and runs[-1][0]["video_id"] == r["video_id"] \
                    and r["t_start"] - runs[-1][1] <= _EPS:
                runs[-1][1] = r["t_end"]
            elif len(runs) == top_k:
                break
            else:
                runs.append([r, r["t_end"]])
        return [
            Evidence(r["t_start"], t_end, r["text"], SOURCE, 1.0, r["video_id"], scale=r["scale"],
                     speech=speech_in(self.store, r["video_id"], r["t_start"], t_end))
            for r, t_end in runs
        ]

    def _with_words(
        self,
        ranked: list[tuple[int, float]],
        query: str,
        scale: float,
        graph: PassageGraph,
        visible: np.ndarray | None,
        k: int,
    ) -> list[tuple[int, float]]:
        """The scale's PPR ranking fused with its keyword ranking: the first `k`, scored relative
        to the best."""
        kept = self._words.get(scale)
        if kept is None or kept[0] is not graph:
            kept = self._words[scale] = (graph, LexicalIndex(graph.passage_ids, graph.passage_texts))
        allowed = graph.passage_ids[visible] if visible is not None else None
        words = kept[1].search(query, k, allowed)
        return fused_top(k, [i for i, _ in ranked], [i for i, _ in words])

    def _nested(self, row: sqlite3.Row, scales: Sequence[float]) -> tuple[Span, ...]:
        """The captions of the coarsest finer scale that nests in the window's scale, inside its
        range, in time order; none (its own range is its one interval) for the finest scale or
        a window holding a single finer caption."""
        finer = [s for s in scales if s < row["scale"] and nests(s, row["scale"])]
        if not finer:
            return ()
        inner = self.store.query(
            "SELECT t_start, t_end, text FROM episodic_captions "
            "WHERE scale = ? AND scope = ? AND t_end BETWEEN ? AND ? AND t_start >= ? ORDER BY t_start, idx",
            (finer[-1], row["scope"], row["t_start"], row["t_end"] + _EPS, row["t_start"] - _EPS),
        )
        return tuple(Span(r["t_start"], r["t_end"], r["text"]) for r in inner) if len(inner) > 1 else ()

    def _visible(self, graph: PassageGraph, scale: float, until: float | None, video_id: str | None) -> np.ndarray | None:
        """Which of the graph's captions the question may see (None: all of them)."""
        if until is None and video_id is None:
            return None
        where, args = _seen(scale, until, video_id)
        ids = [r[0] for r in self.store.query(f"SELECT id FROM episodic_captions WHERE {where}", args)]
        return np.isin(graph.passage_ids, np.array(ids, dtype=np.int64))

    def _rows(self, ids: list[int]) -> dict[int, sqlite3.Row]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        return {
            r["id"]: r
            for r in self.store.query(
                f"SELECT id, scale, scope, video_id, t_start, t_end, text FROM episodic_captions WHERE id IN ({marks})",
                tuple(ids),
            )
        }

    @staticmethod
    def reset(store: Store, video_ids: Sequence[str]) -> None:
        """Forget the windows holding footage of these videos (their entities and triplets go with
        them), so the next build writes them again; the graphs notice through their fingerprints."""
        with store.transaction() as tx:
            for vid in video_ids:
                tx.execute("DELETE FROM episodic_captions WHERE scope = ? OR video_id = ?", (vid, vid))
                span = tx.execute("SELECT t_offset, t_offset + duration FROM videos WHERE id = ?", (vid,)).fetchone()
                if span is not None:
                    tx.execute(
                        "DELETE FROM episodic_captions WHERE scope = '' AND t_start < ? AND t_end > ?", (span[1], span[0])
                    )
