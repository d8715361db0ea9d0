"""The stage contract.

A stage turns what earlier stages stored into new rows. Each stage is idempotent and
resumable: it records finished units in `stage_progress` inside the same transaction as the
unit's rows, and on a re-run only processes units not recorded. `reset` forgets a stage's
output so `--force` can redo it.

The pipeline's own stages (sample, transcribe, caption) are classes of their modules; every
other stage is a memory's build (`MemoryStage`), found through memory/registry.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, cast

from tqdm import tqdm

from videomem.config import PipelineConfig
from videomem.core import ProgressFactory, StageResult, VideoSource, terminal_progress
from videomem.memory.build import ClipWriter
from videomem.memory.registry import MEMORIES, BuiltMemory, open_memory
from videomem.models.registry import ModelSet
from videomem.pipeline.vision_pass import Output, describe_pending
from videomem.store import Store


@dataclass
class StageContext:
    store: Store
    pipeline: PipelineConfig
    models_factory: Callable[[], ModelSet]
    workers: int = 1
    force: bool = False
    show_progress: bool = True
    bars: ProgressFactory | None = None
    """Makes the progress bars instead of tqdm on the terminal (a server's job reports them)."""
    stages: tuple[str, ...] = ()
    """The stages this run executes, so a stage can do a later one's work in the same pass."""
    ahead: dict[str, StageResult] = field(default_factory=dict)
    """Work an earlier stage did for a later one (stage → its result so far)."""
    _models: ModelSet | None = None

    @property
    def models(self) -> ModelSet:
        """Built on first use, so stages that need no model load none."""
        if self._models is None:
            self._models = self.models_factory()
        return self._models

    @property
    def models_built(self) -> ModelSet | None:
        """The models, if any stage needed them (so a run can report their usage)."""
        return self._models

    def progress(self, total: int, desc: str, unit: str = "clip") -> tqdm:
        return (self.bars or terminal_progress(self.show_progress))(total, desc, unit=unit)

    def handed_over(self, stage: str) -> StageResult | None:
        """What an earlier stage of this run did of `stage`'s work (taken once; see `ahead`)."""
        return self.ahead.pop(stage, None)

    def object_records(
        self, stage: str, write: ClipWriter, video_ids: Sequence[str], exclude: frozenset[str]
    ) -> StageResult:
        """The vision pass over the clips still without `stage`'s records, with the models in
        this process (pipeline/vision_pass.py)."""
        return describe_pending(
            self.store, lambda: self.models.vision, video_ids, self.pipeline.caption_batch_size, self.progress,
            objects=Output(stage, write), exclude=exclude,
        )[stage]


class Stage(Protocol):
    name: str

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult: ...

    def reset(self, store: Store, sources: list[VideoSource]) -> None: ...


class MemoryStage:
    """A memory's build as a stage of its name: the memory opened through the registry with the
    run's models, then built over the run's videos."""

    def __init__(self, name: str) -> None:
        self.name = name

    def memory(self, ctx: StageContext) -> BuiltMemory:
        """The memory that builds: with the models in this process."""
        return cast(BuiltMemory, open_memory(self.name, ctx.store, ctx.models))

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        return self.memory(ctx).build(ctx, [s.video_id for s in sources])

    def reset(self, store: Store, sources: list[VideoSource]) -> None:
        cast(type[BuiltMemory], MEMORIES[self.name].cls).reset(store, [s.video_id for s in sources])
