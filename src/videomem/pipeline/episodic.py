"""`episodic` stage: WorldMM's multi-scale captions, their triplets and one graph per scale
(see `videomem.memory.episodic`). It works on the whole store, not only the videos given: on a
corpus timeline a window may hold footage of several videos, and only windows whose inputs
changed are rewritten."""

from __future__ import annotations

from videomem.core import StageResult, VideoSource
from videomem.memory import episodic
from videomem.pipeline.base import StageContext
from videomem.store import Store


class EpisodicStage:
    name = episodic.STAGE

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        return episodic.EpisodicMemory(ctx.store, ctx.models).build(ctx.pipeline, ctx.progress)

    def reset(self, store: Store, sources: list[VideoSource]) -> None:
        episodic.reset(store, [s.video_id for s in sources])
