"""`caption` stage: event memory, one caption per clip (see `videomem.memory.events`).

When the run also builds the object memory, the clip's object records come from the same VLM
request as its caption (`pipeline/vision_pass.py`): the frames are prefilled once for both, and
the objects stage then only consolidates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from videomem.config import PipelineConfig
from videomem.core import ProgressFactory, StageResult, VideoSource
from videomem.memory import events
from videomem.memory.events import EventMemory
from videomem.memory.objects import ObjectMemory, write_records
from videomem.models.registry import ModelSet
from videomem.pipeline.base import StageContext
from videomem.pipeline.vision_pass import Output, describe_pending
from videomem.store import Store

CAPTIONS = Output(EventMemory.stage, events.write_caption)
"""What the vision pass fills for the event memory."""

RECORDS = Output(ObjectMemory.name, write_records)
"""What the vision pass fills for the object memory, when the run builds it too."""


def caption_videos(
    store: Store, models: ModelSet, cfg: PipelineConfig, video_ids: Sequence[str], progress: ProgressFactory | None = None
) -> StageResult:
    """Caption every clip of these videos that has no caption yet, then refresh the index."""
    result = describe_pending(
        store, lambda: models.vision, video_ids, cfg.caption_batch_size, progress, caption=CAPTIONS
    )[EventMemory.stage]
    EventMemory(store, models).refresh(progress)
    return result


class CaptionStage:
    name = EventMemory.stage

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        video_ids = [s.video_id for s in sources]
        outputs = self.outputs(ctx, video_ids)
        return self.finish(ctx, self.describe(ctx, video_ids, **outputs))

    def outputs(self, ctx: StageContext, video_ids: list[str]) -> dict[str, Any]:
        """What the vision pass fills (`caption`, `objects` when the run builds the object memory)
        and the clips it leaves alone (`exclude`: captioned by import; objects read from text)."""
        return {
            "caption": CAPTIONS,
            "objects": RECORDS if RECORDS.stage in ctx.stages else None,
            "exclude": frozenset(events.imported_captions(ctx.store, video_ids)),
        }

    def finish(self, ctx: StageContext, results: dict[str, StageResult]) -> StageResult:
        """The pass's results: the objects stage's kept for it, the event index brought up to date."""
        if RECORDS.stage in results:
            ctx.ahead[RECORDS.stage] = results[RECORDS.stage]
        EventMemory(ctx.store, ctx.models).refresh(ctx.progress)
        return results[self.name]

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
        EventMemory.reset(store, [s.video_id for s in sources])
