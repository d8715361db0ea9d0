"""Clock times a question names, and the stretches between them, as corpus seconds.

A clock time without a day is ambiguous: "10:30" is a place in a half-hour video but half past
ten in a week of footage. The question alone cannot tell, so these readers take the evidence
found so far and read a time as the one the evidence lies near (`of_day`, `CLOCK_REACH`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from videomem.errors import TimeFormatError
from videomem.evidence import Evidence
from videomem.models.offline.daytime import spoken_clocks, without_named_days
from videomem.models.offline.position import recording_window
from videomem.timeline import DAY, parse_time

CLOCK_REACH = 3600.0
"""Seconds from the evidence within which a clock time may fall on the reading (a place in the
recording or a time of day) that it is read as (`of_day`)."""

CLOCK = re.compile(r"\b(?:DAY\d+[ _])?\d{1,2}:\d{2}(?::\d{2})?\b", re.IGNORECASE)
"""A clock time in digits, with its day where one is written ("10:30", "14:05:10", "DAY2 10:30")."""
_JOIN = re.compile(r"\s*(?:-|\u2013|\u2014|and|to|until|till|through)\s*", re.IGNORECASE)
_NOON = re.compile(r"\b(?:noon|midday|midnight)\b", re.IGNORECASE)
_FROM = re.compile(r"\bfrom\s+(?:just\s+)?$", re.IGNORECASE)
_ON = re.compile(r"\s+(?:on|onwards?)\b", re.IGNORECASE)
_SINCE = re.compile(r"\bsince\s+(?:just\s+)?$", re.IGNORECASE)
_PLACES_JOINED = re.compile(r"\b(?:between|from)\s+(.+?)\s+(?:and|to|until|till|through)\s+(.+?)(?=\s*[,?.!;]|$)",
                            re.IGNORECASE)
"""What joins two clock times into the stretch between them ("12:00 and 15:00", "9:30-11:00")."""


def question_times(question: str, day: tuple[float, float] | None = None, evidence: Sequence[Evidence] = ()) -> list[float]:
    """Clock times written in a question ('What happens at 12:35?'), as corpus seconds. On a day
    the question names (`day`, `daytime.question_window`) a time without a day is on that day,
    and one of two parts is hours and minutes ('at 10:00 on the second day'), not a video's
    minutes and seconds. Without a named day a time is a place in the recording ('at 04:10'),
    unless no `evidence` lies near that place and some lies near the time of day it reads as
    (`of_day`): then it is that time on each day the evidence is near it ('at 11:01' in a day's
    footage that starts at 08:00). A time of day said in words ("a quarter past three", "4 pm",
    `daytime.spoken_clocks`) is a time of day only, on the named day or on each day the
    evidence is near it. A place in the recording said in words ("at the 23-minute mark",
    "around minute 20", `position.recording_window`) is the middle of the stretch it names."""
    out = []
    spoken = spoken_clocks(question)
    for match in CLOCK.finditer(question):
        if any(a < match.end() and match.start() < b for (a, b), _ in spoken):
            continue  # "10:30 a.m.": read as said, below
        text = match.group()
        parts = text.split(":")
        if day is not None and len(parts) == 2 and parts[0].isdigit():
            text = f"{text}:00"
        try:
            t = parse_time(text.replace("_", " "))
        except TimeFormatError:
            continue
        if day is not None:
            out.append(t + day[0] // DAY * DAY if t < DAY else t)
            continue
        days = of_day(text, [t], evidence)
        out.extend(days or [t])
    for _, hours in spoken:
        out.extend(_of_hours(hours, day, evidence))
    if not out and day is None and (place := recording_window(question)) is not None:
        out.append((place[0] + place[1]) / 2)  # "at the 23-minute mark", "around minute 20"
    return out


def question_stretches(question: str, day: tuple[float, float] | None = None,
                        evidence: Sequence[Evidence] = ()) -> list[tuple[float, float]]:
    """The stretches between two times of day the question joins ("between 12:00 and 15:00",
    "from 9:30 to 11:00", "12:00-15:00", "between 2 pm and 4 pm", "noon to 5 p.m."), each read as
    `question_times` reads it ("noon" and "midnight" as 12:00 and 0:00); a start read on several
    days pairs with the first end after it. A time the stretch runs on from ("from 6 p.m. on",
    "from 10:00 onwards", "since 4 pm") runs to the end of its day. Or between two places in
    the recording said in words ("between minute 10 and minute 20", "from the 5-minute mark to
    the 8-minute mark"), from the middle of one to the middle of the other."""
    mentions = _clock_mentions(question, day, evidence)
    out = []
    for (_, a_end, starts), (b_start, _, ends) in zip(mentions, mentions[1:]):
        if not _JOIN.fullmatch(question[a_end:b_start]):
            continue
        for start in starts:
            after = [t for t in ends if t > start]
            if after:
                out.append((start, min(after)))
    for a_start, a_end, starts in mentions:
        if (_FROM.search(question[:a_start]) and _ON.match(question[a_end:])) or _SINCE.search(question[:a_start]):
            out += [(start, (start // DAY + 1) * DAY) for start in starts if not any(s == start for s, _ in out)]
    if not out and day is None and (joined := _PLACES_JOINED.search(question)) is not None:
        first, last = recording_window(joined.group(1)), recording_window(joined.group(2))
        if first is not None and last is not None and sum(first) < sum(last):
            out.append((sum(first) / 2, sum(last) / 2))
    return out


def _clock_mentions(question: str, day: tuple[float, float] | None,
                    evidence: Sequence[Evidence]) -> list[tuple[int, int, list[float]]]:
    """Each time of day the question names, in order: (where it starts and ends in the question,
    the corpus seconds it may be), digits ("10:30"), words ("a quarter past three", "4 pm") or
    "noon" / "midnight"."""
    spoken = spoken_clocks(question)
    out = [(m.start(), m.end(), question_times(m.group(), day, evidence)) for m in CLOCK.finditer(question)
           if not any(a < m.end() and m.start() < b for (a, b), _ in spoken)]
    named = [((m.start(), m.end()), [0.0 if m.group().lower() == "midnight" else 12 * 3600.0])
             for m in _NOON.finditer(question)]
    for (a, b), hours in [*spoken, *named]:
        out.append((a, b, _of_hours(hours, day, evidence)))
    return sorted((a, b, times) for a, b, times in out if times)


def _of_hours(hours: Sequence[float], day: tuple[float, float] | None, evidence: Sequence[Evidence]) -> list[float]:
    """Times of day (seconds after midnight) as corpus seconds: on the day the question names,
    else on each day the evidence is near them (`_on_days`)."""
    return [day[0] // DAY * DAY + h for h in hours] if day is not None else [t for h in hours for t in _on_days(h, evidence)]


_T = TypeVar("_T")


def last_before(values: list[_T], now: float, start: Callable[[_T], float]) -> list[_T]:
    """Of the values that start at one time of day on several days, the last that starts by
    `now` (all of them when none does)."""
    out = []
    for hour in dict.fromkeys(start(v) % DAY for v in values):
        same = [v for v in values if start(v) % DAY == hour]
        past = [v for v in same if start(v) <= now]
        out.extend([max(past, key=start)] if past else same)
    return out


def unspoken(question: str) -> str:
    """The question without the times of day it says in words ("a quarter past three") and
    the days it names by number (`without_named_days`)."""
    for (a, b), _ in reversed(spoken_clocks(question)):
        question = question[:a] + " " + question[b:]
    return without_named_days(question)


def of_day(clock: str, places: Sequence[float], evidence: Sequence[Evidence]) -> list[float]:
    """Where a bare clock ('10:30', '14:05:10') read as a time of day (two parts: hours and
    minutes) falls on each day that some evidence lies within `CLOCK_REACH` of it, when no
    evidence lies that near any of `places` (the clocks read as places in the recording: a
    video's '10:30' is 10 min 30 s in); [] otherwise, and for a clock with a day."""
    parts = clock.strip().split(":")
    if not evidence or not all(p.isdigit() for p in parts) or len(parts) not in (2, 3):
        return []
    if any(_near(t, evidence) for t in places):
        return []
    hours = int(parts[0]) * 3600 + int(parts[1]) * 60 + (int(parts[2]) if len(parts) == 3 else 0)
    return _on_days(hours, evidence) if hours < DAY else []


def _on_days(hours: float, evidence: Sequence[Evidence]) -> list[float]:
    """A time of day (seconds after midnight) on each day that some evidence lies within
    `CLOCK_REACH` of it."""
    days = sorted({int(e.t_start // DAY) for e in evidence} | {int(e.t_end // DAY) for e in evidence})
    return [d * DAY + hours for d in days if _near(d * DAY + hours, evidence)]


def _near(t: float, evidence: Sequence[Evidence]) -> bool:
    """Whether a moment lies within `CLOCK_REACH` of some evidence item."""
    return any(e.t_start - CLOCK_REACH <= t <= e.t_end + CLOCK_REACH for e in evidence)
