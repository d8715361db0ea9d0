"""`caption` stage: event memory, one caption per clip (see `videomem.memory.events`).

When the run also builds the object memory, the clip's object records come from the same VLM
request as its caption (`memory/vision_pass.py`): the frames are prefilled once for both, and
the objects stage then only consolidates.
"""

from __future__ import annotations

from typing import Any

from videomem.memory import events, objects
from videomem.memory.vision_pass import Output, describe_pending
from videomem.pipeline.base import StageContext, StageResult, VideoSource
from videomem.store import Store


class CaptionStage:
    name = events.STAGE

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        video_ids = [s.video_id for s in sources]
        outputs = self.outputs(ctx, video_ids)
        return self.finish(ctx, self.describe(ctx, video_ids, **outputs))

    def outputs(self, ctx: StageContext, video_ids: list[str]) -> dict[str, Any]:
        """What the vision pass fills (`caption`, `objects` when the run builds the object memory)
        and the clips it leaves alone (`exclude`: captioned by import; objects read from text)."""
        return {
            "caption": events.OUTPUT,
            "objects": objects.OUTPUT if objects.STAGE in ctx.stages else None,
            "exclude": frozenset(events.imported_captions(ctx.store, video_ids)),
        }

    def finish(self, ctx: StageContext, results: dict[str, StageResult]) -> StageResult:
        """The pass's results: the objects stage's kept for it, the event index brought up to date."""
        if objects.STAGE in results:
            ctx.ahead[objects.STAGE] = results[objects.STAGE]
        events.EventMemory(ctx.store, ctx.models).refresh(ctx.progress)
        return results[events.STAGE]

    def describe(
        self, ctx: StageContext, video_ids: list[str], *, caption: Output, objects: Output | None, exclude: frozenset[str]
    ) -> dict[str, StageResult]:
        """The vision pass over the clips still to do, with the models in this process."""
        return describe_pending(
            ctx.store,
            lambda: ctx.models.vision,
            video_ids,
            ctx.pipeline.caption_batch_size,
            ctx.progress,
            caption=caption,
            objects=objects,
            exclude=exclude,
        )

    def reset(self, store: Store, sources: list[VideoSource]) -> None:
        events.reset(store, [s.video_id for s in sources])
