"""Reading clips back from the store: what a vision task sees of a clip, and how times read.

The sample stage writes clips, frame JPEGs (paths relative to the store root) and transcripts;
the memories and `video.qa` turn those rows back into `ClipView`s here, so there is one place
that knows the layout.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PIL import Image

from videomem.errors import ModelError, StoreError
from videomem.models.base import ClipView
from videomem.pipeline.base import StageResult
from videomem.store import Store
from videomem.store.vectors import ProgressFactory
from videomem.timeline import UNTIL_SLACK, TimelineKind, format_time



@dataclass(frozen=True)
class ClipRow:
    id: int
    video_id: str
    idx: int
    t_start: float
    t_end: float

    @property
    def unit(self) -> str:
        """Stage-progress key, the one every clip-level stage uses (`video_id:index`): stable
        for a clip whatever its row id, and what the sample stage's reset clears per video."""
        return f"{self.video_id}:{self.idx}"


def clips_of(store: Store, video_ids: Sequence[str]) -> list[ClipRow]:
    """Clips of these videos in timeline order (videos that never got sampled have none)."""
    if not video_ids:
        return []
    marks = ",".join("?" * len(video_ids))
    rows = store.query(
        f"SELECT id, video_id, idx, t_start, t_end FROM clips WHERE video_id IN ({marks}) "
        "ORDER BY t_start, video_id, idx",
        tuple(video_ids),
    )
    return [ClipRow(r["id"], r["video_id"], r["idx"], r["t_start"], r["t_end"]) for r in rows]


def open_frame(store: Store, relative: str) -> Image.Image:
    path = store.root / relative
    try:
        with Image.open(path) as image:
            return image.convert("RGB")
    except (OSError, ValueError) as exc:
        raise StoreError(f"{path}: frame cannot be read ({exc}); re-run `videomem ingest` on its video to restore it") from None


def clip_view(store: Store, clip: ClipRow) -> ClipView:
    frames = store.query("SELECT t, path FROM frames WHERE clip_id = ? ORDER BY t", (clip.id,))
    lines = store.query(
        "SELECT speaker, text FROM transcripts WHERE clip_id = ? ORDER BY t_start, id", (clip.id,)
    )
    transcript = " ".join(f"{r['speaker']}: {r['text']}" if r["speaker"] else r["text"] for r in lines)
    return ClipView(
        video_id=clip.video_id,
        t_start=clip.t_start,
        t_end=clip.t_end,
        frames=[open_frame(store, f["path"]) for f in frames],
        frame_times=[f["t"] for f in frames],
        transcript=transcript,
    )


def timeline_kind(store: Store) -> TimelineKind:
    """EgoLife-style corpora place videos at offsets on a week; single videos all start at 0."""
    row = store.query("SELECT MAX(t_offset) AS latest FROM videos")[0]
    return "egolife" if (row["latest"] or 0) > 0 else "single"


class TimeText:
    """Formats corpus seconds the way users of this store read them."""

    def __init__(self, store: Store) -> None:
        self.kind = timeline_kind(store)

    def __call__(self, seconds: float) -> str:
        return format_time(seconds, self.kind)

    def span(self, t_start: float, t_end: float) -> str:
        return f"{self(t_start)}-{self(t_end)}"


def scope_sql(until: float | None, video_id: str | None) -> tuple[str, tuple]:
    """SQL condition (on `t_end`, `video_id` columns) for what a question may see, or ''."""
    terms, params = [], []
    if until is not None:
        terms.append("t_end <= ?")
        params.append(until + UNTIL_SLACK)
    if video_id is not None:
        terms.append("video_id = ?")
        params.append(video_id)
    return " AND ".join(terms), tuple(params)


def process_pending_clips(
    store: Store,
    stage: str,
    video_ids: Sequence[str],
    batch_size: int,
    work: Callable[[list[ClipRow], list[ClipView]], None],
    progress: ProgressFactory | None,
    left_behind: str,
) -> StageResult:
    """Run `work(clips, views)` over the clips not yet done for `stage`, a batch at a time.

    A clip whose frames cannot be read is reported and left out of its batch. A clip with no
    frames and no speech (a gap in the video) has nothing to look at: it is marked done with no
    model call. A model failure ends the stage's run and is reported, not raised: the clips
    already done are committed, and the next ingest resumes at the first clip left.
    """
    clips = clips_of(store, video_ids)
    done = store.done_units(stage)
    pending = [c for c in clips if c.unit not in done]
    result = StageResult(stage, skipped=len(clips) - len(pending))
    bar = progress(len(pending), stage) if progress else None
    for start in range(0, len(pending), batch_size):
        batch = pending[start : start + batch_size]
        clips, views = [], []
        for clip in batch:
            try:
                view = clip_view(store, clip)
            except StoreError as exc:
                result.failures.append((clip.unit, str(exc)))
                continue
            if view.frames or view.transcript:
                views.append(view)
                clips.append(clip)
            else:
                with store.transaction() as tx:
                    Store.mark_done(tx, stage, clip.unit)
                result.done += 1
        try:
            if clips:
                work(clips, views)
                result.done += len(clips)
        except ModelError as exc:
            left = len(pending) - start
            result.failures.append((stage, f"{exc} ({left} clips left {left_behind}; re-run ingest to resume)"))
            break
        finally:
            if bar is not None:
                bar.update(len(batch))
    if bar is not None:
        bar.close()
    return result
