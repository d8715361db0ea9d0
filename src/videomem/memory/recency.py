"""Recency beside relevance, for a question asked at a moment of the recording.

A question with a moment of asking (EgoLifeQA's `query_time`: "what did I just put in the
fridge?") is asked by someone living through the footage, and what they ask about is mostly
recent: in the released EgoLifeQA questions of A1_JAKE's DAY2–DAY7, a quarter of the targets lie
within the hour before the question and half within six hours, while a week's memory holds
seven days. Relevance alone ranks an old clip that shares the question's words before the
recent one that answers it.

Generative Agents (Park et al., 2023) rank a memory by relevance and recency together, weighted
equally, recency an exponential decay with age. This module does the same over the first `POOL`
candidates of a memory's relevance ranking, with the half-life of the agent profile
(`recency_half_life_hours`), for event captions, object observations and each episodic scale's
windows. Relevance is min-max normalised over the candidates (each memory scores on its own
scale); recency is the decay itself, already between 0 and 1, and is not stretched to that
range as Generative Agents stretch it: stretched, candidates seconds apart (a question about
the last minute of a short recording) differed in recency as much as a day and a week do, and
a clip ten seconds later led the one that answers. A tie keeps the relevance order.

The timeline memory's free-text search is not re-ranked: its candidates are already the latest
intervals of the entities the query names, and recency there lowered recall of the dev set's
targets (R@10 0.108 → 0.091). A question with no moment of asking (a video asked as a whole:
LVBench, Video-MME, `videomem ask` without `--until`) is ranked by relevance alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

POOL = 100
"""Candidates the relevance ranking proposes for the re-rank by relevance and recency."""


def pool_size(top_k: int, until: float | None, half_life_s: float | None) -> int:
    """How many candidates to ask the relevance ranking for: `POOL` when recency will re-rank them
    (the question has a moment of asking and the agent profile gives a half-life)."""
    return max(top_k, POOL) if until is not None and half_life_s is not None else top_k


def _unit(values: np.ndarray) -> np.ndarray:
    """Min-max normalised to [0, 1]; all ones when every value is the same (it then tells no candidate apart)."""
    spread = float(values.max() - values.min())
    return (values - values.min()) / spread if spread > 0 else np.ones_like(values)


def reranked(
    ranked: Sequence[tuple[int, float]], ends: Mapping[int, float], until: float | None, half_life_s: float | None
) -> list[tuple[int, float]]:
    """`ranked` (id, relevance), best first, ordered by min-max normalised relevance plus recency,
    0.5 ** (age / half-life) with age the time from an item's end (`ends`) to `until`;
    scores relative to the best, as a fused ranking reports them. Ties keep the relevance order.
    With no moment of asking or no half-life, in the order and with the scores given. Either way
    an id without an end (a row gone since the index was written) is left out."""
    ranked = [hit for hit in ranked if hit[0] in ends]
    if not ranked or until is None or half_life_s is None:
        return ranked
    relevance = np.array([score for _, score in ranked], dtype=np.float64)
    ages = np.array([max(0.0, until - ends[i]) for i, _ in ranked], dtype=np.float64)
    combined = _unit(relevance) + 0.5 ** (ages / half_life_s)
    order = sorted(range(len(ranked)), key=lambda n: (-combined[n], n))
    best = float(combined[order[0]]) or 1.0
    return [(ranked[n][0], float(combined[n]) / best) for n in order]
