"""The spoken track of `videomem synth --speech`: what is said, when, by which voice, and the
`need_audio` question about each line.

Debian's `espeak-ng` speaks each line (deterministic: the same text and voice give the same
samples), and each video gets a sound track as long as its footage, silent except where its
lines are placed, so the synth knows to the sample when each word is said. The track is muxed
into the video as AAC by the same ffmpeg call that encodes the frames (`render.encode`).
"""

from __future__ import annotations

import io
import json
import random
import shutil
import subprocess
import wave
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from videomem.errors import SetupError
from videomem.synth.formats import CLIP_SECONDS, QSpec, SynthFormat, sentence, shuffle_options
from videomem.synth.vocabulary import SPOKEN_ITEMS, SPOKEN_LABELS, SPOKEN_NAMES, SPOKEN_ROLES, SPOKEN_SPOTS

SAMPLE_RATE = 22_050
"""espeak-ng's own output rate; the transcribe stage resamples to 16 kHz as for any video."""
VOICES = ("en-us", "en-us+f3", "en-gb+m3", "en-us+f2")
WORDS_PER_MINUTE = 150


@dataclass(frozen=True)
class SpokenLine:
    t_start: float
    """Corpus seconds: where the voice starts (espeak-ng's own lead-in silence included)."""
    t_end: float
    text: str
    """Exactly the words spoken: what a perfect transcript of the line reads."""
    kind: str
    """item, name or number."""
    voice: str
    video_id: str


def require_espeak() -> str:
    """The espeak-ng executable, or a one-line error saying how to get it."""
    found = shutil.which("espeak-ng")
    if found is None:
        raise SetupError("--speech needs espeak-ng, which is not installed (apt-get install espeak-ng)")
    return found


def speak(text: str, voice: str) -> np.ndarray:
    """`text` spoken by espeak-ng in `voice`: int16 mono samples at SAMPLE_RATE."""
    command = [require_espeak(), "-v", voice, "-s", str(WORDS_PER_MINUTE), "--stdout", text]
    done = subprocess.run(command, capture_output=True, check=False)
    if done.returncode != 0 or not done.stdout:
        problem = " ".join(done.stderr.decode(errors="replace").split()) or f"exit status {done.returncode}"
        raise SetupError(f"espeak-ng could not speak {text!r} in voice {voice!r} ({problem})")
    with wave.open(io.BytesIO(done.stdout)) as reader:
        if (reader.getframerate(), reader.getnchannels(), reader.getsampwidth()) != (SAMPLE_RATE, 1, 2):
            raise SetupError(f"espeak-ng wrote audio in an unexpected format (voice {voice!r})")
        # Written to a pipe, the header cannot hold the length: read to the end.
        return np.frombuffer(reader.readframes(2**31 - 1), dtype="<i2")


def write_track(path: Path, seconds: float, placed: Sequence[tuple[float, np.ndarray]]) -> None:
    """A 16-bit mono WAV of `seconds` of silence with each (file seconds, samples) line added."""
    track = np.zeros(int(round(seconds * SAMPLE_RATE)), dtype=np.int32)
    for at, samples in placed:
        start = int(round(at * SAMPLE_RATE))
        if start < 0 or start + len(samples) > len(track):
            raise AssertionError(f"script bug: a line at {at:.2f} s does not fit a {seconds:g}-s track")
        track[start : start + len(samples)] += samples
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(SAMPLE_RATE)
        out.writeframes(np.clip(track, -32768, 32767).astype("<i2").tobytes())


SPEECH_CATEGORIES = {  # kind of line → (LVBench abilities, EgoLifeQA type)
    "item": (["key information retrieval"], ["EntityLog"]),
    "name": (["entity recognition"], ["RelationMap"]),
    "number": (["key information retrieval"], ["TaskMaster"]),
}


@dataclass(frozen=True)
class Slot:
    """Where a spoken line may go: one clip of one video."""

    video_id: str
    t0: float
    """Corpus seconds of the video's start."""
    start: float
    """File seconds of the clip's start."""
    length: float


@dataclass(frozen=True)
class Said:
    """One spoken line as the synth planned it."""

    line: SpokenLine
    facts: dict
    at: float
    """File seconds where its samples start."""
    samples: np.ndarray


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


def plan_speech(rng: random.Random, slots_by_group: list[list[Slot]], one_item: bool) -> list[Said]:
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
            spoken.append(Said(line, facts, at, samples))
    return sorted(spoken, key=lambda said: said.line.t_start)


def sound_track(tmp: Path, video_id: str, seconds: float, spoken: list[Said]) -> Path:
    """The video's track as a WAV in `tmp`: silence, and its lines where the script puts them."""
    path = tmp / f"{video_id}.wav"
    write_track(path, seconds, [(said.at, said.samples) for said in spoken if said.line.video_id == video_id])
    return path


def speech_questions(rng: random.Random, spoken: list[Said], fmt: SynthFormat) -> list[QSpec]:
    """A `need_audio` question per line, options shuffled. Distractors are first what other
    lines said of the same kind (the item's other places, the other names and numbers)."""
    clip = CLIP_SECONDS[fmt]

    def of(kind: str) -> list[Said]:
        return [said for said in spoken if said.line.kind == kind]

    questions = []
    for said in spoken:
        line, f = said.line, said.facts
        if line.kind == "item":
            text, correct = f"Where did someone last say my {f['item'].lower()} is?", sentence(f["spot"])
            strong = [sentence(o.facts["spot"]) for o in sorted(of("item"), key=lambda o: -o.line.t_start)]
            pool, keywords = [sentence(x) for x in SPOKEN_SPOTS], f["item"].lower()
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
        spec = QSpec(text, correct, strong, pool, list(categories), targets, until=until,
                      last_time=fmt == "egolife" and line.kind == "item", keywords=keywords, need_audio=True)
        shuffle_options(rng, spec)
        questions.append(spec)
    return questions


def write_speech(root: Path, spoken: list[Said]) -> None:
    lines = [asdict(said.line) for said in spoken]
    (root / "speech.json").write_text(json.dumps(lines, indent=1) + "\n", encoding="utf-8")


