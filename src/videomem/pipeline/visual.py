"""`visual` stage: visual memory, one pooled frame embedding per segment (see `videomem.memory.visual`)."""

from __future__ import annotations

from videomem.core import StageResult, VideoSource
from videomem.memory import visual
from videomem.pipeline.base import StageContext
from videomem.store import Store


class VisualStage:
    name = visual.STAGE

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        return self.memory(ctx).build(ctx.pipeline, [s.video_id for s in sources], ctx.progress)

    def memory(self, ctx: StageContext) -> visual.VisualMemory:
        """The memory that embeds the segments: with the models in this process."""
        return visual.VisualMemory(ctx.store, ctx.models)

    def reset(self, store: Store, sources: list[VideoSource]) -> None:
        visual.reset(store, [s.video_id for s in sources])
