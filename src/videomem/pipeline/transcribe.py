"""The `transcribe` stage: a video's sound track → transcript rows of its clips.

Runs right after `sample`, so captions, object records, `video.rag` and `video.qa` read the
speech as they read a sidecar transcript. Per video the track is decoded and resampled in chunks
(`transcribe_chunk_seconds`, video/audio.py), Silero VAD finds the speech in each chunk, and the
profile's `asr` model transcribes those spans (models/asr.py). Each segment is aligned to the
clips it overlaps, as sidecar transcripts are (`video.transcripts.align`), and stored with
`transcripts.source = 'asr'`.

A profile with no `asr` model (the offline one: no speech model on PyPI is usable, see
docs/offline.md) stores each speech span as `source = 'vad'` with the text `SPEECH_ONLY`, so the
agent can tell when someone spoke without inventing what was said.

One transaction per chunk holds its rows and its progress mark (stage `transcribe`, or
`transcribe-vad` without a model; unit `video_id:audioK`): a killed run resumes at the first
chunk without a mark, and a chunk's old speech rows are replaced, never doubled; a run with a
model redoes chunks that only had VAD. `video_id:transcribed` marks a video whose chunks are
all done, so a re-run does not decode its sound again. `result.done` counts videos. A speech span that crosses a chunk boundary is cut there.
A video with a transcript of its own (a sidecar file, or lines imported by `--transcripts`) keeps
it and is not transcribed, unless the pipeline sets `speech_source: asr`, which transcribes it
and drops those rows. A file with no audio
stream is marked `video_id:no-audio`, which is not a failure.
"""

from __future__ import annotations

from collections.abc import Sequence

from videomem.errors import VideomemError
from videomem.memory.clips import ClipRow, clips_of
from videomem.models.asr import speech_spans
from videomem.pipeline.base import StageContext, StageResult, VideoSource
from videomem.store import Store
from videomem.video.audio import AudioChunk, audio_chunks, has_audio
from videomem.video.clips import ClipSpan
from videomem.video.transcripts import SPEECH_ONLY, Segment, align

STAGE = "transcribe"
VAD_STAGE = "transcribe-vad"
SOURCES = ("asr", "vad")


def chunk_unit(video_id: str, index: int) -> str:
    return f"{video_id}:audio{index}"


def finished_unit(video_id: str) -> str:
    """Every chunk of the video done: a re-run does not decode its sound again."""
    return f"{video_id}:transcribed"


def no_audio_unit(video_id: str) -> str:
    return f"{video_id}:no-audio"


class TranscribeStage:
    name = STAGE

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        result = StageResult(self.name)
        wanted = self.wanted(ctx, sources, result)
        with ctx.progress(len(wanted), self.name, unit="video") as bar:
            for source in wanted:
                self.video(ctx, source, result)
                bar.update(1)
        return result

    def wanted(self, ctx: StageContext, sources: list[VideoSource], result: StageResult) -> list[VideoSource]:
        """The videos to transcribe; those that keep a transcript of their own count as skipped."""
        own = "SELECT DISTINCT video_id FROM transcripts WHERE source NOT IN (?, ?)"
        given = {r["video_id"] for r in ctx.store.query(own, SOURCES)}
        keep = ctx.pipeline.speech_source == "sidecar"
        wanted = [s for s in sources if not (keep and (s.transcript is not None or s.video_id in given))]
        result.skipped += len(sources) - len(wanted)
        return wanted

    def video(self, ctx: StageContext, source: VideoSource, result: StageResult) -> None:
        """Transcribe one video (of `wanted`'s), its failure recorded in `result`."""
        try:
            self._video(ctx, source, result)
        except VideomemError as exc:
            result.failures.append((str(source.path), f"{exc} (re-run ingest to resume)"))

    def _video(self, ctx: StageContext, source: VideoSource, result: StageResult) -> None:
        """One video's chunks not done yet; the speech model is only built for a file with sound."""
        store, vid = ctx.store, source.video_id
        done = store.done_units(STAGE)
        if no_audio_unit(vid) in done or not clips_of(store, [vid]):
            result.skipped += no_audio_unit(vid) in done
            return
        if not has_audio(source.path):
            with store.transaction() as tx:
                Store.mark_done(tx, STAGE, no_audio_unit(vid))
            result.done += 1
            return
        recognizer = ctx.models.asr
        stage = STAGE if recognizer is not None else VAD_STAGE
        if recognizer is None:
            done |= store.done_units(VAD_STAGE)
        if finished_unit(vid) in done:
            result.skipped += 1
            return
        clips = clips_of(store, [vid])
        prefix = f"{vid}:audio"
        skip = {int(u[len(prefix) :]) for u in done if u.startswith(prefix)}
        for chunk in audio_chunks(source.path, ctx.pipeline.transcribe_chunk_seconds, skip):
            spans = speech_spans(chunk.samples)
            if recognizer is not None:
                found = recognizer.transcribe(chunk.samples, spans)
            else:
                found = [Segment(a, b, SPEECH_ONLY) for a, b in spans]
            shift = source.t_offset + chunk.t_start
            segments = [Segment(s.t_start + shift, s.t_end + shift, s.text, s.speaker) for s in found]
            kind = "asr" if recognizer is not None else "vad"
            _write_chunk(store, source, clips, chunk, segments, stage, kind, ctx.pipeline.speech_source == "asr")
        with store.transaction() as tx:
            Store.mark_done(tx, stage, finished_unit(vid))
        result.done += 1

    def reset(self, store: Store, sources: list[VideoSource]) -> None:
        """Forget the speech rows and progress of these videos, so the next run transcribes again."""
        with store.transaction() as tx:
            for source in sources:
                vid = source.video_id
                tx.executemany("DELETE FROM transcripts WHERE video_id = ? AND source = ?", [(vid, s) for s in SOURCES])
                for stage in (STAGE, VAD_STAGE):
                    tx.execute(
                        "DELETE FROM stage_progress WHERE stage = ? AND substr(unit, 1, ?) = ?",
                        (stage, len(vid) + 1, f"{vid}:"),
                    )


def _write_chunk(
    store: Store,
    source: VideoSource,
    clips: Sequence[ClipRow],
    chunk: AudioChunk,
    segments: list[Segment],
    stage: str,
    kind: str,
    drop_given: bool,
) -> None:
    """The chunk's speech rows (replacing any an earlier run left) and its progress mark, at once."""
    vid = source.video_id
    t0, t1 = source.t_offset + chunk.t_start, source.t_offset + chunk.t_end
    spans = [ClipSpan(c.id, c.t_start, c.t_end) for c in clips]
    by_clip = align(segments, spans)
    with store.transaction() as tx:
        tx.executemany(
            "DELETE FROM transcripts WHERE video_id = ? AND source = ? AND t_start >= ? AND t_start < ?",
            [(vid, s, t0, t1) for s in SOURCES],
        )
        if drop_given:
            tx.execute(
                "DELETE FROM transcripts WHERE video_id = ? AND source NOT IN (?, ?) AND clip_id IN "
                "(SELECT id FROM clips WHERE video_id = ? AND t_end > ? AND t_start < ?)",
                (vid, *SOURCES, vid, t0, t1),
            )
        tx.executemany(
            "INSERT INTO transcripts (clip_id, video_id, t_start, t_end, speaker, text, source) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(cid, vid, s.t_start, s.t_end, s.speaker, s.text, kind) for cid, segs in by_clip.items() for s in segs],
        )
        Store.mark_done(tx, stage, chunk_unit(vid, chunk.index))
