"""Query-embedding latency with OpenMP workers that sleep (PASSIVE, videomem's default) or spin
(ACTIVE) while they wait, each in a fresh process (the policy is read when torch loads).

Every memory tool embeds the question with MiniLM first; on a machine whose cores are busy with
other work, spinning workers wait for one another's descheduled threads. Prints p50 / p95 of
embedding one question (ROUNDS calls) and of a 256-text batch, per policy, then the ratio.

Last line: `omp wait: query p50 passive N ms vs active N ms (N.Nx), load N.N`.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

ROUNDS = 30
CHILD = """
import json, sys, time
from videomem.models.registry import ModelSet
embedder = ModelSet.from_file(None).text_embedder.embedder  # the model itself, not the recent-texts memory
embedder.embed(["warm up"])
query = []
for i in range(int(sys.argv[1])):
    started = time.perf_counter()
    embedder.embed([f"When did person {i} put the red cup on the kitchen table?"])
    query.append(time.perf_counter() - started)
started = time.perf_counter()
embedder.embed([f"person {i} holds a red cup beside the window" for i in range(256)])
print(json.dumps({"query": query, "batch": time.perf_counter() - started}))
"""


def measure(policy: str) -> dict:
    env = {**os.environ, "OMP_WAIT_POLICY": policy}
    out = subprocess.run([sys.executable, "-c", CHILD, str(ROUNDS)], env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    load = os.getloadavg()[0]
    p50 = {}
    for policy in ("PASSIVE", "ACTIVE"):
        result = measure(policy)
        ms = sorted(s * 1e3 for s in result["query"])
        p50[policy] = statistics.median(ms)
        print(f"{policy.lower()}: query p50 {p50[policy]:.1f} ms, p95 {ms[round(0.95 * (len(ms) - 1))]:.1f} ms; "
              f"256 texts {result['batch'] * 1e3:.0f} ms")
    print(f"omp wait: query p50 passive {p50['PASSIVE']:.0f} ms vs active {p50['ACTIVE']:.0f} ms "
          f"({p50['ACTIVE'] / p50['PASSIVE']:.1f}x), load {load:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
