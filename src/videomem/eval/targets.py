"""Where a question's answer is, as the score compares it with the evidence.

A benchmark annotates either ranges (LVBench's `time_reference`, EgoLifeQA's `START DAYn_END`)
or moments (EgoLifeQA's single times and `time_list`). A range is compared as it is. A moment
has no length, so — as WorldMM's EgoLife evaluation does with its 30-s segments — it stands for
the stored clip that contains it: the unit the memory could have cited. A moment outside all
stored footage keeps the fixed window `scoring.POINT_WINDOW` centred on it (no evidence can
reach it, so it only lowers tIoU).
"""

from __future__ import annotations

from dataclasses import replace

from videomem.eval.questions import Question
from videomem.store import Store

Span = tuple[float, float]


def with_clip_windows(store: Store, question: Question) -> Question:
    """The question with each moment target (t, t) replaced by the stored clip containing t."""
    if not any(a == b for a, b in question.targets):
        return question
    return replace(question, targets=tuple(_window(store, span, question.video_id) for span in question.targets))


def _window(store: Store, span: Span, video_id: str | None) -> Span:
    start, end = span
    if start != end:
        return span
    scope, params = ("AND video_id = ?", (video_id,)) if video_id is not None else ("", ())
    # A moment on the boundary of two clips belongs to the later one (clips are half-open),
    # unless it is the very end of the footage.
    rows = store.query(
        f"SELECT t_start, t_end FROM clips WHERE t_start <= ? AND t_end >= ? {scope} "
        "ORDER BY t_end > ? DESC, t_start DESC LIMIT 1",
        (start, start, *params, start),
    )
    return (rows[0]["t_start"], rows[0]["t_end"]) if rows else span
