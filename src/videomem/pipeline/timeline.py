"""`timeline` stage: the temporal entity index (see `videomem.memory.timeline_index`), built
corpus-wide from what the caption, objects, episodic and transcribe stages stored."""

from __future__ import annotations

from videomem.memory import timeline_memory
from videomem.memory.timeline_index import STAGE
from videomem.pipeline.base import StageContext
from videomem.core import StageResult, VideoSource
from videomem.store import Store


class TimelineStage:
    name = STAGE

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        return timeline_memory.TimelineMemory(ctx.store, ctx.models).build(ctx.pipeline, ctx.progress)

    def reset(self, store: Store, sources: list[VideoSource]) -> None:
        timeline_memory.reset(store, [s.video_id for s in sources])
