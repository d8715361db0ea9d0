"""Graphs searched by Personalized PageRank (memory/graph.py): PPR against igraph's prpack,
FAISS synonym edges against brute force, query-time masking, and saved graphs that are
loaded rather than rebuilt. A bag-of-words hashing embedder keeps these tests model-free."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import igraph
import numpy as np
import pytest
from scipy import sparse

from videomem.memory import graph as graph_module
from videomem.memory.graph import (
    PageRank,
    Passage,
    PassageGraph,
    SavedGraph,
    TextVectors,
    synonym_edges,
)


class HashEmbedder:
    """Each word hashed to one of 64 dimensions; rows L2-normalised (TextEmbedder protocol)."""

    dim = 64

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)


def _random_graph(n: int, m: int, seed: int) -> sparse.csr_matrix:
    rng = np.random.default_rng(seed)
    rows, cols = rng.integers(0, n - 3, m), rng.integers(0, n - 3, m)  # the last 3 nodes stay isolated
    keep = rows != cols
    upper = sparse.coo_matrix((rng.uniform(0.2, 3.0, m)[keep], (rows[keep], cols[keep])), shape=(n, n))
    return sparse.csr_matrix(upper + upper.T)


def _igraph_ppr(adjacency: sparse.csr_matrix, reset: np.ndarray, damping: float) -> np.ndarray:
    upper = sparse.triu(adjacency).tocoo()
    graph = igraph.Graph(n=adjacency.shape[0], edges=list(zip(upper.row.tolist(), upper.col.tolist())))
    return np.array(
        graph.personalized_pagerank(
            damping=damping, reset=reset.tolist(), weights=upper.data.tolist(), implementation="prpack"
        )
    )


@pytest.mark.parametrize("damping", [0.5, 0.85])
def test_pagerank_matches_igraph_prpack(damping: float) -> None:
    adjacency = _random_graph(60, 150, seed=1)
    reset = np.zeros(60)
    reset[[2, 7, 59]] = [1.0, 3.0, 0.5]  # node 59 has no edge: its share restarts, as in prpack
    ours = PageRank(adjacency).scores(reset, damping)
    reference = _igraph_ppr(adjacency, reset, damping)
    assert np.abs(ours - reference).max() < 1e-9
    assert list(np.argsort(-ours)[:10]) == list(np.argsort(-reference)[:10])


def test_pagerank_rejects_a_bad_reset() -> None:
    walk = PageRank(_random_graph(10, 20, seed=2))
    with pytest.raises(ValueError, match="reset"):
        walk.scores(np.zeros(10), 0.5)
    with pytest.raises(ValueError, match="reset"):
        walk.scores(np.ones(9), 0.5)


def _masked_by_hand(graph: PassageGraph, visible: np.ndarray) -> np.ndarray:
    """The restricted adjacency as the module doc defines it, entry by entry."""
    n_entities = len(graph.entities)
    shown = visible.astype(float)
    mentions, counts = graph.entity_passages.toarray(), graph.fact_passages.toarray() @ shown
    named = mentions @ shown > 0
    out = np.zeros((graph.n_nodes, graph.n_nodes))
    for (subject, obj), count in zip(graph.fact_ends, counts):
        if subject != obj:
            out[subject, obj] += count
            out[obj, subject] += count
    out[:n_entities, :n_entities] += graph.synonyms.toarray() * np.outer(named, named)
    out[:n_entities, n_entities:] = mentions * shown
    out[n_entities:, :n_entities] = (mentions * shown).T
    return out


def test_a_masked_graph_is_the_visible_passages_graph_and_its_walk_never_leaves_it() -> None:
    rng = np.random.default_rng(3)
    names = [f"thing {n}" for n in range(12)] + [f"things {n}" for n in range(4)]  # near-synonyms by hashing
    passages = []
    for n in range(30):
        named = list(rng.choice(names, 4, replace=False))
        facts = [(named[0], "holds", named[1]), (named[1], "sees", named[2]), (named[2], "is", named[2])]
        passages.append(Passage(100 + n, " ".join(named), named, facts))
    graph = PassageGraph.build(passages, TextVectors(HashEmbedder()), synonym_threshold=0.7)
    assert graph.synonyms.nnz > 0
    for visible in (np.ones(30, dtype=bool), np.arange(30) % 3 != 0, np.arange(30) < 5, np.zeros(30, dtype=bool)):
        expected = _masked_by_hand(graph, visible)
        assert np.allclose(graph.adjacency(visible).toarray(), expected, atol=1e-12)
        hidden = ~np.concatenate([expected.any(axis=1)[: len(graph.entities)], visible])
        if visible.any():
            reset = np.concatenate([np.zeros(len(graph.entities)), visible.astype(float)])
            assert graph.walk(visible).scores(reset, 0.5)[hidden].max(initial=0.0) == 0.0
    assert graph.adjacency(np.arange(30) < 5)[len(graph.entities) + 29].nnz == 0


def test_synonym_edges_are_the_thresholded_nearest_neighbours() -> None:
    rng = np.random.default_rng(4)
    centres = rng.normal(size=(8, 16))
    vectors = np.repeat(centres, 5, axis=0) + 0.1 * rng.normal(size=(40, 16))
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosine = unit @ unit.T
    np.fill_diagonal(cosine, -1.0)
    brute = set()
    for i in range(40):
        for j in np.argsort(-cosine[i])[:3]:
            if cosine[i, j] >= 0.9:
                brute |= {(i, int(j)), (int(j), i)}
    found = synonym_edges(vectors, threshold=0.9, neighbours=3).tocoo()
    assert set(zip(found.row.tolist(), found.col.tolist())) == brute
    assert np.allclose(found.data, cosine[found.row, found.col], atol=1e-5)
    assert synonym_edges(vectors[:1], threshold=0.9).nnz == 0


PASSAGES = [
    Passage(10, "I chop onions in the kitchen", ["I", "onions", "kitchen"], [("I", "chop", "onions")]),
    Passage(11, "I fry the onions in a pan", ["I", "onions", "pan"], [("I", "fry", "onions"), ("onions", "in", "pan")]),
    Passage(12, "a dog sleeps on the sofa", ["dog", "sofa"], [("dog", "sleeps on", "sofa")]),
    Passage(13, "the dog barks at a courier", ["dog", "courier"], [("dog", "barks at", "courier")]),
]


def test_passage_graph_ranks_by_ppr_and_masks_hidden_passages() -> None:
    embedder = HashEmbedder()
    graph = PassageGraph.build(PASSAGES, TextVectors(embedder), synonym_threshold=0.99)
    assert graph.entities == sorted({"i", "onions", "kitchen", "pan", "dog", "sofa", "courier"})
    assert graph.n_nodes == 7 + 4
    query = embedder.embed(["where does the dog sleep"])[0]
    settings = {"damping": 0.5, "passage_node_weight": 0.05, "linking_top_k": 5}
    ranked = graph.rank(query, 4, **settings)
    assert {i for i, _ in ranked[:2]} == {12, 13}
    assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)

    visible = np.array([True, True, False, True])
    masked = graph.rank(query, 4, visible=visible, **settings)
    assert [i for i, _ in masked][0] == 13 and 12 not in {i for i, _ in masked}
    adjacency = graph.adjacency(visible)
    sofa, hidden_node = graph.entities.index("sofa"), len(graph.entities) + 2
    assert adjacency[sofa].nnz == 0 and adjacency[hidden_node].nnz == 0  # named only in the hidden passage
    assert graph.rank(query, 4, visible=np.zeros(4, dtype=bool), **settings) == []


def test_saved_graph_is_loaded_not_rebuilt_and_rebuilt_when_rows_change(tmp_path: Path) -> None:
    rows = list(PASSAGES)
    embedder = HashEmbedder()

    def saved() -> SavedGraph:
        return SavedGraph(tmp_path / "index" / "g_0.5s", lambda: list(rows), embedder, {"embedder": "hash"}, 0.99)

    first = saved()
    assert first.ensure() == "built" and first.ensure() == "cached"
    assert first.data_path.name == "g_0.5s.npz" and first.data_path.exists()
    graph_module._LOADED.clear()  # a new process: nothing held in memory
    calls = embedder.calls
    second = saved()
    assert second.ensure() == "loaded" and embedder.calls == calls
    assert second.graph.entities == first.graph.entities
    assert np.array_equal(second.graph.passage_ids, first.graph.passage_ids)
    assert (second.graph.adjacency() != first.graph.adjacency()).nnz == 0

    rows.append(Passage(14, "the courier rings the bell", ["courier", "bell"], [("courier", "rings", "bell")]))
    third = saved()
    assert third.ensure() == "built"
    assert list(third.graph.passage_ids) == [10, 11, 12, 13, 14]
    graph_module._LOADED.clear()
    assert saved().ensure() == "loaded"
