"""Personalized PageRank on a graph the size of 44 hours of captions at 30 s: ours vs igraph.

HippoRAG 2 and WorldMM build an igraph graph and call `personalized_pagerank` (prpack) per
query. videomem keeps the graph as scipy sparse matrices and runs a power iteration on a walk
matrix computed once (`videomem.memory.graph`). This script

  1. generates 44 h / 30 s = 5,280 passages with about 25,000 entities and 50,000 triplets;
     entity popularity follows a power law (Zipf, exponent 1.1), so a few entities ("I",
     "table") are named by thousands of passages and most by one or two; one entity in eight
     has a near-duplicate spelling, so synonym edges exist;
  2. builds the graph with the project's code (`SavedGraph.ensure`: incidence matrices, FAISS
     synonym edges, saved `.npz` under a temporary `index/`) and prints build seconds. Texts are
     embedded by a hashing embedder (random unit vector per text, 384 dims like MiniLM): the
     time of a real text model is not the graph's and is left out;
  3. for QUERIES queries (a fact's vector plus noise), computes HippoRAG 2's reset vector once
     and times one PPR on it with ours (cached walk matrix) and with igraph's prpack on the same
     graph (built once, weights passed), interleaved so both see the same machine load; checks
     that the top-20 passages agree.

Peak RSS is the whole process (Python, numpy, FAISS, igraph's graph). Last line:
`vs igraph: N.NNx` = median time per query, ours / igraph (lower is better).
"""

from __future__ import annotations

import hashlib
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import igraph
import numpy as np
from scipy import sparse

from videomem.core import tune_process

tune_process()  # an entry point like `videomem`: OpenMP threads sleep while they wait (set before torch loads)

from videomem.memory.graph import Passage, SavedGraph

HOURS, SCALE = 44, 30
N_ENTITIES, N_TRIPLETS = 27_000, 50_000
"""Entity names to draw from (about 25,000 end up used) and triplets stated."""
DIM, QUERIES, TOP = 384, 30, 20
DAMPING, PASSAGE_NODE_WEIGHT, LINKING_TOP_K = 0.5, 0.05, 5
RELATIONS = ("holds", "opens", "puts on", "talks to", "walks to", "picks up", "looks at", "cuts", "washes", "carries")


class HashEmbedder:
    """A random unit vector per text, fixed by its hash; a variant ending in " alt" lies close to
    its base spelling (cosine about 0.9), standing in for a synonym."""

    dim = DIM

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            base = text.removesuffix(" alt")
            vector = _unit(base)
            if base != text:
                vector = vector + 0.45 * _unit(text)
            out[row] = vector / np.linalg.norm(vector)
        return out


def _unit(text: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
    vector = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return vector / np.linalg.norm(vector)


def passages(rng: np.random.Generator, hours: int = HOURS) -> list[Passage]:
    """`hours` of 30-s captions, as many triplets per hour as the 44-h timeline has."""
    n_passages = hours * 3600 // SCALE
    names = ["I", *(f"entity {i - 1} alt" if i % 8 == 7 else f"entity {i}" for i in range(1, N_ENTITIES))]
    popularity = 1.0 / np.arange(1, N_ENTITIES + 1) ** 1.1
    popularity /= popularity.sum()
    per_passage = rng.multinomial(N_TRIPLETS * hours // HOURS, np.full(n_passages, 1 / n_passages))
    out = []
    for p, count in enumerate(per_passage):
        subjects = rng.choice(N_ENTITIES, size=count, p=popularity)  # power law: hubs
        objects = rng.integers(0, N_ENTITIES, size=count)  # the long tail
        triplets = [(names[s], RELATIONS[(s + o) % len(RELATIONS)], names[o]) for s, o in zip(subjects, objects) if s != o]
        extra = [names[e] for e in rng.integers(0, N_ENTITIES, 3)]  # named but in no fact
        entities = list(dict.fromkeys([n for t in triplets for n in (t[0], t[2])] + extra))
        out.append(Passage(p, f"caption {p}: " + "; ".join(" ".join(t) for t in triplets), entities, triplets))
    return out


def main() -> int:
    rng = np.random.default_rng(0)
    rows = passages(rng)
    with tempfile.TemporaryDirectory() as tmp:
        saved = SavedGraph(Path(tmp) / "index" / "bench_30s", lambda: rows, HashEmbedder(), {"embedder": "hash"}, 0.8)
        started, cpu = time.perf_counter(), time.process_time()
        assert saved.ensure() == "built"
        graph = saved.graph
        walk = graph.walk()
        build, build_cpu = time.perf_counter() - started, time.process_time() - cpu
        size_mb = (saved.data_path.stat().st_size + saved.meta_path.stat().st_size) / 2**20
    n_entities = len(graph.entities)
    adjacency = graph.adjacency()
    upper = sparse.triu(adjacency).tocoo()
    print(f"graph: {len(graph.passage_ids):,} passages, {n_entities:,} entities, {len(graph.facts):,} facts, "
          f"{graph.n_nodes:,} nodes, {upper.nnz:,} edges ({graph.synonyms.nnz // 2:,} synonym pairs)")
    degree = np.diff(adjacency.indptr)
    print(f"degrees: median {np.median(degree):.0f}, max {degree.max():,} (power law)")
    print(f"build (project code: matrices, FAISS synonyms, walk matrix, saved {size_mb:.1f} MB): {build:.1f} s "
          f"({build_cpu:.1f} s CPU)")

    reference = igraph.Graph(n=graph.n_nodes, edges=np.column_stack([upper.row, upper.col]).tolist())
    weights = upper.data.tolist()
    ours_s, theirs_s, agree = [], [], 0
    for q in range(QUERIES):
        fact = int(rng.integers(len(graph.facts)))
        query = graph.fact_vectors[fact] + 0.5 * rng.standard_normal(DIM).astype(np.float32) / np.sqrt(DIM)
        query /= np.linalg.norm(query)
        reset = graph.restart(query, passage_node_weight=PASSAGE_NODE_WEIGHT, linking_top_k=LINKING_TOP_K)
        timings = []
        for side in (0, 1) if q % 2 == 0 else (1, 0):
            started = time.perf_counter()  # wall time: prpack is single-threaded, so is our sparse product
            if side == 0:
                ours = walk.scores(reset, DAMPING)
            else:
                theirs = np.array(reference.personalized_pagerank(
                    damping=DAMPING, reset=reset.tolist(), weights=weights, implementation="prpack"
                ))
            timings.append((side, time.perf_counter() - started))
        for side, seconds in timings:
            (ours_s if side == 0 else theirs_s).append(seconds)
        top_ours = np.argsort(-ours[n_entities:], kind="stable")[:TOP]
        top_theirs = np.argsort(-theirs[n_entities:], kind="stable")[:TOP]
        agree += set(top_ours) == set(top_theirs)
        assert np.abs(ours - theirs).max() < 1e-8, "scores differ from igraph's"
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ours_ms, theirs_ms = statistics.median(ours_s) * 1e3, statistics.median(theirs_s) * 1e3
    print(f"peak RSS: {rss_mb:,.0f} MB")
    print(f"PPR per query, median of {QUERIES}: ours {ours_ms:.1f} ms, igraph prpack {theirs_ms:.1f} ms "
          f"(damping {DAMPING}, same graph and reset vector)")
    print(f"top-{TOP} passages agree with igraph: {agree}/{QUERIES} queries")
    print(f"vs igraph: {ours_ms / theirs_ms:.2f}x")
    return 0 if agree == QUERIES else 1


if __name__ == "__main__":
    sys.exit(main())
