"""Evidence: what every memory and tool returns, so every answer can be checked against the video."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Evidence:
    t_start: float
    t_end: float
    text: str
    source: str
    score: float
    video_id: str

    def to_json(self) -> dict:
        return asdict(self)
