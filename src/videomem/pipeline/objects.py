"""`objects` stage: key-value object memory, per-clip records then batched consolidation
(see `videomem.memory.objects`). Records the caption stage already wrote in its pass are not
asked again, and clips that failed there are left for the next run."""

from __future__ import annotations

from videomem.memory import objects
from videomem.pipeline.base import StageContext, StageResult, VideoSource
from videomem.store import Store


class ObjectsStage:
    name = objects.STAGE

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        ahead = ctx.ahead.pop(objects.STAGE, None)
        failed = frozenset(unit for unit, _ in ahead.failures) if ahead else frozenset()
        memory = objects.ObjectMemory(ctx.store, ctx.models)
        result = memory.build(ctx.pipeline, [s.video_id for s in sources], ctx.progress, exclude=failed)
        if ahead is not None:
            result.done += ahead.done
            result.skipped -= ahead.done
            result.failures[:0] = ahead.failures
        return result

    def reset(self, store: Store, sources: list[VideoSource]) -> None:
        objects.reset(store, [s.video_id for s in sources])
