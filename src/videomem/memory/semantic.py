"""Semantic memory (WorldMM Sec. 3.1–3.2): lasting knowledge that evolves with the footage.

**Segments.** The timeline is cut into coarse segments of `semantic_segment_seconds`
([k·s, (k+1)·s), per video when every video starts at 0, corpus-wide on an EgoLife timeline,
like the episodic windows). A segment's inputs are the episodic triplets of the finest episodic
scale whose captions have their midpoint in it.

**Induction.** Segment by segment in time order, the language model turns the segment's facts
into semantic triplets (relations, habits, preferences, abilities), each with the episodic
triplets that support it (`SemanticTasks.induce_semantic`). So that a habit seen on three
different days can be recognised, the facts of earlier segments of the same timeline that are
closest in meaning to the segment's own (`RECALL_K` each, `RECALL_SIMILARITY`) go with them,
labelled by segment. Each fact is embedded once, into a FAISS index kept under `index/`; a run
reads the vectors back and recalls a segment's facts with one matrix product over the earlier
ones, so adding a segment embeds nothing for recall however long the timeline already is.

**Consolidation.** Each new triplet is compared by embedding with the triplets valid so far on
its timeline (each text embedded once per run); the `KNOWN_K` most similar at or above
`semantic_merge_threshold` go with it to the language model
(`SemanticTasks.consolidate`), which names a known triplet that states the same knowledge (the
evidence is merged into it) and the known triplets the new one contradicts or outdates (they
are retired). Nothing is deleted: a triplet holds `valid_from` (when its segment's evidence was
recorded) and `retired_at`, so a question asked with `until` sees the knowledge as it stood then.

**Storage.** One transaction per segment writes its triplets, evidence links, retirements and
the digest of its inputs, so a killed run resumes at the next segment, and a later ingest adds
only segments whose inputs are new or changed. `--force` forgets the semantic memory of the
timelines of the videos given and consolidates them again from the start.

**Retrieval.** The entity graph of all triplets (`memory/graph.py`'s `PassageGraph`: entity
nodes, one edge per triplet between subject and object, synonym edges) is saved under `index/`
and masked per query to the triplets valid at `until` whose evidence the question may see. The
query seeds PPR on the entities of the `linking_top_k` most similar visible triplets, and each
visible triplet scores PPR(subject) + PPR(object) (WorldMM's edge score; a triplet relating an
entity to itself is left out, as it would count its entity twice); triplets between the same two
entities tie, and the tie goes to the one closest to the query. The best `top_k` are returned
with the time ranges of their evidence.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from videomem.config import PipelineConfig, SemanticSettings
from videomem.core import StageResult
from videomem.errors import MalformedOutputError, ModelError
from videomem.evidence import Evidence
from videomem.memory.build import BuildContext
from videomem.memory.graph import (
    Passage,
    PassageGraph,
    SavedGraph,
    TextVectors,
    entity_key,
    fact_text,
    fingerprint,
    saved_sizes,
)
from videomem.models.tasks.episodic import Triplet
from videomem.models.tasks import require
from videomem.models.tasks.semantic import EpisodicFact, KnownTriplet, NewTriplet, SemanticTasks, SemanticTriplet
from videomem.models.registry import ModelSet
from videomem.store import Store
from videomem.store.clips import timeline_kind
from videomem.store.vectors import VectorIndex, embedder_identity
from videomem.timeline import UNTIL_SLACK, TimeText

SOURCE = "semantic"
RECALL_INDEX = "semantic_recall"
RECALL_K = 5
"""Facts of earlier segments recalled per distinct fact of the segment being added."""
RECALL_SIMILARITY = 0.75
"""Embedding cosine from which an earlier fact is recalled as possibly the same habit."""
KNOWN_K = 8
"""Known triplets at most put to consolidation beside one new triplet (the most similar)."""
SYNONYM_THRESHOLD = 0.8
"""Entity-embedding cosine from which two entities of the semantic graph get a synonym edge."""
SHOWN_SUPPORT = 5
"""Supporting time ranges written into one piece of evidence (the rest are counted)."""


@dataclass(frozen=True)
class _Fact:
    """An episodic triplet of the finest scale, where and when its caption lies."""

    id: int
    triplet: Triplet
    scope: str
    video_id: str
    t_start: float
    t_end: float


@dataclass
class _Segment:
    """A segment's facts, complete before its times are first read: each time is computed once,
    as it is read for every fact recalled from the segment."""

    scope: str
    idx: int
    facts: list[_Fact]

    @functools.cached_property
    def t_start(self) -> float:
        return min(f.t_start for f in self.facts)

    @functools.cached_property
    def t_end(self) -> float:
        return max(f.t_end for f in self.facts)

    @property
    def unit(self) -> str:
        """How a failure of this segment is recorded and listed."""
        return f"{self.scope or 'corpus'} segment {self.idx}"

    @property
    def digest(self) -> str:
        return fingerprint([[f.id, f.triplet.subject, f.triplet.relation, f.triplet.object] for f in self.facts])


class _History:
    """Which facts came before a segment on its timeline, with their recall embeddings, built
    once per run: each timeline's facts in segment order, their vectors stacked in that order,
    so the facts before a segment are a prefix of rows. Recall is then one matrix product per
    segment, and no fact is embedded again (the vectors come from the recall index)."""

    def __init__(self, segments: list[_Segment], ids: np.ndarray, vectors: np.ndarray) -> None:
        self.owner: dict[int, tuple[_Segment, _Fact]] = {f.id: (s, f) for s in segments for f in s.facts}
        self._position: dict[tuple[str, int], int] = {}
        ordered: dict[str, list[int]] = {}
        self._offsets: dict[str, list[int]] = {}
        for s in segments:  # in time order
            scope_ids = ordered.setdefault(s.scope, [])
            self._position[(s.scope, s.idx)] = len(self._offsets.setdefault(s.scope, []))
            self._offsets[s.scope].append(len(scope_ids))
            scope_ids += [f.id for f in s.facts]
        row_of = {int(i): n for n, i in enumerate(ids)}
        self._ids = {scope: np.array(scope_ids, dtype=np.int64) for scope, scope_ids in ordered.items()}
        self._vectors = {scope: vectors[[row_of[i] for i in scope_ids]] for scope, scope_ids in ordered.items()}
        self._row = {i: n for scope_ids in ordered.values() for n, i in enumerate(scope_ids)}

    def recall(self, segment: _Segment, fact_ids: list[int], k: int, threshold: float) -> set[int]:
        """Ids of the facts of the earlier segments of `segment`'s timeline among the `k` most
        similar to each of `fact_ids` (the segment's own facts) with a cosine of at least
        `threshold`; the earlier fact wins a tie."""
        end = self._offsets[segment.scope][self._position[(segment.scope, segment.idx)]]
        if not end or not fact_ids:
            return set()
        vectors = self._vectors[segment.scope]
        own = vectors[[self._row[i] for i in fact_ids]]
        similarity = own @ vectors[:end].T  # (own facts, earlier facts)
        found: set[int] = set()
        for row in similarity:
            found.update(int(i) for i in self._ids[segment.scope][_best(row, threshold, k)])
        return found

    def distance(self, segment: _Segment, fact_id: int) -> int:
        """How many segments before `segment` the fact's segment lies (1 = the one just before)."""
        earlier = self.owner[fact_id][0]
        return self._position[(segment.scope, segment.idx)] - self._position[(earlier.scope, earlier.idx)]


def _text(t: Triplet) -> str:
    return f"{t.subject} {t.relation} {t.object}"


def _best(similarity: np.ndarray, threshold: float, k: int) -> np.ndarray:
    """Indices of the `k` highest similarities of at least `threshold`, best first (the lower
    index first on a tie)."""
    close = np.flatnonzero(similarity >= threshold)
    return close[np.lexsort((close, -similarity[close]))[:k]]


@dataclass
class _Support:
    """The captions behind a triplet that a question may see."""

    first: list[tuple[str, float, float]]
    """(video, start, end) of the first `SHOWN_SUPPORT`, in time order."""
    count: int
    last_end: float
    latest: tuple[str, float, float] | None = None
    """(video, start, end) of the latest: the moment a retrieved triplet cites."""


class SemanticMemory:
    """Semantic memory (WorldMM): lasting knowledge drawn from the whole footage — relations
    between people, habits, preferences and abilities — kept up to date as it changes. Query by
    entity or concept ("Alice", "coffee", "morning routine") for what usually holds."""

    name = "semantic"

    def __init__(self, store: Store, models: ModelSet, settings: SemanticSettings | None = None) -> None:
        self.store = store
        self.models = models
        self.settings = settings or SemanticSettings()
        self._saved: SavedGraph | None = None
        self._text_vectors: TextVectors | None = None

    @property
    def _vectors(self) -> TextVectors:
        """Each triplet text embedded once, for consolidation and the graph: the saved graph's
        vectors are taken first, so a later ingest embeds only triplets it writes (made on
        first use: `stats` loads no model)."""
        if self._text_vectors is None:
            self._text_vectors = TextVectors(self.models.text_embedder)
            saved = self.graph_file().last_saved()
            if saved is not None:
                self._text_vectors.remember(saved)
        return self._text_vectors

    # ------------------------------------------------------------ build

    def build(self, ctx: BuildContext, video_ids: Sequence[str]) -> StageResult:
        """Add every segment whose inputs are new or changed, in time order, then the graph. It
        works on the whole store, not only `video_ids`: on a corpus timeline consolidation runs
        across files, and only new or changed segments are added."""
        cfg, progress = ctx.pipeline, ctx.progress
        result = StageResult(self.name)
        segments = self._segments(cfg.semantic_segment_seconds)
        stored = {(r["scope"], r["idx"]): r["inputs_hash"] for r in self.store.query("SELECT * FROM semantic_segments")}
        todo = [s for s in segments if stored.get((s.scope, s.idx)) != s.digest]
        result.skipped = len(segments) - len(todo)
        if todo:
            recall = self._recall_index()
            recall.ensure(progress)
            history = _History(segments, *recall.stored())
            bar = progress(len(todo), self.name, unit="segment")
            try:
                for segment in todo:
                    try:
                        self._add_segment(segment, history, cfg)
                    except MalformedOutputError as exc:  # this segment's reply, not the backend: go on
                        with self.store.transaction() as tx:
                            Store.mark_failed(tx, self.name, segment.unit, str(exc), exc.reply)
                        result.failures.append((segment.unit, f"{exc} (recorded; re-run ingest to retry)"))
                        continue
                    except ModelError as exc:
                        left = len(todo) - result.done
                        result.failures.append((self.name, f"{exc} ({left} segments left; re-run ingest to resume)"))
                        break
                    result.done += 1
                    if bar is not None:
                        bar.update(1)
            finally:
                if bar is not None:
                    bar.close()
        self.graph_file().ensure(self._vectors)
        return result

    def _segments(self, seconds: float) -> list[_Segment]:
        """The finest-scale episodic facts grouped into segments, in time order."""
        corpus = timeline_kind(self.store) == "egolife"
        rows = self.store.query(
            "SELECT t.id, t.subject, t.relation, t.object, c.video_id, c.t_start, c.t_end FROM episodic_triplets t "
            "JOIN episodic_captions c ON c.id = t.caption_id "
            "WHERE c.scale = (SELECT MIN(scale) FROM episodic_captions) ORDER BY c.t_start, c.video_id, t.id"
        )
        segments: dict[tuple[str, int], _Segment] = {}
        for r in rows:
            scope = "" if corpus else r["video_id"]
            fact = _Fact(r["id"], Triplet(subject=r["subject"], relation=r["relation"], object=r["object"]), scope,
                         r["video_id"], r["t_start"], r["t_end"])
            idx = math.floor((fact.t_start + fact.t_end) / 2 / seconds)
            segments.setdefault((scope, idx), _Segment(scope, idx, [])).facts.append(fact)
        return sorted(segments.values(), key=lambda s: (s.t_start, s.scope, s.idx))

    def _recall_index(self) -> VectorIndex:
        embedder = self.models.text_embedder
        rows = (
            "SELECT t.id, t.subject, t.relation, t.object FROM episodic_triplets t "
            "JOIN episodic_captions c ON c.id = t.caption_id WHERE c.scale = (SELECT MIN(scale) FROM episodic_captions)"
        )
        return VectorIndex(  # a fact's text as the episodic graph embeds it: one embedding for both
            self.store,
            RECALL_INDEX,
            lambda: ((r["id"], fact_text(r["subject"], r["relation"], r["object"])) for r in self.store.query(rows)),
            embedder,
            embedder_identity(self.models.cfg.text_embedder, embedder.dim),
        )

    def _facts_for(self, segment: _Segment, history: _History) -> tuple[list[EpisodicFact], list[_Fact]]:
        """The segment's facts (segment 0), then the closest facts of earlier segments of its
        timeline (1 = the latest earlier segment)."""
        distinct = list({_text(f.triplet): f.id for f in segment.facts}.values())  # one fact per text
        recalled = history.recall(segment, distinct, RECALL_K, RECALL_SIMILARITY)
        chosen = {fact_id: history.distance(segment, fact_id) for fact_id in recalled}
        time = TimeText(timeline_kind(self.store))
        facts = [EpisodicFact(f.triplet, 0, time.span(segment.t_start, segment.t_end)) for f in segment.facts]
        rows = list(segment.facts)
        for fact_id, distance in sorted(chosen.items(), key=lambda item: (item[1], item[0])):
            earlier, fact = history.owner[fact_id]
            facts.append(EpisodicFact(fact.triplet, distance, time.span(earlier.t_start, earlier.t_end)))
            rows.append(fact)
        return facts, rows

    def _add_segment(self, segment: _Segment, history: _History, cfg: PipelineConfig) -> None:
        """Induce, consolidate and write one segment (one transaction)."""
        language = require(self.models.language, SemanticTasks)
        facts, rows = self._facts_for(segment, history)
        induced = language.induce_semantic(facts, cfg.min_support_segments)
        items = self._new(induced, facts, segment.scope, cfg)
        asked = [n for n, item in enumerate(items) if item.known]
        outs = language.consolidate([items[n] for n in asked]) if asked else []
        if len(outs) != len(asked):
            raise RuntimeError(f"consolidate returned {len(outs)} decisions for {len(asked)} triplets")
        decided = dict(zip(asked, outs))
        with self.store.transaction() as tx:
            for n, triplet in enumerate(induced):
                evidence = [rows[i].id for i in triplet.evidence]
                now = max(rows[i].t_end for i in triplet.evidence if facts[i].segment == 0)
                out = decided.get(n)
                final = out.triplet if out is not None else Triplet(**triplet.model_dump(exclude={"evidence"}))
                if out is not None and out.same_as is not None:
                    row_id = out.same_as
                    tx.execute(
                        "UPDATE semantic_triplets SET subject = ?, relation = ?, object = ? WHERE id = ?",
                        (final.subject, final.relation, final.object, row_id),
                    )
                else:
                    row_id = tx.execute(
                        "INSERT INTO semantic_triplets (scope, subject, relation, object, valid_from) VALUES (?, ?, ?, ?, ?)",
                        (segment.scope, final.subject, final.relation, final.object, now),
                    ).lastrowid
                tx.executemany(
                    "INSERT OR IGNORE INTO semantic_evidence (triplet_id, episodic_triplet_id) VALUES (?, ?)",
                    [(row_id, e) for e in evidence],
                )
                if out is not None and out.retire:
                    tx.executemany(
                        "UPDATE semantic_triplets SET retired_at = ? WHERE id = ? AND retired_at IS NULL",
                        [(now, i) for i in out.retire],
                    )
            tx.execute(
                "INSERT OR REPLACE INTO semantic_segments (scope, idx, t_start, t_end, inputs_hash) VALUES (?, ?, ?, ?, ?)",
                (segment.scope, segment.idx, segment.t_start, segment.t_end, segment.digest),
            )
            tx.execute("DELETE FROM stage_failures WHERE stage = ? AND unit = ?", (self.name, segment.unit))

    def _new(
        self, induced: list[SemanticTriplet], facts: list[EpisodicFact], scope: str, cfg: PipelineConfig
    ) -> list[NewTriplet]:
        """Each new triplet with the (at most `KNOWN_K`) valid triplets of its timeline at least
        `semantic_merge_threshold` similar. Texts are embedded once per memory object, and only
        the known triplets put to consolidation have their support counted."""
        plain = [Triplet(**t.model_dump(exclude={"evidence"})) for t in induced]
        known = self.store.query(
            "SELECT id, subject, relation, object FROM semantic_triplets WHERE scope = ? AND retired_at IS NULL ORDER BY id",
            (scope,),
        )
        rows = [Triplet(subject=r["subject"], relation=r["relation"], object=r["object"]) for r in known]
        similar: list[list[int]] = [[] for _ in plain]
        if plain and rows:
            vectors = self._vectors([_text(t) for t in (*plain, *rows)])
            similarity = vectors[: len(plain)] @ vectors[len(plain) :].T
            similar = [_best(row, cfg.semantic_merge_threshold, KNOWN_K) for row in similarity]
        support = self._support_counts({int(known[i]["id"]) for picks in similar for i in picks}, cfg.semantic_segment_seconds)
        return [
            NewTriplet(
                triplet,
                len({facts[i].segment for i in new.evidence}),
                [KnownTriplet(known[i]["id"], rows[i], support.get(known[i]["id"], 0), float(similarity[n, i])) for i in picks],
            )
            for n, (new, triplet, picks) in enumerate(zip(induced, plain, similar))
        ]

    def _support_counts(self, ids: set[int], seconds: float) -> dict[int, int]:
        """Triplet id → the number of segments whose evidence supports it."""
        if not ids:
            return {}
        rows = self.store.query(
            "SELECT e.triplet_id, COUNT(DISTINCT CAST((c.t_start + c.t_end) / 2 / ? AS INTEGER)) FROM semantic_evidence e "
            "JOIN episodic_triplets t ON t.id = e.episodic_triplet_id JOIN episodic_captions c ON c.id = t.caption_id "
            f"WHERE e.triplet_id IN ({','.join('?' * len(ids))}) GROUP BY e.triplet_id",
            (seconds, *sorted(ids)),
        )
        return {r[0]: r[1] for r in rows}

    # ------------------------------------------------------------ graph

    def graph_file(self) -> SavedGraph:
        if self._saved is None:
            embedder = self.models.text_embedder
            self._saved = SavedGraph(
                self.store.index_dir / self.name,
                self._passages,
                embedder,
                {"embedder": embedder_identity(self.models.cfg.text_embedder, embedder.dim)},
                SYNONYM_THRESHOLD,
            )
        return self._saved

    def _passages(self) -> list[Passage]:
        """Every triplet ever written, retired ones too: what a query may see is masked."""
        return [
            Passage(r["id"], " ".join(r[1:]), [r["subject"], r["object"]], [(r["subject"], r["relation"], r["object"])])
            for r in self.store.query("SELECT id, subject, relation, object FROM semantic_triplets ORDER BY id")
        ]

    # ------------------------------------------------------------ retrieve

    def stats(self) -> dict[str, int]:
        """Triplets valid now and retired, entities of the valid ones, graph as last saved."""
        rows = self.store.query("SELECT subject, object, retired_at FROM semantic_triplets")
        valid = [r for r in rows if r["retired_at"] is None]
        nodes, edges = saved_sizes(self.store.index_dir / self.name)
        return {
            "triplets valid": len(valid),
            "triplets retired": len(rows) - len(valid),
            "entities": len({entity_key(name) for r in valid for name in (r["subject"], r["object"])}),
            "graph nodes": nodes,
            "graph edges": edges,
        }

    def retrieve(
        self, query: str, top_k: int, until: float | None = None, video_id: str | None = None
    ) -> list[Evidence]:
        """The `top_k` triplets valid at `until` by edge score PPR(subject) + PPR(object)."""
        known = self._known(until, video_id)
        if not known:
            return []
        graph = self.graph_file().graph
        visible = np.isin(graph.passage_ids, np.array(sorted(known), dtype=np.int64))
        if not visible.any():
            return []
        vector = np.asarray(self.models.text_embedder.embed([query])[0], dtype=np.float64)
        scored, similarity = self._edge_scores(graph, vector, visible)
        # Triplets between the same two entities tie on PPR ("I see Tasha", "I laugh Tasha"):
        # among them the one closest to the query comes first, not the oldest.
        order = sorted(scored, key=lambda p: (-scored[p], -similarity[p], p))[:top_k]
        ids = [int(graph.passage_ids[p]) for p in order]
        rows = {
            r["id"]: r
            for r in self.store.query(
                f"SELECT id, subject, relation, object, valid_from FROM semantic_triplets WHERE id IN "
                f"({','.join('?' * len(ids))})",
                tuple(ids),
            )
        }
        support = self._support(ids, until, video_id)
        time = TimeText(timeline_kind(self.store))
        out = []
        for p in order:
            row = rows.get(int(graph.passage_ids[p]))
            seen = support.get(int(graph.passage_ids[p]))
            if row is None or seen is None:
                continue  # rewritten since the graph was loaded
            shown = ", ".join(time.span(s, e) for _, s, e in seen.first)
            latest = seen.latest or seen.first[-1]
            more = ""
            if seen.count > len(seen.first):
                more = f" and {seen.count - len(seen.first)} more, the latest at {time.span(latest[1], latest[2])}"
            text = (
                f"{row['subject']} {row['relation']} {row['object']}. Known since {time(row['valid_from'])}; "
                f"seen at {shown}{more}."
            )
            # cited: the latest moment that supports it, not the range its support spans
            video, start, end = latest
            fact = f"{row['subject']} {row['relation']} {row['object']}"
            moments = tuple(dict.fromkeys((s, e, fact) for _, s, e in (*seen.first, latest)))
            out.append(Evidence(start, end, text, SOURCE, float(scored[p]), video, moments=moments))
        return out

    @staticmethod
    def _seen(until: float | None, video_id: str | None) -> tuple[list[str], list[object]]:
        """SQL terms (on caption `c`) and parameters: a caption the question may see."""
        terms: list[str] = [] if until is None else ["c.t_end <= ?"]
        params: list[object] = [] if until is None else [until + UNTIL_SLACK]
        if video_id is not None:
            terms.append("c.video_id = ? AND c.n_videos = 1")
            params.append(video_id)
        return terms, params

    def _known(self, until: float | None, video_id: str | None) -> set[int]:
        """Ids of the triplets valid at `until` (None: valid now) with a caption behind them that
        the question may see. One existence test per triplet: a triplet seen all week has
        thousands of captions behind it, and reading them all made this grow with the history."""
        if until is None:
            terms, params = ["s.retired_at IS NULL"], []
        else:
            terms, params = ["s.valid_from <= ?", "(s.retired_at IS NULL OR s.retired_at > ?)"], [until + UNTIL_SLACK] * 2
        seen, seen_params = self._seen(until, video_id)
        rows = self.store.query(
            f"SELECT s.id FROM semantic_triplets s WHERE {' AND '.join(terms)} AND EXISTS (SELECT 1 FROM semantic_evidence e "
            "JOIN episodic_triplets t ON t.id = e.episodic_triplet_id JOIN episodic_captions c ON c.id = t.caption_id "
            f"WHERE {' AND '.join(['e.triplet_id = s.id', *seen])})",
            (*params, *seen_params),
        )
        return {r[0] for r in rows}

    def _support(self, ids: list[int], until: float | None, video_id: str | None) -> dict[int, _Support]:
        """Per triplet id: the first `SHOWN_SUPPORT` captions behind it that the question may
        see (video, start, end; in time order), how many there are and the last one's end. A
        triplet seen all week has thousands; only these few rows leave SQLite."""
        if not ids:
            return {}
        seen, params = self._seen(until, video_id)
        among = f"e.triplet_id IN ({','.join('?' * len(ids))})"
        rows = self.store.query(
            "SELECT id, video_id, t_start, t_end, n, last_end FROM (SELECT *, "
            "ROW_NUMBER() OVER (PARTITION BY id ORDER BY t_start, t_end, video_id) AS rank, "
            "ROW_NUMBER() OVER (PARTITION BY id ORDER BY t_end DESC, t_start DESC, video_id) AS back, "
            "COUNT(*) OVER (PARTITION BY id) AS n, MAX(t_end) OVER (PARTITION BY id) AS last_end FROM ("
            "SELECT DISTINCT e.triplet_id AS id, c.video_id, c.t_start, c.t_end FROM semantic_evidence e "
            "JOIN episodic_triplets t ON t.id = e.episodic_triplet_id JOIN episodic_captions c ON c.id = t.caption_id "
            f"WHERE {' AND '.join([among, *seen])})) WHERE rank <= ? OR back = 1 ORDER BY id, rank",
            (*ids, *params, SHOWN_SUPPORT),
        )
        out: dict[int, _Support] = {}
        for r in rows:
            support = out.setdefault(r["id"], _Support([], r["n"], r["last_end"]))
            moment = (r["video_id"], r["t_start"], r["t_end"])
            if len(support.first) < SHOWN_SUPPORT and moment not in support.first:
                support.first.append(moment)
            if r["t_end"] == r["last_end"] and (support.latest is None or moment[1] > support.latest[1]):
                support.latest = moment
        return out

    def _edge_scores(
        self, graph: PassageGraph, query: np.ndarray, visible: np.ndarray
    ) -> tuple[dict[int, float], dict[int, float]]:
        """Passage (triplet) index → PPR(subject) + PPR(object), and → its similarity to the
        query, over the visible triplets."""
        n_entities = len(graph.entities)
        facts = graph.fact_passages.tocsc()
        ends: dict[int, tuple[int, int]] = {}
        for p in np.flatnonzero(visible):
            found = facts.indices[facts.indptr[p] : facts.indptr[p + 1]]
            if len(found):
                subject, obj = graph.fact_ends[found[0]]
                if subject != obj:  # "I see I" relates nothing, and would count its entity twice
                    ends[int(p)] = (int(subject), int(obj))
        if not ends:
            return {}, {}
        candidates = np.array(sorted(ends))
        similarity = graph.passage_vectors[candidates] @ query
        best = np.argsort(-similarity, kind="stable")[: self.settings.linking_top_k]
        reset = np.zeros(graph.n_nodes)
        for p, score in zip(candidates[best], similarity[best]):
            for e in set(ends[int(p)]):
                reset[e] += max(float(score), 1e-6)
        scores = graph.walk(visible).scores(reset, self.settings.damping)[:n_entities]
        ppr = {p: float(scores[s] + scores[o]) for p, (s, o) in ends.items()}
        return ppr, dict(zip(candidates.tolist(), similarity.tolist()))

    @staticmethod
    def reset(store: Store, video_ids: Sequence[str]) -> None:
        """Forget the semantic memory of these videos' timelines (all of it on a corpus timeline,
        where consolidation ran across files), so the next build consolidates them from the start."""
        scopes = [*video_ids, ""]
        marks = ",".join("?" * len(scopes))
        with store.transaction() as tx:
            tx.execute(f"DELETE FROM semantic_triplets WHERE scope IN ({marks})", scopes)
            tx.execute(f"DELETE FROM semantic_segments WHERE scope IN ({marks})", scopes)
            units = [f"{scope or 'corpus'} segment %" for scope in scopes]
            tx.executemany(
                "DELETE FROM stage_failures WHERE stage = ? AND unit LIKE ?", [(SemanticMemory.name, u) for u in units]
            )
