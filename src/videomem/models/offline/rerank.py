"""The offline cross-scale re-rank of episodic captions (WorldMM asks an LLM; this is a rule).

Each time scale's graph proposes its best captions; which scale answers the query best cannot
be read from those per-scale ranks alone, since every scale has a best caption. Two rules do it:

1. **Order**: reciprocal-rank fusion of two rankings of all candidates — the rank each got
   within its own scale (the graph's view) and the rank of its MiniLM similarity to the query
   (comparable across scales): score = 1/(60 + rank_scale) + 1/(60 + rank_similarity).
2. **Extent**: a caption *matches* when its similarity is within MATCH_MARGIN of the best of
   its scale. The matching captions of the finest scale that matches about as well as any
   (within MATCH_MARGIN of the best overall) are the anchors. Going up the scales, a candidate
   that contains anchors standing for at least two of those matching captions replaces them,
   provided it still says what they say (its similarity at least KEEP_RATIO of theirs): what
   the query describes then spans more than one finer window, and the coarser caption covers
   it. A lone match (a moment) keeps its finer, more precise caption, and so does a match whose
   coarser window is mostly about something else. The anchors reached come first, in fused
   order; all other candidates follow in fused order.
3. **Within a scale, the scale's own order**: rules 1 and 2 decide which scale each place of
   the result goes to; the captions that fill a scale's places are that scale's, in its own
   order (`RankCandidate.rank`). A scale's ranking weighs what the similarity here does not —
   the graph, keywords, how recent a window is when the question is asked at a moment — so
   re-ordering captions of one scale by similarity undid it: on the A1_JAKE development week,
   asked with the question and its options as the agents search, the first result reached the
   target for 0.127 of the questions in fused order and for 0.155 with each scale's own order.
   The similarity to the question alone is a sharper signal than to a query holding four
   options; asked so, or on a video asked as a whole, the rule moves less or loses a little
   (docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from videomem.models.engines import TextEmbedder
from videomem.models.tasks.episodic import RankCandidate

RRF_K = 60
"""The usual reciprocal-rank-fusion constant: ranks deep in a list still count a little."""
MATCH_MARGIN = 0.05
"""MiniLM cosine below the best within which two captions match a query equally well."""
KEEP_RATIO = 0.5
"""A coarser caption replaces the finer matches it contains only if its similarity to the query
is at least this share of theirs (below it, the moment is diluted among other things)."""
_EDGE = 1e-6


def _contains(outer: RankCandidate, inner: RankCandidate) -> bool:
    return (
        outer.timeline == inner.timeline
        and outer.t_start - _EDGE <= inner.t_start
        and inner.t_end <= outer.t_end + _EDGE
    )


def _ranks(values: np.ndarray) -> np.ndarray:
    """1-based competition ranks of `values`, highest first (ties share a rank)."""
    order = np.sort(values)[::-1]
    return np.searchsorted(-order, -values, side="left") + 1


def rerank(query: str, candidates: Sequence[RankCandidate], embedder: TextEmbedder) -> list[int]:
    """Candidate ids, best first (all of them: this rule never judges a caption irrelevant)."""
    if not candidates:
        return []
    missing = [c.text for c in candidates if c.vector is None]
    embedded = iter(embedder.embed([query, *missing]))
    query_vector = next(embedded)
    similarity = np.array([(c.vector if c.vector is not None else next(embedded)) @ query_vector for c in candidates])
    fused = 1 / (RRF_K + np.array([c.rank for c in candidates])) + 1 / (RRF_K + _ranks(similarity))
    order = sorted(range(len(candidates)), key=lambda i: (-fused[i], candidates[i].scale, candidates[i].t_start))

    scales = sorted({c.scale for c in candidates})
    best = {s: max(similarity[i] for i, c in enumerate(candidates) if c.scale == s) for s in scales}
    top = max(best.values())
    start = next(s for s in scales if best[s] >= top - MATCH_MARGIN)
    # anchor → how many matching captions of the start scale it stands for
    anchors = {
        i: 1 for i, c in enumerate(candidates) if c.scale == start and similarity[i] >= best[start] - MATCH_MARGIN
    }
    for coarser in (s for s in scales if s > start):
        for j in sorted((j for j, c in enumerate(candidates) if c.scale == coarser), key=lambda j: -fused[j]):
            inside = [i for i in anchors if candidates[i].scale < coarser and _contains(candidates[j], candidates[i])]
            held = sum(anchors[i] for i in inside)
            if held >= 2 and similarity[j] >= KEEP_RATIO * max(similarity[i] for i in inside):
                anchors[j] = held
                for i in inside:
                    del anchors[i]
    places = [candidates[i].scale for i in [*(i for i in order if i in anchors), *(i for i in order if i not in anchors)]]
    own = {s: iter(sorted((c for c in candidates if c.scale == s), key=lambda c: (c.rank, c.t_start))) for s in scales}
    return [next(own[scale]).id for scale in places]
