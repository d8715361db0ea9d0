"""Parts of the day, and days named relative to now, as English says them: "this morning",
"yesterday at noon", "last night", "the afternoon before yesterday", "2 days ago".

The offline reader answers an option of this kind from when the evidence was recorded, not
from the option's words: "yesterday" and "afternoon" are as likely to turn up in a wrong
moment's text as in the right one's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from videomem.evidence import Evidence
from videomem.models.offline.nlp import NUMBERS, forms, lemmas, stopwords, words
from videomem.timeline import DAY

PERIODS: dict[str, tuple[float, float]] = {
    "morning": (5, 12),
    "noon": (11, 13),
    "midday": (11, 13),
    "afternoon": (12, 18),
    "evening": (18, 22),
    "night": (22, 29),
}
"""Part of the day → its hours (past 24: the early hours of the next day)."""
MEALS: dict[str, tuple[float, float]] = {
    "breakfast": (5, 12),
    "brunch": (9, 14),
    "lunch": (11, 15),
    "dinner": (17, 23),
    "supper": (17, 23),
}
"""Meal → the hours it is eaten at, widely (a late breakfast, a late dinner)."""
NIGHT_BEFORE = (PERIODS["evening"][0], PERIODS["night"][1])
"""The hours of "last night", "tonight", "the night before yesterday": the evening as well."""
_HOURS = {word: NUMBERS[word] for word in ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                             "ten", "eleven", "twelve")}
_HOUR = r"(1[0-2]|0?[1-9]|" + "|".join(_HOURS) + r")"
_SPOKEN = re.compile(
    r"\b(?:(?:a\s+)?(?P<part>quarter|half)\s+(?P<side>past|after|to)\s+" + _HOUR
    + r"|" + _HOUR + r"(?::(?P<minutes>[0-5]\d))?\s*(?P<meridiem>o['\u2019]clock|[ap]\.?m\b\.?)"
    + r"|\b(?:around|about|at|before|after|until|till|by|since)\s+(?:just\s+)?" + _HOUR
    + r"(?=\s*(?:[,.?!;]|$|in\s+the\b|today\b|yesterday\b|this\b|that\b)))",
    re.IGNORECASE,
)
"""A time of day said in words: "a quarter past three", "half past ten", "quarter to five", "four
o'clock", "3 pm", "10:30 a.m.", "around four," (a bare hour after "around", "at", "before", … that
ends the phrase)."""
APPROXIMATE_S = 300.0
"""How far either side of a time said in words the question may mean ("around a quarter past
three"): people round to the quarter hour."""
_DAYS_AGO = re.compile(r"\b(\d+|" + "|".join(NUMBERS) + r")\s+days?\s+ago\b")
_LAST_NIGHT = re.compile(r"\blast (night|evening)\b")


def relative_window(phrase: str, now: float) -> tuple[float, float] | None:
    """The stretch of the timeline a phrase names relative to `now` (timeline seconds, days of
    `DAY` from 0), or None when it names no day relative to now ("in the afternoon" alone does
    not: which day is left open)."""
    said = words(phrase)
    text = " ".join(said)
    parts = [w for w in said if w in PERIODS or w == "tonight"]
    if "before yesterday" in text:
        offset = -2
    elif (found := _DAYS_AGO.search(text)) is not None:
        count = found.group(1)
        offset = -(int(count) if count.isdigit() else NUMBERS[count])
    elif "yesterday" in said or _LAST_NIGHT.search(text):
        offset = -1
    elif "today" in said or "tonight" in said or ("this" in said and parts):
        offset = 0
    else:
        return None
    if len(parts) > 1:
        return None
    start_day = (now // DAY + offset) * DAY
    if not parts:
        return start_day, start_day + DAY
    part = parts[0]
    lo, hi = NIGHT_BEFORE if part in ("night", "tonight") else PERIODS[part]
    return start_day + lo * 3600, start_day + hi * 3600


_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
             "ninth": 9, "tenth": 10}
_NTH_DAY = re.compile(r"\b(" + "|".join(_ORDINALS) + r"|\d+(?:st|nd|rd|th))\s+day\b")
_DAY_N = re.compile(r"\bday\s*(\d+|" + "|".join(NUMBERS) + r")\b")


def question_window(question: str) -> tuple[float, float] | None:
    """The day of the recording a question names by its number ("on the second day", "day 3",
    "DAY3": days counted from 1, the first at timeline 0), when it names exactly one; else None.
    A day named relative to now ("yesterday") is read from the parse instead
    (`intent.relative_day`): in a question it often belongs to a clause about something else
    ("who found out that the dog was not taken away yesterday?" asks about today)."""
    text = " ".join(words(question))
    numbered = {_ORDINALS.get(m, None) or int(re.sub(r"\D", "", m)) for m in _NTH_DAY.findall(text)}
    numbered |= {int(m) if m.isdigit() else NUMBERS[m] for m in _DAY_N.findall(text)}
    if len(numbered) != 1:
        return None
    (day,) = numbered
    return ((day - 1) * DAY, day * DAY) if day >= 1 else None


_NAMED_DAY = re.compile(rf"(?:\bthe\s+)?{_NTH_DAY.pattern}|{_DAY_N.pattern}", re.IGNORECASE)


def without_named_days(text: str) -> str:
    """The text without the days it names by number ("on DAY3", "day 2", "the second day"):
    those place what is asked (`question_window`); they are not words an item must hold, and an
    item that prints its date ("seen at DAY3 19:30") is no more about the question for it."""
    return _NAMED_DAY.sub(" ", text)


_ANCHOR = re.compile(r"\bthe (?:same |very )?day (?:that |when |on which )?(?P<clause>[^:;,?.!]+)", re.IGNORECASE)


def anchored_day(question: str, evidence: Sequence[Evidence]) -> tuple[float, float] | None:
    """The day a question names by what happened on it ("the day the meal was pizza", "on the
    same day we went to the market"): the one day on which the evidence items that hold all of that
    clause's content words (parts of the day aside) were recorded; None when the question names
    no such day, or the evidence puts it on none or on several days."""
    found = _ANCHOR.search(question)
    if found is None:
        return None
    held = [forms(e.text) for e in evidence]
    present = set().union(*held) if held else set()
    stop = stopwords()
    anchor = {w for w in lemmas(found["clause"]) if w not in stop and w not in PERIODS and w in present}
    if not anchor:
        return None
    days = {int((e.t_start + e.t_end) / 2 // DAY) for e, said in zip(evidence, held) if anchor <= said}
    if len(days) != 1:
        return None
    (day,) = days
    return day * DAY, (day + 1) * DAY


def closeness(moment: float, window: tuple[float, float], scale: float = 3600.0) -> float:
    """How well a moment fits a window: 1 at its middle, 0.5 at its edges, and outside it
    0.5 × exp(-distance / scale), the scale an hour unless told, so the nearest window wins
    when none holds the moment and the narrower one when two do ("at noon" before "in the
    afternoon" for 12:20)."""
    start, end = window
    if start <= moment <= end:
        half = (end - start) / 2
        return 1.0 - 0.5 * abs(moment - (start + half)) / half if half > 0 else 1.0
    gap = start - moment if moment < start else moment - end
    return 0.5 * math.exp(-gap / scale)


def spoken_clocks(question: str) -> list[tuple[tuple[int, int], list[float]]]:
    """Each time of day the question says in words (`_SPOKEN`): its span in the question and the
    seconds after midnight it may be. An hour without "am" or "pm" is either ("a quarter past
    three": 03:15 or 15:15); which one, the evidence decides (`clocks.question_times`)."""
    out = []
    for match in _SPOKEN.finditer(question):
        said = [g for g in match.groups() if g is not None]
        hour_text = next(g for g in said if g.lower() in _HOURS or g.isdigit())
        hour = _HOURS.get(hour_text.lower()) or int(hour_text)
        minutes = int(match.group("minutes") or 0)
        if match.group("part"):
            minutes = 30 if match.group("part").lower() == "half" else 15
            if match.group("side").lower() == "to":
                hour, minutes = hour - 1 or 12, 60 - minutes
        meridiem = (match.group("meridiem") or "").lower()
        if meridiem.startswith("a"):
            hours = [hour % 12]
        elif meridiem.startswith("p"):
            hours = [hour % 12 + 12]
        else:
            hours = [hour % 12, hour % 12 + 12]
        out.append((match.span(), [h * 3600.0 + minutes * 60.0 for h in hours]))
    return out
