"""`sample` and `caption` in one streaming pass: the vision model starts on the first clips while
later ones are still being decoded.

A local run whose stages include both (and no EgoLifeCap import) runs them, with `transcribe` when
it is listed between them, as one `StreamedStages`. A producer thread runs the sample stage's
decoding (`SampleStage.outcomes`: in that thread, or in `--workers` processes) and hands each
decoded clip to this thread through a bounded queue, so decoding runs at most `AHEAD` clips ahead
of the commits; this thread is the only one that writes SQLite. It commits each clip as the
sample stage does, adds it to the vision pass's plan (`VisionPass`) and lets the pass send the
batches that are full; a batch answered wakes it through the same queue. A partial batch is sent
when the pass has got no clip for `IDLE` seconds and none waits to be committed, or when
decoding is over.

With `transcribe` in the run a clip needs its speech before the model sees it: the writing thread
hears each audio chunk of a video (`SpeechTrack`) and stores it once the clips it overlaps are
committed, and a clip goes to the vision pass once the speech up to its end is stored. So a long
video reaches the model a chunk (`transcribe_chunk_seconds`) behind its decoding, not after it.
Without transcribe, each clip goes as soon as it is committed.

Each unit is still one transaction per clip per stage, exactly as stage by stage, so a kill
loses at most the clips decoded and not committed and the batches in flight, and a re-run
resumes: clips sampled by an earlier run go to the vision pass first. `--stages sample` then
`--stages caption` (or any run with an import step) runs the stages one after another as before.
"""

from __future__ import annotations

import queue
import threading
import math
import time
from collections import defaultdict
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from videomem.errors import VideoError
from videomem.store.clips import ClipRow, clips_of
from videomem.pipeline.vision_pass import VisionPass, start_pass
from videomem.pipeline.base import Stage, StageContext
from videomem.core import StageResult, VideoSource
from videomem.pipeline.caption import CaptionStage
from videomem.pipeline.sample import ClipJob, SampledClip, SamplePlan, SampleStage
from videomem.pipeline.transcribe import SpeechTrack, TranscribeStage

AHEAD = 32
"""Decoded clips that may wait for their commit: enough for a few batches of the model."""
IDLE = 1.0
"""Seconds with no new clip for the vision pass after which a partial batch goes to the model."""


@dataclass(frozen=True)
class _Done:
    """Decoding is over (`error`: what ended it otherwise than by a VideoError of a job)."""

    error: BaseException | None = None


_WAKE = object()
"""A batch was answered: there is something to commit."""


def streamed(run: list[Stage]) -> list[Stage | StreamedStages]:
    """`run` with sample … caption as one `StreamedStages` when it holds them in a row (with
    at most `transcribe` between); unchanged otherwise. (`--force` resets the stages of `run`
    one by one before this, so `StreamedStages` has no reset of its own.)"""
    names = [s.name for s in run]
    if "sample" not in names or "caption" not in names:
        return run
    first, last = names.index("sample"), names.index("caption")
    between = run[first + 1 : last]
    if not all(isinstance(s, TranscribeStage) for s in between):
        return run
    sample, caption = run[first], run[last]
    if not isinstance(sample, SampleStage) or not isinstance(caption, CaptionStage):
        return run
    transcribe = between[0] if between else None
    return [*run[:first], StreamedStages(sample, transcribe, caption), *run[last + 1 :]]


class StreamedStages:
    """sample (+ transcribe) + caption, run together; `run` returns one result per stage."""

    name = "sample+caption"

    def __init__(self, sample: SampleStage, transcribe: TranscribeStage | None, caption: CaptionStage) -> None:
        self.sample, self.transcribe, self.caption = sample, transcribe, caption

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> list[StageResult]:
        plan = self.sample.plan(ctx, sources)
        video_ids = [s.video_id for s in sources]
        pending = start_pass(ctx.store, **self.caption.outputs(ctx, video_ids))
        spoken = StageResult(TranscribeStage.name)
        speech = {s.video_id: s for s in self.transcribe.wanted(ctx, sources, spoken)} if self.transcribe else {}
        decoded: queue.Queue = queue.Queue(AHEAD)
        stop = threading.Event()
        producer = threading.Thread(target=self._decode, args=(ctx, plan.jobs, decoded, stop), name="decode", daemon=True)
        with (
            ctx.progress(plan.total, desc="sample") as sample_bar,
            ctx.progress(len(speech), TranscribeStage.name, unit="video") if speech else nullcontext() as speech_bar,
            ctx.progress(0, pending.label) as vision_bar,
            VisionPass(
                ctx.store, lambda: ctx.models.vision, ctx.pipeline.caption_batch_size, pending, vision_bar,
                notify=lambda: _nudge(decoded),
            ) as vision,
        ):
            run = _Run(self, ctx, plan, vision, speech, spoken, sample_bar, speech_bar, vision_bar)
            producer.start()
            try:
                # the first clip first: `--workers` processes are forked before any model thread exists
                item = decoded.get()
                run.start(video_ids)
                while not isinstance(item, _Done):
                    if item is not _WAKE:
                        run.take(*item)
                    vision.pump(partial=decoded.empty() and time.monotonic() - run.last_added >= IDLE)
                    wait = run.last_added + IDLE - time.monotonic() if vision.waiting else None
                    try:
                        item = decoded.get(timeout=None if wait is None else max(0.0, wait))
                    except queue.Empty:
                        item = _WAKE
                if item.error is not None:
                    raise item.error
                sample_bar.close()
                vision.finish()
            finally:
                stop.set()
                producer.join()
        results = [self.sample.summary(ctx.pipeline, plan), *([spoken] if self.transcribe else [])]
        return [*results, self.caption.finish(ctx, pending.results)]

    def _decode(self, ctx: StageContext, jobs: list[ClipJob], decoded: queue.Queue, stop: threading.Event) -> None:
        """The producer: each decoded clip (or a job's VideoError) into `decoded`, then `_Done`."""
        outcomes = self.sample.outcomes(ctx, jobs)
        end = _Done()
        try:
            for item in outcomes:
                if not _put(decoded, item, stop):
                    return
        except BaseException as exc:  # handed to the consumer, which raises it
            end = _Done(exc)
        finally:
            outcomes.close()
        _put(decoded, end, stop)


class _Run:
    """What the writing thread does with each decoded clip: commit it, and hand the clips that
    are ready to the vision pass (each clip at once, or once its speech is stored)."""

    def __init__(
        self,
        stages: StreamedStages,
        ctx: StageContext,
        plan: SamplePlan,
        vision: VisionPass,
        speech: dict[str, VideoSource],
        spoken: StageResult,
        sample_bar: Any,
        speech_bar: Any,
        vision_bar: Any,
    ) -> None:
        self.stages, self.ctx, self.plan, self.vision = stages, ctx, plan, vision
        self.sample_bar, self.speech_bar, self.vision_bar = sample_bar, speech_bar, vision_bar
        self.tracks = {vid: SpeechTrack(ctx, source, spoken) for vid, source in speech.items()}
        self.jobs: defaultdict[str, list[ClipJob]] = defaultdict(list)
        for job in plan.jobs:
            self.jobs[job.video_id].append(job)
        self.clips_left = {id(job): len(job.clips) for job in plan.jobs}
        self.waiting: defaultdict[str, list[ClipRow]] = defaultdict(list)
        """Committed clips of a video being transcribed whose speech is not all stored yet."""
        self.last_added = time.monotonic()
        """When the vision pass last got a clip (a partial batch waits `IDLE` for more)."""

    def start(self, video_ids: list[str]) -> None:
        """The clips an earlier run sampled: to the model, or to wait for their speech."""
        earlier = clips_of(self.ctx.store, video_ids)
        if self.stages.transcribe is None:
            self.admit(earlier)
            return
        for row in earlier:
            self.waiting[row.video_id].append(row)
        for video_id in video_ids:
            self.hear(video_id)

    def take(self, job: ClipJob, outcome: SampledClip | VideoError) -> None:
        row = self.stages.sample.take(self.ctx.store, self.plan, job, outcome)
        self.clips_left[id(job)] = 0 if isinstance(outcome, VideoError) else self.clips_left[id(job)] - 1
        if row is not None:
            self.sample_bar.update(1)
        if self.stages.transcribe is None:
            self.admit([row] if row is not None else [])
            return
        if row is not None:
            self.waiting[row.video_id].append(row)
        self.hear(job.video_id)

    def sampled(self, video_id: str) -> float:
        """The store second before which every clip of the video is committed (inf: all are):
        the start of the first clip still to decode (a job decodes its clips in order)."""
        starts = [job.clips[-left].t_start for job in self.jobs[video_id] if (left := self.clips_left[id(job)])]
        return self.plan.videos[video_id].source.t_offset + min(starts) if starts else math.inf

    def hear(self, video_id: str) -> None:
        """Store what speech of the video its committed clips allow, and hand over the clips
        whose speech is all stored."""
        track = self.tracks.get(video_id)
        through = math.inf
        if track is not None:
            ended = track.ended
            through = track.advance(self.sampled(video_id))
            if track.ended and not ended:
                self.speech_bar.update(1)
        waiting = self.waiting.pop(video_id, [])
        self.admit([row for row in waiting if row.t_end <= through])
        if kept := [row for row in waiting if row.t_end > through]:
            self.waiting[video_id] = kept

    def admit(self, clips: list[ClipRow]) -> None:
        added = sum(self.vision.pending.add(self.ctx.store, clip) for clip in clips)
        if added:
            self.vision.admitted(added)
            self.vision_bar.total += added
            self.vision_bar.refresh()
            self.last_added = time.monotonic()


def _put(decoded: queue.Queue, item: tuple[ClipJob, SampledClip | VideoError] | _Done, stop: threading.Event) -> bool:
    """Put `item` when there is room, unless the consumer stopped (False)."""
    while not stop.is_set():
        try:
            decoded.put(item, timeout=0.1)
            return True
        except queue.Full:
            continue
    return False


def _nudge(decoded: queue.Queue) -> None:
    """Wake the consumer; a full queue wakes it anyway."""
    try:
        decoded.put_nowait(_WAKE)
    except queue.Full:
        pass
