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
  model first (prompt `translate.md`); the offline backend glosses Chinese into English word by
  word (`models/offline/gloss.py`) and keeps anything else as written, with a warning. An
  imported caption replaces one the caption stage wrote before.
  The clip's speech follows the caption cues in the same event (`Shure: Mark a timestamp,
  right?`, as `transcript_of` writes it), so the words said and who said them are found and
  shown with the event, and the object and episodic memories read them from its text. Steps run
  transcripts first, so the speech is there when the caption is written.
* **transcripts** — the English line of each overlapping cue becomes a transcript row of the
  clip (`transcripts.source = 'egolifecap'`) with the cue's speaker, beside any sidecar
  transcript.

**No video files.** `videomem ingest --captions DIR [--transcripts DIR]` with no video path
builds the memory from the files alone (`CaptionGridStage` stands in for `sample`): one clip per
window of the pipeline's `clip_seconds` grid on the corpus timeline that a caption or
transcript cue overlaps, no frames, under one video row per hour with no file
(`videos.fps = 0`, named `<person>_DAYn_HH000000`). A clip with speech and no caption cue gets
the speech as its event. The stages that need the footage (`transcribe`, `visual`) skip and say
so; the text stages run as usual. Videos ingested later into the same store adopt these clips
(`pipeline/sample.py`): frames are added to the same clips and nothing imported is redone.

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
from videomem.memory import episodic, events
from videomem.models.tasks import require
from videomem.models.tasks.translation import Translation
from videomem.pipeline.base import StageContext
from videomem.pipeline.sample import FRAMELESS_FPS, SampleStage, unit_key
from videomem.store import Store
from videomem.store.clips import ClipRow, clips_of, transcript_of
from videomem.timeline import DAY
from videomem.video.clips import ClipSpan
from videomem.video.egolifecap import SOURCE, HourFile, Kind, grid_windows, hour_files, person_of, read_egolifecap
from videomem.video import worldmmcap as worldmm
from videomem.video.transcripts import Segment, align


class ImportStage:
    """Imports one kind of file (captions or transcripts) from one directory: EgoLifeCap's
    hourly .srt files, or for captions WorldMM's `<person>_<scale>.json` files."""

    def __init__(self, kind: Kind, directory: str | Path) -> None:
        self.kind = kind
        self.name = f"import-{kind}"
        self.directory = Path(directory)
        self.scales = worldmm.caption_files(directory) if kind == "captions" else None
        self.files: list[HourFile] = hour_files(directory) if self.scales is None else []
        self.source = SOURCE if self.scales is None else worldmm.SOURCE
        self._segments: list[Segment] | None = None

    @property
    def segments(self) -> list[Segment]:
        """The clip-level cues in corpus seconds, read once."""
        if self._segments is None:
            if self.scales is None:
                self._segments = read_egolifecap(self.files, self.kind)
            else:
                self._segments = worldmm.read_captions(self.scales[worldmm.CLIP_SCALE])
        return self._segments

    @property
    def person(self) -> str:
        return person_of(self.scales[worldmm.CLIP_SCALE].stem if self.scales else self.files[0].path.stem)

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        store = ctx.store
        clips = clips_of(store, [s.video_id for s in sources])
        done = store.done_units(self.name)
        pending = [c for c in clips if c.unit not in done]
        result = StageResult(self.name, skipped=len(clips) - len(pending))
        try:
            cues = _cues_per_clip(self.segments, pending)
            if self.scales:
                self._write_scales(ctx, result)
        except VideomemError as exc:
            result.failures.append((self.name, str(exc)))
            return result
        if not pending:
            return result
        write = self._write_caption if self.kind == "captions" else self._write_transcript
        translated = self.kind == "captions" and self.scales is None  # WorldMM's are in English as released
        translate = _Translator(ctx) if translated and ctx.pipeline.imported_caption_language else None
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
        if caption or not store.query("SELECT 1 FROM frames WHERE clip_id = ? LIMIT 1", (clip.id,)):
            caption = " ".join(t for t in (caption, transcript_of(store, [clip.id])) if t)
        with store.transaction() as tx:
            if caption:
                tx.execute(
                    "INSERT OR REPLACE INTO events (clip_id, video_id, t_start, t_end, text, source) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (clip.id, clip.video_id, clip.t_start, clip.t_end, caption, self.source),
                )
                Store.mark_done(tx, events.EventMemory.stage, clip.unit)
            Store.mark_done(tx, self.name, clip.unit)

    def _write_transcript(self, store: Store, clip: ClipRow, cues: list[Segment], texts: list[str]) -> None:
        with store.transaction() as tx:
            tx.execute("DELETE FROM transcripts WHERE clip_id = ? AND source = ?", (clip.id, SOURCE))
            tx.executemany(
                "INSERT INTO transcripts (clip_id, video_id, t_start, t_end, speaker, text, source) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(clip.id, clip.video_id, s.t_start, s.t_end, s.speaker, text, SOURCE) for s, text in zip(cues, texts)],
            )
            Store.mark_done(tx, self.name, clip.unit)

    def _write_scales(self, ctx: StageContext, result: StageResult) -> None:
        """WorldMM's coarser captions as the episodic captions of their scales (those the
        pipeline lists), each placed on the clips it spans; one transaction per file. An entry
        over no stored clip is left out. The episodic stage then reads their entities and
        triplets and builds no other caption at these scales (memory/episodic.py)."""
        store = ctx.store
        done = store.done_units(self.name)
        for scale, path in sorted(self.scales.items()):
            unit = f"scale:{scale:g}"
            if scale == worldmm.CLIP_SCALE or scale not in ctx.pipeline.episodic_scales or unit in done:
                continue
            rows = []
            for segment in worldmm.read_captions(path):
                videos = [r["video_id"] for r in store.query(
                    "SELECT video_id FROM clips WHERE t_start < ? AND t_end > ? ORDER BY t_start, video_id",
                    (max(segment.t_end, segment.t_start + 1e-3), segment.t_start),
                )]
                if videos:
                    rows.append((scale, "", len(rows), videos[0], len(set(videos)), segment.t_start, segment.t_end,
                                 segment.text, episodic.IMPORTED))
            with store.transaction() as tx:
                tx.execute("DELETE FROM episodic_captions WHERE scale = ?", (scale,))
                tx.executemany(
                    "INSERT INTO episodic_captions (scale, scope, idx, video_id, n_videos, t_start, t_end, text, "
                    "inputs_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
                Store.mark_done(tx, self.name, unit)

    def reset(self, store: Store, sources: list[VideoSource]) -> None:
        """Forget what this step imported for these videos (an imported caption's clip is no
        longer marked captioned), so the next run imports it again."""
        video_ids = [s.video_id for s in sources]
        clips = clips_of(store, video_ids)
        table = "events" if self.kind == "captions" else "transcripts"
        imported = {r["clip_id"] for r in store.query(f"SELECT clip_id FROM {table} WHERE source = ?", (self.source,))}
        with store.transaction() as tx:
            tx.executemany(f"DELETE FROM {table} WHERE video_id = ? AND source = ?", [(v, self.source) for v in video_ids])
            if self.scales:
                tx.execute("DELETE FROM episodic_captions WHERE inputs_hash LIKE ?", (f"{episodic.IMPORTED}%",))
                tx.execute("DELETE FROM stage_progress WHERE stage = ? AND unit LIKE 'scale:%'", (self.name,))
            for clip in clips:
                tx.execute("DELETE FROM stage_progress WHERE stage = ? AND unit = ?", (self.name, clip.unit))
                if self.kind == "captions" and clip.id in imported:
                    tx.execute("DELETE FROM stage_progress WHERE stage = ? AND unit = ?", (events.EventMemory.stage, clip.unit))


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
            translated = require(self.ctx.models.language, Translation).translate(todo, self.language)
            if len(translated) != len(todo):
                raise RuntimeError(f"translate returned {len(translated)} texts for {len(todo)}")
            self.done.update(zip(todo, translated))

    def __call__(self, text: str) -> str:
        return self.done[text]


class CaptionGridStage:
    """`sample` for a store built from captions alone: the clips of the import steps' cues on
    the pipeline's clip grid, under one frameless video row per hour, and no frames."""

    name = SampleStage.name

    def __init__(self, imports: Sequence[ImportStage], seconds: float) -> None:
        self.seconds = seconds
        captions = next(stage for stage in imports if stage.kind == "captions")
        self.directory, person = captions.directory, captions.person
        self.clips: dict[str, list[ClipSpan]] = {}
        self.offsets: dict[str, float] = {}
        for start in grid_windows([s for stage in imports for s in stage.segments], seconds):
            day, hour = int(start // DAY), int(start % DAY // 3600)
            video_id = f"{person}_DAY{day + 1}_{hour:02d}000000".lstrip("_")
            offset = self.offsets.setdefault(video_id, day * DAY + hour * 3600)
            spans = self.clips.setdefault(video_id, [])
            spans.append(ClipSpan(round((start - offset) / seconds), start, start + seconds))

    @property
    def sources(self) -> list[VideoSource]:
        """The hours as videos with no file (their path: the captions folder)."""
        return [VideoSource(self.directory, video_id, self.offsets[video_id]) for video_id in self.clips]

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        store = ctx.store
        done = store.done_units(self.name)
        result = StageResult(self.name, note=f"no video files: clips on the {self.seconds:g}-s grid, no frames")
        for source in sources:
            spans = self.clips[source.video_id]
            todo = [c for c in spans if unit_key(source.video_id, c.index) not in done and not _held(store, c)]
            with store.transaction() as tx:
                tx.execute(
                    "INSERT INTO videos (id, path, t_offset, duration, fps, n_frames, width, height, rotation, probe_json) "
                    "VALUES (?, ?, ?, ?, ?, 0, 0, 0, 0, '{}') "
                    "ON CONFLICT (id) DO UPDATE SET duration = MAX(duration, excluded.duration)",
                    (source.video_id, str(source.path), source.t_offset, spans[-1].t_end - source.t_offset, FRAMELESS_FPS),
                )
                tx.executemany(
                    "INSERT INTO clips (video_id, idx, t_start, t_end) VALUES (?, ?, ?, ?)",
                    [(source.video_id, c.index, c.t_start, c.t_end) for c in todo],
                )
                for c in todo:
                    Store.mark_done(tx, self.name, unit_key(source.video_id, c.index))
            result.done += len(todo)
            result.skipped += len(spans) - len(todo)
        return result

    def reset(self, store: Store, sources: list[VideoSource]) -> None:
        SampleStage().reset(store, sources)


def _held(store: Store, span: ClipSpan) -> bool:
    """A stored clip holds this window's midpoint already (a video's clip that adopted it)."""
    mid = (span.t_start + span.t_end) / 2
    return bool(store.query("SELECT 1 FROM clips WHERE t_start <= ? AND t_end > ? LIMIT 1", (mid, mid)))


class NeedsFootage:
    """A stage that reads the video's pixels or sound, in a store with no video files: skipped."""

    def __init__(self, name: str) -> None:
        self.name = name

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        return StageResult(self.name, note="skipped: it needs the videos, and this run has none")

    def reset(self, store: Store, sources: list[VideoSource]) -> None:
        """Nothing of its own to forget: it never ran on these hours."""
