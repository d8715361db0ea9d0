"""What a store holds, in one place: `videomem info` prints it, the server's `/info` returns it.

Memories come from the registry, so a memory registered later shows up here (and in both
views) with the sizes its `stats()` reports. Counting rows loads no model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from videomem.memory.registry import MEMORIES, open_memory
from videomem.models.registry import ModelSet
from videomem.store import Store
from videomem.store.clips import timeline_kind


@dataclass(frozen=True)
class StoreSummary:
    videos: list[dict[str, Any]]
    """id, duration, t_offset (corpus seconds where the video starts), in id order."""
    clips: int
    transcripts: dict[str, int]
    """Transcript lines per source (sidecar, egolifecap, asr, vad, ...)."""
    transcript_clips: dict[str, int]
    """Clips with at least one transcript line, per source: how much of the footage each covers."""
    stages: dict[str, int]
    """Units done per stage."""
    failures: list[dict[str, Any]]
    """Units whose model output stayed unusable (stage, unit, error, reply, attempts); the next
    ingest retries them."""
    memories: dict[str, dict[str, int]]
    """Memory name → its `stats()`, in registry order."""
    timeline: str
    """'single' (every video starts at 0) or 'egolife' (videos on a week)."""

    @property
    def hours(self) -> float:
        return sum(v["duration"] for v in self.videos) / 3600


def summarize(store: Store, models: ModelSet) -> StoreSummary:
    videos = [dict(r) for r in store.query("SELECT id, duration, t_offset FROM videos ORDER BY id")]
    return StoreSummary(
        videos=videos,
        clips=store.query("SELECT COUNT(*) AS n FROM clips")[0]["n"],
        transcripts={
            r["source"]: r["n"]
            for r in store.query("SELECT source, COUNT(*) AS n FROM transcripts GROUP BY source ORDER BY source")
        },
        transcript_clips={
            r["source"]: r["n"]
            for r in store.query(
                "SELECT source, COUNT(DISTINCT clip_id) AS n FROM transcripts GROUP BY source ORDER BY source"
            )
        },
        stages=dict(sorted(store.stage_counts().items())),
        failures=[dict(r) for r in store.failures()],
        memories={name: open_memory(name, store, models).stats() for name in MEMORIES},
        timeline=timeline_kind(store),
    )
