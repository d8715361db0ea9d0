"""EgoLifeCap: the EgoLife release's own dense captions and transcripts, on the corpus timeline.

The release ships, per person and day, one `.srt` file per hour of footage:

    EgoLifeCap/DenseCaption/A1_JAKE/DAY1/DAY1_A1_JAKE_11000000.srt   captions (Chinese)
    EgoLifeCap/Transcript/A1_JAKE/DAY1/DAY1_A1_JAKE_11000000.srt     speech (bilingual cues)

The hour is the first two digits of the last `_` field of the file name; the day is the `DAYn`
in the file name, or else the name of its folder. Cue times count from the start of that hour
and may run past it (a cue at 00:59:58 → 01:00:03 of the 11 o'clock file ends at 12:00:03).
A caption cue is its text, lines joined; a transcript cue holds the same words in two
languages, the English line last, and that line is its text. Every line of a transcript cue
starts with its speaker (`Jake: 好然后一个秒表` / `Jake: Okay, then we need a stopwatch.`;
the name is written in each line's language, `其他人` / `Others`): the name before the colon
of the English line is the cue's speaker, kept apart from its text.

A directory is searched recursively, so pass one person's folder (`DenseCaption/A1_JAKE`): two
files for the same day and hour — two people under one root — are an error naming both.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from videomem.errors import TranscriptError
from videomem.timeline import DAY
from videomem.video.transcripts import Segment, subtitle_cues

SOURCE = "egolifecap"
"""How rows imported from these files are marked in the store (`events.source`, `transcripts.source`)."""
Kind = Literal["captions", "transcripts"]

_DAY = re.compile(r"DAY(\d+)", re.IGNORECASE)
_HOUR = re.compile(r"^(\d{2})")
_SPEAKER = re.compile(r"^([^:：\s][^:：]{0,39}?)\s*[:：]\s*(.*)$")


@dataclass(frozen=True)
class HourFile:
    """One EgoLifeCap file and the day and hour its cue times count from."""

    path: Path
    day: int
    hour: int

    @property
    def start(self) -> float:
        """Corpus seconds at which this file's cue times start."""
        return (self.day - 1) * DAY + self.hour * 3600


def hour_files(directory: str | Path) -> list[HourFile]:
    """Every .srt under `directory`, placed by day and hour; a bad name or a duplicate hour is a
    one-line TranscriptError naming the file(s)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise TranscriptError(f"{directory}: no such directory")
    files = sorted(p for p in directory.rglob("*") if p.is_file() and p.suffix.lower() == ".srt")
    if not files:
        raise TranscriptError(f"{directory}: holds no .srt files (expected EgoLifeCap's DAYn/*.srt)")
    placed: dict[tuple[int, int], HourFile] = {}
    for path in files:
        day = _DAY.search(path.stem) or _DAY.fullmatch(path.parent.name)
        if not day or int(day.group(1)) < 1:
            raise TranscriptError(f"{path}: no DAYn in the file name or its folder name")
        hour = _HOUR.match(path.stem.rsplit("_", 1)[-1])
        if not hour or int(hour.group(1)) > 23:
            raise TranscriptError(f"{path}: the last '_' field of the name does not start with an hour (00-23)")
        found = HourFile(path, int(day.group(1)), int(hour.group(1)))
        key = (found.day, found.hour)
        if key in placed:
            raise TranscriptError(
                f"{placed[key].path} and {path}: two files for DAY{found.day} hour {found.hour:02d}; "
                "pass one person's folder"
            )
        placed[key] = found
    return sorted(placed.values(), key=lambda f: f.start)


def read_egolifecap(files: list[HourFile], kind: Kind) -> list[Segment]:
    """The cues of these files as segments in corpus seconds, sorted by start; a transcript
    cue's speaker is its segment's `speaker`."""
    segments = []
    for f in files:
        for cue in subtitle_cues(f.path):
            if kind == "transcripts":
                speaker, text = split_speaker(cue.lines)
            else:
                speaker, text = None, " ".join(cue.lines)
            if text:
                segments.append(Segment(f.start + cue.t_start, f.start + cue.t_end, text, speaker))
    return sorted(segments, key=lambda s: (s.t_start, s.t_end))


def split_speaker(lines: tuple[str, ...]) -> tuple[str | None, str]:
    """(speaker, text) of a transcript cue: its last (English) line, split at the colon after the
    speaker's name (at most 40 characters, no colon in it); None when that line names nobody."""
    head = _SPEAKER.match(lines[-1])
    return (head.group(1), head.group(2).strip()) if head else (None, lines[-1])


def person_of(stem: str) -> str:
    """The person a release file belongs to, from its name: `A1_JAKE_DAY1_11000000`,
    `DAY1_A1_JAKE_11000000` and `A1_JAKE_30sec` → `A1_JAKE` (the `DAYn` field and the last field
    dropped); '' when nothing is left."""
    fields = stem.split("_")[:-1]
    return "_".join(f for f in fields if not _DAY.fullmatch(f))


def grid_windows(segments: Sequence[Segment], seconds: float) -> list[float]:
    """Starts of the windows [k·seconds, (k+1)·seconds) of the corpus timeline that some segment
    overlaps (an instant: the window holding it), sorted: the clips of a store built from
    captions alone, on the grid the release's own 30-s files follow."""
    starts: set[int] = set()
    for s in segments:
        first = math.floor(s.t_start / seconds)
        last = max(first, math.ceil(s.t_end / seconds) - 1)
        starts.update(range(first, last + 1))
    return [k * seconds for k in sorted(starts)]
