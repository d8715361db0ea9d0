"""Scoring: accuracy overall and per category, temporal IoU. Which option a reply chose is read
by `videomem.choice.read_choice`, the one reader the agent and the prompted tasks use too.

Temporal IoU of a question = |E ∩ T| / |E ∪ T|, where E is the union of the evidence time ranges
the answer cites and T the union of the target ranges (overlaps inside each union count once).
Ranges are compared per video: evidence from another video adds to E ∪ T but never to E ∩ T.
A target that is a moment counts as a window of `point_window` seconds centred on it; the
harness first replaces each moment with the stored clip that contains it (`eval/targets.py`), so
this window only remains for a moment outside the stored footage. Questions without targets
have no tIoU (None).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

POINT_WINDOW = 30.0
"""Seconds a moment target outside the stored footage stands for: one EgoLife clip."""

def accuracy(correct: Sequence[bool]) -> float:
    return sum(correct) / len(correct) if correct else 0.0


def per_category(rows: Iterable[tuple[Sequence[str], bool]]) -> dict[str, tuple[int, int]]:
    """category → (correct, total); a question with several tags counts once in each."""
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for categories, correct in rows:
        for category in dict.fromkeys(categories):
            table[category][0] += int(correct)
            table[category][1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(table.items())}


Span = tuple[float, float]


def temporal_iou(
    evidence: Sequence[tuple[str | None, float, float]],
    targets: Sequence[Span],
    video_id: str | None = None,
    point_window: float = POINT_WINDOW,
) -> float | None:
    """tIoU of evidence (video_id, t_start, t_end) with the targets of a question.

    `video_id` is the question's video (None on a single corpus timeline such as EgoLife, where
    every evidence range is comparable with the targets).
    """
    if not targets:
        return None
    half = point_window / 2
    target = _union([(a - half, b + half) if b <= a else (a, b) for a, b in targets])
    same, other = [], []
    for vid, start, end in evidence:
        (same if video_id is None or vid == video_id else other).append((start, end))
    mine = _union(same)
    inter = _length(_intersection(mine, target))
    union = _length(_union(mine + target)) + _length(_union(other))
    return inter / union if union > 0 else 0.0


def _union(spans: Iterable[Span]) -> list[Span]:
    merged: list[list[float]] = []
    for start, end in sorted((a, b) for a, b in spans if b > a):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b) for a, b in merged]


def _intersection(first: list[Span], second: list[Span]) -> list[Span]:
    out, i, j = [], 0, 0
    while i < len(first) and j < len(second):
        start, end = max(first[i][0], second[j][0]), min(first[i][1], second[j][1])
        if end > start:
            out.append((start, end))
        if first[i][1] < second[j][1]:
            i += 1
        else:
            j += 1
    return out


def _length(spans: Iterable[Span]) -> float:
    return sum(b - a for a, b in spans)
