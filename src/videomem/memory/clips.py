"""Reading clips back from the store: what a vision task sees of a clip, and how times read.

The sample stage writes clips, frame JPEGs (paths relative to the store root) and transcripts;
the memories and `video.qa` turn those rows back into `ClipView`s here, so there is one place
that knows the layout.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
from PIL import Image

from videomem.errors import StoreError, VideomemError
from videomem.models.base import ClipView
from videomem.store import Store
from videomem.timeline import UNTIL_SLACK, TimelineKind, format_time
from videomem.video.transcripts import SPEECH_ONLY

T = TypeVar("T")

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


def _unreadable(path: Path, exc: Exception) -> StoreError:
    return StoreError(f"{path}: frame cannot be read ({exc}); re-run `videomem ingest` on its video to restore it")


def frame_bytes(root: Path, relative: str) -> bytes:
    """A stored frame's JPEG file as it is, to send to a worker that has no access to the store."""
    try:
        return (root / relative).read_bytes()
    except OSError as exc:
        raise _unreadable(root / relative, exc) from None


def decode_frame(data: bytes, path: Path) -> Image.Image:
    """A stored frame's bytes as an RGB image (`path`: where they were read, for the error)."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            return image.convert("RGB")
    except (OSError, ValueError) as exc:
        raise _unreadable(path, exc) from None


def open_frame(root: Path, relative: str) -> Image.Image:
    """A frame of the store at `root` (paths in the `frames` table are relative to it)."""
    return decode_frame(frame_bytes(root, relative), root / relative)


def transcript_of(store: Store, clip_ids: Sequence[int]) -> str:
    """The words spoken in these clips, in time order, each line with its speaker when known;
    back-to-back lines that only say someone spoke (`SPEECH_ONLY`) read as one."""
    marks = ",".join("?" * len(clip_ids))
    rows = store.query(
        f"SELECT speaker, text FROM transcripts WHERE clip_id IN ({marks}) ORDER BY t_start, id", tuple(clip_ids)
    )
    lines = [f"{r['speaker']}: {r['text']}" if r["speaker"] else r["text"] for r in rows]
    return " ".join(line for i, line in enumerate(lines) if not (line == SPEECH_ONLY and i and lines[i - 1] == SPEECH_ONLY))


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
        return self.read().view()

    def read(self) -> ClipBytes:
        """The clip with its frame files read but not decoded: what travels to a remote worker."""
        jpegs = tuple(frame_bytes(self.root, p) for p in self.frame_paths)
        return ClipBytes(self.clip, self.root, self.frame_paths, self.frame_times, jpegs, self.transcript)


@dataclass(frozen=True)
class ClipBytes:
    """A clip's frames as their stored JPEG bytes, with their times and its transcript;
    picklable, so a worker on another machine builds the `ClipView` (`view`)."""

    clip: ClipRow
    root: Path
    frame_paths: tuple[str, ...]
    frame_times: tuple[float, ...]
    jpegs: tuple[bytes, ...]
    transcript: str

    def view(self) -> ClipView:
        return ClipView(
            video_id=self.clip.video_id,
            t_start=self.clip.t_start,
            t_end=self.clip.t_end,
            frames=[decode_frame(data, self.root / p) for data, p in zip(self.jpegs, self.frame_paths)],
            frame_times=list(self.frame_times),
            transcript=self.transcript,
        )


def clip_sources(store: Store, clip: ClipRow) -> ClipSources:
    frames = store.query("SELECT t, path FROM frames WHERE clip_id = ? ORDER BY t", (clip.id,))
    return ClipSources(
        clip, store.root, tuple(f["path"] for f in frames), tuple(f["t"] for f in frames), transcript_of(store, [clip.id])
    )


def visible_frames(store: Store, t_start: float, t_end: float, until: float | None, video_id: str | None) -> list:
    """Stored frames of the clips that overlap [t_start, t_end] and that the question may see,
    in time order, each with its clip (`clip_id`, `c_start`, `c_end`)."""
    where, params = scope_sql(until, video_id)
    return store.query(
        "SELECT f.t, f.path, f.video_id, c.id AS clip_id, c.t_start AS c_start, c.t_end AS c_end "
        f"FROM frames f JOIN (SELECT * FROM clips {'WHERE ' + where if where else ''}) c ON c.id = f.clip_id "
        "WHERE c.t_start < ? AND c.t_end > ? ORDER BY f.t, f.id",
        (*params, t_end, t_start),
    )


def frames_view(store: Store, frames: Sequence, t_start: float, t_end: float) -> ClipView:
    """What a vision task sees of some stored frames (rows with `t`, `path`, `video_id`,
    `clip_id`, of one video or of videos in sequence): the images, their times and the words
    spoken in their clips, as a view of [t_start, t_end]."""
    return ClipView(
        video_id=frames[0]["video_id"],
        t_start=t_start,
        t_end=t_end,
        frames=[open_frame(store.root, f["path"]) for f in frames],
        frame_times=[f["t"] for f in frames],
        transcript=transcript_of(store, sorted({f["clip_id"] for f in frames})),
    )


def frames_between(store: Store, video_id: str, t_start: float, t_end: float, limit: int) -> list[str]:
    """Up to `limit` stored frames of `video_id` in [t_start, t_end), spread evenly over the
    range (paths relative to the store root): what to show of evidence that names no frames."""
    rows = store.query(
        "SELECT path FROM frames WHERE video_id = ? AND t >= ? AND t < ? ORDER BY t, id", (video_id, t_start, t_end)
    )
    return [r["path"] for r in evenly(rows, limit)]


def evenly(items: Sequence[T], n: int) -> list[T]:
    """At most `n` of `items`, spread evenly from the first to the last."""
    if len(items) <= n:
        return list(items)
    return [items[i] for i in np.unique(np.linspace(0, len(items) - 1, n).round().astype(int))]


def require_video(store: Store, video_id: str | None) -> None:
    """A question or search scoped to a video the store does not hold is the user's mistake."""
    if video_id is not None and not store.query("SELECT 1 FROM videos WHERE id = ?", (video_id,)):
        raise VideomemError(f"video {video_id!r} is not in the store {store.root}")


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


def visible_ids(store: Store, table: str, until: float | None, video_id: str | None) -> list[int] | None:
    """Ids of the rows of `table` (with `t_end` and `video_id` columns) a question may see, for
    `VectorIndex.search`; None when it may see them all."""
    where, params = scope_sql(until, video_id)
    return [r["id"] for r in store.query(f"SELECT id FROM {table} WHERE {where}", params)] if where else None

