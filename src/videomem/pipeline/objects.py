"""`objects` stage: key-value object memory, per-clip records then batched consolidation
(see `videomem.memory.objects`)."""

from __future__ import annotations

from videomem.memory import objects
from videomem.pipeline.base import StageContext, StageResult, VideoSource
from videomem.store import Store


class ObjectsStage:
    name = objects.STAGE

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        memory = objects.ObjectMemory(ctx.store, ctx.models)
        return memory.build(ctx.pipeline, [s.video_id for s in sources], ctx.progress)

    def reset(self, store: Store, sources: list[VideoSource]) -> None:
        objects.reset(store, [s.video_id for s in sources])
