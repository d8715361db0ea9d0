"""videomem: a multimodal memory for long videos and an agent that answers questions from it."""

import os

__version__ = "0.1.0"

# OpenMP threads that wait by sleeping, not spinning, unless the user chose otherwise. Must be
# set before torch loads its OpenMP runtime. A spinning worker holds a core while it waits; on a
# machine whose cores are busy with other work, each parallel region then waits for workers the
# kernel has descheduled: MiniLM embedding one query took 716 ms instead of 48 ms at load 5 on
# two cores (`benchmarks/omp_wait.py`), which made up most of a memory tool's latency.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# oneDNN (torch's CPU kernels) keeps up to 1,024 compiled primitives, one per input shape, with
# their buffers. Text batches come in many shapes (batched by length), so that cache grew with
# the number of texts embedded: +630 MB peak RSS over 3,840 captions on CPU, +285 MB more than
# with no cache, at the same speed; a 4-h corpus build peaked at 1,722 MB instead of 1,895 MB.
os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "0")
