"""Places in a recording named in words: "around minute 4", "in the 12th minute", "about 3
minutes in", "the 5-minute mark", "90 seconds into the video", "at 04:10". "3 minutes in the
kitchen" is no place: "in" names one only where the phrase ends, "into" only the recording.

The offline reader answers an option of this kind from when the evidence about the question was
recorded, not from the option's words: a "4" in a caption says nothing about minute 4. Times
are seconds from the start of the recording, the timeline the evidence of one video is on.

"Minute N" is the minute a player's counter shows as N (N:00 to N:59), as a clock reads; "the
Nth minute" is the one that ends at N:00, as an ordinal counts. A moment said as an amount of
time into the recording ("3 minutes in", "the 3-minute mark") is that moment, give or take half
its unit ("about 3 minutes in" is anything that rounds to 3 minutes).
"""

from __future__ import annotations

import re

from videomem.errors import TimeFormatError
from videomem.models.offline.nlp import NUMBER, number_value, unit_seconds
from videomem.timeline import parse_time

_NUMBER = "(" + NUMBER + ")"
_UNIT = r"(seconds?|secs?|minutes?|mins?|hours?)"
_COUNTER = re.compile(r"\b(minute|hour)\s+(\d+)\b")
_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\s+(minute|hour)\b")
_INTO = re.compile(_NUMBER + r"[\s-]+" + _UNIT + r"\s+(?:in|into(?:\s+(?:the|this)\s+(?:video|recording|clip|footage|film))?)$")
_MARK = re.compile(_NUMBER + r"[\s-]+" + _UNIT + r"\s+mark\b")
_CLOCK = re.compile(r"^(?:(?:at|around|about|roughly|approximately|near|~)\s+)*(\d{1,2}:\d{2}(?::\d{2})?)$")


def recording_window(phrase: str) -> tuple[float, float] | None:
    """The stretch of a recording a phrase names, in seconds from its start, or None when it
    names none (an amount of time alone, "3 minutes", is a duration, not a place)."""
    text = " ".join(phrase.lower().replace("\u2013", "-").split()).rstrip(".")
    if (found := _COUNTER.search(text)) is not None:
        unit, n = unit_seconds(found.group(1)), int(found.group(2))
        return n * unit, (n + 1) * unit
    if (found := _ORDINAL.search(text)) is not None:
        n, unit = int(found.group(1)), unit_seconds(found.group(2))
        return ((n - 1) * unit, n * unit) if n > 0 else None
    if (found := _INTO.search(text) or _MARK.search(text)) is not None:
        moment, unit = number_value(found.group(1)) * unit_seconds(found.group(2)), unit_seconds(found.group(2))
        return max(moment - unit / 2, 0.0), moment + unit / 2
    if (found := _CLOCK.match(text)) is not None:
        try:
            moment = parse_time(found.group(1))
        except TimeFormatError:
            return None
        return moment, moment
    return None
