"""Evidence: what every memory and tool returns, so every answer can be checked against the video."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Evidence:
    t_start: float
    t_end: float
    text: str
    source: str
    """What produced it: a memory's entry kind ("event", "object", ...) or a tool ("qa")."""
    score: float
    video_id: str
    scale: float | None = None
    """Seconds per window of the time scale it comes from, for memories with several scales."""
    frames: tuple[str, ...] = ()
    """Stored frames behind it (paths relative to the store root), for thumbnails and VLM calls."""
    moments: tuple[tuple[float, float, str], ...] = ()
    """The separate moments it stands for, each (start, end, what was recorded then): an
    object's sightings. A reader counts or places them from here, not from the prose."""

    def to_json(self) -> dict:
        return {**asdict(self), "frames": list(self.frames), "moments": [list(m) for m in self.moments]}
