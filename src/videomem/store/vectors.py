"""Vector indexes derived from SQLite rows.

An index is a cache: SQLite holds the payloads (texts; for visual memory the pooled vectors
themselves, which took a model to make), the index holds their embeddings under the rows' ids.
Each index file has a sidecar naming the embedder that built it and a fingerprint of the
rows it covers, so a missing, foreign (other embedder) or stale (rows removed or rewritten)
index is rebuilt from SQLite instead of silently answering from old data; rows appended since
(a later ingest) are added without re-embedding the rest.

Search is exact inner product over L2-normalised vectors (cosine). Scoping a search to some
rows (query time `until`, one `video_id`) happens in SQL first; the allowed ids then reach FAISS
as an `IDSelectorBatch`, so the top k are the true top k among visible rows for any store size
(over-fetching and filtering afterwards can return fewer than k when most rows are hidden).
Selectors only work on CPU indexes, so a scoped search runs on the CPU index; an unscoped one
runs on a GPU copy (`index_cpu_to_gpu`) when the installed faiss has GPU support and sees a GPU,
unless it asks for more than GPU_MAX_K results, which faiss's GPU search refuses.
The CPU index is the one written to disk. Install one faiss build only: `videomem[cpu]`
(faiss-cpu) or `videomem[gpu]` (faiss-gpu), never both in one environment.

Saving is safe with several processes at once: each writes its own temporary files (named with
its pid; those a killed writer left are removed by the next save), and the index and its
sidecar replace the old pair while the index's lock file is held, so a reader never loads a
half-written index or an index with another one's sidecar. A reader of a store
it cannot write (read-only media, another user's store) keeps a rebuilt index in memory only.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from videomem.config import RoleConfig
from videomem.core import ProgressFactory
from videomem.errors import StoreError
from videomem.store.db import Store

EMBED_CHUNK = 256
"""Rows per embed call while (re)building, so the progress bar moves on large stores."""

Payload = str | bytes
Rows = Callable[[], Iterable[tuple[int, Payload]]]


class Embedder(Protocol):
    """What an index embeds its rows' payloads with: a `TextEmbedder` for texts, or any object
    with `dim` and `embed(payloads)` (visual memory's decodes vectors stored in SQLite)."""

    dim: int

    def embed(self, payloads: Sequence) -> np.ndarray: ...


def embedder_identity(cfg: RoleConfig, dim: int) -> str:
    """What must match for stored vectors to be comparable with a new query's vector
    (open_clip's `pretrained` names the weights: one architecture, several embedding spaces)."""
    weights = f"@{cfg.pretrained}" if cfg.pretrained else ""
    return f"{cfg.backend}:{cfg.model or 'default'}{weights}:{dim}"


def _fingerprint(rows: Sequence[tuple[int, Payload]]) -> str:
    digest = hashlib.sha256()
    for row_id, payload in rows:
        digest.update(f"{row_id}\x1f".encode())
        digest.update(payload if isinstance(payload, bytes) else payload.encode())
        digest.update(b"\x1e")
    return digest.hexdigest()


def _faiss():
    try:
        import faiss
    except ImportError:
        raise StoreError(
            "vector search needs faiss: pip install 'videomem[cpu]' (or 'videomem[gpu]' on a CUDA machine; never both)"
        ) from None
    return faiss


GPU_MAX_K = 2048
"""Most results faiss's GPU flat search returns for one query; a larger k searches the CPU index."""


@functools.cache
def _gpu_resources():
    """faiss GPU resources when the installed faiss has GPU support and sees a GPU, else None."""
    faiss = _faiss()
    if not hasattr(faiss, "StandardGpuResources") or faiss.get_num_gpus() < 1:
        return None
    return faiss.StandardGpuResources()


def _searchable(index):
    """The index for searching: a GPU copy (`index_cpu_to_gpu`) where faiss can use a GPU,
    else the index itself. The CPU index stays the one that is written to disk."""
    resources = _gpu_resources()
    return index if resources is None else _faiss().index_cpu_to_gpu(resources, 0, index)


def _reason(exc: OSError | RuntimeError) -> str:
    if isinstance(exc, OSError):
        return f"{exc.strerror}: {exc.filename}" if exc.filename else str(exc.strerror or exc)
    text = " ".join(str(exc).split())
    return text[text.find("could not open") :] if "could not open" in text else text[:200]


def _temp_name(path: Path) -> Path:
    """A fresh, unique name beside `path` for one writer's temporary copy: `.NAME.PID.XXXX.tmp`."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    return Path(name)


def _sweep(*paths: Path) -> None:
    """Remove temporary copies of these files whose writer is no longer running (it was killed)."""
    for path in paths:
        for tmp in path.parent.glob(f".{path.name}.*.tmp"):
            pid = tmp.name[len(path.name) + 2 :].split(".")[0]
            if pid.isdigit() and not _running(int(pid)):
                with contextlib.suppress(OSError):
                    tmp.unlink()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


SCORE_TIE = 1e-6
"""Cosines closer than this are the same score: identical rows (blank frames) tie exactly."""


def separated(hits: Sequence[tuple[int, float]], k: int) -> list[tuple[int, float]]:
    """Of the best `k + 1` hits (best first), the first `k` that the scores tell apart from the
    candidates left out: none when every candidate scores the same, and only those scoring
    above the best one left out. Which of several tied rows comes first is the index's order
    (clip order), which says nothing about the query."""
    if len(hits) > 1 and hits[0][1] - hits[-1][1] < SCORE_TIE:
        return []
    if len(hits) <= k:
        return list(hits)
    cutoff = hits[k][1] + SCORE_TIE
    return [hit for hit in hits[:k] if hit[1] >= cutoff]


class VectorIndex:
    """FAISS `IndexIDMap(IndexFlatIP)` over `rows()`, persisted as `index_dir/<name>.faiss`.

    Staleness is checked the first time the index is used in this process (and again after
    `refresh()`), because checking means reading every row's payload.
    """

    def __init__(self, store: Store, name: str, rows: Rows, embedder: Embedder, embedder_id: str) -> None:
        self.store = store
        self.name = name
        self.rows = rows
        self.embedder = embedder
        self.embedder_id = embedder_id
        self._index = None
        self._search_index = None

    @property
    def path(self) -> Path:
        return self.store.index_dir / f"{self.name}.faiss"

    @property
    def meta_path(self) -> Path:
        return self.store.index_dir / f"{self.name}.json"

    def refresh(self) -> None:
        """Forget the loaded index so the next use re-checks it against SQLite."""
        self._index = None
        self._search_index = None

    def ensure(self, progress: ProgressFactory | None = None) -> bool:
        """Load the index, bringing it up to date with SQLite. Returns True if it changed.

        Rows appended since the index was written (the usual case: a later ingest) are embedded
        and added; any other change — a row rewritten or deleted, another embedder, a missing
        or unreadable file — rebuilds the index from all rows.
        """
        if self._index is not None:
            return False
        self._search_index = None
        rows = sorted(self.rows())
        meta = self._meta(rows)
        stored = self._stored_meta()
        index = self._read() if stored is not None else None
        if index is not None and index.ntotal != stored.get("count"):
            index = None  # killed between writing the index and its sidecar
        if index is not None and stored == meta:
            self._index = index
            return False
        if index is not None and stored["embedder"] == self.embedder_id:
            kept = [row for row in rows if row[0] <= stored["max_id"]]
            if self._meta(kept) == stored:
                self._index = self._add(index, rows[len(kept) :], progress)
                self._save(meta)
                return True
        faiss = _faiss()
        self._index = self._add(faiss.IndexIDMap(faiss.IndexFlatIP(self.embedder.dim)), rows, progress)
        self._save(meta)
        return True

    def _meta(self, rows: list[tuple[int, Payload]]) -> dict:
        return {
            "embedder": self.embedder_id,
            "count": len(rows),
            "max_id": rows[-1][0] if rows else 0,
            "fingerprint": _fingerprint(rows),
        }

    def _stored_meta(self) -> dict | None:
        """The sidecar, or None when it is missing, unreadable or of another layout (rebuild)."""
        try:
            meta = json.loads(self.meta_path.read_text())
        except (OSError, json.JSONDecodeError):
            return None
        return meta if isinstance(meta, dict) and set(meta) == set(self._meta([])) else None

    def _read(self):
        if not self.path.is_file():
            return None
        try:
            return _faiss().read_index(str(self.path))
        except RuntimeError:
            return None

    def _add(self, index, rows: list[tuple[int, Payload]], progress: ProgressFactory | None):
        bar = progress(len(rows), f"index {self.name}", unit="row") if progress and rows else None
        for start in range(0, len(rows), EMBED_CHUNK):
            chunk = rows[start : start + EMBED_CHUNK]
            vectors = self._vectors([payload for _, payload in chunk])
            index.add_with_ids(vectors, np.array([row_id for row_id, _ in chunk], dtype=np.int64))
            if bar is not None:
                bar.update(len(chunk))
        if bar is not None:
            bar.close()
        return index

    def _save(self, meta: dict) -> None:
        """Write the index and its sidecar under temporary names of this writer's own, then put
        both in place under the index's lock. A store opened read-only that cannot be written
        keeps the index in memory; any other failure is one line."""
        tmp_index = tmp_meta = None
        try:
            self.store.index_dir.mkdir(parents=True, exist_ok=True)
            tmp_index = _temp_name(self.path)
            tmp_meta = _temp_name(self.meta_path)
            _faiss().write_index(self._index, str(tmp_index))
            tmp_meta.write_text(json.dumps(meta))
            with open(self.store.index_dir / f"{self.name}.lock", "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                os.replace(tmp_index, self.path)
                os.replace(tmp_meta, self.meta_path)
                _sweep(self.path, self.meta_path)
        except (OSError, RuntimeError) as exc:  # faiss reports a file it cannot open as RuntimeError
            for tmp in (tmp_index, tmp_meta):
                if tmp is not None:
                    with contextlib.suppress(OSError):
                        tmp.unlink()
            if self.store.read_only:
                return
            raise StoreError(f"{self.store.index_dir}: cannot write index {self.name!r} ({_reason(exc)})") from None

    def _vectors(self, payloads: Sequence[Payload]) -> np.ndarray:
        return self._checked(self.embedder.embed(list(payloads)), len(payloads))

    def _checked(self, vectors: np.ndarray, n: int) -> np.ndarray:
        """`n` rows of the index's dimension, L2-normalised, as FAISS wants them."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.shape != (n, self.embedder.dim):
            raise ValueError(f"embedder returned shape {vectors.shape}, expected ({n}, {self.embedder.dim})")
        _faiss().normalize_L2(vectors)
        return vectors

    def stored(self) -> tuple[np.ndarray, np.ndarray]:
        """(ids, vectors) of every indexed row, as the index holds them (L2-normalised float32,
        in the order they were added): a caller comparing many rows with each other reads their
        embeddings here instead of embedding the payloads again."""
        self.ensure()
        index = self._index
        return _faiss().vector_to_array(index.id_map).astype(np.int64), index.index.reconstruct_n(0, index.ntotal)

    def search(self, query: Payload, k: int, allowed_ids: Sequence[int] | None = None) -> list[tuple[int, float]]:
        """Top `k` (row id, cosine) for `query`, embedded like the rows, best first, among
        `allowed_ids` when given."""
        return self.search_vector(self._vectors([query]), k, allowed_ids)

    def search_vector(
        self, vector: np.ndarray, k: int, allowed_ids: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """Top `k` for a query vector of shape (1, dim) in the rows' space (visual memory embeds
        a text query with the visual embedder, its rows hold image vectors)."""
        self.ensure()
        index = self._index
        limit = index.ntotal if allowed_ids is None else min(index.ntotal, len(allowed_ids))
        k = min(k, limit)
        if k <= 0:
            return []
        vector = self._checked(vector, 1)
        if allowed_ids is None and k <= GPU_MAX_K:
            if self._search_index is None:
                self._search_index = _searchable(index)
            scores, ids = self._search_index.search(vector, k)
        elif allowed_ids is None:  # past the GPU's k limit
            scores, ids = index.search(vector, k)
        else:  # an ID filter is searched on the CPU copy: faiss's GPU flat index takes no IDSelector
            faiss = _faiss()
            selector = faiss.IDSelectorBatch(np.asarray(allowed_ids, dtype=np.int64))
            scores, ids = index.search(vector, k, params=faiss.SearchParameters(sel=selector))
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if i >= 0]
