"""The offline cross-scale re-rank of episodic captions (WorldMM asks an LLM; this is a rule).

Each time scale's graph proposes its best captions; which scale answers the query best cannot
be read from those per-scale ranks alone, since every scale has a best caption. Two rules do it:

1. **Order**: reciprocal-rank fusion of two rankings of all candidates — the rank each got
   within its own scale (the graph's view) and the rank of its MiniLM similarity to the query
   (comparable across scales): score = 1/(60 + rank_scale) + 1/(60 + rank_similarity).
2. **Extent**: a caption *matches* when its similarity is within MATCH_MARGIN of the best of
   its scale. Starting from the matching captions of the finest scale that matches about as
   well as any (within MATCH_MARGIN of the best overall), a caption climbs to the candidate of
   the next coarser scale that contains it whenever that candidate contains at least two
   matching captions of the finer scale: what the query describes then spans more than one
   finer window, and the coarser caption covers it (a caption inside one that climbed goes
   with it). Where only one finer caption matches (a moment), the finer, more precise caption
   is kept. The captions reached this way come first, in fused order; all other candidates
   follow in fused order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from videomem.models.base import RankCandidate, TextEmbedder

RRF_K = 60
"""The usual reciprocal-rank-fusion constant: ranks deep in a list still count a little."""
MATCH_MARGIN = 0.05
"""MiniLM cosine below the best within which two captions match a query equally well."""
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
    vectors = embedder.embed([query, *(c.text for c in candidates)])
    similarity = vectors[1:] @ vectors[0]
    fused = 1 / (RRF_K + np.array([c.rank for c in candidates])) + 1 / (RRF_K + _ranks(similarity))
    order = sorted(range(len(candidates)), key=lambda i: (-fused[i], candidates[i].scale, candidates[i].t_start))

    scales = sorted({c.scale for c in candidates})
    best = {s: max(similarity[i] for i, c in enumerate(candidates) if c.scale == s) for s in scales}
    matching = {i for i, c in enumerate(candidates) if similarity[i] >= best[c.scale] - MATCH_MARGIN}
    top = max(best.values())
    start = next(s for s in scales if best[s] >= top - MATCH_MARGIN)
    anchors = {i for i in matching if candidates[i].scale == start}
    for finer, coarser in zip(scales, scales[1:]):
        if finer < start:
            continue
        climbed = set()
        for i in anchors:
            if candidates[i].scale != finer:
                climbed.add(i)  # stopped at a finer scale: a moment stays a moment
                continue
            inside = [j for j, c in enumerate(candidates) if c.scale == coarser and _contains(c, candidates[i])]
            target = inside[0] if inside else None
            held = target is not None and sum(
                1 for j in matching if candidates[j].scale == finer and _contains(candidates[target], candidates[j])
            ) >= 2
            climbed.add(target if held else i)
        reached = [j for j in climbed if candidates[j].scale == coarser]
        anchors = {j for j in climbed if j in reached or not any(_contains(candidates[r], candidates[j]) for r in reached)}
    first = [i for i in order if i in anchors]
    return [candidates[i].id for i in first + [i for i in order if i not in anchors]]
