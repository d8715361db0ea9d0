"""The `transcribe` stage: a video's sound track → transcript rows of its clips.

Runs right after `sample`, so captions, object records, `video.rag` and `video.qa` read the
speech as they read a sidecar transcript. Per video the track is decoded and resampled in chunks
(`transcribe_chunk_seconds`, video/audio.py), Silero VAD finds the speech in each chunk, and the
profile's `asr` model transcribes those spans (models/asr.py). Each segment is aligned to the
clips it overlaps, as sidecar transcripts are (`video.transcripts.align`), and stored with
`transcripts.source = 'asr'`. `SpeechTrack` does this chunk by chunk, each chunk once the clips
its speech overlaps are stored: stage by stage that is at once; in a streamed run
(pipeline/streaming.py) it follows the decoding, so a long video's first clips reach the vision
model long before its last ones are decoded.

A profile with no `asr` model (the offline one: no speech model on PyPI is usable, see
docs/offline.md) stores each speech span as `source = 'vad'` with the text `SPEECH_ONLY`, so the
agent can tell when someone spoke without inventing what was said.

One transaction per chunk holds its rows and its progress mark (stage `transcribe`, or
`transcribe-vad` without a model; unit `video_id:audioK`): a killed run resumes at the first
chunk without a mark, and a chunk's old speech rows are replaced, never doubled; a run with a
model redoes chunks that only had VAD. `video_id:transcribed` marks a video whose chunks are
all done, so a re-run does not decode its sound again. `result.done` counts videos. A speech
span that crosses a chunk boundary is cut there (a model's segment may still end past it). A
video with a transcript of its own (a sidecar file, or lines imported by `--transcripts`) keeps
it and is not transcribed, unless the pipeline sets `speech_source: asr`, which transcribes it
and drops those rows. A file with no audio stream is marked `video_id:no-audio`, which is not a
failure.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from videomem.core import StageResult, VideoSource
from videomem.errors import VideomemError
from videomem.models.asr import SpeechRecognizer, speech_spans
from videomem.pipeline.base import StageContext
from videomem.store import Store
from videomem.store.clips import HEARD_ONLY
from videomem.video.audio import AudioChunk, audio_chunks, has_audio
from videomem.video.clips import ClipSpan
from videomem.video.transcripts import SPEECH_ONLY, Segment, align

VAD_STAGE = "transcribe-vad"
SOURCES = ("asr", HEARD_ONLY)


def chunk_unit(video_id: str, index: int) -> str:
    return f"{video_id}:audio{index}"


def finished_unit(video_id: str) -> str:
    """Every chunk of the video done: a re-run does not decode its sound again."""
    return f"{video_id}:transcribed"


def no_audio_unit(video_id: str) -> str:
    return f"{video_id}:no-audio"


class TranscribeStage:
    name = "transcribe"

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        result = StageResult(self.name)
        wanted = self.wanted(ctx, sources, result)
        with ctx.progress(len(wanted), self.name, unit="video") as bar:
            for source in wanted:
                SpeechTrack(ctx, source, result).advance(math.inf)
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

    def reset(self, store: Store, sources: list[VideoSource]) -> None:
        """Forget the speech rows and progress of these videos, so the next run transcribes again."""
        with store.transaction() as tx:
            for source in sources:
                vid = source.video_id
                tx.executemany("DELETE FROM transcripts WHERE video_id = ? AND source = ?", [(vid, s) for s in SOURCES])
                for stage in (TranscribeStage.name, VAD_STAGE):
                    tx.execute(
                        "DELETE FROM stage_progress WHERE stage = ? AND substr(unit, 1, ?) = ?",
                        (stage, len(vid) + 1, f"{vid}:"),
                    )


class SpeechTrack:
    """One video's speech, stored chunk by chunk as far as its clips are stored.

    Segments are aligned to clip rows, so a chunk's rows are written once every clip its audio
    or its segments overlap is in the store; the streaming ingest calls `advance` as clips are
    committed, and hands a clip to the model once `through` has passed its end. Stage by stage,
    every clip is stored already and one `advance(inf)` does the whole video. Failures go to
    `result` (the track then counts as ended, so its clips are not held back)."""

    def __init__(self, ctx: StageContext, source: VideoSource, result: StageResult) -> None:
        self.ctx, self.source, self.result = ctx, source, result
        self.through = -math.inf
        """Store seconds up to which the video's speech is stored (inf: all of it, or nothing to do)."""
        self._chunks: Iterator[AudioChunk] | None = None
        self._held: tuple[AudioChunk, list[Segment]] | None = None
        """A chunk heard and not yet written: some clip it overlaps is not stored yet."""
        self._recognizer: SpeechRecognizer | None = None

    @property
    def ended(self) -> bool:
        return self.through == math.inf

    def advance(self, sampled: float) -> float:
        """Hear and store the chunks whose clips are all stored, `sampled` being the store
        second before which every clip of the video is (inf: every clip). Returns `through`."""
        if self.ended:
            return self.through
        try:
            if self._chunks is not None or self._open(sampled):
                self._step(sampled)
        except VideomemError as exc:
            self._end()
            self.result.failures.append((str(self.source.path), f"{exc} (re-run ingest to resume)"))
        return self.through

    def _open(self, sampled: float) -> bool:
        """Start on the chunks not done yet (True); the speech model is only built for a file
        with sound, and a video with no clip yet waits for one."""
        store, vid = self.ctx.store, self.source.video_id
        done = store.done_units(TranscribeStage.name)
        if no_audio_unit(vid) in done:
            self.result.skipped += 1
            self._end()
            return False
        if not store.query("SELECT 1 FROM clips WHERE video_id = ? LIMIT 1", (vid,)):
            if sampled == math.inf:  # nothing sampled, nothing to align speech to
                self._end()
            return False
        if not has_audio(self.source.path):
            with store.transaction() as tx:
                Store.mark_done(tx, TranscribeStage.name, no_audio_unit(vid))
            self.result.done += 1
            self._end()
            return False
        self._recognizer = self.ctx.models.asr
        if self._recognizer is None:
            done |= store.done_units(VAD_STAGE)
        if finished_unit(vid) in done:
            self.result.skipped += 1
            self._end()
            return False
        prefix = f"{vid}:audio"
        skip = {int(u[len(prefix) :]) for u in done if u.startswith(prefix)}
        self._chunks = audio_chunks(self.source.path, self.ctx.pipeline.transcribe_chunk_seconds, skip)
        return True

    def _step(self, sampled: float) -> None:
        offset, stage = self.source.t_offset, TranscribeStage.name if self._recognizer is not None else VAD_STAGE
        assert self._chunks is not None
        while True:
            if self._held is None:
                chunk = next(self._chunks, None)
                if chunk is None:
                    with self.ctx.store.transaction() as tx:
                        Store.mark_done(tx, stage, finished_unit(self.source.video_id))
                    self.result.done += 1
                    self._end()
                    return
                self._held = chunk, self._hear(chunk)
                self.through = offset + chunk.t_start
            chunk, segments = self._held
            if max([offset + chunk.t_end, *(s.t_end for s in segments)]) > sampled:
                return
            kind = "asr" if self._recognizer is not None else HEARD_ONLY
            _write_chunk(
                self.ctx.store, self.source, chunk, segments, stage, kind, self.ctx.pipeline.speech_source == "asr"
            )
            self._held = None
            self.through = offset + chunk.t_end

    def _hear(self, chunk: AudioChunk) -> list[Segment]:
        """The chunk's speech on the store's timeline: the model's segments, or VAD's spans."""
        spans = speech_spans(chunk.samples)
        if self._recognizer is not None:
            found = self._recognizer.transcribe(chunk.samples, spans)
        else:
            found = [Segment(a, b, SPEECH_ONLY) for a, b in spans]
        shift = self.source.t_offset + chunk.t_start
        return [Segment(s.t_start + shift, s.t_end + shift, s.text, s.speaker) for s in found]

    def _end(self) -> None:
        if self._chunks is not None:
            self._chunks.close()
        self._chunks, self._held, self.through = None, None, math.inf


def _write_chunk(
    store: Store,
    source: VideoSource,
    chunk: AudioChunk,
    segments: list[Segment],
    stage: str,
    kind: str,
    drop_given: bool,
) -> None:
    """The chunk's speech rows (replacing any an earlier run left) and its progress mark, at once."""
    vid = source.video_id
    t0, t1 = source.t_offset + chunk.t_start, source.t_offset + chunk.t_end
    reach = max([t1, *(s.t_end for s in segments)])
    clips = store.query(
        "SELECT id, t_start, t_end FROM clips WHERE video_id = ? AND t_end >= ? AND t_start <= ? ORDER BY t_start, idx",
        (vid, min([t0, *(s.t_start for s in segments)]), reach),
    )
    by_clip = align(segments, [ClipSpan(c["id"], c["t_start"], c["t_end"]) for c in clips])
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
