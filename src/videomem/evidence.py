"""Evidence: what every memory and tool returns, so every answer can be checked against the video."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Speech:
    """One stored transcript line inside an evidence item's time range."""

    t_start: float
    t_end: float
    text: str
    speaker: str | None = None
    """Who said it, when the transcript names the speaker (EgoLife's transcripts do)."""
    transcribed: bool = True
    """False for speech that was only heard (voice activity, no speech model): its words are unknown."""


@dataclass(frozen=True)
class Span:
    """One stretch of time an evidence item stands for, and what was recorded in it."""

    t_start: float
    t_end: float
    text: str = ""

    @property
    def duration(self) -> float:
        return self.t_end - self.t_start


@dataclass(frozen=True)
class Count:
    """How many separate intervals of one event a memory found (a run of consecutive windows
    counts once), as far as the question may see."""

    what: str
    """The event counted, as the memory names it ("alice pick up cup")."""
    n: int


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
    object's sightings, the first few moments that support a semantic fact and its latest. A
    reader counts or places them from here, not from the prose."""
    speech: tuple[Speech, ...] = ()
    """The transcript lines said within it, in time order: who spoke and whether the words were
    transcribed. A reader takes speaker and heard-only speech from here, not from the prose."""
    intervals: tuple[Span, ...] = ()
    """The stretches of time inside it, each with what was recorded then (timeline memory: the
    run of consecutive windows of one activity; episodic memory: a coarse window's finer
    captions). Empty: the item's own range is its one interval (`spans`). A reader counts and
    measures how long from here, not from the prose."""
    counts: tuple[Count, ...] = ()
    """Counts a memory computed for the events it is about (timeline memory): a reader takes a
    count from here before counting the items it was given."""

    def spans(self) -> tuple[Span, ...]:
        """Its intervals, or its own range as its one interval."""
        return self.intervals or (Span(self.t_start, self.t_end, self.text),)

    def to_json(self) -> dict:
        return {
            **asdict(self),
            "frames": list(self.frames),
            "moments": [list(m) for m in self.moments],
            "speech": [asdict(line) for line in self.speech],
            "intervals": [asdict(span) for span in self.intervals],
            "counts": [asdict(count) for count in self.counts],
        }
