"""The vectors of recently embedded texts, kept so that a text is not embedded twice in a row.

One question reaches the text embedder many times: every memory tool an agent calls embeds
it to search its index, the episodic re-rank embeds it again, and the answer step once more.
On the offline profile those single-text calls were most of an `ask` (a 2-hour corpus: 49 of
the 60 seconds of eight questions). `RecentTexts` wraps any `TextEmbedder`: texts whose vectors
are among the last `RECENT_BYTES` it embedded are answered from memory, the others are embedded
together in one call. Embeddings are deterministic, so a remembered vector is the one the model would give
(up to float rounding from batching, as `tests/test_text_embed.py` checks).

A wrapped embedder that has `keys(texts)` names what it would read of each text: the
sentence-transformers one gives the token ids its model reads. Texts with the same key share one
vector, so "Katrina enter drawing room" (a semantic fact) reuses the vector of "katrina enter
drawing room" (the episodic graph's fact) under an uncased model: about 4 % of the tokens a
caption-only EgoLife day embeds. Without `keys` a text is its own key.

One embedder serves every thread of a server, and a Hugging Face fast tokenizer is not safe to
call from two threads at once (its padding and truncation settings are state it changes per
call), so the wrapped embedder is called by one thread at a time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence

import numpy as np

from videomem.models.engines import TextEmbedder

RECENT_BYTES = 128 * 2**20
"""Vectors kept, least recently used out first: 87,381 texts at 384 dimensions (float32). An
ingest embeds the same texts in several stages (a caption's triplets in the episodic graph, the
semantic memory and the timeline): a day of EgoLife embeds some 70,000 distinct texts, and the
8,192 kept before were gone by the next stage."""


class RecentTexts:
    """A `TextEmbedder` answering recently embedded texts from memory (thread-safe)."""

    def __init__(self, embedder: TextEmbedder, size: int | None = None) -> None:
        """`size`: texts kept (default: as many as `RECENT_BYTES` holds at the embedder's dimension)."""
        self.embedder = embedder
        self.dim = embedder.dim
        self.size = size if size is not None else max(1, RECENT_BYTES // (4 * self.dim))
        self._vectors: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._embedding = threading.Lock()
        """Held while the wrapped embedder runs (its tokenizer is not thread-safe)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        keys = self._keys(texts)
        with self._lock:
            found = {k: self._vectors[k] for k in keys if k in self._vectors}
            for k in found:
                self._vectors.move_to_end(k)
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        if missing:
            first = dict(zip(reversed(keys), reversed(texts)))  # a key's first text
            with self._embedding:
                vectors = np.asarray(self.embedder.embed([first[k] for k in missing]), dtype=np.float32)
            if vectors.shape != (len(missing), self.dim):
                raise ValueError(f"embedder returned shape {vectors.shape}, expected ({len(missing)}, {self.dim})")
            found |= {k: v.copy() for k, v in zip(missing, vectors)}  # not a view keeping the batch alive
            with self._lock:
                for k in missing[-self.size :]:
                    self._vectors[k] = found[k]
                    self._vectors.move_to_end(k)
                while len(self._vectors) > self.size:
                    self._vectors.popitem(last=False)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def _keys(self, texts: list[str]) -> list[Hashable]:
        keys = getattr(self.embedder, "keys", None)
        if keys is None or not texts:
            return list(texts)
        with self._embedding:  # the wrapped embedder's tokenizer
            return list(keys(texts))
