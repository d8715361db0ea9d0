"""The vectors of recently embedded texts, kept so that a text is not embedded twice in a row.

One question reaches the text embedder many times: every memory tool an agent calls embeds
it to search its index, the episodic re-rank embeds it again, and the answer step once more.
On the offline profile those single-text calls were most of an `ask` (a 2-hour corpus: 49 of
the 60 seconds of eight questions). `RecentTexts` wraps any `TextEmbedder`: texts whose vectors
are among the last `RECENT_BYTES` it embedded are answered from memory, the others are embedded
together in one call. Embeddings are deterministic, so a remembered vector is the one the model would give
(up to float rounding from batching, as `tests/test_text_embed.py` checks).

One embedder serves every thread of a server, and a Hugging Face fast tokenizer is not safe to
call from two threads at once (its padding and truncation settings are state it changes per
call), so the wrapped embedder is called by one thread at a time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

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
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._embedding = threading.Lock()
        """Held while the wrapped embedder runs (its tokenizer is not thread-safe)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        with self._lock:
            found = {t: self._vectors[t] for t in texts if t in self._vectors}
            for t in found:
                self._vectors.move_to_end(t)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            with self._embedding:
                vectors = np.asarray(self.embedder.embed(missing), dtype=np.float32)
            if vectors.shape != (len(missing), self.dim):
                raise ValueError(f"embedder returned shape {vectors.shape}, expected ({len(missing)}, {self.dim})")
            found |= {t: v.copy() for t, v in zip(missing, vectors)}  # not a view keeping the batch alive
            with self._lock:
                for t in missing[-self.size :]:
                    self._vectors[t] = found[t]
                    self._vectors.move_to_end(t)
                while len(self._vectors) > self.size:
                    self._vectors.popitem(last=False)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[t] for t in texts])
