"""The second writer's questions about an EgoLife-style corpus (days of 30-s clips).

It reads only `script.json` (each scripted event's on-screen text, kind, room, colour and time)
and asks, in sentence forms the first writer and its paraphrases never use, about what the
first writer leaves out: counts over the days, which of two events came first, the hours
between two events of a day, how long ago something last happened, the colour of a scene,
which room, where a thing was at a given hour, who came on the day something else happened,
and which summary fits a day. Each question is asked at its own moment (`until`), as
EgoLifeQA's are, and its targets are the events that answer it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from videomem.synth.vocabulary import COLOURS, COUNT_WORDS, LOCATIONS, SPOTS
from videomem.timeline import DAY

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh")


@dataclass(frozen=True)
class DayItem:
    """One question: its text, right answer, other answers to draw options from, EgoLifeQA type,
    the moment it is asked at and the scripted events (start, end) that answer it."""

    question: str
    correct: str
    others: list[str]
    kind: str
    until: float
    targets: list[tuple[float, float]]


@dataclass(frozen=True)
class _Event:
    kind: str
    text: str
    room: str
    colour: str | None
    t_start: float
    t_end: float

    @property
    def day(self) -> int:
        return int(self.t_start // DAY)

    @property
    def span(self) -> tuple[float, float]:
        return (self.t_start, self.t_end)


def _words(text: str) -> str:
    return text.lower()


def hours_phrase(seconds: float) -> str:
    """An amount of time to the nearest half hour, as the options say it ("about 4 and a half hours")."""
    half_hours = round(seconds / 1800)
    whole, half = divmod(half_hours, 2)
    return f"about {whole}{' and a half' if half else ''} hour{'s' if half_hours != 2 else ''}"


def _describe(e: _Event) -> str:
    """An event in the writer's own words, from its on-screen text."""
    if e.kind == "meal":
        return "having " + _words(e.text.removeprefix("EATING ").removesuffix(" FOR LUNCH")) + " at midday"
    if e.kind == "visit":
        return _words(e.text.removesuffix(" COMES TO VISIT")).title() + " dropping by"
    if e.kind == "activity":
        doing, person = e.text.split(" WITH ")
        return f"{_words(doing)} alongside {person.title()}"
    if e.text == "MAKING COFFEE":
        return "brewing coffee"
    return "taking the dog out"


def day_items(events: list[dict], rng: random.Random) -> list[DayItem]:
    scripted = [
        _Event(e["kind"], e["text"], e["location"], e.get("colour"), e["t_start"], e["t_end"])
        for e in sorted(events, key=lambda e: e["t_start"])
        if e["kind"] != "distractor"
    ]
    days = max(e.day for e in scripted) + 1
    end = scripted[-1].t_end + 3600
    of = {kind: [e for e in scripted if e.kind == kind] for kind in {e.kind for e in scripted}}
    walks = [e for e in of["habit"] if e.text == "WALKING THE DOG"]
    coffees = [e for e in of["habit"] if e.text == "MAKING COFFEE"]
    counts = [COUNT_WORDS[k] for k in range(1, len(COUNT_WORDS))]
    out: list[DayItem] = []

    out.append(DayItem(
        "Since the recording started, on how many occasions have I taken the dog out for a walk?",
        COUNT_WORDS[len(walks)], counts, "HabitInsight", end, [e.span for e in walks]))
    out.append(DayItem(
        "All told, how many different people have dropped by to see me?",
        COUNT_WORDS[len(of["visit"])], counts, "RelationMap", end, [e.span for e in of["visit"]]))
    keys = of["placement"]
    asked = keys[-2].t_end + 1800
    set_down = [e for e in keys if e.t_end <= asked]
    out.append(DayItem(
        "Up to now, how often have I set my keys down somewhere?",
        COUNT_WORDS[len(set_down)], counts, "EntityLog", asked, [e.span for e in set_down]))

    described = [e for e in scripted if e.kind in ("meal", "visit", "activity")]
    for _ in range(days):
        a, b = sorted(rng.sample(described, 2), key=lambda e: e.t_start)
        shown = [a, b] if rng.random() < 0.5 else [b, a]
        out.append(DayItem(
            f"Thinking back: {_describe(shown[0])}, or {_describe(shown[1])} — which came first?",
            _describe(a), [_describe(b), "they happened at the same time", "neither of them happened"],
            "EventRecall", end, [a.span, b.span]))

    for d in range(days):
        today = [e for e in described if e.day == d]
        a, b = sorted(rng.sample(today, 2), key=lambda e: e.t_start)
        gaps = [hours_phrase(k * 1800) for k in range(2, 24)]
        out.append(DayItem(
            f"On the {ORDINALS[d]} day, roughly how much time passed between {_describe(a)} and {_describe(b)}?",
            hours_phrase(b.t_start - a.t_start), gaps, "EventRecall", end, [a.span, b.span]))

    for coffee in coffees:
        later = rng.choice((2, 3, 4, 5, 6, 7, 8, 9))
        out.append(DayItem(
            "How long has it been since I last brewed coffee?",
            hours_phrase(later * 3600), [hours_phrase(k * 3600) for k in range(1, 13)], "EventRecall",
            coffee.t_start + later * 3600, [coffee.span]))

    colours = [_words(c) for c in COLOURS]
    for e in rng.sample(described, min(days, len(described))):
        if e.colour:
            out.append(DayItem(
                f"Picture the scene of {_describe(e)}. Which colour stood out in it?",
                _words(e.colour), colours, "EntityLog", end, [e.span]))

    rooms = [_words(r) for r in LOCATIONS]
    for e in of["meal"]:
        out.append(DayItem(
            f"In which part of the house was I {_describe(e)}?", _words(e.room), rooms, "EntityLog", end, [e.span]))

    spots = [_words(s) for s in SPOTS]
    for d in range(days):
        hour = rng.randint(9, 18)
        moment = d * DAY + hour * 3600
        placed = [e for e in keys if e.t_end <= moment][-1]
        out.append(DayItem(
            f"At {hour}:00 on the {ORDINALS[d]} day, where would my keys have been found?",
            _words(placed.text.removeprefix("KEYS ")), spots, "EntityLog", end, [placed.span]))

    guests = [e.text.removesuffix(" COMES TO VISIT").title() for e in of["visit"]]
    partners = [e.text.split(" WITH ")[1].title() for e in of["activity"]]
    for meal in of["meal"]:
        (visit,) = [e for e in of["visit"] if e.day == meal.day]
        out.append(DayItem(
            f"The day the midday meal was {_words(meal.text.removeprefix('EATING ').removesuffix(' FOR LUNCH'))}: "
            "who came round that afternoon?",
            _describe(visit).removesuffix(" dropping by"), guests + partners, "RelationMap", end,
            [meal.span, visit.span]))

    def summary(activity: _Event, meal: _Event, visit: _Event) -> str:
        return f"{_describe(activity)}; {_describe(meal)}; {_describe(visit)}"

    by_day = [[next(e for e in of[k] if e.day == d) for k in ("activity", "meal", "visit")] for d in range(days)]
    mixed = [summary(by_day[a][0], by_day[b][1], by_day[c][2])
             for a in range(days) for b in range(days) for c in range(days) if len({a, b, c}) > 1]
    for d in range(days):
        out.append(DayItem(
            f"Which of these sums up the {ORDINALS[d]} day best?",
            summary(*by_day[d]), [summary(*by_day[o]) for o in range(days) if o != d] + mixed, "EventRecall", end,
            [e.span for e in by_day[d]]))
    return out
