"""Keyword search (BM25) over stored texts, and reciprocal rank fusion with an embedding search.

A small sentence embedder matches a question by the gist of a caption; the words that decide
an EgoLife or LVBench question are often names (Shure, Katrina), rare objects and on-screen or
spoken words, which a keyword ranking matches as they are. The memories that search texts
(event captions, episodic windows, timeline facts) fuse the two rankings when the agent profile says `lexical:
true`: on A1_JAKE's caption-only week (docs/benchmarks.md) BM25 alone reached a target window in
the first ten captions for more questions than the embedding index, and the fused ranking for
more than either.

Words are lower-case letter-and-digit runs without English stopwords (bm25s's fuller list, NLTK's),
Snowball-stemmed (PyStemmer), so 'cooked' meets 'cooking'. The index lives in memory, built
from its texts on the first search (the week's 6,259 captions in well under a second), and is
dropped with the memory that holds it, as an embedding index's staleness check is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

import numpy as np

RRF_K = 60
"""Reciprocal rank fusion's constant (Cormack et al., 2009): a result at rank r (from 0) adds
1 / (RRF_K + r) for each ranking it is in."""

_WORD = re.compile(r"[^\W_]+")


@cache
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@cache
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    return frozenset(STOPWORDS_EN_PLUS)


def terms(text: str) -> list[str]:
    """The words BM25 compares: stemmed, stopwords dropped."""
    stop = _stopwords()
    return _stemmer().stemWords([w for w in _WORD.findall(text.lower()) if w not in stop])


class LexicalIndex:
    """BM25 (bm25s, its default Lucene variant) over `texts`, each known by its row id."""

    def __init__(self, ids: Sequence[int], texts: Sequence[str]) -> None:
        if len(ids) != len(texts):
            raise ValueError(f"{len(ids)} ids for {len(texts)} texts")
        self.ids = np.asarray(ids, dtype=np.int64)
        self._texts = list(texts)
        self._bm25 = None

    def __len__(self) -> int:
        return len(self.ids)

    def _index(self):
        if self._bm25 is None:
            import bm25s

            bm25 = bm25s.BM25()
            # bm25s refuses an empty corpus and a corpus of empty documents: one placeholder word
            # keeps every row (a row without words then never scores above zero).
            bm25.index([terms(t) or [""] for t in self._texts] or [[""]], show_progress=False)
            self._bm25 = bm25
        return self._bm25

    def search(self, query: str, k: int, allowed_ids: Sequence[int] | None = None) -> list[tuple[int, float]]:
        """Top `k` (row id, BM25 score) for `query`, best first, among `allowed_ids` when given;
        only rows sharing a word with the query (score above zero)."""
        words = [w for w in terms(query) if w]
        if k <= 0 or not words or not len(self.ids):
            return []
        scores = np.asarray(self._index().get_scores(words), dtype=np.float64)[: len(self.ids)]
        if allowed_ids is not None:
            scores = np.where(np.isin(self.ids, np.asarray(allowed_ids, dtype=np.int64)), scores, 0.0)
        hits = np.flatnonzero(scores > 0)
        if not len(hits):
            return []
        top = hits[np.argsort(-scores[hits], kind="stable")[:k]]
        return [(int(self.ids[i]), float(scores[i])) for i in top]


def fuse(*rankings: Sequence[int]) -> list[tuple[int, float]]:
    """Reciprocal rank fusion of rankings of ids (best first): (id, fused score), best first;
    ties keep the order of first appearance (the first ranking's order before the second's)."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, i in enumerate(ranking):
            fused[i] = fused.get(i, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(fused.items(), key=lambda item: -item[1])


def fused_top(k: int, *rankings: Sequence[int]) -> list[tuple[int, float]]:
    """The first `k` of `fuse(*rankings)`, each score relative to the best (the first scores 1),
    as a memory reports scores that are not on the embedder's cosine scale."""
    fused = fuse(*rankings)[:k]
    best = fused[0][1] if fused else 1.0
    return [(i, score / best) for i, score in fused]
