"""Clip planner: cut a video into fixed-length clips and place the frames to sample in each.

TeleMem's unit of memory is a 10-s clip with 2 frames. The last clip is usually shorter; it is
kept, because the end of a video often holds what a question asks about. A sliver shorter than
`MIN_TAIL` seconds (rounding in container durations routinely leaves one) is not a clip of its
own: it joins the clip before it. A video shorter than one clip is one clip.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from videomem.video.decode import FrameRequest

MIN_TAIL = 0.5
"""Seconds: a trailing fragment shorter than this joins the previous clip."""
_BOUNDARY = 1e-3
"""Seconds kept clear of the end of a frame's sub-interval: far less than any frame interval."""


@dataclass(frozen=True)
class ClipSpan:
    """One clip of one video, in file seconds."""

    index: int
    t_start: float
    t_end: float

    @property
    def duration(self) -> float:
        return self.t_end - self.t_start

    def frame_times(self, n: int) -> list[float]:
        """Centres of n equal sub-intervals, so frames cover the clip evenly and never sit on its edges."""
        width = self.duration / n
        return [self.t_start + (k + 0.5) * width for k in range(n)]

    def frame_requests(self, n: int, tolerance: float) -> list[FrameRequest]:
        """Each frame may move up to `tolerance` seconds, but never out of its own sub-interval
        (half-open: a frame exactly on a boundary belongs to the later one), so no keyframe is
        sampled twice and no frame leaves its clip."""
        width = self.duration / n
        requests = []
        for k, t in enumerate(self.frame_times(n)):
            lo = max(t - tolerance, self.t_start + k * width)
            hi = min(t + tolerance, self.t_start + (k + 1) * width - _BOUNDARY)
            requests.append(FrameRequest(t, lo, hi) if tolerance > 0 else FrameRequest.at(t))
        return requests


def plan_clips(duration: float, clip_seconds: float, min_tail: float = MIN_TAIL) -> list[ClipSpan]:
    """Consecutive clips of `clip_seconds` covering [0, duration]; the last one may be shorter
    (or longer by less than `min_tail`)."""
    if duration <= 0:
        raise ValueError(f"duration must be positive, got {duration}")
    if clip_seconds <= 0:
        raise ValueError(f"clip_seconds must be positive, got {clip_seconds}")
    n = max(1, math.ceil(duration / clip_seconds - 1e-9))
    if n > 1 and duration - (n - 1) * clip_seconds < min_tail:
        n -= 1
    return [ClipSpan(i, i * clip_seconds, duration if i == n - 1 else (i + 1) * clip_seconds) for i in range(n)]
