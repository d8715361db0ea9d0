"""Knowledge graphs searched by Personalized PageRank (HippoRAG 2), kept as sparse matrices.

HippoRAG and WorldMM build an igraph graph and call prpack for every query. Here a graph is a
few scipy sparse matrices derived from SQLite rows, saved under the store's `index/` and
loaded once per process; a query is a sparse power iteration on them (`benchmarks/ppr.py`
compares it with igraph's prpack on a graph the size of 44 hours of captions). Nothing is
rebuilt per query: what a question may not see (`until`, another video) is masked out.

Two layers:

* general, for any memory with a graph: `PageRank` (power iteration on an undirected weighted
  adjacency, its walk matrix computed once; a reset vector in, a score per node out) and
  `synonym_edges` (FAISS k-nearest neighbours, never all pairs);
* `PassageGraph`, HippoRAG 2's layout: entity nodes and passage nodes; an edge between the
  subject and object of every fact (weight: how often it was stated), between a passage and
  each entity it names, and between entities whose embeddings are close (synonyms). Query →
  closest facts and entities by embedding → restart weights on their entities (divided by how
  many passages name each, so common entities count less; weak links are dropped) plus a
  small weight on every passage by its own similarity → PPR → passages ranked by their score. `SavedGraph` keeps one
  on disk with a fingerprint of the rows it came from and rebuilds it only when stale.

Query-time scoping: a passage the question may not see is removed with every edge it alone
supports — its entity edges, the fact edges only it states — and so is an entity named only
in hidden passages. The walk then runs on the graph as it stood, minus synonym pairs that
FAISS would have ranked differently without the hidden entities.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
from scipy import sparse

from videomem.errors import StoreError
from videomem.models.engines import TextEmbedder

SYNONYM_NEIGHBOURS = 10
"""Nearest entities (by embedding) considered as synonyms of each entity."""
PPR_TOLERANCE = 1e-10
"""L1 change between iterations at which PPR stops (prpack's default)."""
PPR_MAX_ITERATIONS = 200
LINK_RATIO = 0.5
"""A fact or entity seeds PPR only if its similarity to the query is at least this share of
the best link's: HippoRAG 2 has an LLM drop weak links; without it, a barely related fact
about a rare entity would outweigh the query's own entity (seeds are divided by how many
passages name an entity)."""
LAYOUT = 1
"""Version of the saved file layout: a file of another layout is rebuilt."""

_WORD = re.compile(r"\w+")


def entity_key(name: str) -> str:
    """The node an entity name maps to: case and punctuation do not make two entities."""
    return " ".join(_WORD.findall(name.casefold()))


def fact_key(subject: str, relation: str, obj: str) -> tuple[str, str, str]:
    """The fact a triplet maps to: its entities' keys and its relation, case and spacing aside."""
    return entity_key(subject), " ".join(relation.split()).casefold(), entity_key(obj)


def fact_text(subject: str, relation: str, obj: str) -> str:
    """The text a fact is embedded as. Other memories that embed facts use it too (semantic
    recall), so a fact reaches the text embedder once: spelled as written, the same facts were
    11 % of the tokens a caption-only EgoLife day embedded."""
    return " ".join(fact_key(subject, relation, obj))


# ---------------------------------------------------------------- general


class PageRank:
    """Personalized PageRank on an undirected weighted graph (symmetric adjacency).

    The random walk follows an edge with probability `damping` (in proportion to its weight)
    or restarts at a node drawn from the reset distribution; a node without edges restarts,
    as igraph's prpack does. The walk matrix (adjacency with columns divided by degree) is
    computed once, so each query costs one sparse product per iteration.
    """

    def __init__(self, adjacency: sparse.spmatrix) -> None:
        adjacency = sparse.csr_matrix(adjacency, dtype=np.float64)
        degree = np.asarray(adjacency.sum(axis=1)).ravel()
        self.dangling = degree <= 0
        inverse = np.divide(1.0, degree, out=np.zeros_like(degree), where=~self.dangling)
        # adjacency @ diag(inverse), scaling the stored values in place of a sparse product
        self.walk = sparse.csr_matrix((adjacency.data * inverse[adjacency.indices], adjacency.indices, adjacency.indptr),
                                      shape=adjacency.shape)
        self.n = adjacency.shape[0]

    def scores(self, reset: np.ndarray, damping: float) -> np.ndarray:
        """Stationary distribution of the walk restarting by `reset` (non-negative, any scale)."""
        reset = np.asarray(reset, dtype=np.float64)
        total = reset.sum()
        if reset.shape != (self.n,) or total <= 0 or (reset < 0).any():
            raise ValueError("reset must be non-negative with a positive sum, one value per node")
        restart = reset / total
        x = restart.copy()
        dangling = np.flatnonzero(self.dangling)
        spare = np.empty_like(x)  # the iteration's temporaries, allocated once
        for _ in range(PPR_MAX_ITERATIONS):
            stuck = x[dangling].sum()
            nxt = self.walk @ x
            nxt *= damping
            nxt += np.multiply(restart, damping * stuck + 1.0 - damping, out=spare)
            change = np.abs(np.subtract(nxt, x, out=spare), out=spare).sum()
            x = nxt
            if change < PPR_TOLERANCE:
                break
        return x


def _faiss():
    import faiss

    return faiss


def synonym_edges(vectors: np.ndarray, threshold: float, neighbours: int = SYNONYM_NEIGHBOURS) -> sparse.csr_matrix:
    """Symmetric matrix of cosine similarities ≥ `threshold` between each row and its nearest
    `neighbours` rows (exact inner-product search over L2-normalised rows)."""
    n = len(vectors)
    if n < 2:
        return sparse.csr_matrix((n, n), dtype=np.float64)
    faiss = _faiss()
    unit = np.ascontiguousarray(vectors, dtype=np.float32).copy()
    faiss.normalize_L2(unit)
    index = faiss.IndexFlatIP(unit.shape[1])
    index.add(unit)
    similarity, found = index.search(unit, min(neighbours + 1, n))
    rows = np.repeat(np.arange(n), found.shape[1])
    cols, sims = found.ravel(), similarity.ravel()
    keep = (cols >= 0) & (cols != rows) & (sims >= threshold)
    matrix = sparse.csr_matrix((sims[keep].astype(np.float64), (rows[keep], cols[keep])), shape=(n, n))
    return matrix.maximum(matrix.T).tocsr()


# ---------------------------------------------------------------- HippoRAG 2 layout


@dataclass(frozen=True)
class Passage:
    """One passage (caption) as the graph is built from it."""

    id: int
    text: str
    entities: Sequence[str]
    triplets: Sequence[tuple[str, str, str]]


@dataclass(eq=False)
class PassageGraph:
    """Entity nodes 0..E-1, then passage nodes E..E+P-1 (passage p is node E + p)."""

    passage_ids: np.ndarray
    """Row id of each passage node."""
    entities: list[str]
    """Entity keys (see `entity_key`), sorted."""
    facts: list[str]
    """'subject relation object' of each distinct fact, sorted."""
    passage_texts: list[str]
    fact_ends: np.ndarray
    """(F, 2) entity index of each fact's subject and object."""
    entity_passages: sparse.csr_matrix
    """(E, P) 1 where a passage names an entity."""
    fact_passages: sparse.csr_matrix
    """(F, P) how often a passage states a fact."""
    synonyms: sparse.csr_matrix
    """(E, E) cosine of entity pairs joined as synonyms."""
    entity_vectors: np.ndarray
    fact_vectors: np.ndarray
    passage_vectors: np.ndarray

    def __post_init__(self) -> None:
        self._walks: dict[bytes | None, PageRank] = {}
        self._row_of = {int(p): row for row, p in enumerate(self.passage_ids)}

    def vectors_of(self, passage_ids: Sequence[int]) -> np.ndarray:
        """The stored embeddings of these passages, by passage row id."""
        return self.passage_vectors[[self._row_of[i] for i in passage_ids]]

    # ------------------------------------------------------------ build

    @classmethod
    def build(
        cls,
        passages: Sequence[Passage],
        vectors: TextVectors,
        synonym_threshold: float,
    ) -> PassageGraph:
        """The graph of `passages` (in the order given); texts `vectors` already holds are not
        embedded again."""
        named: list[set[str]] = []
        stated: list[dict[tuple[str, str, str], int]] = []
        for passage in passages:
            facts: dict[tuple[str, str, str], int] = {}
            for subject, relation, obj in passage.triplets:
                key = fact_key(subject, relation, obj)
                if key[0] and key[1] and key[2]:
                    facts[key] = facts.get(key, 0) + 1
            names = {entity_key(name) for name in passage.entities} | {k for f in facts for k in (f[0], f[2])}
            named.append(names - {""})
            stated.append(facts)
        entities = sorted(set().union(*named)) if named else []
        fact_keys = sorted({f for facts in stated for f in facts})
        entity_index = {name: i for i, name in enumerate(entities)}
        fact_index = {f: i for i, f in enumerate(fact_keys)}
        n_passages = len(passages)

        def incidence(pairs: list[tuple[int, int, int]], rows: int) -> sparse.csr_matrix:
            data = np.array([w for _, _, w in pairs], dtype=np.float64)
            r = np.array([i for i, _, _ in pairs], dtype=np.int64)
            c = np.array([p for _, p, _ in pairs], dtype=np.int64)
            return sparse.csr_matrix((data, (r, c)), shape=(rows, n_passages))

        entity_passages = incidence(
            [(entity_index[name], p, 1) for p, names in enumerate(named) for name in names], len(entities)
        )
        fact_passages = incidence(
            [(fact_index[f], p, n) for p, facts in enumerate(stated) for f, n in facts.items()], len(fact_keys)
        )
        fact_ends = np.array([[entity_index[s], entity_index[o]] for s, _, o in fact_keys], dtype=np.int64).reshape(-1, 2)
        fact_texts = [fact_text(*f) for f in fact_keys]
        passage_texts = [p.text for p in passages]
        every = vectors(entities + fact_texts + passage_texts)  # one embedding call per graph
        entity_vectors, fact_vectors, passage_vectors = np.split(every, [len(entities), len(entities) + len(fact_texts)])
        return cls(
            passage_ids=np.array([p.id for p in passages], dtype=np.int64),
            entities=entities,
            facts=fact_texts,
            passage_texts=passage_texts,
            fact_ends=fact_ends,
            entity_passages=entity_passages,
            fact_passages=fact_passages,
            synonyms=synonym_edges(entity_vectors, synonym_threshold),
            entity_vectors=entity_vectors,
            fact_vectors=fact_vectors,
            passage_vectors=passage_vectors,
        )

    # ------------------------------------------------------------ structure

    @property
    def n_nodes(self) -> int:
        return len(self.entities) + len(self.passage_ids)

    def adjacency(self, visible: np.ndarray | None = None) -> sparse.csr_matrix:
        """Symmetric weighted adjacency of the graph restricted to `visible` passages (bool per
        passage; None: all)."""
        adjacency = self._layout.adjacency(visible).copy()  # its index arrays are the layout's
        adjacency.eliminate_zeros()
        return adjacency

    @cached_property
    def _layout(self) -> _EdgeLayout:
        return _EdgeLayout(self)

    def n_edges(self) -> int:
        return int(sparse.triu(self.adjacency()).nnz)

    def walk(self, visible: np.ndarray | None = None) -> PageRank:
        """The PageRank walk on the visible graph; the last few are kept (an agent asks many
        queries with one query time)."""
        key = None if visible is None or visible.all() else np.packbits(visible).tobytes()
        if key not in self._walks:
            if len(self._walks) >= 4:
                self._walks.pop(next(k for k in self._walks if k is not None))
            self._walks[key] = PageRank(self._layout.adjacency(None if key is None else visible))
        return self._walks[key]

    # ------------------------------------------------------------ retrieval

    def restart(
        self, query: np.ndarray, *, passage_node_weight: float, linking_top_k: int, visible: np.ndarray | None = None
    ) -> np.ndarray:
        """PPR reset weights of every node for a query vector (HippoRAG 2): the entities of the
        closest facts and the closest entities, each divided by how many visible passages name
        it; every visible passage by its own similarity, scaled by `passage_node_weight`."""
        n_entities, n_passages = len(self.entities), len(self.passage_ids)
        shown = np.ones(n_passages) if visible is None else visible.astype(np.float64)
        naming = np.asarray(self.entity_passages @ shown).ravel()
        fact_shown = (self.fact_passages @ shown) > 0
        fact_scores, entity_scores = self.fact_vectors @ query, self.entity_vectors @ query
        facts = _best(fact_scores, fact_shown, linking_top_k)
        linked = _best(entity_scores, naming > 0, linking_top_k)
        floor = LINK_RATIO * max([0.0, *fact_scores[facts], *entity_scores[linked]])
        weight, votes = np.zeros(n_entities), np.zeros(n_entities)
        for f in facts[fact_scores[facts] >= floor]:
            for e in set(self.fact_ends[f]):
                weight[e] += fact_scores[f]
                votes[e] += 1
        for e in linked[entity_scores[linked] >= floor]:
            weight[e] += entity_scores[e]
            votes[e] += 1
        seeded = votes > 0
        weight[seeded] /= votes[seeded] * np.maximum(naming[seeded], 1.0)
        dense = self.passage_vectors @ query
        lo, hi = dense[shown > 0].min(initial=0.0), dense[shown > 0].max(initial=0.0)
        closeness = np.where(shown > 0, (dense - lo) / (hi - lo) if hi > lo else 1.0, 0.0)
        return np.concatenate([weight, passage_node_weight * closeness])

    def rank(
        self,
        query: np.ndarray,
        top_k: int,
        *,
        damping: float,
        passage_node_weight: float,
        linking_top_k: int,
        visible: np.ndarray | None = None,
    ) -> list[tuple[int, float]]:
        """The `top_k` visible passages for a query vector: (passage row id, PPR score), best first."""
        n_entities, n_passages = len(self.entities), len(self.passage_ids)
        shown = np.ones(n_passages, dtype=bool) if visible is None else visible
        if n_passages == 0 or not shown.any():
            return []
        reset = self.restart(query, passage_node_weight=passage_node_weight, linking_top_k=linking_top_k, visible=visible)
        if reset.sum() <= 0:
            scores = np.where(shown, self.passage_vectors @ query, -np.inf)
        else:
            scores = np.where(shown, self.walk(visible).scores(reset, damping)[n_entities:], -np.inf)
        order = np.lexsort((np.arange(n_passages), -scores))[: min(top_k, int(shown.sum()))]
        return [(int(self.passage_ids[p]), float(scores[p])) for p in order]

    # ------------------------------------------------------------ files

    def to_bytes(self, fingerprint: str) -> bytes:
        arrays: dict[str, np.ndarray] = {
            "passage_ids": self.passage_ids,
            "fact_ends": self.fact_ends,
            "entity_vectors": self.entity_vectors,
            "fact_vectors": self.fact_vectors,
            "passage_vectors": self.passage_vectors,
            "names": _text_array(
                {"entities": self.entities, "facts": self.facts, "passages": self.passage_texts, "fingerprint": fingerprint}
            ),
        }
        for name in ("entity_passages", "fact_passages", "synonyms"):
            matrix = getattr(self, name)
            arrays |= {f"{name}.data": matrix.data, f"{name}.indices": matrix.indices,
                       f"{name}.indptr": matrix.indptr, f"{name}.shape": np.array(matrix.shape)}
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    @classmethod
    def from_file(cls, path: Path) -> tuple[PassageGraph, str]:
        """The graph and the fingerprint it was saved with."""
        with np.load(path, allow_pickle=False) as saved:
            names = json.loads(saved["names"].tobytes().decode())

            def matrix(name: str) -> sparse.csr_matrix:
                return sparse.csr_matrix(
                    (saved[f"{name}.data"], saved[f"{name}.indices"], saved[f"{name}.indptr"]),
                    shape=tuple(saved[f"{name}.shape"]),
                )

            graph = cls(
                passage_ids=saved["passage_ids"],
                entities=names["entities"],
                facts=names["facts"],
                passage_texts=names["passages"],
                fact_ends=saved["fact_ends"],
                entity_passages=matrix("entity_passages"),
                fact_passages=matrix("fact_passages"),
                synonyms=matrix("synonyms"),
                entity_vectors=saved["entity_vectors"],
                fact_vectors=saved["fact_vectors"],
                passage_vectors=saved["passage_vectors"],
            )
        return graph, names["fingerprint"]


class _EdgeLayout:
    """Every edge the graph can have, laid out once, so that the adjacency for a question's
    visible passages is a new array of edge weights on that fixed layout.

    Masking by rebuilding (mentions times a diagonal, relation counts into a new matrix, the
    synonyms cut by two diagonal products, the blocks stacked) cost several sparse products per
    scale for every new query time, which grew with the graph (44 h: most of an episodic
    query). Here each stored edge value is the sum of entries of three kinds: a fact stated by
    visible passages (its count), a synonym pair both of whose entities are still named (its
    cosine), a visible passage naming an entity (1). A query time costs one pass over the
    entries; hidden edges stay as explicit zeros.
    """

    def __init__(self, graph: PassageGraph) -> None:
        n_entities, n_passages = len(graph.entities), len(graph.passage_ids)
        self.shape = (n_entities + n_passages,) * 2
        self.n_passages, self.fact_passages, self.entity_passages = n_passages, graph.fact_passages, graph.entity_passages
        subject, obj = graph.fact_ends[:, 0], graph.fact_ends[:, 1]
        self.facts = np.flatnonzero(subject != obj)
        synonyms = graph.synonyms.tocoo()
        self.synonym_rows, self.synonym_cols, self.synonym_weights = synonyms.row, synonyms.col, synonyms.data
        mentions = graph.entity_passages.tocoo()
        self.mention_passages = mentions.col
        rows = np.concatenate([subject[self.facts], obj[self.facts], synonyms.row, mentions.row, n_entities + mentions.col])
        cols = np.concatenate([obj[self.facts], subject[self.facts], synonyms.col, n_entities + mentions.col, mentions.row])
        cells, self.cell = np.unique(rows.astype(np.int64) * self.shape[0] + cols, return_inverse=True)
        self.indices = (cells % self.shape[0]).astype(np.int32)
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(cells // self.shape[0], minlength=self.shape[0]))]).astype(
            np.int32
        )

    def adjacency(self, visible: np.ndarray | None) -> sparse.csr_matrix:
        """The weights for `visible` on the layout (the matrix shares the layout's index arrays:
        copy it before changing its structure)."""
        shown = np.ones(self.n_passages) if visible is None else visible.astype(np.float64)
        counts = self.fact_passages @ shown
        named = (self.entity_passages @ shown) > 0
        weights = np.concatenate(
            [
                counts[self.facts],
                counts[self.facts],
                self.synonym_weights * named[self.synonym_rows] * named[self.synonym_cols],
                shown[self.mention_passages],
                shown[self.mention_passages],
            ]
        )
        data = np.bincount(self.cell, weights=weights, minlength=len(self.indices))
        return sparse.csr_matrix((data, self.indices, self.indptr), shape=self.shape)


def _best(scores: np.ndarray, allowed: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k highest `scores` among `allowed`, best first (the lower index on a tie).
    Only the scores from the k-th highest up are sorted: a week holds tens of thousands of facts."""
    candidates = np.flatnonzero(allowed)
    if len(candidates) > k > 0:
        values = scores[candidates]
        candidates = candidates[values >= np.partition(values, len(values) - k)[len(values) - k]]
    return candidates[np.argsort(-scores[candidates], kind="stable")[:k]]


def _text_array(value: object) -> np.ndarray:
    return np.frombuffer(json.dumps(value, ensure_ascii=False).encode(), dtype=np.uint8)


class TextVectors:
    """Vectors of texts by one embedder, each text embedded once: the graphs of several scales
    share most entities and facts, and a rebuilt graph shares most texts with its old version."""

    def __init__(self, embedder: TextEmbedder) -> None:
        self.embedder = embedder
        self.known: dict[str, np.ndarray] = {}

    def remember(self, graph: PassageGraph) -> None:
        """Take the vectors an older graph of the same embedder holds."""
        for texts, vectors in (
            (graph.entities, graph.entity_vectors),
            (graph.facts, graph.fact_vectors),
            (graph.passage_texts, graph.passage_vectors),
        ):
            self.take(texts, vectors)

    def take(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Vectors the same embedder already gave these texts elsewhere (another memory's index)."""
        self.known.update(zip(texts, vectors))

    def __call__(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, embedding only texts not seen before (in one call)."""
        missing = list(dict.fromkeys(t for t in texts if t not in self.known))
        if missing:
            vectors = np.asarray(self.embedder.embed(missing), dtype=np.float32)
            if vectors.shape != (len(missing), self.embedder.dim):
                raise ValueError(f"embedder returned shape {vectors.shape}, expected ({len(missing)}, {self.embedder.dim})")
            self.known.update(zip(missing, vectors))
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.stack([self.known[t] for t in texts])


# ---------------------------------------------------------------- saved graphs

_LOADED: dict[Path, tuple[str, PassageGraph]] = {}
_LOCK = threading.Lock()


def fingerprint(*parts: object) -> str:
    """A stable digest of rows and settings (JSON-serialisable values)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(json.dumps(part, ensure_ascii=False, separators=(",", ":")).encode())
        digest.update(b"\x1e")
    return digest.hexdigest()


def _beside(path: Path, extension: str) -> Path:
    """`path` + extension (a scale such as 0.5 s puts a dot in the name, so no with_suffix)."""
    return path.parent / (path.name + extension)


def saved_sizes(path: Path) -> tuple[int, int]:
    """(nodes, edges) recorded when the graph at `path` was last saved; (0, 0) if none is."""
    try:
        meta = json.loads(_beside(path, ".json").read_text())
        return int(meta["nodes"]), int(meta["edges"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0, 0


class SavedGraph:
    """A PassageGraph derived from SQLite, saved as `<path>.npz` with a `<path>.json` sidecar.

    `ensure()` reads the rows, and when their fingerprint (with the embedder and the build
    settings) matches the saved graph, loads that; otherwise it builds the graph and saves it.
    A graph loaded or built in this process is kept for every later reader of the same file.
    """

    def __init__(
        self,
        path: Path,
        passages: Callable[[], list[Passage]],
        embedder: TextEmbedder,
        settings: dict,
        synonym_threshold: float,
    ) -> None:
        self.path = path
        self.passages = passages
        self.embedder = embedder
        self.settings = {**settings, "synonym_threshold": synonym_threshold, "layout": LAYOUT}
        self.synonym_threshold = synonym_threshold
        self._graph: PassageGraph | None = None

    @property
    def meta_path(self) -> Path:
        return _beside(self.path, ".json")

    @property
    def data_path(self) -> Path:
        return _beside(self.path, ".npz")

    def refresh(self) -> None:
        """Forget the graph so the next use checks it against SQLite again."""
        self._graph = None

    def ensure(self, vectors: TextVectors | None = None) -> str:
        """Bring the graph up to date: 'cached' (already in this process), 'loaded' (from disk)
        or 'built' (from SQLite, then saved; `vectors` may carry texts embedded for another
        graph)."""
        if self._graph is not None:
            return "cached"
        passages = self.passages()
        key = fingerprint(self.settings, [(p.id, p.text, list(p.entities), [list(t) for t in p.triplets]) for p in passages])
        with _LOCK:
            held = _LOADED.get(self.path)
            if held is not None and held[0] == key:
                self._graph = held[1]
                return "cached"
            graph, status = self._read(key), "loaded"
            if graph is None:
                vectors = vectors or TextVectors(self.embedder)
                old = held[1] if held is not None else self._read(None)
                if old is not None:
                    vectors.remember(old)
                graph, status = PassageGraph.build(passages, vectors, self.synonym_threshold), "built"
                self._write(graph, key)
            _LOADED[self.path] = (key, graph)
            self._graph = graph
            return status

    def last_saved(self) -> PassageGraph | None:
        """The graph last saved with these settings, up to date or not (its vectors can seed a
        `TextVectors`), or None."""
        return self._read(None)

    @property
    def graph(self) -> PassageGraph:
        self.ensure()
        assert self._graph is not None
        return self._graph

    def _read(self, key: str | None) -> PassageGraph | None:
        """The saved graph if it carries `key` (any graph of these settings when key is None)."""
        try:
            meta = json.loads(self.meta_path.read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(meta, dict) or meta.get("settings") != self.settings:
            return None
        if key is not None and meta.get("fingerprint") != key:
            return None
        try:
            graph, saved_key = PassageGraph.from_file(self.data_path)
        except (OSError, ValueError, KeyError):
            return None
        return graph if saved_key == meta.get("fingerprint") else None

    def _write(self, graph: PassageGraph, key: str) -> None:
        meta = {"settings": self.settings, "fingerprint": key, "nodes": graph.n_nodes, "edges": graph.n_edges()}
        tmp_data, tmp_meta = _beside(self.path, ".npz.tmp"), _beside(self.path, ".json.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp_data.write_bytes(graph.to_bytes(key))
            tmp_meta.write_text(json.dumps(meta))
            os.replace(tmp_data, self.data_path)
            os.replace(tmp_meta, self.meta_path)
        except OSError as exc:
            raise StoreError(f"{self.path.parent}: cannot write graph {self.path.name!r} ({exc.strerror})") from None
