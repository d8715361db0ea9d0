"""`semantic` stage: WorldMM's semantic memory, segment by segment after the episodic stage
(see `videomem.memory.semantic`). Like the episodic stage it works on the whole store: on a
corpus timeline consolidation runs across files, and only new or changed segments are added."""

from __future__ import annotations

from videomem.core import StageResult, VideoSource
from videomem.memory import semantic
from videomem.pipeline.base import StageContext
from videomem.store import Store


class SemanticStage:
    name = semantic.STAGE

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        return semantic.SemanticMemory(ctx.store, ctx.models).build(ctx.pipeline, ctx.progress)

    def reset(self, store: Store, sources: list[VideoSource]) -> None:
        semantic.reset(store, [s.video_id for s in sources])
