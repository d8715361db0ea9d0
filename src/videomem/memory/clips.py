"""Reading clips back from the store: what a vision task sees of a clip, and how times read.

The sample stage writes clips, frame JPEGs (paths relative to the store root) and transcripts;
the memories and `video.qa` turn those rows back into `ClipView`s here, so there is one place
that knows the layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from videomem.errors import StoreError
from videomem.models.base import ClipView
from videomem.store import Store
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


def open_frame(root: Path, relative: str) -> Image.Image:
    """A frame of the store at `root` (paths in the `frames` table are relative to it)."""
    path = root / relative
    try:
        with Image.open(path) as image:
            return image.convert("RGB")
    except (OSError, ValueError) as exc:
        raise StoreError(f"{path}: frame cannot be read ({exc}); re-run `videomem ingest` on its video to restore it") from None


@dataclass(frozen=True)
class ClipSources:
    """Where a clip's view comes from: its frame files and times, and its transcript. Read from
    SQLite in the thread that owns the store; `load` only reads files, so it can run ahead in
    another thread."""

    clip: ClipRow
    root: Path
    frame_paths: tuple[str, ...]
    frame_times: tuple[float, ...]
    transcript: str

    @property
    def empty(self) -> bool:
        """Nothing to look at or read (a gap in the video)."""
        return not self.frame_paths and not self.transcript

    def load(self) -> ClipView:
        return ClipView(
            video_id=self.clip.video_id,
            t_start=self.clip.t_start,
            t_end=self.clip.t_end,
            frames=[open_frame(self.root, p) for p in self.frame_paths],
            frame_times=list(self.frame_times),
            transcript=self.transcript,
        )


def clip_sources(store: Store, clip: ClipRow) -> ClipSources:
    frames = store.query("SELECT t, path FROM frames WHERE clip_id = ? ORDER BY t", (clip.id,))
    lines = store.query(
        "SELECT speaker, text FROM transcripts WHERE clip_id = ? ORDER BY t_start, id", (clip.id,)
    )
    transcript = " ".join(f"{r['speaker']}: {r['text']}" if r["speaker"] else r["text"] for r in lines)
    return ClipSources(
        clip, store.root, tuple(f["path"] for f in frames), tuple(f["t"] for f in frames), transcript
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
