"""`objects` stage: key-value object memory, per-clip records then batched consolidation
(see `videomem.memory.objects`). Records the caption stage already wrote in its pass are not
asked again, and clips that failed there are left for the next run."""

from __future__ import annotations

from collections.abc import Sequence

from videomem.config import PipelineConfig
from videomem.core import ProgressFactory, StageResult, VideoSource
from videomem.memory import events, objects
from videomem.models.registry import ModelSet
from videomem.pipeline.base import StageContext
from videomem.pipeline.caption import RECORDS
from videomem.pipeline.vision_pass import describe_pending
from videomem.store import Store


def extract_objects(
    store: Store,
    models: ModelSet,
    cfg: PipelineConfig,
    video_ids: Sequence[str],
    progress: ProgressFactory | None = None,
    exclude: frozenset[str] = frozenset(),
) -> StageResult:
    """Record the objects of every clip not yet done (but those in `exclude`), one transaction
    per clip: from the imported caption's text where there is one, else from the frames."""
    imported = events.imported_captions(store, video_ids)
    result = objects.ObjectMemory(store, models).read_imported(cfg, video_ids, imported, exclude)
    seen = describe_pending(
        store, lambda: models.vision, video_ids, cfg.caption_batch_size, progress,
        objects=RECORDS, exclude=exclude | frozenset(imported),
    )[objects.STAGE]
    result.done += seen.done
    result.skipped += seen.skipped
    result.failures += seen.failures
    return result


def build_objects(
    store: Store,
    models: ModelSet,
    cfg: PipelineConfig,
    video_ids: Sequence[str],
    progress: ProgressFactory | None = None,
    exclude: frozenset[str] = frozenset(),
) -> StageResult:
    """Extract the records of clips not done yet (but those in `exclude`), consolidate every
    pending record, refresh the index."""
    result = extract_objects(store, models, cfg, video_ids, progress, exclude)
    return objects.ObjectMemory(store, models).settle(cfg, result, progress)


class ObjectsStage:
    name = objects.STAGE

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        ahead = ctx.ahead.pop(objects.STAGE, None)
        failed = frozenset(unit for unit, _ in ahead.failures) if ahead else frozenset()
        result = build_objects(ctx.store, ctx.models, ctx.pipeline, [s.video_id for s in sources], ctx.progress, failed)
        if ahead is not None:
            result.done += ahead.done
            result.skipped -= ahead.done
            result.failures[:0] = ahead.failures
        return result

    def reset(self, store: Store, sources: list[VideoSource]) -> None:
        objects.reset(store, [s.video_id for s in sources])
