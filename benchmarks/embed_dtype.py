"""The text embedder's compute dtype (`--dtype`, default the profile default `auto`) against
float32: same texts, same model, same batching, one process.

`auto` runs the encoder's matrix products in bfloat16 on a CPU with bfloat16 in hardware
(AVX512-BF16 or AMX) and in float32 elsewhere (on CUDA too: `--dtype float16` measures why), where
the ratio is then 1.
The texts are what an episodic build embeds (`benchmarks/embed_batches.py`'s `corpus`): `--hours` of
`benchmarks/ppr.py`'s 30-s captions, 3-minute summaries of six captions and 8-word facts. The two
embedders take turns, `--rounds` times each, and each side's best round counts (the machine is
shared). Both sides' vectors are compared: cosine per text, and how many of each of 200 texts'
ten nearest neighbours the fast side keeps.

Last line: `embed dtype: <dtype> N.NNx float32's speed (N tokens/s vs N), cosine min N, top-10
kept N%, <device>, commit <sha>`.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from videomem.core import tune_process

tune_process()  # an entry point like `videomem`: OpenMP threads sleep while they wait (set before torch loads)

from embed_batches import corpus  # noqa: E402

from videomem.config import RoleConfig  # noqa: E402
from videomem.models.text_embed import SentenceTransformerEmbedder, offline_minilm_path  # noqa: E402
from videomem.models.usage import UsageMeter  # noqa: E402


def commit() -> str:
    here = Path(__file__).resolve().parent
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=int, default=4, help="hours of captions to embed (default 4)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda when there is one)")
    parser.add_argument("--dtype", default="auto", help="the side measured against float32 (default auto)")
    parser.add_argument("--model", default=None, help="a sentence-transformers directory (default: offline MiniLM)")
    args = parser.parse_args()

    source = args.model or str(offline_minilm_path())
    texts = corpus(args.hours)
    sides = {
        name: SentenceTransformerEmbedder(
            source, RoleConfig(backend="sentence_transformers", model=source, device=args.device, batch_size=64,
                               dtype=dtype), "text_embedder", UsageMeter())
        for name, dtype in (("float32", "float32"), ("other", args.dtype))
    }
    for embedder in sides.values():
        embedder.model.float()  # a copy stored in float16 (to travel light) still computes float32 as its baseline
    fast = sides["other"]
    tokenizer = fast.model.tokenizer
    tokens = sum(len(ids) for ids in tokenizer(texts, truncation=True, max_length=fast.model.max_seq_length)["input_ids"])
    device = str(fast.model.device)
    print(f"{len(texts):,} texts, {tokens:,} tokens, on {device}; {args.dtype} is {fast.dtype}")

    best = {name: float("inf") for name in sides}
    vectors = {}
    for embedder in sides.values():
        embedder.embed(texts[:64])  # warm-up: kernels, allocator
    for _ in range(args.rounds):
        for name, embedder in sides.items():
            started = time.perf_counter()
            vectors[name] = embedder.embed(texts)
            if device.startswith("cuda"):
                import torch

                torch.cuda.synchronize()
            best[name] = min(best[name], time.perf_counter() - started)
    for name, embedder in sides.items():
        print(f"{embedder.dtype}: {best[name]:.2f} s, {tokens / best[name]:,.0f} tokens/s")

    slow, quick = vectors["float32"], vectors["other"]
    cosine = (slow * quick).sum(axis=1)
    probe = np.arange(min(200, len(texts)))
    near_slow = np.argsort(-(slow[probe] @ slow.T), axis=1)[:, :10]
    near_quick = np.argsort(-(quick[probe] @ quick.T), axis=1)[:, :10]
    kept = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(near_slow, near_quick)])
    print(f"embed dtype: {fast.dtype} {best['float32'] / best['other']:.2f}x float32's speed "
          f"({tokens / best['other']:,.0f} tokens/s vs {tokens / best['float32']:,.0f}), cosine min {cosine.min():.5f}, "
          f"top-10 kept {100 * kept:.1f}%, {device}, commit {commit()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
