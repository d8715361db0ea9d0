"""Text-embedding batches under a token budget (videomem's default) against fixed batches of
`batch_size` texts, on the same texts, each run in a fresh process (a process's peak RSS only
grows, so two runs cannot share one).

The texts are what an episodic build embeds: the 4-hour corpus of `benchmarks/ppr.py`'s
generator as 30-s captions (about 60 tokens), 3-minute summaries (six captions joined, cut at the
model's 256 tokens) and short facts cut from the captions (about 12 tokens). Both runs use the
offline MiniLM with the offline profile's batch size (64) and one process; the baseline differs
only in `BATCH_TOKENS_PER_TEXT` being unbounded, which is the batching before the budget.
Prints, per run, the seconds and the rise of peak RSS over the loaded model, then the ratios.

Last line: `embed batches: peak rise N MB vs N MB (N.Nx less), time N.NNx, load N.N`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[2])
import numpy as np
from embed_batches import corpus
from videomem.core import tune_process

tune_process()  # an entry point like `videomem`: OpenMP threads sleep while they wait (set before torch loads)

import videomem.models.text_embed as text_embed
from videomem.models.registry import ModelSet

if sys.argv[1] == "fixed":
    text_embed.BATCH_TOKENS_PER_TEXT = 10**9
texts = corpus(4)
embedder = ModelSet.from_file(None).text_embedder.embedder  # the model itself, not the recent-texts memory
embedder.embed(["warm up"])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
started = time.perf_counter()
vectors = embedder.embed(texts)
seconds = time.perf_counter() - started
rise = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before
print(json.dumps({"texts": len(texts), "seconds": seconds, "rise_mb": rise, "checksum": float(np.abs(vectors).sum())}))
"""


def corpus(hours: int) -> list[str]:
    """What an episodic build embeds: `hours` of `ppr.passages`' 30-s captions, 3-minute
    summaries of six of them and 8-word facts cut from them, each distinct text once."""
    import numpy as np
    from ppr import passages

    captions = [p.text for p in passages(np.random.default_rng(0), hours)]
    summaries = [" ".join(captions[i : i + 6]) for i in range(0, len(captions), 6)]
    facts = [" ".join(c.split()[k : k + 8]) for c in captions for k in (2, 10, 18)]
    return list(dict.fromkeys(captions + summaries + facts))


def measure(mode: str) -> dict:
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, "-c", CHILD, mode, here], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    load = os.getloadavg()[0]
    runs = {}
    for mode in ("budget", "fixed"):
        runs[mode] = result = measure(mode)
        print(f"{mode}: {result['texts']:,} texts in {result['seconds']:.1f} s, peak RSS rise {result['rise_mb']:.0f} MB")
    if abs(runs["budget"]["checksum"] - runs["fixed"]["checksum"]) > 1e-3 * runs["fixed"]["checksum"]:
        print("vectors differ between the two batchings")
        return 1
    budget, fixed = runs["budget"], runs["fixed"]
    print(f"embed batches: peak rise {budget['rise_mb']:.0f} MB vs {fixed['rise_mb']:.0f} MB "
          f"({fixed['rise_mb'] / max(budget['rise_mb'], 1.0):.1f}x less), time {budget['seconds'] / fixed['seconds']:.2f}x, "
          f"load {load:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
