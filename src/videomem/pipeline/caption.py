"""`caption` stage: event memory, one caption per clip (see `videomem.memory.events`)."""

from __future__ import annotations

from videomem.memory import events
from videomem.pipeline.base import StageContext, StageResult, VideoSource
from videomem.store import Store


class CaptionStage:
    name = events.STAGE

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        memory = events.EventMemory(ctx.store, ctx.models)
        return memory.build(ctx.pipeline, [s.video_id for s in sources], ctx.progress)

    def reset(self, store: Store, sources: list[VideoSource]) -> None:
        events.reset(store, [s.video_id for s in sources])
