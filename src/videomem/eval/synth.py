"""Scripted benchmarks: videos whose facts are known to the second, with questions about them.

Every fact is large, high-contrast on-screen text (plus a coloured shape and figures for the
people in it), so the offline models, which read pixels with OCR, can honestly find it, and a
test knows exactly which clip holds each answer. Events start on clip boundaries and last whole
clips, so one clip always contains one whole event.

Distractor options are facts that also appear in the video at other times (another person's
action, an earlier place of the same keys, yesterday's lunch), so a correct answer needs the
right moment, not just "which option appears anywhere". EgoLife-style questions are asked at
several query times with different correct answers.

Controls, so that retrieval is not trivial and no method fits one wording: both formats hold
idle footage (a room and nobody doing anything) and distractor events (on-screen text that names
the people, places and things the questions ask about, but answers none of them: "LOOKING FOR
THE KEYS", "BOB READS A BOOK"); and every corpus comes with a paraphrased question set,
`paraphrased/<questions file>`: the same questions about the same videos, each reworded (another
template, a synonym for its verb or its thing) and its options in another order.

Two outputs:
* `lvbench`: one video (`videos/<key>.mp4`) and `video_info.meta.jsonl`;
* `egolife`: a corpus of 30-s clips `videos/DAYn/DAYn_A1_JAKE_HHMMSSFF.mp4` across days and
  `EgoLifeQA_A1_JAKE.json`.
All also write `script.json`, the ground-truth list of events.

`--speech` adds a sound track to every video (`speech_track.py`: Debian espeak-ng, several
voices) with lines whose content never appears on screen, as text or as a drawn thing: where
an item was left, what someone is called, a code or number. They are spoken inside clips (in
idle footage and during events alike), each within one clip, and the question file gets a
`need_audio` question about each line, so only the sound track can answer it. `speech.json`
records what was said and when (the ground truth a fake speech model can read from). The spoken
script draws on its own random stream: with `--speech` the pictures, events and other questions
are exactly those of the same seed without it, and without `--speech` nothing changes at all.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
import re
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

import imageio_ffmpeg
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from videomem.errors import VideomemError
from videomem.eval.egolife import load_egolife
from videomem.eval.lvbench import load_lvbench
from videomem.eval.questions import LETTERS, Question
from videomem.eval.speech_track import SAMPLE_RATE, VOICES, SpokenLine, require_espeak, speak, write_track
from videomem.timeline import DAY, TimelineKind, egolife_start, format_egolife

SynthFormat = Literal["lvbench", "egolife"]

CLIP_SECONDS = {"lvbench": 10.0, "egolife": 30.0}
"""Event granularity: the clip length of the shipped pipelines `default` and `egolife`."""

MIN_MINUTES = 12
"""The single-video script has up to 22 events, each in its own stretch of at least 3 clips."""

LOCATIONS: dict[str, tuple[int, int, int]] = {
    # Mid-tone backgrounds, so the near-white text panel stands out on every one.
    "KITCHEN": (196, 132, 84),
    "GARDEN": (84, 150, 84),
    "GARAGE": (120, 120, 130),
    "OFFICE": (76, 108, 170),
    "LIVING ROOM": (150, 92, 150),
    "HALLWAY": (170, 150, 70),
}
COLOURS: dict[str, tuple[int, int, int]] = {
    "RED": (215, 35, 35),
    "BLUE": (35, 75, 215),
    "GREEN": (30, 165, 60),
    "YELLOW": (240, 205, 30),
    "ORANGE": (245, 135, 25),
    "PURPLE": (130, 50, 185),
}
PEOPLE = ("ALICE", "BOB", "CAROL", "DAVID", "EMMA", "FRANK")
VERBS = (  # (third person, base form)
    ("OPENS", "open"),
    ("PAINTS", "paint"),
    ("CARRIES", "carry"),
    ("WASHES", "wash"),
    ("LOCKS", "lock"),
    ("REPAIRS", "repair"),
)
THINGS = ("DOOR", "BOX", "GATE", "CHAIR", "BICYCLE", "SUITCASE", "LAMP", "CUPBOARD", "TABLE", "WINDOW")
NOTE_LABELS = ("SAFE CODE", "LOCKER CODE", "BUS NUMBER", "ROOM NUMBER", "TICKET NUMBER")
OBJECTS = ("KEYS", "WALLET", "PHONE", "UMBRELLA")
SPOTS = (
    "ON THE KITCHEN TABLE",
    "IN THE BLUE DRAWER",
    "ON THE GARAGE SHELF",
    "IN THE RED BASKET",
    "UNDER THE SOFA",
    "BY THE FRONT DOOR",
    "IN THE COAT POCKET",
)
ACTIVITIES = (  # (on-screen "-ing" phrase, question phrase)
    ("PLAYING CHESS", "play chess"),
    ("PAINTING THE FENCE", "paint the fence"),
    ("BAKING A CAKE", "bake a cake"),
    ("FIXING THE BIKE", "fix the bike"),
    ("PLANTING TOMATOES", "plant tomatoes"),
    ("BUILDING A SHELF", "build a shelf"),
    ("PLAYING CARDS", "play cards"),
)
IDLE_ACTIVITIES = ("IS ON THE PHONE", "READS A BOOK", "DRINKS TEA", "TAKES A NAP", "LOOKS OUT OF THE WINDOW")
"""Distractors of the single video: a person of the script doing nothing that is asked about."""
LVBENCH_DISTRACTORS = 4
EGOLIFE_DISTRACTORS = (  # (text, location): they name the keys, lunch, the list, the plants
    ("LOOKING FOR THE KEYS", "HALLWAY"),
    ("WASHING UP AFTER LUNCH", "KITCHEN"),
    ("READING THE NEWSPAPER", "LIVING ROOM"),
    ("WATERING THE PLANTS", "GARDEN"),
    ("WRITING A LETTER", "OFFICE"),
    ("LOSING THE SHOPPING LIST", "GARAGE"),
)
EGOLIFE_DISTRACTORS_PER_DAY = 3
EGOLIFE_IDLE_PER_DAY = 3
"""Idle clips per day when `minutes` does not set the footage."""
VERB_SYNONYMS = {  # base form → (base, third person) of a synonym
    "open": ("pull open", "pulls open"),
    "paint": ("colour", "colours"),
    "carry": ("haul", "hauls"),
    "wash": ("clean", "cleans"),
    "lock": ("secure", "secures"),
    "repair": ("fix", "fixes"),
}
THING_SYNONYMS = {
    "door": "doorway", "box": "crate", "gate": "garden gate", "chair": "seat", "bicycle": "bike",
    "suitcase": "travel bag", "lamp": "light", "cupboard": "cabinet", "table": "dining table", "window": "window pane",
}
FOODS = ("NOODLES", "PIZZA", "SOUP", "SALAD", "DUMPLINGS", "CURRY", "SANDWICHES")
GROCERIES = (
    "MILK", "EGGS", "BREAD", "APPLES", "RICE", "BUTTER", "CHEESE",
    "ONIONS", "TEA", "PASTA", "HONEY", "CARROTS", "YOGURT", "LEMONS",
)
# The spoken track (--speech): no word of these is ever on screen.
SPOKEN_ITEMS = ("PASSPORT", "CHARGER", "SCARF", "RAINCOAT")
SPOKEN_SPOTS = ("BEHIND THE PIANO", "ON THE BOOKSHELF", "UNDER THE BED", "NEXT TO THE FRIDGE", "IN THE TOOLBOX", "BY THE FIREPLACE")
SPOKEN_ROLES = ("PLUMBER", "NEW NEIGHBOUR", "DENTIST", "TAXI DRIVER", "SWIMMING COACH")
SPOKEN_NAMES = ("OLIVER", "GRACE", "HENRY", "MAYA", "SAMUEL", "NORA", "VICTOR", "IRIS")
SPOKEN_LABELS = ("WIFI PASSWORD", "ALARM CODE", "PARKING SPACE NUMBER", "FLIGHT NUMBER")
SPEECH_CATEGORIES = {  # kind of line → (LVBench abilities, EgoLifeQA type)
    "item": (["key information retrieval"], ["EntityLog"]),
    "name": (["entity recognition"], ["RelationMap"]),
    "number": (["key information retrieval"], ["TaskMaster"]),
}


@dataclass(frozen=True)
class ScriptedEvent:
    t_start: float
    """Corpus seconds."""
    t_end: float
    text: str
    """Exactly the on-screen text."""
    kind: str
    """action, note, habit, placement, activity, meal, list or visit."""
    location: str
    video_id: str


@dataclass(frozen=True)
class SynthCorpus:
    root: Path
    format: SynthFormat
    videos: tuple[Path, ...]
    events: tuple[ScriptedEvent, ...]
    questions: tuple[Question, ...]
    """Loaded back from `questions_file` by the benchmark's own loader."""
    questions_file: Path
    timeline: TimelineKind
    pipeline: str
    """The shipped pipeline profile whose clip length the script is aligned to (`--pipeline NAME`)."""
    paraphrased_file: Path
    """The same questions reworded, options reordered (same format, same name, in `paraphrased/`)."""
    speech: tuple[SpokenLine, ...] = ()
    """What the sound track says and when (`--speech`; also written to `speech.json`)."""


@dataclass(frozen=True)
class _Shot:
    """What one stretch of video shows."""

    location: str
    text: str | None = None
    colour: str | None = None
    people: int = 0


@dataclass(frozen=True)
class _Slot:
    """Where a spoken line may go: one clip of one video."""

    video_id: str
    t0: float
    """Corpus seconds of the video's start."""
    start: float
    """File seconds of the clip's start."""
    length: float


@dataclass(frozen=True)
class _Said:
    """One spoken line as the synth planned it."""

    line: SpokenLine
    facts: dict
    at: float
    """File seconds where its samples start."""
    samples: np.ndarray


@dataclass
class _QSpec:
    question: str
    correct: str
    strong: list[str]
    """Distractors used first: the same kind of fact at another time (the same person's other
    action, the keys' earlier place, yesterday's lunch)."""
    distractors: list[str]
    """Further facts of the same kind that also appear in the video, drawn at random."""
    categories: list[str]
    targets: list[tuple[float, float]]
    until: float | None = None
    last_time: bool = False
    keywords: str = ""
    need_audio: bool = False
    options: list[str] = field(default_factory=list)
    letter: str = ""


def synth(
    outdir: str | Path,
    *,
    minutes: float | None = None,
    days: int | None = None,
    seed: int = 0,
    fmt: SynthFormat | None = None,
    size: tuple[int, int] = (640, 360),
    fps: int = 2,
    speech: bool = False,
) -> SynthCorpus:
    """Generate a scripted benchmark in `outdir` (deterministic per seed).

    `lvbench` (the default without `days`): one video of `minutes` (default 30). `egolife` (the
    default with `days`): `days` days (default 2) of 30-s clips at scripted times of day, with
    distractor and idle clips; with `minutes`, idle clips are added so each day holds that much
    footage. `speech`: every video gets a sound track with spoken lines (needs espeak-ng) and
    the questions a `need_audio` one about each line.
    """
    fmt = fmt or ("egolife" if days is not None else "lvbench")
    if fmt not in CLIP_SECONDS:
        raise VideomemError(f"--format: {fmt!r} is not one of: lvbench, egolife")
    if fps < 1 or fps > 30:
        raise VideomemError(f"fps {fps} is out of range (1-30)")
    width, height = size
    if width < 160 or height < 90 or width % 2 or height % 2:
        raise VideomemError(f"frame size {width}x{height}: needs even sides of at least 160x90")
    root = Path(outdir)
    if root.exists() and not root.is_dir():
        raise VideomemError(f"{root}: exists and is not a directory")
    if (root / "videos").exists() and any((root / "videos").iterdir()):
        raise VideomemError(f"{root}: already holds a generated benchmark; choose an empty directory")
    if speech:
        require_espeak()
    rng = random.Random(seed)
    if fmt == "lvbench":
        if days is not None:
            raise VideomemError("--days makes an EgoLife corpus; it cannot be used with --format lvbench")
        return _make_lvbench(root, rng, 30.0 if minutes is None else minutes, seed, size, fps, speech)
    days = 2 if days is None else days
    if not 2 <= days <= 7:
        raise VideomemError(f"--days {days}: an EgoLife-style corpus spans 2 to 7 days")
    return _make_egolife(root, rng, days, minutes, size, fps, seed, speech)


# --------------------------------------------------------------------------- single video (LVBench)


def _make_lvbench(
    root: Path, rng: random.Random, minutes: float, seed: int, size: tuple[int, int], fps: int, speech: bool
) -> SynthCorpus:
    if minutes < MIN_MINUTES:
        raise VideomemError(f"--minutes {minutes:g}: the scripted video needs at least {MIN_MINUTES} minutes")
    clip = CLIP_SECONDS["lvbench"]
    n_clips = int(round(minutes * 60 / clip))
    people = rng.sample(PEOPLE, 4)
    locations = rng.sample(list(LOCATIONS), 5)
    things = rng.sample(THINGS, 8)
    colours = rng.sample(list(COLOURS), 4) * 2
    rng.shuffle(colours)

    # Each entry: (kind, text, colour, people in frame, clips it lasts, facts for questions)
    specs: list[tuple[str, str, str | None, int, int, dict]] = []
    for i, person in enumerate(people):
        for j, (third, base) in enumerate(rng.sample(VERBS, 2)):
            colour, thing = colours[2 * i + j], things[2 * i + j]
            text = f"{person} {third} THE {colour} {thing}"
            facts = {"person": person, "third": third, "base": base, "object": f"{colour} {thing}"}
            specs.append(("action", text, colour, 1, rng.choice((1, 2)), facts))
    digits = rng.sample("123456789", 4)
    values = ["".join(p) for p in rng.sample(list(itertools.permutations(digits)), 3)]
    for label, value in zip(rng.sample(NOTE_LABELS, 3), values):
        specs.append(("note", f"THE {label} IS {value}", None, 0, 1, {"label": label, "value": value}))
    habit_person = rng.choice(people)
    habit_count = rng.randint(2, 4)
    for _ in range(habit_count):
        specs.append(("habit", f"{habit_person} WATERS THE PLANTS", "GREEN", 1, 1, {"person": habit_person}))
    spots = rng.sample(SPOTS, 6)
    for k, obj in enumerate(rng.sample(OBJECTS, 2)):
        for step, spot in enumerate(spots[3 * k : 3 * k + 3]):
            specs.append(("placement", f"{obj} {spot}", None, 0, 1, {"object": obj, "spot": spot, "step": step}))

    assert n_clips >= 3 * len(specs), "MIN_MINUTES leaves every event a section of 3 clips"
    rng.shuffle(specs)
    _order_chains(specs)

    key = f"synth{seed:04d}"
    bounds = [round(i * n_clips / len(specs)) for i in range(len(specs) + 1)]
    shots: list[_Shot] = []
    events: list[ScriptedEvent] = []
    facts_by_event: list[tuple[ScriptedEvent, dict]] = []
    previous = None
    for (kind, text, colour, n_people, length, facts), lo, hi in zip(specs, bounds, bounds[1:]):
        location = rng.choice([loc for loc in locations if loc != previous])
        previous = location
        start = rng.randint(lo + 1, hi - length)
        for index in range(lo, hi):
            inside = start <= index < start + length
            shots.append(_Shot(location, text, colour, n_people) if inside else _Shot(location))
        event = ScriptedEvent(start * clip, (start + length) * clip, text, kind, location, key)
        events.append(event)
        facts_by_event.append((event, facts))
    quiet = [i for i in range(1, len(shots) - 1) if not (shots[i - 1].text or shots[i].text or shots[i + 1].text)]
    for index, person in zip(sorted(rng.sample(quiet, LVBENCH_DISTRACTORS)), rng.choices(people, k=LVBENCH_DISTRACTORS)):
        text = f"{person} {rng.choice(IDLE_ACTIVITIES)}"
        shots[index] = _Shot(shots[index].location, text, None, 1)
        events.append(ScriptedEvent(index * clip, (index + 1) * clip, text, "distractor", shots[index].location, key))
    events.sort(key=lambda e: e.t_start)

    video = root / "videos" / f"{key}.mp4"
    speech_rng = random.Random(f"speech-{seed}")
    spoken: list[_Said] = []
    if speech:
        silent = [i for i, shot in enumerate(shots) if shot.text is None]
        halves = [silent[: len(silent) // 2], silent[len(silent) // 2 :]]
        spoken = _plan_speech(speech_rng, [[_Slot(key, 0.0, i * clip, clip) for i in half] for half in halves], False)
    with tempfile.TemporaryDirectory() as tmp:
        sound = _sound_track(Path(tmp), key, len(shots) * clip, spoken) if speech else None
        _encode(video, [(shot, clip) for shot in shots], size, fps, sound)
    specs_q = _lvbench_questions(rng, facts_by_event, habit_count)
    for spec in specs_q:
        _shuffle_options(rng, spec)
    specs_q += _speech_questions(speech_rng, spoken, "lvbench")
    questions_file = root / "video_info.meta.jsonl"
    _write_lvbench(questions_file, key, specs_q)
    _write_lvbench(root / "paraphrased" / questions_file.name, key, _paraphrase(specs_q, seed))
    _write_script(root, events)
    if speech:
        _write_speech(root, spoken)
    return SynthCorpus(
        root,
        "lvbench",
        (video,),
        tuple(events),
        tuple(load_lvbench(questions_file)),
        questions_file,
        "single",
        "default",
        root / "paraphrased" / questions_file.name,
        tuple(said.line for said in spoken),
    )


def _order_chains(specs: list[tuple]) -> None:
    """Placements of one object happen in step order, wherever the shuffle put them."""
    for obj in sorted({s[5]["object"] for s in specs if s[0] == "placement"}):
        slots = [i for i, s in enumerate(specs) if s[0] == "placement" and s[5]["object"] == obj]
        ordered = sorted((specs[i] for i in slots), key=lambda s: s[5]["step"])
        for slot, spec in zip(slots, ordered):
            specs[slot] = spec


def _lvbench_questions(
    rng: random.Random, facts_by_event: list[tuple[ScriptedEvent, dict]], habit_count: int
) -> list[_QSpec]:
    actions = [(e, f) for e, f in facts_by_event if e.kind == "action"]
    people = sorted({f["person"] for _, f in actions})
    used_locations = sorted({e.location for e, _ in facts_by_event})

    def obj(f: dict) -> str:
        return f"The {f['object'].lower()}"

    def nearest(event: ScriptedEvent) -> list[tuple[ScriptedEvent, dict]]:
        return sorted((a for a in actions if a[0] is not event), key=lambda a: abs(a[0].t_start - event.t_start))

    questions: list[_QSpec] = []
    for i, (event, f) in enumerate(actions):
        person, base, third = f["person"].title(), f["base"], f["third"].lower()
        thing = f["object"].lower()
        span = [(event.t_start, event.t_end)]
        same_person = [g for _, g in actions if g is not f and g["person"] == f["person"]]
        for template in (i % 3, (i + 1) % 3):
            if template == 0:
                questions.append(_QSpec(
                    f"What does {person} {base}?",
                    obj(f),
                    [obj(g) for g in same_person],
                    [obj(g) for _, g in actions],
                    ["key information retrieval"],
                    span,
                ))
            elif template == 1:
                questions.append(_QSpec(
                    f"Who {third} the {thing}?",
                    person,
                    [],
                    [p.title() for p in people],
                    ["entity recognition"],
                    span,
                ))
            else:
                questions.append(_QSpec(
                    f"Where does {person} {base} the {thing}?",
                    f"In the {event.location.lower()}",
                    [f"In the {e.location.lower()}" for e, g in actions if g in same_person],
                    [f"In the {loc.lower()}" for loc in used_locations],
                    ["event understanding", "key information retrieval"],
                    span,
                ))
    notes = [(e, f) for e, f in facts_by_event if e.kind == "note"]
    for event, f in notes:
        questions.append(_QSpec(
            f"What is the {f['label'].lower()}?",
            f["value"],
            [g["value"] for _, g in notes],
            [f["value"][::-1], f["value"][1:] + f["value"][0]],
            ["key information retrieval"],
            [(event.t_start, event.t_end)],
        ))
    habits = [e for e, _ in facts_by_event if e.kind == "habit"]
    habit_person = next(f["person"] for e, f in facts_by_event if e.kind == "habit")
    questions.append(_QSpec(
        f"How many times does {habit_person.title()} water the plants?",
        _times(habit_count),
        [_times(habit_count - 1), _times(habit_count + 1)],
        [_times(n) for n in range(1, 7)],
        ["reasoning", "summarization"],
        [(e.t_start, e.t_end) for e in habits],
    ))
    placements = [(e, f) for e, f in facts_by_event if e.kind == "placement"]
    for name in sorted({f["object"] for _, f in placements}):
        chain = [(e, f) for e, f in placements if f["object"] == name]
        noun = f"are the {name.lower()}" if name.endswith("S") else f"is the {name.lower()}"
        for which, (event, f) in (("first", chain[0]), ("last", chain[-1])):
            questions.append(_QSpec(
                f"Where {noun} put {which}?",
                _sentence(f["spot"]),
                [_sentence(g["spot"]) for _, g in chain],
                [_sentence(g["spot"]) for _, g in placements],
                ["temporal grounding", "reasoning"] if which == "last" else ["temporal grounding"],
                [(event.t_start, event.t_end)],
            ))
    event, f = rng.choice(actions)
    questions.append(_QSpec(
        f"What happens at {_mmss((event.t_start + event.t_end) / 2)}?",
        _sentence(event.text),
        [_sentence(e.text) for e, _ in nearest(event)[:2]],
        [_sentence(e.text) for e, _ in actions],
        ["temporal grounding"],
        [(event.t_start, event.t_end)],
    ))
    event, f = rng.choice(actions)
    questions.append(_QSpec(
        f"When does {f['person'].title()} {f['base']} the {f['object'].lower()}?",
        _range(event.t_start, event.t_end),
        [_range(e.t_start, e.t_end) for e, _ in nearest(event)[:2]],
        [_range(e.t_start, e.t_end) for e, _ in actions],
        ["temporal grounding"],
        [(event.t_start, event.t_end)],
    ))
    return questions


def _write_lvbench(path: Path, key: str, specs: list[_QSpec]) -> None:
    qa = []
    for uid, spec in enumerate(specs, 1):
        options = "".join(f"\n({LETTERS[i]}) {opt}" for i, opt in enumerate(spec.options))
        qa.append(
            {
                "uid": str(uid),
                "question": spec.question + options,
                "answer": spec.letter,
                "question_type": spec.categories,
                "time_reference": ", ".join(_range(a, b) for a, b in spec.targets),
                **({"need_audio": True} if spec.need_audio else {}),
            }
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": key, "type": "synthetic", "qa": qa}) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------- EgoLife-style corpus


def _make_egolife(
    root: Path,
    rng: random.Random,
    days: int,
    minutes: float | None,
    size: tuple[int, int],
    fps: int,
    seed: int,
    speech: bool,
) -> SynthCorpus:
    clip = CLIP_SECONDS["egolife"]
    people = rng.sample(PEOPLE, min(2 * days, len(PEOPLE)))
    activities = rng.sample(ACTIVITIES, days)
    foods = rng.sample(FOODS, days)
    groceries = rng.sample(GROCERIES, 2 * days)
    spots = _spot_sequence(rng, 2 * days)

    # (seconds of day, day index, kind, text, location, colour, people in frame, facts)
    plan: list[tuple[float, int, str, str, str, str | None, int, dict]] = []
    for d in range(days):
        partner, visitor = people[(2 * d) % len(people)], people[(2 * d + 1) % len(people)]
        shopping = f"{groceries[2 * d]} AND {groceries[2 * d + 1]}"
        plan += [
            (_hms(8, 0), d, "habit", "MAKING COFFEE", "KITCHEN", "ORANGE", 0, {"habit": "morning"}),
            (_hms(8, 30), d, "placement", f"KEYS {spots[2 * d]}", "HALLWAY", None, 0, {"step": 2 * d}),
            (_hms(10, 0), d, "activity", f"{activities[d][0]} WITH {partner}", "LIVING ROOM", "BLUE", 2,
             {"person": partner, "activity": activities[d][1]}),
            (_hms(12, 30), d, "meal", f"EATING {foods[d]} FOR LUNCH", "KITCHEN", "YELLOW", 0, {"food": foods[d]}),
            (_hms(15, 0), d, "list", f"SHOPPING LIST: {shopping}", "OFFICE", None, 0, {"items": shopping}),
            (_hms(16, 30), d, "visit", f"{visitor} COMES TO VISIT", "HALLWAY", "PURPLE", 1, {"person": visitor}),
            (_hms(18, 0), d, "habit", "WALKING THE DOG", "GARDEN", "GREEN", 1, {"habit": "evening"}),
            (_hms(19, 30), d, "placement", f"KEYS {spots[2 * d + 1]}", "HALLWAY", None, 0, {"step": 2 * d + 1}),
        ]
    files: list[tuple[Path, list[tuple[_Shot, float]]]] = []
    events: list[ScriptedEvent] = []
    facts: list[tuple[ScriptedEvent, dict]] = []
    for second, d, kind, text, location, colour, n_people, fact in plan:
        t = d * DAY + second
        path = _egolife_path(root, t)
        events.append(ScriptedEvent(t, t + clip, text, kind, location, path.stem))
        facts.append((events[-1], fact))
        files.append((path, [(_Shot(location, text, colour, n_people), clip)]))
    for d in range(days):
        for second, (text, location) in zip(
            _free_slots(rng, d, {e.t_start for e in events}, clip, EGOLIFE_DISTRACTORS_PER_DAY),
            rng.sample(EGOLIFE_DISTRACTORS, EGOLIFE_DISTRACTORS_PER_DAY),
        ):
            t = d * DAY + second
            path = _egolife_path(root, t)
            events.append(ScriptedEvent(t, t + clip, text, "distractor", location, path.stem))
            files.append((path, [(_Shot(location, text, None, 0), clip)]))
    files += _idle_clips(root, rng, days, minutes, {e.t_start for e in events}, clip)
    speech_rng = random.Random(f"speech-{seed}")
    spoken: list[_Said] = []
    if speech:
        by_day: list[list[_Slot]] = [[] for _ in range(days)]
        for path, _ in sorted(files):
            start = egolife_start(path)
            by_day[int(start // DAY)].append(_Slot(path.stem, start, 0.0, clip))
        spoken = _plan_speech(speech_rng, by_day, True)
    with tempfile.TemporaryDirectory() as tmp:
        for path, shots in files:
            seconds = sum(length for _, length in shots)
            sound = _sound_track(Path(tmp), path.stem, seconds, spoken) if speech else None
            _encode(path, shots, size, fps, sound)

    specs = _egolife_questions(facts, days, spots, foods, groceries, activities)
    for spec in specs:
        _shuffle_options(rng, spec)
    specs += _speech_questions(speech_rng, spoken, "egolife")
    questions_file = root / "EgoLifeQA_A1_JAKE.json"
    _write_egolife(questions_file, specs)
    _write_egolife(root / "paraphrased" / questions_file.name, _paraphrase(specs, seed))
    _write_script(root, events)
    if speech:
        _write_speech(root, spoken)
    return SynthCorpus(
        root,
        "egolife",
        tuple(sorted(p for p, _ in files)),
        tuple(sorted(events, key=lambda e: e.t_start)),
        tuple(load_egolife(questions_file)),
        questions_file,
        "egolife",
        "egolife",
        root / "paraphrased" / questions_file.name,
        tuple(said.line for said in spoken),
    )


def _spot_sequence(rng: random.Random, n: int) -> list[str]:
    """Places of the keys over time: distinct while the list lasts, never the same twice in a row."""
    spots: list[str] = []
    while len(spots) < n:
        batch = rng.sample(SPOTS, len(SPOTS))
        if spots and batch[0] == spots[-1]:
            batch.reverse()
        spots += batch
    return spots[:n]


def _free_slots(rng: random.Random, day: int, taken: set[float], clip: float, n: int, minutes: float | None = None) -> list[float]:
    """`n` clip start times (seconds of day) between 07:00 and 22:00 of `day` that touch no taken clip."""
    free = [
        s for s in range(int(_hms(7, 0)), int(_hms(22, 0)), int(clip))
        if not {day * DAY + s - clip, day * DAY + s, day * DAY + s + clip} & taken
    ]
    if n > len(free):
        raise VideomemError(f"--minutes {minutes}: more footage than one day of the script can hold")
    return sorted(float(s) for s in rng.sample(free, max(n, 0)))


def _idle_clips(
    root: Path, rng: random.Random, days: int, minutes: float | None, taken: set[float], clip: float
) -> list[tuple[Path, list[tuple[_Shot, float]]]]:
    """A room and nobody doing anything: EGOLIFE_IDLE_PER_DAY clips a day, or as many as fill `minutes`."""
    per_day = EGOLIFE_IDLE_PER_DAY if minutes is None else int(round(minutes * 60 / clip)) - len(taken) // days
    clips = []
    for d in range(days):
        for second in _free_slots(rng, d, taken, clip, per_day, minutes):
            location = rng.choice(list(LOCATIONS))
            clips.append((_egolife_path(root, d * DAY + second), [(_Shot(location), clip)]))
    return clips


def _egolife_questions(
    facts: list[tuple[ScriptedEvent, dict]],
    days: int,
    spots: list[str],
    foods: Sequence[str],
    groceries: Sequence[str],
    activities: Sequence[tuple[str, str]],
) -> list[_QSpec]:
    questions: list[_QSpec] = []
    end = (days - 1) * DAY + _hms(21, 0)

    def of(kind: str) -> list[tuple[ScriptedEvent, dict]]:
        return [(e, f) for e, f in facts if e.kind == kind]

    def point(event: ScriptedEvent) -> list[tuple[float, float]]:
        return [(event.t_start + 10, event.t_start + 10)]

    for event, f in of("placement"):
        questions.append(_QSpec(
            "Where did I last put the keys?",
            _sentence(spots[f["step"]]),
            [_sentence(s) for s in spots[: f["step"]][::-1]],
            [_sentence(s) for s in spots],
            ["EntityLog"],
            point(event),
            until=event.t_end + 2 * 3600,
            last_time=True,
            keywords="keys",
        ))
    for event, f in of("meal"):
        questions.append(_QSpec(
            "What did I last eat for lunch?",
            _sentence(f["food"]),
            [_sentence(x) for x in foods],
            [_sentence(g) for g in groceries],
            ["EventRecall"],
            point(event),
            until=event.t_end + 1.5 * 3600,
            last_time=True,
            keywords="lunch",
        ))
    real = {frozenset(f["items"].split(" AND ")) for _, f in of("list")}
    mixed = [
        f"{_sentence(a)} and {b.lower()}"
        for i, a in enumerate(groceries)
        for b in groceries[i + 1:]
        if frozenset((a, b)) not in real
    ]
    for event, f in of("list"):
        questions.append(_QSpec(
            "What is on my latest shopping list?",
            _sentence(f["items"]),
            [_sentence(g["items"]) for _, g in of("list")],
            mixed,
            ["TaskMaster"],
            point(event),
            until=event.t_end + 2 * 3600,
            last_time=True,
            keywords="shopping list",
        ))
    named = [f["person"].title() for _, f in of("activity") + of("visit")]
    for event, f in of("activity"):
        questions.append(_QSpec(
            f"Who did I {f['activity']} with?",
            f["person"].title(),
            named,
            [p.title() for p in PEOPLE],
            ["RelationMap"],
            point(event),
            until=end,
            keywords=f["activity"],
        ))
    habit_answers = {"morning": "Make coffee", "evening": "Walk the dog"}
    for moment, phrase in (("morning", "first thing in the morning"), ("evening", "in the evening")):
        questions.append(_QSpec(
            f"What do I usually do {phrase}?",
            habit_answers[moment],
            list(habit_answers.values()),
            [a[1].capitalize() for a in activities],
            ["HabitInsight"],
            [p for e, f in facts if f.get("habit") == moment for p in point(e)],
            until=end,
            keywords=habit_answers[moment].lower(),
        ))
    return questions


def _write_egolife(path: Path, specs: list[_QSpec]) -> None:
    records = []
    for number, spec in enumerate(specs, 1):
        date, time = format_egolife(spec.until or 0.0)
        record = {
            "ID": str(number),
            "query_time": {"date": date, "time": time},
            "type": spec.categories[0],
            "need_audio": spec.need_audio,
            "need_name": spec.categories[0] == "RelationMap",
            "last_time": spec.last_time,
            "trigger": "",
            "question": spec.question,
            **{f"choice_{c.lower()}": opt for c, opt in zip("ABCD", spec.options)},
            "answer": spec.letter,
            "target_time": _egolife_target(spec.targets),
            "keywords": spec.keywords,
            "reason": f"{'Heard' if spec.need_audio else 'On screen'}: {spec.correct}",
        }
        records.append(record)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")


def _egolife_target(targets: list[tuple[float, float]]) -> dict:
    """The release's three forms: one time, several times of one day, or — for times on several
    days, which the release has no list for — the range from the first to the last."""
    points = [format_egolife(a) for a, _ in targets]
    if len(points) == 1:
        return {"date": points[0][0], "time": points[0][1]}
    if len({d for d, _ in points}) == 1:
        return {"date": points[0][0], "time_list": [t for _, t in points]}
    (first_day, first), (last_day, last) = points[0], points[-1]
    return {"date": first_day, "time": f"{first}{last_day}_{last}"}


def _egolife_path(root: Path, t: float) -> Path:
    date, code = format_egolife(t)
    return root / "videos" / date / f"{date}_A1_JAKE_{code}.mp4"


# --------------------------------------------------------------------------- spoken track (--speech)


def _spoken_facts(rng: random.Random, groups: int, one_item: bool) -> list[list[tuple[str, str, dict]]]:
    """Per group (a day, or half of the single video): an item's place, a name and a number,
    as (kind, words spoken, facts). With `one_item` every group moves the same item, so where
    it is depends on when the question is asked."""
    items = [rng.choice(SPOKEN_ITEMS)] * groups if one_item else rng.sample(SPOKEN_ITEMS, groups)
    spots, roles = rng.sample(SPOKEN_SPOTS, groups), rng.sample(SPOKEN_ROLES, groups)
    names, labels = rng.sample(SPOKEN_NAMES, groups), rng.sample(SPOKEN_LABELS, groups)
    numbers: list[str] = []
    while len(numbers) < groups:
        # Always a 0 in it: on-screen numbers use the digits 1-9 only, so they never coincide.
        digits = ["0", *rng.sample("123456789", 3)]
        rng.shuffle(digits)
        if digits[0] != "0" and "".join(digits) not in numbers:
            numbers.append("".join(digits))
    return [
        [
            ("item", f"Your {items[g].lower()} is {spots[g].lower()}.", {"item": items[g], "spot": spots[g]}),
            ("name", f"The {roles[g].lower()} is called {names[g].title()}.", {"role": roles[g], "name": names[g]}),
            ("number", f"The {labels[g].lower()} is {numbers[g]}.", {"label": labels[g], "number": numbers[g]}),
        ]
        for g in range(groups)
    ]


def _plan_speech(rng: random.Random, slots_by_group: list[list[_Slot]], one_item: bool) -> list[_Said]:
    """Each group's lines in distinct clips of its slots, at a random moment of the clip, each in
    a random voice; in time order."""
    spoken = []
    for group, slots in zip(_spoken_facts(rng, len(slots_by_group), one_item), slots_by_group):
        for (kind, text, facts), slot in zip(group, rng.sample(slots, len(group))):
            voice = rng.choice(VOICES)
            samples = speak(text, voice)
            seconds = len(samples) / SAMPLE_RATE
            if seconds > slot.length - 2:
                raise AssertionError(f"script bug: {text!r} lasts {seconds:.1f} s, more than a clip holds")
            at = slot.start + round(rng.uniform(1.0, slot.length - 1.0 - seconds), 1)
            line = SpokenLine(slot.t0 + at, slot.t0 + at + seconds, text, kind, voice, slot.video_id)
            spoken.append(_Said(line, facts, at, samples))
    return sorted(spoken, key=lambda said: said.line.t_start)


def _sound_track(tmp: Path, video_id: str, seconds: float, spoken: list[_Said]) -> Path:
    """The video's track as a WAV in `tmp`: silence, and its lines where the script puts them."""
    path = tmp / f"{video_id}.wav"
    write_track(path, seconds, [(said.at, said.samples) for said in spoken if said.line.video_id == video_id])
    return path


def _speech_questions(rng: random.Random, spoken: list[_Said], fmt: SynthFormat) -> list[_QSpec]:
    """A `need_audio` question per line, options shuffled. Distractors are first what other
    lines said of the same kind (the item's other places, the other names and numbers)."""
    clip = CLIP_SECONDS[fmt]

    def of(kind: str) -> list[_Said]:
        return [said for said in spoken if said.line.kind == kind]

    questions = []
    for said in spoken:
        line, f = said.line, said.facts
        if line.kind == "item":
            text, correct = f"Where did someone last say my {f['item'].lower()} is?", _sentence(f["spot"])
            strong = [_sentence(o.facts["spot"]) for o in sorted(of("item"), key=lambda o: -o.line.t_start)]
            pool, keywords = [_sentence(x) for x in SPOKEN_SPOTS], f["item"].lower()
        elif line.kind == "name":
            text, correct = f"What did someone say the {f['role'].lower()} is called?", f["name"].title()
            strong = [o.facts["name"].title() for o in of("name")]
            pool, keywords = [x.title() for x in SPOKEN_NAMES], f["role"].lower()
        else:
            number = f["number"]
            text, correct = f"What did someone say the {f['label'].lower()} is?", number
            strong = [o.facts["number"] for o in of("number")]
            pool, keywords = [number[::-1], number[1:] + number[0], number[-1] + number[:-1]], f["label"].lower()
        if fmt == "lvbench":
            clip_start = line.t_start - line.t_start % clip
            targets, until = [(clip_start, clip_start + clip)], None
        else:
            middle = (line.t_start + line.t_end) / 2
            targets, until = [(middle, middle)], line.t_end + 2 * 3600
        categories = SPEECH_CATEGORIES[line.kind][fmt == "egolife"]
        spec = _QSpec(text, correct, strong, pool, list(categories), targets, until=until,
                      last_time=fmt == "egolife" and line.kind == "item", keywords=keywords, need_audio=True)
        _shuffle_options(rng, spec)
        questions.append(spec)
    return questions


def _write_speech(root: Path, spoken: list[_Said]) -> None:
    lines = [asdict(said.line) for said in spoken]
    (root / "speech.json").write_text(json.dumps(lines, indent=1) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------- shared helpers


def _shuffle_options(rng: random.Random, spec: _QSpec) -> None:
    strong = [d for d in dict.fromkeys(spec.strong) if d != spec.correct][:3]
    pool = [d for d in dict.fromkeys(spec.distractors) if d != spec.correct and d not in strong]
    if len(strong) + len(pool) < 3:
        raise AssertionError(f"script bug: fewer than 3 distractors for {spec.question!r}")
    options = [spec.correct, *strong, *rng.sample(pool, 3 - len(strong))]
    rng.shuffle(options)
    spec.options = options
    spec.letter = LETTERS[options.index(spec.correct)]


_REWORDINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # (pattern of a question template, rewordings); {v} / {v3} a verb's synonym, {t} a thing's
    (r"What does (?P<p>\w+) (?P<v>\w+)\?", ("Which thing does {p} {v}?", "What object gets {v3_by} {p}?")),
    (r"Who (?P<v3>\w+) the (?P<t>[\w ]+)\?", ("Which person {v3} the {t}?", "Who is the one that {v3} the {t}?")),
    (r"Where does (?P<p>\w+) (?P<v>\w+) the (?P<t>[\w ]+)\?", ("In which room does {p} {v} the {t}?",)),
    (r"When does (?P<p>\w+) (?P<v>\w+) the (?P<t>[\w ]+)\?", ("At what time does {p} {v} the {t}?",)),
    (r"What is the (?P<x>[\w ]+)\?", ("Which number is the {x}?", "What was the {x} shown as?")),
    (r"How many times does (?P<p>\w+) water the plants\?", ("How often does {p} give the plants water?",)),
    (r"Where (?P<be>is|are) the (?P<x>\w+) put first\?", ("Where {be} the {x} placed initially?",)),
    (r"Where (?P<be>is|are) the (?P<x>\w+) put last\?", ("Where {be} the {x} placed most recently?",)),
    (r"What happens at (?P<x>[\d:]+)\?", ("What is going on at {x}?", "What can be seen at {x}?")),
    (r"Where did I last put the keys\?", ("Where did I most recently leave my keys?",)),
    (r"What did I last eat for lunch\?", ("What was my most recent lunch?",)),
    (r"What is on my latest shopping list\?", ("Which items are on my most recent grocery list?",)),
    (r"Who did I (?P<x>[\w ]+) with\?", ("With whom did I {x}?", "Who joined me to {x}?")),
    (r"What do I usually do first thing in the morning\?", ("What is my habit early in the morning?",)),
    (r"What do I usually do in the evening\?", ("What do I do most evenings?",)),
    (r"Where did someone last say my (?P<x>[\w ]+) is\?", ("Where was I most recently told my {x} is?",)),
    (r"What did someone say the (?P<x>[\w ]+) is called\?", ("Which name was mentioned for the {x}?",)),
    (r"What did someone say the (?P<x>[\w ]+) is\?", ("Which {x} was I told?", "What {x} was mentioned?")),
)


def _paraphrase(specs: list[_QSpec], seed: int) -> list[_QSpec]:
    """Copies of the questions, each reworded (another template; a synonym for its verb or its
    thing, never both, so it still names the moment) with its options in another order. Its own
    random stream: nothing else in the corpus depends on it."""
    rng = random.Random(f"paraphrase-{seed}")
    out = []
    for original in specs:
        spec = dataclasses.replace(original, options=list(original.options))
        for pattern, rewordings in _REWORDINGS:
            match = re.fullmatch(pattern, spec.question)
            if match:
                spec.question = _reword(rng, rng.choice(rewordings), match.groupdict())
                break
        else:
            raise AssertionError(f"script bug: no rewording for {spec.question!r}")
        order = list(spec.options)
        while len(order) > 1 and order == spec.options:
            rng.shuffle(order)
        spec.options = order
        spec.letter = LETTERS[order.index(spec.correct)]
        out.append(spec)
    return out


def _reword(rng: random.Random, template: str, parts: dict[str, str]) -> str:
    third_to_base = {third.lower(): base for third, base in VERBS}
    base = parts.get("v") or third_to_base.get(parts.get("v3", ""), "")
    thing = parts.get("t", "")
    swap_verb = base in VERB_SYNONYMS and (not thing or rng.random() < 0.5)
    if swap_verb:
        new_base, new_third = VERB_SYNONYMS[base]
    else:
        new_base, new_third = base, next((t.lower() for t, b in VERBS if b == base), "")
        words = thing.split()
        if words and words[-1] in THING_SYNONYMS:
            thing = " ".join([*words[:-1], THING_SYNONYMS[words[-1]]])
    values = {**parts, "v": new_base, "v3": new_third, "t": thing}
    if "{v3_by}" in template:
        values["v3_by"] = f"{_participle(new_base)} by"
    return template.format(**values)


def _participle(base: str) -> str:
    """'pull open' → 'pulled open', 'carry' → 'carried', 'fix' → 'fixed'."""
    verb, *rest = base.split()
    if verb.endswith("y"):
        verb = verb[:-1] + "ied"
    else:
        verb = verb + ("d" if verb.endswith("e") else "ed")
    return " ".join([verb, *rest])


def _write_script(root: Path, events: list[ScriptedEvent]) -> None:
    (root / "script.json").write_text(json.dumps([asdict(e) for e in events], indent=1) + "\n", encoding="utf-8")


def _hms(hours: int, minutes: int) -> float:
    return hours * 3600.0 + minutes * 60.0


def _mmss(seconds: float) -> str:
    total = int(round(seconds))
    if total >= 3600:
        return f"{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}"
    return f"{total // 60:02d}:{total % 60:02d}"


def _range(t_start: float, t_end: float) -> str:
    return f"{_mmss(t_start)}-{_mmss(t_end)}"


def _times(n: int) -> str:
    return "Once" if n == 1 else f"{n} times"


def _sentence(text: str) -> str:
    return text[0] + text[1:].lower()


# --------------------------------------------------------------------------- pixels


def _encode(
    path: Path, shots: list[tuple[_Shot, float]], size: tuple[int, int], fps: int, sound: Path | None = None
) -> None:
    """H.264 at a low frame rate with a keyframe every second: small files, fast to write and seek.
    `sound`: a WAV as long as the shots, muxed in as AAC (the frames are encoded alike)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = imageio_ffmpeg.write_frames(
        str(path),
        size,
        fps=fps,
        codec="libx264",
        quality=None,
        macro_block_size=1,
        ffmpeg_log_level="error",
        output_params=["-g", str(fps), "-preset", "veryfast", "-crf", "20", "-threads", "1"],
        audio_path=None if sound is None else str(sound),
        audio_codec=None if sound is None else "aac",
    )
    writer.send(None)
    try:
        for shot, seconds in shots:
            frame = _render(shot, size)
            for _ in range(int(round(seconds * fps))):
                writer.send(frame)
    finally:
        writer.close()


@lru_cache(maxsize=256)
def _render(shot: _Shot, size: tuple[int, int]) -> bytes:
    return _image(shot, size).tobytes()


def _image(shot: _Shot, size: tuple[int, int] = (640, 360)) -> Image.Image:
    """Background and header by location; the event as dark text on a light panel; a shape in the
    event's colour; one simple figure per person."""
    width, height = size
    image = Image.new("RGB", size, LOCATIONS[shot.location])
    draw = ImageDraw.Draw(image)
    _draw_room(draw, shot.location, width, height)
    header = int(height * 0.14)
    draw.rectangle([0, 0, width, header], fill=(28, 28, 28))
    draw.text((width / 2, header / 2), shot.location, font=_font(int(height * 0.09)), fill=(255, 255, 255), anchor="mm")
    if shot.text:
        box = (int(width * 0.04), int(height * 0.2), int(width * 0.96), int(height * 0.62))
        draw.rectangle(box, fill=(246, 246, 240))
        lines, font = _fit(shot.text, box[2] - box[0] - int(width * 0.04), height)
        draw.multiline_text(
            ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2),
            "\n".join(lines),
            font=font,
            fill=(12, 12, 12),
            anchor="mm",
            align="center",
            spacing=int(height * 0.03),
            stroke_width=1,
            stroke_fill=(12, 12, 12),
        )
    if shot.colour:
        draw.rectangle(
            [int(width * 0.08), int(height * 0.68), int(width * 0.32), int(height * 0.95)], fill=COLOURS[shot.colour]
        )
    for i in range(shot.people):
        x = int(width * (0.62 + 0.14 * i))
        head = int(height * 0.05)
        draw.ellipse([x - head, int(height * 0.67), x + head, int(height * 0.67) + 2 * head], fill=(235, 200, 170))
        draw.rectangle([x - int(head * 1.3), int(height * 0.67) + 2 * head, x + int(head * 1.3), int(height * 0.97)],
                       fill=(40, 40, 60))
    return image


def _draw_room(draw: ImageDraw.ImageDraw, location: str, width: int, height: int) -> None:
    """A floor band and a location-specific pattern, so rooms differ beyond their colour."""
    base = LOCATIONS[location]
    darker = tuple(int(c * 0.7) for c in base)
    draw.rectangle([0, int(height * 0.64), width, height], fill=darker)
    pattern = list(LOCATIONS).index(location)
    lighter = tuple(min(255, int(c * 1.2)) for c in base)
    for k in range(1, 6):
        if pattern % 2:
            x = int(width * k / 6)
            draw.line([x, int(height * 0.64), x, height], fill=base, width=3)
        else:
            y = int(height * (0.64 + 0.06 * k))
            draw.line([0, y, width, y], fill=lighter, width=2)


@lru_cache(maxsize=64)
def _font(pixels: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=pixels)


def _fit(text: str, max_width: int, height: int) -> tuple[list[str], ImageFont.FreeTypeFont | ImageFont.ImageFont]:
    """One line when it fits at a readable size, else two balanced lines."""
    largest, smallest = int(height * 0.11), int(height * 0.075)
    words = text.split()
    candidates = [[text]] + [
        [" ".join(words[:k]), " ".join(words[k:])]
        for k in sorted(range(1, len(words)), key=lambda k: abs(len(" ".join(words[:k])) - len(text) / 2))
    ]
    for lines in candidates:
        for pixels in range(largest, smallest - 1, -2):
            font = _font(pixels)
            if max(font.getlength(line) for line in lines) <= max_width:
                return lines, font
    font = _font(smallest)
    return candidates[-1], font
