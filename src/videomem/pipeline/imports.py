"""Import steps: a dataset's own captions and transcripts (EgoLifeCap) as clip memory.

`videomem ingest VIDEOS --captions DIR --transcripts DIR --timeline egolife` runs one step per
directory right after `sample` (WorldMM built its published EgoLife memory from these files,
not from a vision pass). For each sampled clip:

* **captions** — the caption cues that overlap the clip, in time order, become its event-memory
  caption (`events.source = 'egolifecap'`), and the clip is marked captioned in the same
  transaction, so the caption stage makes no vision call for it. The objects stage then reads
  the clip's people and things from that caption with the text model; later text stages
  (episodic, semantic) read the caption like any other; visual memory still comes from the
  frames. A clip no cue overlaps keeps no imported caption, and the caption stage captions it.
  When the pipeline sets `imported_caption_language`, cues are translated into it by the text
  model first (prompt `translate.md`); the offline backend has no translator and keeps them as
  written, with a warning. An imported caption replaces one the caption stage wrote before.
* **transcripts** — the English line of each overlapping cue becomes a transcript row of the
  clip (`transcripts.source = 'egolifecap'`), beside any sidecar transcript.

A cue that crosses a clip boundary belongs to both clips, as sidecar transcripts are aligned
(`video.transcripts.align`). Each clip is one transaction with its progress mark (stage
`import-captions` / `import-transcripts`, unit `video_id:index`), so a killed import resumes and
never writes a row twice; `--force` forgets what the step imported and imports it again.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from pathlib import Path

from videomem.core import StageResult, VideoSource
from videomem.errors import ModelError, VideomemError
from videomem.memory import events
from videomem.pipeline.base import StageContext
from videomem.store import Store
from videomem.store.clips import ClipRow, clips_of
from videomem.video.clips import ClipSpan
from videomem.video.egolifecap import SOURCE, HourFile, Kind, hour_files, read_egolifecap
from videomem.video.transcripts import Segment, align


class ImportStage:
    """Imports one kind of EgoLifeCap file (captions or transcripts) from one directory."""

    def __init__(self, kind: Kind, directory: str | Path) -> None:
        self.kind = kind
        self.name = f"import-{kind}"
        self.files: list[HourFile] = hour_files(directory)

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        store = ctx.store
        clips = clips_of(store, [s.video_id for s in sources])
        done = store.done_units(self.name)
        pending = [c for c in clips if c.unit not in done]
        result = StageResult(self.name, skipped=len(clips) - len(pending))
        if not pending:
            return result
        try:
            cues = _cues_per_clip(read_egolifecap(self.files, self.kind), pending)
        except VideomemError as exc:
            result.failures.append((self.name, str(exc)))
            return result
        write = self._write_caption if self.kind == "captions" else self._write_transcript
        translate = _Translator(ctx) if self.kind == "captions" and ctx.pipeline.imported_caption_language else None
        batch_size = ctx.pipeline.caption_batch_size
        with ctx.progress(len(pending), self.name) as bar:
            for start in range(0, len(pending), batch_size):
                batch = pending[start : start + batch_size]
                try:
                    if translate is not None:
                        translate.prepare([s.text for clip in batch for s in cues[clip.id]])
                    for clip in batch:
                        texts = [translate(s.text) if translate else s.text for s in cues[clip.id]]
                        write(store, clip, cues[clip.id], texts)
                        result.done += 1
                except ModelError as exc:
                    left = len(pending) - start
                    result.failures.append((self.name, f"{exc} ({left} clips left to import; re-run ingest to resume)"))
                    break
                finally:
                    bar.update(len(batch))
        return result

    def _write_caption(self, store: Store, clip: ClipRow, cues: list[Segment], texts: list[str]) -> None:
        caption = " ".join(t.strip() for t in texts if t.strip())
        with store.transaction() as tx:
            if caption:
                tx.execute(
                    "INSERT OR REPLACE INTO events (clip_id, video_id, t_start, t_end, text, source) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (clip.id, clip.video_id, clip.t_start, clip.t_end, caption, SOURCE),
                )
                Store.mark_done(tx, events.STAGE, clip.unit)
            Store.mark_done(tx, self.name, clip.unit)

    def _write_transcript(self, store: Store, clip: ClipRow, cues: list[Segment], texts: list[str]) -> None:
        with store.transaction() as tx:
            tx.execute("DELETE FROM transcripts WHERE clip_id = ? AND source = ?", (clip.id, SOURCE))
            tx.executemany(
                "INSERT INTO transcripts (clip_id, video_id, t_start, t_end, speaker, text, source) "
                "VALUES (?, ?, ?, ?, NULL, ?, ?)",
                [(clip.id, clip.video_id, s.t_start, s.t_end, text, SOURCE) for s, text in zip(cues, texts)],
            )
            Store.mark_done(tx, self.name, clip.unit)

    def reset(self, store: Store, sources: list[VideoSource]) -> None:
        """Forget what this step imported for these videos (an imported caption's clip is no
        longer marked captioned), so the next run imports it again."""
        video_ids = [s.video_id for s in sources]
        clips = clips_of(store, video_ids)
        table = "events" if self.kind == "captions" else "transcripts"
        imported = {r["clip_id"] for r in store.query(f"SELECT clip_id FROM {table} WHERE source = ?", (SOURCE,))}
        with store.transaction() as tx:
            tx.executemany(f"DELETE FROM {table} WHERE video_id = ? AND source = ?", [(v, SOURCE) for v in video_ids])
            for clip in clips:
                tx.execute("DELETE FROM stage_progress WHERE stage = ? AND unit = ?", (self.name, clip.unit))
                if self.kind == "captions" and clip.id in imported:
                    tx.execute("DELETE FROM stage_progress WHERE stage = ? AND unit = ?", (events.STAGE, clip.unit))


def _cues_per_clip(segments: list[Segment], clips: Sequence[ClipRow]) -> dict[int, list[Segment]]:
    """Clip id → the segments overlapping it; videos are aligned one at a time on the slice of
    segments that can reach them, so a week of cues is not scanned once per file."""
    starts = [s.t_start for s in segments]
    longest = max((s.t_end - s.t_start for s in segments), default=0.0)
    by_video: dict[str, list[ClipRow]] = {}
    for clip in clips:
        by_video.setdefault(clip.video_id, []).append(clip)
    out: dict[int, list[Segment]] = {}
    for video_clips in by_video.values():
        video_clips.sort(key=lambda c: c.t_start)
        lo = bisect.bisect_left(starts, video_clips[0].t_start - longest)
        hi = bisect.bisect_right(starts, max(c.t_end for c in video_clips))
        spans = [ClipSpan(c.id, c.t_start, c.t_end) for c in video_clips]
        out.update(align(segments[lo:hi], spans))
    return out


class _Translator:
    """Cue texts → the pipeline's caption language, each distinct text translated once per run."""

    def __init__(self, ctx: StageContext) -> None:
        self.ctx = ctx
        self.language = ctx.pipeline.imported_caption_language or ""
        self.done: dict[str, str] = {}

    def prepare(self, texts: Sequence[str]) -> None:
        todo = list(dict.fromkeys(t for t in texts if t not in self.done))
        if todo:
            translated = self.ctx.models.language.translate(todo, self.language)
            if len(translated) != len(todo):
                raise RuntimeError(f"translate returned {len(translated)} texts for {len(todo)}")
            self.done.update(zip(todo, translated))

    def __call__(self, text: str) -> str:
        return self.done[text]
