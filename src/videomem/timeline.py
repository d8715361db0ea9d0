"""Corpus time.

Inside the code, time is float seconds on the corpus timeline. A single video starts at 0. An
EgoLife corpus is a week: day n starts at (n - 1) * 86400, and a file's start comes from its
name (`DAY1_A1_JAKE_11094208.mp4` is day 1, 11:09:42, frame 08 at 20 fps). Text forms exist
only at the edges: "DAY1 11:09:42", "HH:MM:SS", "MM:SS", EgoLife "HHMMSSFF".
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from videomem.errors import TimeFormatError

DAY = 86400.0
EGOLIFE_FPS = 20
_FRAME_DIGITS = 100
TimelineKind = Literal["single", "egolife"]
UNTIL_SLACK = 1e-6
"""Query-time rule: a memory is usable only if it was fully recorded by `until`, that is
t_end <= until + UNTIL_SLACK (the slack absorbs float noise of times built from frames)."""

MAX_TIME_CHARS = 64
"""Longest time text taken ("DAY7 23:59:59.999" is 17 characters)."""

_EGOLIFE_NAME = re.compile(r"DAY(\d+)_.*?_(\d{8})$", re.IGNORECASE)
_DAY_CLOCK = re.compile(r"^DAY ?(\d+)[ _T]+(.+)$", re.IGNORECASE)
_CLOCK = re.compile(r"^(?:(\d+):)?(\d{1,2}):(\d{1,2}(?:\.\d+)?)$")
_HHMMSSFF = re.compile(r"^(\d{2})(\d{2})(\d{2})(\d{2})$")
_RANGE = re.compile(r"^(.+?)\s*(?:-|–|—|\s+to\s+)\s*(.+)$", re.IGNORECASE)
_TIME_IN_TEXT = r"(?:DAY\d+[ _])?\d+(?::\d{1,2}){0,2}(?:\.\d+)?"
_RANGE_IN_TEXT = re.compile(rf"({_TIME_IN_TEXT})\s*s?\s*(?:-|–|—|to)\s*({_TIME_IN_TEXT})", re.IGNORECASE)


def egolife_code_to_seconds(code: str, day: int = 1) -> float:
    """EgoLife 'HHMMSSFF' (FF = frame at 20 fps) on day `day` → corpus seconds.

    The EgoLifeQA release also writes frame digits 20–99 (query times 21044820, 21044821, …
    for questions asked in that order). They are read inside their second, after its last
    frame and in their order (`frame_offset`), so times compare as their digits do — as
    WorldMM's evaluation compares them — and never spill into the next second.
    """
    m = _HHMMSSFF.match(code.strip())
    if not m:
        raise TimeFormatError(f"{code!r} is not an EgoLife HHMMSSFF time")
    hh, mm, ss, ff = (int(g) for g in m.groups())
    if hh > 23 or mm > 59 or ss > 59:
        raise TimeFormatError(f"{code!r} is out of range for HHMMSSFF")
    if day < 1:
        raise TimeFormatError(f"day {day} is out of range (days start at DAY1)")
    return (day - 1) * DAY + hh * 3600 + mm * 60 + ss + frame_offset(ff)


def frame_offset(ff: int) -> float:
    """Seconds into its second of frame digits 0–99: frame ff at 20 fps below 20; from 20 on,
    evenly between the last frame (19/20 s) and the next second, which 99 stays short of."""
    if ff < EGOLIFE_FPS:
        return ff / EGOLIFE_FPS
    past = (ff - EGOLIFE_FPS + 1) / (_FRAME_DIGITS - EGOLIFE_FPS + 1)
    return (EGOLIFE_FPS - 1 + past) / EGOLIFE_FPS


def _clock_to_seconds(text: str) -> float:
    m = _CLOCK.match(text)
    if not m:
        raise TimeFormatError(f"{text!r} is not a time (HH:MM:SS, MM:SS, DAY1 11:09:42, HHMMSSFF or seconds)")
    hours, minutes, seconds = m.groups()
    if hours is not None and int(minutes) > 59 or float(seconds) >= 60:
        raise TimeFormatError(f"{text!r} has minutes or seconds out of range")
    return int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)


def parse_time(text: str | float | int) -> float:
    """Any accepted time form → corpus seconds.

    Accepted: seconds ("95", "95.5"), "MM:SS", "HH:MM:SS", "DAY2 11:09:42", "DAY2_11094208",
    and a bare EgoLife "HHMMSSFF" (day 1).
    """
    if isinstance(text, (int, float)):
        if not math.isfinite(text):
            raise TimeFormatError(f"time {text} is not a finite number")
        if text < 0:
            raise TimeFormatError(f"time {text} is negative")
        return float(text)
    raw = text.strip()
    if len(raw) > MAX_TIME_CHARS:
        raise TimeFormatError(f"{raw[:20] + '...'!r} is too long to be a time")
    day_match = _DAY_CLOCK.match(raw)
    if day_match:
        day, rest = int(day_match.group(1)), day_match.group(2).strip()
        if day < 1:
            raise TimeFormatError(f"{text!r}: days start at DAY1")
        if _HHMMSSFF.match(rest):
            return egolife_code_to_seconds(rest, day)
        return (day - 1) * DAY + _clock_to_seconds(rest)
    if _HHMMSSFF.match(raw):
        return egolife_code_to_seconds(raw)
    try:
        value = float(raw)
    except ValueError:
        return _clock_to_seconds(raw)
    if not math.isfinite(value):
        raise TimeFormatError(f"time {text!r} is not a finite number")
    if value < 0:
        raise TimeFormatError(f"time {text!r} is negative")
    return value


def _seconds(value: Any) -> Any:
    """A time as a tool call gives it: a number or clock text, as observations print it."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        try:
            return parse_time(value)
        except TimeFormatError as exc:
            raise ValueError(str(exc)) from None
    return value


TimeArgument = Annotated[
    float,
    BeforeValidator(_seconds, json_schema_input_type=float | str),
    Field(description="corpus time: seconds, HH:MM:SS, or DAYn HH:MM:SS as observations print it"),
]
"""A corpus time in a tool's arguments (validated by pydantic): seconds or any text `parse_time` reads."""


def parse_range(text: str) -> tuple[float, float] | None:
    """A time range → (start, end) corpus seconds, or None when `text` is not one.

    Accepted: two times in any `parse_time` form joined by "-", "–", "—" or "to":
    "DAY1 11:00:00 - DAY1 11:02:00", "00:10:00 - 00:12:00", "600-720". An end without a day
    is on the start's day ("DAY1 11:00:00 - 11:02:00"). A range that ends before it starts
    is an error, not a text.
    """
    match = _RANGE.match(text.strip())
    span = _span(match.group(1).strip(), match.group(2).strip()) if match else None
    if span is not None and span[1] < span[0]:
        raise TimeFormatError(f"{text.strip()!r}: the range ends before it starts")
    return span


def ranges_in(text: str) -> Iterator[tuple[float, float]]:
    """Every time range written inside a longer text (a tool's observation), in order, as
    (start, end) corpus seconds: two times joined as `parse_range` joins them, where a count of
    seconds may carry an "s" ("600s - 720s"). Unlike `parse_range`, a backwards pair is passed
    on for the caller to judge, not raised."""
    for match in _RANGE_IN_TEXT.finditer(text):
        span = _span(match.group(1), match.group(2))
        if span is not None:
            yield span


def _span(first: str, second: str) -> tuple[float, float] | None:
    """Two written times → seconds, or None when either is not a time. An end without a day is
    on the start's day ("DAY2 11:00:00 - 11:02:00")."""
    day = _DAY_CLOCK.match(first)
    if day and not _DAY_CLOCK.match(second):
        second = f"DAY{day.group(1)} {second}"
    try:
        return parse_time(first), parse_time(second)
    except TimeFormatError:
        return None


def format_clock(seconds: float) -> str:
    """Seconds → "HH:MM:SS" (hours may exceed 23 for long single videos)."""
    total = int(round(max(seconds, 0.0)))
    return f"{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}"


def format_day(seconds: float) -> str:
    """Seconds on a week timeline → "DAY1 11:09:42"."""
    day = int(seconds // DAY)
    return f"DAY{day + 1} {format_clock(seconds - day * DAY)}"


def format_egolife(seconds: float) -> tuple[str, str]:
    """Seconds → ("DAYn", "HHMMSSFF") as EgoLifeQA writes query times."""
    day = int(seconds // DAY)
    rest = seconds - day * DAY
    # The nearest frame, but never one of the next second (a time read from frame digits
    # past 19 lies closer to it).
    frames = min(int(round(rest * EGOLIFE_FPS)), int(rest + UNTIL_SLACK) * EGOLIFE_FPS + EGOLIFE_FPS - 1)
    hh, rem = divmod(frames, 3600 * EGOLIFE_FPS)
    mm, rem = divmod(rem, 60 * EGOLIFE_FPS)
    ss, ff = divmod(rem, EGOLIFE_FPS)
    return f"DAY{day + 1}", f"{hh:02d}{mm:02d}{ss:02d}{ff:02d}"


def format_time(seconds: float, kind: TimelineKind = "single") -> str:
    """The text form users of that kind of corpus read."""
    return format_day(seconds) if kind == "egolife" else format_clock(seconds)


def egolife_start(path: str | Path) -> float:
    """Corpus start of an EgoLife file from its name: DAY1_A1_JAKE_11094208.mp4 → 40182.4."""
    stem = Path(path).stem
    m = _EGOLIFE_NAME.search(stem)
    if not m:
        raise TimeFormatError(
            f"{Path(path).name}: not an EgoLife file name (expected DAYn_..._HHMMSSFF.mp4)"
        )
    return egolife_code_to_seconds(m.group(2), int(m.group(1)))


_DAY_PART = re.compile(r"(?:^|_)DAY\d+(?=_|$)", re.IGNORECASE)
_CODE_PART = re.compile(r"(?:^|_)\d{8}(?=_|$)")


def clock_of(video_id: str) -> str:
    """The clock a video's times are read on. An EgoLife corpus is one week on one clock, so its
    files (DAY1_A1_JAKE_11094208) and the hours of a caption-only ingest (A1_JAKE_DAY1_11000000)
    share their participant's, named by what is left of the name without its day and time; any
    other video starts at 0 on a clock of its own. Two items compare in time only on one clock."""
    if not (_DAY_PART.search(video_id) and _CODE_PART.search(video_id)):
        return video_id
    return _CODE_PART.sub("", _DAY_PART.sub("", video_id)).strip("_")


class TimeText:
    """Formats corpus seconds the way users of a store read them (`store.clips.timeline_kind`)."""

    def __init__(self, kind: TimelineKind) -> None:
        self.kind = kind

    def __call__(self, seconds: float) -> str:
        return format_time(seconds, self.kind)

    def span(self, t_start: float, t_end: float) -> str:
        return f"{self(t_start)}-{self(t_end)}"
