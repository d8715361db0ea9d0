"""Clip-level queries on the store: which clips a video has, what was said in them, and which
rows a question may see (`until`, `video_id`).

The sample stage writes clips, frames and transcripts; every reader of those rows goes through
here (or store/frames.py for the frame files), so there is one place that knows the layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from videomem.errors import VideomemError
from videomem.evidence import Speech
from videomem.store.db import Store
from videomem.timeline import UNTIL_SLACK, TimelineKind
from videomem.video.transcripts import transcript_text

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


HEARD_ONLY = "vad"
"""`transcripts.source` of a line that only says someone spoke (the transcribe stage without a speech model)."""


def speech_of(store: Store, clip_ids: Sequence[int]) -> tuple[Speech, ...]:
    """The transcript lines stored with these clips, in time order, typed (`speech_in`)."""
    marks = ",".join("?" * len(clip_ids))
    rows = store.query(
        f"SELECT t_start, t_end, speaker, text, source FROM transcripts WHERE clip_id IN ({marks}) ORDER BY t_start, id",
        tuple(clip_ids),
    )
    return _typed(rows)


def transcript_of(store: Store, clip_ids: Sequence[int]) -> str:
    """The words spoken in these clips as one text (`transcript_text`)."""
    return transcript_text(speech_of(store, clip_ids))


def speech_in(store: Store, video_id: str, t_start: float, t_end: float) -> tuple[Speech, ...]:
    """The transcript lines of `video_id` that overlap [t_start, t_end], in time order, typed:
    who spoke and whether the words were transcribed, so no reader parses the prose for them."""
    # A line overlapping the range starts inside it or at most the video's longest line before
    # it: both bounds make it one range of the (video_id, t_start) index (`transcripts_time`).
    rows = store.query(
        "SELECT t_start, t_end, speaker, text, source FROM transcripts "
        "WHERE video_id = :video AND t_start < :end AND t_end > :start AND t_start >= :start - "
        "(SELECT MAX(t_end - t_start) FROM transcripts WHERE video_id = :video) ORDER BY t_start, id",
        {"video": video_id, "end": max(t_end, t_start + 1e-6), "start": t_start},
    )
    return _typed(rows)


def _typed(rows: Sequence) -> tuple[Speech, ...]:
    lines = (Speech(r["t_start"], r["t_end"], r["text"], r["speaker"], r["source"] != HEARD_ONLY) for r in rows)
    return tuple(dict.fromkeys(lines))  # a line over two clips is stored with each


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
