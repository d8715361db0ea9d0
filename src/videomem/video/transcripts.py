"""Transcripts: read .srt / .vtt subtitles and JSON transcripts, and hand each clip its speech.

Formats:

* `.srt` and `.vtt` — read with pysubs2; styling tags are dropped, lines joined with a space.
* `.json` — a list of segments, each `{"start": 12.0, "end": 15.5, "text": "...",
  "speaker": "Jake"}` (speaker optional). Also accepted: the same list under a `"segments"`
  key (Whisper's output), and EgoLife-style keys `start_time` / `end_time`.

Times are seconds from the start of the video file, given as numbers or as "HH:MM:SS(.s)" /
"MM:SS" strings. Two forms are clock times instead, as EgoLife writes them: "DAYn HH:MM:SS"
(a time on the corpus week) and a bare "HHMMSSFF" (a time of day); they are turned into file
time by subtracting the video's own start (`video_start`, its corpus offset).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pysubs2
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from videomem.errors import TimeFormatError, TranscriptError
from videomem.evidence import Speech
from videomem.timeline import DAY, parse_time
from videomem.video.clips import ClipSpan

SPEECH_ONLY = "(speech, not transcribed)"
"""Text of a transcript line that only says someone spoke (voice activity, no speech model)."""
SPEECH_ONLY_SENTENCE = "Someone speaks; the words were not transcribed."
"""How an offline caption says so (for people reading it: readers take heard-only speech from
the typed `Evidence.speech`, not from this sentence)."""



def transcript_text(lines: Sequence[Speech]) -> str:
    """Typed transcript lines as one text, in their order, each line with its speaker when known;
    back-to-back lines that only say someone spoke (`transcribed` false) read as one."""
    shown = [
        f"{line.speaker}: {line.text}" if line.speaker else line.text
        for i, line in enumerate(lines)
        if line.transcribed or not i or lines[i - 1].transcribed
    ]
    return " ".join(shown)


_DAY_FORM = re.compile(r"^\s*DAY\d+", re.IGNORECASE)
_CODE_FORM = re.compile(r"^\s*\d{8}\s*$")


@dataclass(frozen=True)
class Segment:
    """One stretch of speech, in file seconds."""

    t_start: float
    t_end: float
    text: str
    speaker: str | None = None


class _JsonSegment(BaseModel):
    model_config = ConfigDict(extra="ignore")

    start: float | str = Field(validation_alias=AliasChoices("start", "start_time"))
    end: float | str = Field(validation_alias=AliasChoices("end", "end_time"))
    text: str
    speaker: str | None = None


def _file_time(value: float | str, video_start: float) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    if _DAY_FORM.match(value):
        return parse_time(value) - video_start
    if _CODE_FORM.match(value):
        return parse_time(value) - video_start % DAY
    return parse_time(value)


@dataclass(frozen=True)
class Cue:
    """One subtitle cue as written: file seconds and its text lines (styling tags dropped)."""

    t_start: float
    t_end: float
    lines: tuple[str, ...]


def subtitle_cues(path: Path) -> list[Cue]:
    """The cues of an .srt / .vtt file that hold any text, in file order."""
    try:
        subs = pysubs2.load(str(path), encoding="utf-8-sig", format_=path.suffix.lower().lstrip("."))
    except (pysubs2.exceptions.Pysubs2Error, UnicodeDecodeError, ValueError) as exc:
        raise TranscriptError(f"{path}: not a readable subtitle file ({' '.join(str(exc).split())})") from None
    if not subs.events and path.read_text(encoding="utf-8-sig", errors="replace").strip():
        raise TranscriptError(f"{path}: no subtitle cues found (expected 'HH:MM:SS,mmm --> HH:MM:SS,mmm' lines)")
    cues = []
    for event in subs.events:
        lines = tuple(" ".join(line.split()) for line in event.plaintext.splitlines())
        if any(lines) and not event.is_comment:
            cues.append(Cue(event.start / 1000.0, event.end / 1000.0, tuple(line for line in lines if line)))
    return cues


def _load_subtitles(path: Path) -> list[Segment]:
    return [Segment(c.t_start, c.t_end, " ".join(c.lines)) for c in subtitle_cues(path)]


def read_json(path: Path) -> Any:
    """A JSON file's content; an unreadable one is a one-line TranscriptError naming it."""
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise TranscriptError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})") from None
    except UnicodeDecodeError:
        raise TranscriptError(f"{path}: not a UTF-8 text file") from None


def json_segments(path: Path, items: list, what: str, parse: Callable[[Any], Segment]) -> list[Segment]:
    """Each item of a JSON list read by `parse` (pydantic validation, time forms), in file order;
    a bad item is a one-line TranscriptError naming the file, the item (`what` i) and the field.
    Items with no text are left out; texts have their whitespace squashed."""
    segments = []
    for i, raw in enumerate(items):
        try:
            segment = parse(raw)
        except ValidationError as err:
            first = err.errors()[0]
            key = ".".join(str(p) for p in first["loc"]) or what
            raise TranscriptError(f"{path}: {what} {i}: {key}: {first['msg']}") from None
        except TimeFormatError as exc:
            raise TranscriptError(f"{path}: {what} {i}: {exc}") from None
        if segment.t_end < segment.t_start:
            raise TranscriptError(
                f"{path}: {what} {i}: ends ({segment.t_end:g}s) before it starts ({segment.t_start:g}s)"
            )
        text = " ".join(segment.text.split())
        if text:
            segments.append(Segment(segment.t_start, segment.t_end, text, segment.speaker))
    return segments


def _load_json(path: Path, video_start: float) -> list[Segment]:
    data = read_json(path)
    if isinstance(data, dict) and isinstance(data.get("segments"), list):
        data = data["segments"]
    if not isinstance(data, list):
        raise TranscriptError(f"{path}: expected a list of segments (or {{'segments': [...]}}), got {type(data).__name__}")

    def parse(raw: Any) -> Segment:
        item = _JsonSegment.model_validate(raw)
        start, end = _file_time(item.start, video_start), _file_time(item.end, video_start)
        return Segment(start, end, item.text, item.speaker or None)

    return json_segments(path, data, "segment", parse)


def load_transcript(path: str | Path, *, video_start: float = 0.0) -> list[Segment]:
    """Segments sorted by start time; any problem with the file is a one-line TranscriptError."""
    path = Path(path)
    if not path.is_file():
        raise TranscriptError(f"{path}: no such transcript file")
    suffix = path.suffix.lower()
    if suffix in (".srt", ".vtt"):
        segments = _load_subtitles(path)
    elif suffix == ".json":
        segments = _load_json(path, video_start)
    else:
        raise TranscriptError(f"{path}: unknown transcript format {suffix!r}; use .srt, .vtt or .json")
    return sorted(segments, key=lambda s: (s.t_start, s.t_end))


def align(segments: Sequence[Segment], clips: Sequence[ClipSpan]) -> dict[int, list[Segment]]:
    """Clip index → segments that overlap it. A segment spanning several clips goes to each, so
    every clip's memory has all the speech heard during it."""
    by_clip: dict[int, list[Segment]] = {c.index: [] for c in clips}
    if not clips:
        return by_clip
    starts = [c.t_start for c in clips]
    for seg in segments:
        i = max(0, bisect.bisect_right(starts, seg.t_start) - 1)
        while i < len(clips) and clips[i].t_start <= seg.t_end:
            clip = clips[i]
            instant_inside = seg.t_start == seg.t_end and clip.t_start <= seg.t_start <= clip.t_end
            if seg.t_start < clip.t_end and seg.t_end > clip.t_start or instant_inside:
                by_clip[clip.index].append(seg)
                if instant_inside:
                    break
            i += 1
    return by_clip
