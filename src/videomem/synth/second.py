"""A second question writer for the scripted corpora, sharing no sentence form with the first.

`scripts.py` writes its questions from its own templates, and its paraphrases reuse them, so
a reader tuned on either is measured on the wording it was tuned to. This writer reads only
what the video shows (`script.json`: each scripted event's on-screen text, kind, room and time)
and asks about it in other words and with other answer forms (counts in words, rooms without
"In the", times as "around minute N"), plus two families the first writer has not: which of two
events came first, and how long one lasted. It is a report to read beside the first writer's
score, never a floor to tune a reader to.

An EgoLife-style corpus gets its own questions (`second_egolife`): counts, order, hours between
events, how long ago, colours, rooms, where a thing was at an hour, who came on which day, and
day summaries, each asked at its own moment.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from videomem.errors import SynthError
from videomem.synth.formats import QSpec, write_egolife
from videomem.synth.second_egolife import day_items
from videomem.synth.vocabulary import COUNT_WORDS, VERBS

SECOND_DIR = "second"
LETTERS = "ABCD"
_BASE = {third: base for third, base in VERBS}


@dataclass(frozen=True)
class _Act:
    person: str
    base: str
    thing: str
    room: str
    t_start: float
    t_end: float


@dataclass(frozen=True)
class _Item:
    question: str
    correct: str
    others: list[str]
    categories: list[str]
    targets: list[tuple[float, float]]


def _ing(base: str) -> str:
    return base + "ing"


def _done(base: str) -> str:
    return base[:-1] + "ied" if base.endswith("y") else base + "ed"


def _acts(events: list[dict]) -> list[_Act]:
    out = []
    for e in events:
        if e["kind"] != "action":
            continue
        person, third, *rest = e["text"].split()
        thing = " ".join(w for w in rest if w != "THE").lower()
        out.append(_Act(person.title(), _BASE[third], thing, e["location"].lower(), e["t_start"], e["t_end"]))
    return out


def _minute(seconds: float) -> str:
    return f"around minute {int(seconds // 60)}"


def _seconds(length: float) -> str:
    return f"roughly {int(round(length))} seconds"


def _items(events: list[dict], rng: random.Random) -> list[_Item]:
    acts = _acts(events)
    people = sorted({a.person for a in acts})
    rooms = sorted({e["location"].lower() for e in events})
    things = sorted({a.thing for a in acts})
    out: list[_Item] = []
    for a in acts:
        span = [(a.t_start, a.t_end)]
        out.append(_Item(f"Tell me which object {a.person} was {_ing(a.base)}.", a.thing, things,
                         ["key information retrieval"], span))
        out.append(_Item(f"The {a.thing} got {_done(a.base)} by somebody. Name that person.", a.person, people,
                         ["entity recognition"], span))
        out.append(_Item(f"{a.person} {_ing(a.base)} the {a.thing}: which room did that take place in?", a.room, rooms,
                         ["event understanding"], span))
        lengths = sorted({b.t_end - b.t_start for b in acts} | {a.t_end - a.t_start + d for d in (10, 20, 30)})
        out.append(_Item(f"For about how long could {a.person} be seen {_ing(a.base)} the {a.thing}?",
                         _seconds(a.t_end - a.t_start), [_seconds(x) for x in lengths], ["temporal grounding"], span))
        minutes = sorted({_minute((b.t_start + b.t_end) / 2) for b in acts})
        out.append(_Item(f"Roughly how far into the recording did {a.person} {a.base} the {a.thing}?",
                         _minute((a.t_start + a.t_end) / 2), minutes, ["temporal grounding"], span))
    for first, second in zip(acts, acts[1:]):
        label = [f"{x.person} {_ing(x.base)} the {x.thing}" for x in (first, second)]
        pair = [first, second] if rng.random() < 0.5 else [second, first]
        shown = [f"{x.person} {_ing(x.base)} the {x.thing}" for x in pair]
        out.append(_Item(f"Which happened earlier in the recording: {shown[0]}, or {shown[1]}?", label[0],
                         [label[1], "both at the same moment", "neither of them happened"],
                         ["reasoning", "temporal grounding"], [(first.t_start, first.t_end), (second.t_start, second.t_end)]))
    habits = [e for e in events if e["kind"] == "habit"]
    if habits:
        person = habits[0]["text"].split()[0].title()
        n = len(habits)
        out.append(_Item(f"Over the whole recording, on how many separate occasions did {person} give the plants water?",
                         COUNT_WORDS[n], [COUNT_WORDS[k] for k in range(1, min(n + 4, len(COUNT_WORDS)))],
                         ["reasoning", "summarization"], [(e["t_start"], e["t_end"]) for e in habits]))
    placements: dict[str, list[dict]] = {}
    for e in events:
        if e["kind"] == "placement":
            thing, *spot = e["text"].split()
            placements.setdefault(thing.lower(), []).append({**e, "spot": " ".join(spot).lower()})
    spots = sorted({p["spot"] for chain in placements.values() for p in chain})
    for thing, chain in sorted(placements.items()):
        for first_or_last, p in (("very first time it was set down", chain[0]), ("end, after its final move", chain[-1])):
            out.append(_Item(f"Follow the {thing} through the video. Where was it at the {first_or_last}?", p["spot"],
                             spots, ["temporal grounding"], [(p["t_start"], p["t_end"])]))
    for e in events:
        if e["kind"] == "note":
            label, value = e["text"].removeprefix("THE ").split(" IS ")
            out.append(_Item(f"A sign in the video gave the {label.lower()}. Which value did it show?", value,
                             [value[::-1], value[1:] + value[0], value[-1] + value[:-1]],
                             ["key information retrieval"], [(e["t_start"], e["t_end"])]))
    return out


def _mmss(seconds: float) -> str:
    total = int(round(seconds))
    return f"{total // 60:02d}:{total % 60:02d}"


def _options(rng: random.Random, correct: str, others: list[str]) -> list[str]:
    """The right answer and three others drawn at random, in random order (fewer when fewer exist)."""
    distractors = [o for o in dict.fromkeys(others) if o != correct]
    rng.shuffle(distractors)
    options = [correct, *distractors[:3]]
    rng.shuffle(options)
    return options


def write_second(corpus: str | Path, seed: int = 0) -> Path:
    """Write the second writer's questions for a generated corpus and return the file: LVBench's
    `video_info.meta.jsonl` for a single video, `EgoLifeQA_A1_JAKE.json` for days of clips, under
    `second/`."""
    root = Path(corpus)
    try:
        events = json.loads((root / "script.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SynthError(f"{root}: no readable script.json of a generated corpus ({exc})") from None
    rng = random.Random(f"second-{seed}")
    if any(e["kind"] in ("meal", "list", "visit", "activity") for e in events):
        return _write_days(root, events, rng)
    keys = sorted({e["video_id"] for e in events})
    qa = []
    for uid, item in enumerate(_items(events, rng), 1):
        options = _options(rng, item.correct, item.others)
        if len(options) < 2:
            continue
        text = item.question + "".join(f"\n({LETTERS[i]}) {o}" for i, o in enumerate(options))
        qa.append({
            "uid": str(uid),
            "question": text,
            "answer": LETTERS[options.index(item.correct)],
            "question_type": item.categories,
            "time_reference": ", ".join(f"{_mmss(a)}-{_mmss(b)}" for a, b in item.targets),
        })
    path = root / SECOND_DIR / "video_info.meta.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": keys[0], "type": "synthetic", "qa": qa}) + "\n", encoding="utf-8")
    return path


def _write_days(root: Path, events: list[dict], rng: random.Random) -> Path:
    specs = []
    for item in day_items(events, rng):
        options = _options(rng, item.correct, item.others)
        specs.append(QSpec(
            item.question, item.correct, [], [], [item.kind], item.targets, until=item.until,
            options=options, letter=LETTERS[options.index(item.correct)],
        ))
    path = root / SECOND_DIR / "EgoLifeQA_A1_JAKE.json"
    write_egolife(path, specs)
    return path
