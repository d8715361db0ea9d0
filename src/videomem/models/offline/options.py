"""What an option names when it is a quantity or a time: a range of the timeline, an amount of
time, a day, a count.

The reader compares such options with the evidence by arithmetic, not by their words ("2 hours"
against the span of the cited windows, "DAY2" against the days they lie on), so it first reads
what each option names; an option that names none of these is compared by its words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from videomem.errors import TimeFormatError
from videomem.models.offline.clocks import CLOCK
from videomem.models.offline.daytime import APPROXIMATE_S, question_window, relative_window, spoken_clocks
from videomem.models.offline.nlp import NEGATION, NUMBER, NUMBERS, number_value, unit_seconds, words
from videomem.timeline import parse_range

AGO_SPREAD = 0.25
"""How far either side of its moment an amount of time ago reaches, as a share of the amount,
where it is read as a stretch of time beside options that name days."""
NONE_WORDS = frozenset({"never", "none", "zero", "not"})
"""Words of an option that says a count is nought ("Never", "None", "Not at all")."""
EVERY_WORDS = frozenset({"every", "each", "all"})
"""Words of an option that says something happened on every day."""
_AMOUNT = re.compile(
    r"\b(half an?|an?|" + NUMBER + r")(\s+and\s+a\s+half)?\s+"
    r"(seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?)\b(\s+and\s+a\s+half)?",
    re.IGNORECASE,
)
"""An amount of time in digits or words ("2 hours", "half an hour", "an hour and a half")."""
_WHOLE = re.compile(r"\b(?:all|(?:the|a)\s+whole|(?:the|an)\s+entire)\s+(minute|hour|day|week)\b", re.IGNORECASE)
"""An amount of time said as one whole unit ("all day", "the whole hour")."""


def option_range(option: str) -> tuple[float, float] | None:
    """An option that is a time range in any form the timeline reads ("11:00 - 11:30", "DAY2
    11:00 to 11:30", "600-720"), else None. A count question's "2-3" is a count: the caller
    does not ask then."""
    try:
        span = parse_range(option)
    except TimeFormatError:
        return None
    return span if span is not None and span[1] > span[0] else None


def option_seconds(option: str) -> float | None:
    """The amount of time an option names ("2 hours 10 minutes", "half an hour", "a day and a
    half"), in seconds; None when it names none."""
    if (whole := _WHOLE.search(option)) is not None:  # "all day", "the whole hour"
        return unit_seconds(whole.group(1).lower())
    total, found = 0.0, False
    for amount, half_before, unit, half in _AMOUNT.findall(option.lower()):
        half = half or half_before  # "two and a half hours", "an hour and a half"
        value = 0.5 if amount.startswith("half") else 1.0 if amount in ("a", "an") else number_value(amount)
        total += (value + (0.5 if half else 0.0)) * unit_seconds(unit)
        found = True
    return total if found and total > 0 else None


def ago_window(option: str, now: float) -> tuple[float, float] | None:
    """The stretch of the timeline an amount of time ago names ("half a day ago", "2 days 3
    hours ago"): `AGO_SPREAD` of the amount either side of its moment, so that it can be weighed
    with options that name days ("yesterday", "three days ago"). None for any other option."""
    amount = option_seconds(option)
    if amount is None or "ago" not in words(option):
        return None
    return now - amount * (1 + AGO_SPREAD), now - amount * (1 - AGO_SPREAD)


def option_days(options: Sequence[str], now: float | None) -> list[tuple[float, float] | str] | None:
    """Per option, the day it names ("DAY2", "the second day"; "yesterday" or "two days ago"
    where the query time `now` is known), or its clock time on that day, `APPROXIMATE_S` either
    side ("around 12:30 on DAY3"), or "every" for one that says every day ("I watered them every
    day") and "never" for one that says it did not happen ("He has not come yet"): when at least
    two options name a day and every other option is one of those two."""
    out: list[tuple[float, float] | str] = []
    for option in options:
        said = set(words(option))
        window = question_window(option) or (
            (relative_window(option, now) or ago_window(option, now)) if now is not None else None)
        if (clock := CLOCK.search(option)) is not None:
            if window is None or clock.group().upper().startswith("DAY"):
                return None
            hours, minutes = (int(part) for part in clock.group().split(":")[:2])
            # "2:30 pm" as `spoken_clocks` reads it; a bare "14:30" as written
            said = [h for (a, b), h in spoken_clocks(option) if a < clock.end() and clock.start() < b]
            at = window[0] + (said[0][0] if said else hours * 3600 + minutes * 60)
            window = (at - APPROXIMATE_S, at + APPROXIMATE_S)
        if window is not None:
            out.append(window)
        elif said & EVERY_WORDS and said & {"day", "days"}:
            out.append("every")
        elif NEGATION.search(option) or option_number(option) == 0:
            out.append("never")
        else:
            return None
    return out if sum(not isinstance(d, str) for d in out) >= 2 else None


def option_number(option: str) -> int | None:
    """The count an option names: its first number ("3", "three times", "twice"), or 0 for an
    option that says it never happened ("Never", "None", "Not at all")."""
    said = re.findall(r"[a-z0-9]+", option.lower())
    for word in said:
        if word.isdigit():
            return int(word)
        if word in NUMBERS:
            return NUMBERS[word]
    return 0 if set(said) & NONE_WORDS else None
