"""The two scripts: one long single video (LVBench-style) and days of short clips (EgoLife-style),
each with its events, its questions, and the files of a benchmark."""

from __future__ import annotations

import itertools
import json
import random
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from videomem.errors import SynthError
from videomem.eval.egolife import load_egolife
from videomem.eval.lvbench import load_lvbench
from videomem.eval.questions import Question
from videomem.synth.formats import (
    CLIP_SECONDS, QSpec, SynthFormat, mmss, shuffle_options, sentence, time_range, write_egolife, write_lvbench,
)
from videomem.synth.paraphrase import paraphrase
from videomem.synth.render import Shot, encode
from videomem.synth.speech import Said, Slot, SpokenLine, plan_speech, require_espeak, sound_track, speech_questions, write_speech
from videomem.synth.vocabulary import (
    ACTIVITIES, COLOURS, EGOLIFE_DISTRACTORS, FOODS, GROCERIES, IDLE_ACTIVITIES, LOCATIONS, NOTE_LABELS, OBJECTS, PEOPLE,
    SPOTS, THINGS, VERBS,
)
from videomem.timeline import DAY, TimelineKind, egolife_start, format_egolife

MIN_MINUTES = 12
"""The single-video script has up to 22 events, each in its own stretch of at least 3 clips."""
LVBENCH_DISTRACTORS = 4
EGOLIFE_DISTRACTORS_PER_DAY = 3
EGOLIFE_IDLE_PER_DAY = 3
"""Idle clips per day when `minutes` does not set the footage."""


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
    colour: str | None = None
    """The colour of the shape drawn beside the text (not written on screen), if any."""


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
        raise SynthError(f"--format: {fmt!r} is not one of: lvbench, egolife")
    if fps < 1 or fps > 30:
        raise SynthError(f"fps {fps} is out of range (1-30)")
    width, height = size
    if width < 160 or height < 90 or width % 2 or height % 2:
        raise SynthError(f"frame size {width}x{height}: needs even sides of at least 160x90")
    root = Path(outdir)
    if root.exists() and not root.is_dir():
        raise SynthError(f"{root}: exists and is not a directory")
    if (root / "videos").exists() and any((root / "videos").iterdir()):
        raise SynthError(f"{root}: already holds a generated benchmark; choose an empty directory")
    if speech:
        require_espeak()
    rng = random.Random(seed)
    if fmt == "lvbench":
        if days is not None:
            raise SynthError("--days makes an EgoLife corpus; it cannot be used with --format lvbench")
        return _make_lvbench(root, rng, 30.0 if minutes is None else minutes, seed, size, fps, speech)
    days = 2 if days is None else days
    if not 2 <= days <= 7:
        raise SynthError(f"--days {days}: an EgoLife-style corpus spans 2 to 7 days")
    return _make_egolife(root, rng, days, minutes, size, fps, seed, speech)


# --------------------------------------------------------------------------- single video (LVBench)


def _make_lvbench(
    root: Path, rng: random.Random, minutes: float, seed: int, size: tuple[int, int], fps: int, speech: bool
) -> SynthCorpus:
    if minutes < MIN_MINUTES:
        raise SynthError(f"--minutes {minutes:g}: the scripted video needs at least {MIN_MINUTES} minutes")
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

    if n_clips < 3 * len(specs):
        raise AssertionError("script bug: MIN_MINUTES must leave every event a section of 3 clips")
    rng.shuffle(specs)
    _order_chains(specs)

    key = f"synth{seed:04d}"
    bounds = [round(i * n_clips / len(specs)) for i in range(len(specs) + 1)]
    shots: list[Shot] = []
    events: list[ScriptedEvent] = []
    facts_by_event: list[tuple[ScriptedEvent, dict]] = []
    previous = None
    for (kind, text, colour, n_people, length, facts), lo, hi in zip(specs, bounds, bounds[1:]):
        location = rng.choice([loc for loc in locations if loc != previous])
        previous = location
        start = rng.randint(lo + 1, hi - length)
        for index in range(lo, hi):
            inside = start <= index < start + length
            shots.append(Shot(location, text, colour, n_people) if inside else Shot(location))
        event = ScriptedEvent(start * clip, (start + length) * clip, text, kind, location, key, colour)
        events.append(event)
        facts_by_event.append((event, facts))
    quiet = [i for i in range(1, len(shots) - 1) if not (shots[i - 1].text or shots[i].text or shots[i + 1].text)]
    for index, person in zip(sorted(rng.sample(quiet, LVBENCH_DISTRACTORS)), rng.choices(people, k=LVBENCH_DISTRACTORS)):
        text = f"{person} {rng.choice(IDLE_ACTIVITIES)}"
        shots[index] = Shot(shots[index].location, text, None, 1)
        events.append(ScriptedEvent(index * clip, (index + 1) * clip, text, "distractor", shots[index].location, key))
    events.sort(key=lambda e: e.t_start)

    video = root / "videos" / f"{key}.mp4"
    speech_rng = random.Random(f"speech-{seed}")
    spoken: list[Said] = []
    if speech:
        silent = [i for i, shot in enumerate(shots) if shot.text is None]
        halves = [silent[: len(silent) // 2], silent[len(silent) // 2 :]]
        spoken = plan_speech(speech_rng, [[Slot(key, 0.0, i * clip, clip) for i in half] for half in halves], False)
    with tempfile.TemporaryDirectory() as tmp:
        sound = sound_track(Path(tmp), key, len(shots) * clip, spoken) if speech else None
        encode(video, [(shot, clip) for shot in shots], size, fps, sound)
    specs_q = _lvbench_questions(rng, facts_by_event, habit_count)
    for spec in specs_q:
        shuffle_options(rng, spec)
    specs_q += speech_questions(speech_rng, spoken, "lvbench")
    questions_file = root / "video_info.meta.jsonl"
    write_lvbench(questions_file, key, specs_q)
    write_lvbench(root / "paraphrased" / questions_file.name, key, paraphrase(specs_q, seed))
    _write_script(root, events)
    if speech:
        write_speech(root, spoken)
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
) -> list[QSpec]:
    actions = [(e, f) for e, f in facts_by_event if e.kind == "action"]
    people = sorted({f["person"] for _, f in actions})
    used_locations = sorted({e.location for e, _ in facts_by_event})

    def obj(f: dict) -> str:
        return f"The {f['object'].lower()}"

    def nearest(event: ScriptedEvent) -> list[tuple[ScriptedEvent, dict]]:
        return sorted((a for a in actions if a[0] is not event), key=lambda a: abs(a[0].t_start - event.t_start))

    questions: list[QSpec] = []
    for i, (event, f) in enumerate(actions):
        person, base, third = f["person"].title(), f["base"], f["third"].lower()
        thing = f["object"].lower()
        span = [(event.t_start, event.t_end)]
        same_person = [g for _, g in actions if g is not f and g["person"] == f["person"]]
        for template in (i % 3, (i + 1) % 3):
            if template == 0:
                questions.append(QSpec(
                    f"What does {person} {base}?",
                    obj(f),
                    [obj(g) for g in same_person],
                    [obj(g) for _, g in actions],
                    ["key information retrieval"],
                    span,
                ))
            elif template == 1:
                questions.append(QSpec(
                    f"Who {third} the {thing}?",
                    person,
                    [],
                    [p.title() for p in people],
                    ["entity recognition"],
                    span,
                ))
            else:
                questions.append(QSpec(
                    f"Where does {person} {base} the {thing}?",
                    f"In the {event.location.lower()}",
                    [f"In the {e.location.lower()}" for e, g in actions if g in same_person],
                    [f"In the {loc.lower()}" for loc in used_locations],
                    ["event understanding", "key information retrieval"],
                    span,
                ))
    notes = [(e, f) for e, f in facts_by_event if e.kind == "note"]
    for event, f in notes:
        questions.append(QSpec(
            f"What is the {f['label'].lower()}?",
            f["value"],
            [g["value"] for _, g in notes],
            [f["value"][::-1], f["value"][1:] + f["value"][0]],
            ["key information retrieval"],
            [(event.t_start, event.t_end)],
        ))
    habits = [e for e, _ in facts_by_event if e.kind == "habit"]
    habit_person = next(f["person"] for e, f in facts_by_event if e.kind == "habit")
    questions.append(QSpec(
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
            questions.append(QSpec(
                f"Where {noun} put {which}?",
                sentence(f["spot"]),
                [sentence(g["spot"]) for _, g in chain],
                [sentence(g["spot"]) for _, g in placements],
                ["temporal grounding", "reasoning"] if which == "last" else ["temporal grounding"],
                [(event.t_start, event.t_end)],
            ))
    event, f = rng.choice(actions)
    questions.append(QSpec(
        f"What happens at {mmss((event.t_start + event.t_end) / 2)}?",
        sentence(event.text),
        [sentence(e.text) for e, _ in nearest(event)[:2]],
        [sentence(e.text) for e, _ in actions],
        ["temporal grounding"],
        [(event.t_start, event.t_end)],
    ))
    event, f = rng.choice(actions)
    questions.append(QSpec(
        f"When does {f['person'].title()} {f['base']} the {f['object'].lower()}?",
        time_range(event.t_start, event.t_end),
        [time_range(e.t_start, e.t_end) for e, _ in nearest(event)[:2]],
        [time_range(e.t_start, e.t_end) for e, _ in actions],
        ["temporal grounding"],
        [(event.t_start, event.t_end)],
    ))
    return questions


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
    files: list[tuple[Path, list[tuple[Shot, float]]]] = []
    events: list[ScriptedEvent] = []
    facts: list[tuple[ScriptedEvent, dict]] = []
    for second, d, kind, text, location, colour, n_people, fact in plan:
        t = d * DAY + second
        path = _egolife_path(root, t)
        events.append(ScriptedEvent(t, t + clip, text, kind, location, path.stem, colour))
        facts.append((events[-1], fact))
        files.append((path, [(Shot(location, text, colour, n_people), clip)]))
    for d in range(days):
        for second, (text, location) in zip(
            _free_slots(rng, d, {e.t_start for e in events}, clip, EGOLIFE_DISTRACTORS_PER_DAY),
            rng.sample(EGOLIFE_DISTRACTORS, EGOLIFE_DISTRACTORS_PER_DAY),
        ):
            t = d * DAY + second
            path = _egolife_path(root, t)
            events.append(ScriptedEvent(t, t + clip, text, "distractor", location, path.stem))
            files.append((path, [(Shot(location, text, None, 0), clip)]))
    files += _idle_clips(root, rng, days, minutes, {e.t_start for e in events}, clip)
    speech_rng = random.Random(f"speech-{seed}")
    spoken: list[Said] = []
    if speech:
        by_day: list[list[Slot]] = [[] for _ in range(days)]
        for path, _ in sorted(files):
            start = egolife_start(path)
            by_day[int(start // DAY)].append(Slot(path.stem, start, 0.0, clip))
        spoken = plan_speech(speech_rng, by_day, True)
    with tempfile.TemporaryDirectory() as tmp:
        for path, shots in files:
            seconds = sum(length for _, length in shots)
            sound = sound_track(Path(tmp), path.stem, seconds, spoken) if speech else None
            encode(path, shots, size, fps, sound)

    specs = _egolife_questions(facts, days, spots, foods, groceries, activities)
    for spec in specs:
        shuffle_options(rng, spec)
    specs += speech_questions(speech_rng, spoken, "egolife")
    questions_file = root / "EgoLifeQA_A1_JAKE.json"
    write_egolife(questions_file, specs)
    write_egolife(root / "paraphrased" / questions_file.name, paraphrase(specs, seed))
    _write_script(root, events)
    if speech:
        write_speech(root, spoken)
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
        raise SynthError(f"--minutes {minutes}: more footage than one day of the script can hold")
    return sorted(float(s) for s in rng.sample(free, max(n, 0)))


def _idle_clips(
    root: Path, rng: random.Random, days: int, minutes: float | None, taken: set[float], clip: float
) -> list[tuple[Path, list[tuple[Shot, float]]]]:
    """A room and nobody doing anything: EGOLIFE_IDLE_PER_DAY clips a day, or as many as fill `minutes`."""
    per_day = EGOLIFE_IDLE_PER_DAY if minutes is None else int(round(minutes * 60 / clip)) - len(taken) // days
    clips = []
    for d in range(days):
        for second in _free_slots(rng, d, taken, clip, per_day, minutes):
            location = rng.choice(list(LOCATIONS))
            clips.append((_egolife_path(root, d * DAY + second), [(Shot(location), clip)]))
    return clips


def _egolife_questions(
    facts: list[tuple[ScriptedEvent, dict]],
    days: int,
    spots: list[str],
    foods: Sequence[str],
    groceries: Sequence[str],
    activities: Sequence[tuple[str, str]],
) -> list[QSpec]:
    questions: list[QSpec] = []
    end = (days - 1) * DAY + _hms(21, 0)

    def of(kind: str) -> list[tuple[ScriptedEvent, dict]]:
        return [(e, f) for e, f in facts if e.kind == kind]

    def point(event: ScriptedEvent) -> list[tuple[float, float]]:
        return [(event.t_start + 10, event.t_start + 10)]

    for event, f in of("placement"):
        questions.append(QSpec(
            "Where did I last put the keys?",
            sentence(spots[f["step"]]),
            [sentence(s) for s in spots[: f["step"]][::-1]],
            [sentence(s) for s in spots],
            ["EntityLog"],
            point(event),
            until=event.t_end + 2 * 3600,
            last_time=True,
            keywords="keys",
        ))
    for event, f in of("meal"):
        questions.append(QSpec(
            "What did I last eat for lunch?",
            sentence(f["food"]),
            [sentence(x) for x in foods],
            [sentence(g) for g in groceries],
            ["EventRecall"],
            point(event),
            until=event.t_end + 1.5 * 3600,
            last_time=True,
            keywords="lunch",
        ))
    real = {frozenset(f["items"].split(" AND ")) for _, f in of("list")}
    mixed = [
        f"{sentence(a)} and {b.lower()}"
        for i, a in enumerate(groceries)
        for b in groceries[i + 1:]
        if frozenset((a, b)) not in real
    ]
    for event, f in of("list"):
        questions.append(QSpec(
            "What is on my latest shopping list?",
            sentence(f["items"]),
            [sentence(g["items"]) for _, g in of("list")],
            mixed,
            ["TaskMaster"],
            point(event),
            until=event.t_end + 2 * 3600,
            last_time=True,
            keywords="shopping list",
        ))
    named = [f["person"].title() for _, f in of("activity") + of("visit")]
    for event, f in of("activity"):
        questions.append(QSpec(
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
        questions.append(QSpec(
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


def _egolife_path(root: Path, t: float) -> Path:
    date, code = format_egolife(t)
    return root / "videos" / date / f"{date}_A1_JAKE_{code}.mp4"


def _write_script(root: Path, events: list[ScriptedEvent]) -> None:
    (root / "script.json").write_text(json.dumps([asdict(e) for e in events], indent=1) + "\n", encoding="utf-8")


def _hms(hours: int, minutes: int) -> float:
    return hours * 3600.0 + minutes * 60.0


def _times(n: int) -> str:
    return "Once" if n == 1 else f"{n} times"
