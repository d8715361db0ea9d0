"""Streaming ingest (pipeline/streaming.py): sample and caption in one run build the same store as
stage by stage, and the model is asked while decoding still runs. (Its SIGKILL test is in
test_kill.py.)"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from kill_stage import PIPELINE, ScriptedModels, ScriptedVision, contents, run_stages

from videomem.core import ClipView
from videomem.errors import ModelError
from videomem.models.tasks.clips import Unusable
from videomem.models.tasks.objects import ClipNotes
from videomem.pipeline.base import StageContext
from videomem.pipeline.caption import CaptionStage
from videomem.pipeline.runner import discover_sources, ingest
from videomem.pipeline.sample import ClipJob, SampledClip, SampleStage
from videomem.pipeline.streaming import StreamedStages
from videomem.pipeline.transcribe import TranscribeStage
from videomem.server.jobs import IngestRequest, Job
from videomem.store import Store


@pytest.mark.parametrize(
    ("between", "workers"),
    [([], 1), (["transcribe"], 1), (["transcribe"], 2)],
    ids=["per-clip", "with-transcribe", "with-transcribe-2-workers"],
)
def test_streamed_store_equals_stage_by_stage(
    bikes: Path, speech_video: Path, tmp_path: Path, between: list[str], workers: int
) -> None:
    """Captions that quote each clip's transcript: with transcribe in the run, a clip reaches the
    model only once its speech is stored. With 2 workers the speech video is decoded as two jobs
    whose clips come back in either order."""
    videos = [bikes, speech_video]
    later = [*between, "caption", "objects"]
    by_stage = run_stages(tmp_path / "by-stage", videos, ["sample"])
    run_stages(by_stage, videos, later)
    streamed = run_stages(tmp_path / "streamed", videos, ["sample", *later], workers)
    got = contents(streamed)
    assert got == contents(by_stage)
    assert len(got["clips"]) == len(got["events"]) > 10
    assert bool(between) == any("heard: " in e[3] and not e[3].endswith("heard: ") for e in got["events"])
    with Store(streamed) as store:  # --force redoes it all, to the same store
        assert ingest(videos, store, PIPELINE, ScriptedModels, stages=["sample", *later], force=True, show_progress=False).ok
    assert contents(streamed) == got


class _AskedVision(ScriptedVision):
    """Logs each request and lets decoding go on once the model has been asked."""

    def __init__(self, log: list[str], asked: threading.Event) -> None:
        self.log, self.asked = log, asked

    def describe_clips(self, clips: Sequence[ClipView]) -> list[ClipNotes]:
        self.log.append(f"asked {len(clips)}")
        self.asked.set()
        return super().describe_clips(clips)


class _GatedSample(SampleStage):
    """Decodes as the sample stage does, but after `hold` clips (one batch by default) holds back
    the rest until the model has been asked (a stage-by-stage run would wait here in vain)."""

    def __init__(self, log: list[str], asked: threading.Event, hold: int | None = None) -> None:
        self.log, self.asked, self.hold = log, asked, hold

    def outcomes(self, ctx: StageContext, jobs: list[ClipJob]) -> Iterator[tuple[ClipJob, SampledClip | Exception]]:
        for n, item in enumerate(super().outcomes(ctx, jobs), 1):
            self.log.append("decoded")
            yield item
            if n == (self.hold or ctx.pipeline.caption_batch_size):
                self.asked.wait(timeout=20)


def test_the_model_is_asked_before_decoding_ends(bikes: Path, tmp_path: Path) -> None:
    log: list[str] = []
    asked = threading.Event()
    models = ScriptedModels(vision=_AskedVision(log, asked))
    sources, _ = discover_sources([bikes])
    with Store(tmp_path / "s", create=True) as store:
        ctx = StageContext(store, PIPELINE, lambda: models, stages=("sample", "caption", "objects"), show_progress=False)
        sample, caption = StreamedStages(_GatedSample(log, asked), None, CaptionStage()).run(ctx, sources)
        assert store.query("SELECT COUNT(*) FROM events")[0][0] == 5
    assert (sample.done, caption.done, ctx.ahead["objects"].done) == (5, 5, 5)
    asks = [int(entry.split()[1]) for entry in log if entry.startswith("asked")]
    assert log.index(f"asked {asks[0]}") < len(log) - 1 - log[::-1].index("decoded"), log
    assert sum(asks) == 5 and max(asks) <= PIPELINE.caption_batch_size, log


def test_with_transcribe_a_long_video_reaches_the_model_a_chunk_behind_its_decoding(
    speech_video: Path, tmp_path: Path
) -> None:
    """24 s of speech video, 2-s clips, 8-s audio chunks, decoding held after 6 clips (12 s):
    chunk 0 is stored, so the clips up to 8 s go to the model while the rest waits to be
    decoded. A clip that speech of an earlier chunk reaches into is sent with that speech."""
    log: list[str] = []
    asked = threading.Event()
    models = ScriptedModels(vision=_AskedVision(log, asked))
    sources, _ = discover_sources([speech_video])
    stages = ("sample", "transcribe", "caption", "objects")
    with Store(tmp_path / "s", create=True) as store:
        ctx = StageContext(store, PIPELINE, lambda: models, stages=stages, show_progress=False)
        streamed = StreamedStages(_GatedSample(log, asked, hold=6), TranscribeStage(), CaptionStage())
        sample, spoken, caption = streamed.run(ctx, sources)
        assert {"speech:audio0", "speech:audio1", "speech:audio2", "speech:transcribed"} <= store.done_units("transcribe")
    assert (sample.done, spoken.done, caption.done) == (12, 1, 12)
    first = log.index("asked 3")
    assert log[:first].count("decoded") == 6 and "decoded" in log[first:], log
    got = contents(tmp_path / "s")
    segments = {(start, end, text) for _, start, end, text, _ in got["transcripts"]}
    assert any(start < 16 < end for start, end, _ in segments), "chunk 1 (8-16 s) has speech that reaches past it"
    for _, start, end, caption, _ in got["events"]:
        said = [text for a, b, text in segments if a < end and b > start]
        assert caption.partition("heard:")[2].strip() == " ".join(said), caption


class _FlakyVision(ScriptedVision):
    """An unusable reply for the clip at 2 s; with `down`, the server is gone (every call fails)."""

    def __init__(self, down: bool = False) -> None:
        self.down, self.scripted = down, ScriptedVision()

    def _answers(self, clips: Sequence[ClipView], answers: list) -> list:
        if self.down:
            raise ModelError("the VLM server went away")
        return [Unusable("no JSON object", "Sorry.") if c.t_start == 2 else a for c, a in zip(clips, answers)]

    def describe_clips(self, clips: Sequence[ClipView]) -> list:
        return self._answers(clips, self.scripted.describe_clips(clips))

    def caption_clips(self, clips: Sequence[ClipView]) -> list:
        return self._answers(clips, self.scripted.caption_clips(clips))

    def extract_objects(self, clips: Sequence[ClipView]) -> list:
        return self._answers(clips, self.scripted.extract_objects(clips))


def test_failures_in_a_streaming_run_are_those_of_stage_by_stage(bikes: Path, tmp_path: Path) -> None:
    """A file that is no video, a backend that goes away, then an unusable reply: each reported as
    stage by stage reports it, every sampled clip kept, and each re-run does only what is left."""
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"not a video")
    stages = ("sample", "caption", "objects")

    def ingest_with(vision: ScriptedVision) -> list:
        with Store(tmp_path / "s", create=True) as store:
            report = ingest([bikes, bad], store, PIPELINE, lambda: ScriptedModels(vision=vision), stages=stages, show_progress=False)
        return report.results

    sample, caption, objects = ingest_with(_FlakyVision(down=True))
    assert sample.done == 5 and [what for what, _ in sample.failures] == [str(bad)]
    gone = "the VLM server went away (5 clips left to do; re-run ingest to resume)"
    assert (caption.done, caption.failures, objects.done) == (0, [("caption", gone)], 0)
    sample, caption, objects = ingest_with(_FlakyVision())
    assert (sample.done, sample.skipped) == (0, 5)
    unusable = [("bikes:1", "no JSON object (recorded; re-run ingest to retry)")]
    assert (caption.done, caption.failures, objects.done, objects.failures) == (4, unusable, 4, unusable)
    sample, caption, objects = ingest_with(ScriptedVision())
    assert (caption.done, caption.skipped, caption.failures, objects.done) == (1, 4, [], 1)
    assert len(contents(tmp_path / "s")["events"]) == 5


def test_a_server_job_counts_the_last_bar_opened() -> None:
    """A streaming run keeps the sample and caption bars open together: an ingest job reports the
    caption bar, whose total grows as clips are sampled, and the sample bar does not count into it."""
    job = Job(1, IngestRequest(paths=["talk.mp4"]))
    sample, caption = job.bar(10, "sample"), job.bar(0, "caption+objects")
    sample.update(3)
    caption.total += 4
    caption.refresh()
    caption.update(1)
    assert job.to_json()["progress"] == {"stage": "caption+objects", "done": 1, "total": 4, "unit": "clip"}
