"""WorldMM's released EgoLife captions (`data/EgoLife/caption.zip` in WorldMM's repository).

One JSON file per person and time scale, named `<person>_<scale>.json`:

    A1_JAKE_30sec.json  A1_JAKE_3min.json  A1_JAKE_10min.json  A1_JAKE_1h.json

each a list of `{"start_time": "HHMMSSFF", "end_time": "HHMMSSFF", "text": "...", "date":
"DAY1", "video_path": "..."}`, in English and the first person. The 30-s file holds the clip
captions; the coarser ones are WorldMM's own episodic captions of those scales, imported as they
are (pipeline/imports.py), not summarised again. Times are clock times of the entry's day; frame
digits of 20 or more are read inside their second as EgoLifeQA's are (`timeline.frame_offset`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from videomem.errors import TimeFormatError, TranscriptError
from videomem.timeline import egolife_code_to_seconds
from videomem.video.transcripts import Segment, json_segments, read_json

SOURCE = "worldmm"
"""How rows imported from these files are marked in the store (`events.source`)."""
CLIP_SCALE = 30.0
SCALES = {"30sec": CLIP_SCALE, "3min": 180.0, "10min": 600.0, "1h": 3600.0}
"""File name suffix → the scale it holds, in seconds."""
_NAME = re.compile(rf"^(.*)_({'|'.join(SCALES)})\.json$")
_DAY = re.compile(r"^DAY(\d+)$", re.IGNORECASE)


class _Entry(BaseModel):
    model_config = ConfigDict(extra="ignore")

    start_time: str
    end_time: str
    text: str
    date: str


def caption_files(path: str | Path) -> dict[float, Path] | None:
    """Scale → file of WorldMM's captions at `path` (a folder holding `<person>_30sec.json`, or
    that file, its siblings beside it); None when `path` is not in that layout. Two people's
    files side by side are an error naming both."""
    path = Path(path)
    folder = path.parent if path.is_file() else path
    if path.is_file() and not _NAME.match(path.name) or not folder.is_dir():
        return None
    found: dict[float, Path] = {}
    people: dict[str, Path] = {}
    for candidate in sorted(folder.glob("*.json")):
        m = _NAME.match(candidate.name)
        if m:
            people.setdefault(m.group(1), candidate)
            found[SCALES[m.group(2)]] = candidate
    if len(people) > 1:
        first, second = list(people.values())[:2]
        raise TranscriptError(f"{first} and {second}: WorldMM captions of two people in one folder; pass one person's files")
    if CLIP_SCALE not in found:
        return None
    return found


def read_captions(path: Path) -> list[Segment]:
    """The entries of one file as segments in corpus seconds, sorted by start; a problem with
    the file is a one-line TranscriptError naming it and the entry."""
    data = read_json(path)
    if not isinstance(data, list):
        raise TranscriptError(f"{path}: expected a list of captions, got {type(data).__name__}")

    def parse(raw: Any) -> Segment:
        entry = _Entry.model_validate(raw)
        day = _DAY.match(entry.date.strip())
        if not day or int(day.group(1)) < 1:
            raise TimeFormatError(f"date: {entry.date!r} is not DAYn")
        n = int(day.group(1))
        return Segment(egolife_code_to_seconds(entry.start_time, n), egolife_code_to_seconds(entry.end_time, n), entry.text)

    return sorted(json_segments(path, data, "entry", parse), key=lambda s: (s.t_start, s.t_end))
