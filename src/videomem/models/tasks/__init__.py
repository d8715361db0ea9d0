"""Task protocols, one module per consumer, each with the schemas its tasks return.

A task is what a memory, a pipeline stage or the agent asks of a model ("caption these clips",
"rerank these captions"); a protocol groups the tasks one consumer calls, so a consumer
depends on exactly those and a backend implements only the protocols it serves:

* `clips` — per-clip vision tasks' common ground: how to batch (`ClipTasks`), `Unusable`;
* `captioning` — `ClipCaptioning`: a caption per clip (the caption stage);
* `objects` — `ClipObjects` and `ClipDescription` (records, or caption and records in one
  request: the vision pass), `CaptionObjects` (records from an imported caption) and
  `EntityMerging` (the object memory's consolidation: merge decisions, summaries);
* `summaries` — `Summarising`, shared by the object and episodic memories;
* `episodic` — `EpisodicTasks` (build: entities, triplets, summaries) and `CaptionRanking`
  (retrieve: the cross-scale re-rank);
* `semantic` — `SemanticTasks`: induction and consolidation of semantic triplets;
* `agent` — `Answering`, `StepPlanning` (ReAct), `RetrievalAgent` (WorldMM), `FrameAnswering`
  (`video.qa` and the frame tools);
* `translation` — `Translation`: imported captions into the corpus's language.

`models/prompted.py` fulfils them on any generative engine with a prompt file and a JSON
schema; `models/offline/` with explicit algorithms. A consumer takes a role's backend
(`ModelSet.vision`, `ModelSet.language`) through `require`, so a backend that lacks a task is
one line naming what it lacks, not an AttributeError deep in a stage.
"""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

from videomem.errors import ModelError

T = TypeVar("T")


def missing(backend: object, protocol: type) -> list[str]:
    """The members of `protocol` (and of the protocols it extends) that `backend` lacks."""
    names: dict[str, None] = {}
    for cls in protocol.__mro__:
        if cls in (Protocol, Generic, object):
            continue
        names.update(dict.fromkeys(vars(cls).get("__annotations__", {})))
        names.update((n, None) for n, v in vars(cls).items() if callable(v) and not n.startswith("_"))
    return [n for n in names if not hasattr(backend, n)]


def require(backend: object, protocol: type[T]) -> T:
    """`backend` as the narrow `protocol` a consumer calls, or a ModelError naming what it lacks.
    Checked by attribute, so a wrapper that forwards through `__getattr__` serves too."""
    lacks = missing(backend, protocol)
    if lacks:
        raise ModelError(f"{type(backend).__name__} does not serve {protocol.__name__}: it has no {', '.join(lacks)}")
    return backend  # type: ignore[return-value]
