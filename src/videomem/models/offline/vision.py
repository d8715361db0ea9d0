"""The offline vision tasks: captions and object records written from detector facts.

Every sentence is tied to one detector (OCR, HOG people, flat-shape finder, colour naming,
EfficientNet ImageNet tags, frame differencing) or to the transcript, so a caption never says
more than the pixels and words support. Token counts in the usage meter are whitespace words:
words written count as completion tokens, transcript words read as prompt tokens.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from videomem.config import RoleConfig
from videomem.evidence import Evidence
from videomem.models.engines import Batching
from videomem.models.tasks.agent import Answering, AnswerOut
from videomem.models.tasks.clips import Unusable
from videomem.models.tasks.objects import ClipNotes, ObjectRecord
from videomem.models.usage import Usage, UsageMeter
from videomem.core import ClipView
from videomem.models.offline import require_no_options
from videomem.models.offline.colours import place_name, position_phrase
from videomem.models.offline.nlp import load_spacy
from videomem.video.transcripts import SPEECH_ONLY_SENTENCE
from videomem.models.offline.scene import CHANGING, STILL, ClipFacts, Person, SceneAnalyser, ShapeTrack

ROLE = "vlm"
_COUNTS = {1: "one", 2: "two", 3: "three"}


def _article(phrase: str) -> str:
    return ("An " if phrase[0] in "aeiou" else "A ") + phrase


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _words(texts: Sequence[str]) -> int:
    return sum(len(t.split()) for t in texts)


class OfflineVision:
    """`ClipDescription` (hence `ClipCaptioning`, `ClipObjects`) and `FrameAnswering` from OCR,
    HOG people, shapes, colours, ImageNet tags, motion and transcript; a frame question is
    answered by scoring it against the frames' caption (`language`)."""

    def __init__(
        self, cfg: RoleConfig, meter: UsageMeter, language: Answering, scene: SceneAnalyser | None = None
    ) -> None:
        require_no_options(cfg, ROLE)
        self.cfg = cfg
        self.meter = meter
        self.language = language
        self.scene = scene or SceneAnalyser()

    def describe_clips(self, clips: Sequence[ClipView]) -> list[ClipNotes | Unusable]:
        """Caption and records from one analysis of each clip."""
        start = time.perf_counter()
        notes = [ClipNotes(caption=caption(facts), objects=self._records(facts)) for facts in self.scene.analyse(clips)]
        self._meter(clips, [n.caption for n in notes] + _record_words([n.objects for n in notes]), start)
        return list(notes)

    def caption_clips(self, clips: Sequence[ClipView]) -> list[str | Unusable]:
        start = time.perf_counter()
        captions = [caption(facts) for facts in self.scene.analyse(clips)]
        self._meter(clips, captions, start)
        return list(captions)

    def extract_objects(self, clips: Sequence[ClipView]) -> list[list[ObjectRecord] | Unusable]:
        start = time.perf_counter()
        out = [self._records(facts) for facts in self.scene.analyse(clips)]
        self._meter(clips, _record_words(out), start)
        return list(out)

    def batching(self, batch_size: int) -> Batching:
        return Batching(batch_size)

    def answer_from_frames(self, question: str, clip: ClipView, choices: list[str] | None = None) -> AnswerOut:
        """Describe the frames as a caption, then score the question against that description."""
        description = str(self.caption_clips([clip])[0])
        evidence = Evidence(clip.t_start, clip.t_end, description, "video.qa", 1.0, clip.video_id)
        return self.language.answer(question, choices, [evidence])

    def _meter(self, clips: Sequence[ClipView], written: Sequence[str], start: float) -> None:
        usage = Usage(
            prompt_tokens=_words([c.transcript for c in clips]),
            completion_tokens=_words(written),
            seconds=time.perf_counter() - start,
            calls=len(clips),
        )
        self.meter.add(ROLE, usage)

    def _records(self, facts: ClipFacts) -> list[ObjectRecord]:
        records = person_records(facts.people)
        seen = {r.name.lower() for r in records}
        for found in (placed_in_text(facts.texts), named_in_text(facts.texts)):
            records += [r for r in found if r.name.lower() not in seen]
            seen |= {r.name.lower() for r in found}
        records += [shape_record(track) for track in facts.shapes]
        records += [
            ObjectRecord(name=tag, kind="object", identity=[f"ImageNet tag, probability {p:.2f}"], value="in view")
            for tag, p in facts.tags
        ]
        return records


def _record_words(per_clip: Sequence[Sequence[ObjectRecord]]) -> list[str]:
    return [" ".join([r.name, *r.appearance, *r.identity, r.value]) for records in per_clip for r in records]


# ---------------------------------------------------------------- captions


def caption(facts: ClipFacts) -> str:
    """Sentences in a fixed order: text, people, shapes, colours, tags, motion, speech."""
    sentences = [f"On-screen text reads '{text}'." for text in facts.texts]
    sentences += people_sentences(facts.people)
    sentences += [shape_sentence(track) for track in facts.shapes]
    sentences += colour_sentences(facts.colours)
    if facts.tags:
        sentences.append(f"ImageNet tags: {', '.join(tag for tag, _ in facts.tags)}.")
    if facts.change is not None:
        if facts.change >= CHANGING:
            sentences.append("The view changes between frames.")
        elif facts.change < STILL:
            sentences.append("The scene is still.")
        else:
            sentences.append("There is some movement.")
    if facts.transcript:
        sentences.append(f"Someone says: '{facts.transcript}'.")
    if facts.heard:
        sentences.append(SPEECH_ONLY_SENTENCE)
    return " ".join(sentences) or "The clip has no frames and no speech."


def people_sentences(people: list[Person]) -> list[str]:
    n = len(people)
    if not n:
        return []
    walking = [p for p in people if p.motion.startswith("walking")]
    standing = [p for p in people if p.motion == "standing"]
    if n == 1:
        person = people[0]
        if walking:
            sentence = f"One person walks to the {person.motion.split()[-1]}."
        elif standing:
            sentence = "One person stands still."
        else:
            sentence = "One person is in view."
    else:
        count = _COUNTS.get(n, "several").capitalize()
        if len(walking) == n:
            sentence = f"{count} people walk across the scene."
        elif walking:
            sentence = f"{count} people are in view; {_COUNTS.get(len(walking), 'several')} of them walk{'s' if len(walking) == 1 else ''}."
        elif len(standing) == n:
            sentence = f"{count} people stand still."
        else:
            sentence = f"{count} people are in view."
    named = [f"{p.name} is {position_phrase(p.position)}." for p in people if p.name]
    return [sentence, *named]


def _shape_phrase(track: ShapeTrack) -> str:
    shape = track.first
    return f"{shape.colour} {shape.form} box" if shape.kind == "box" else shape.name


def shape_sentence(track: ShapeTrack) -> str:
    subject = _article(_shape_phrase(track))
    start, end = track.first.position, track.last.position
    if track.event == "moves":
        if start != end:
            return f"{subject} goes from {place_name(start)} to {place_name(end)}."
        return f"{subject} goes {_direction(track)} {position_phrase(end)}."
    if track.event == "appears":
        return f"{subject} appears {position_phrase(end)}."
    if track.event == "leaves":
        return f"{subject} is {position_phrase(start)}, then leaves the view."
    return f"{subject} is {position_phrase(start)}."


def _direction(track: ShapeTrack) -> str:
    dx = track.last.cx - track.first.cx
    dy = track.last.cy - track.first.cy
    if abs(dx) >= abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


def colour_sentences(colours: list[tuple[str, float]]) -> list[str]:
    names = [name for name, _ in colours[:3]]
    if not names:
        return []
    if colours[0][1] >= 0.4:
        rest = f" with {_join(names[1:])}" if names[1:] else ""
        return [f"The scene is mostly {names[0]}{rest}."]
    return [f"The main colours are {_join(names)}."]


# ---------------------------------------------------------------- object records

_MOTION_VALUE = {
    "walking left": "walking to the left",
    "walking right": "walking to the right",
    "standing": "standing still",
    "in view": "in view",
}


def person_records(people: list[Person]) -> list[ObjectRecord]:
    records = []
    unnamed = 0
    for person in people:
        if person.name:
            name = person.name
        else:
            unnamed += 1
            name = f"person {unnamed}"
        appearance = [f"{person.top} top"] if person.top else []
        appearance += [f"{person.bottom} lower clothing"] if person.bottom else []
        identity = [f"name tag reads '{person.name_text}'"] if person.name_text else []
        identity.append(f"seen {position_phrase(person.position)}")
        value = f"{_MOTION_VALUE[person.motion]}, {position_phrase(person.position)}"
        records.append(ObjectRecord(name=name, kind="person", appearance=appearance, identity=identity, value=value))
    return records


SPATIAL = frozenset(
    "in on under by at near beside behind inside below above over next atop beneath against".split()
)
"""Prepositions that place a thing: "KEYS IN THE RED BASKET" says where the keys are; "EATING
PIZZA FOR LUNCH" and "PLANTING TOMATOES WITH BOB" place nothing."""


def placed_in_text(texts: list[str]) -> list[ObjectRecord]:
    """Things that on-screen text places ("KEYS IN THE RED BASKET", "PHONE ON THE DESK"): a
    verbless text whose head noun has a phrase of place, the noun as a thing in view and the
    phrase as its state. The text is parsed in lower case: capitalised, the small English model
    tags 'Keys' as a name; a head it still reads as a name is left to `named_in_text`."""
    if not texts:
        return []
    nlp = load_spacy()
    records: dict[str, ObjectRecord] = {}
    for text in texts:
        doc = nlp(text.lower())
        root = next((t for t in doc if t.dep_ == "ROOT"), None)
        if root is None or root.pos_ != "NOUN" or any(t.pos_ in ("VERB", "AUX") for t in doc):
            continue
        places = [c for c in root.children if c.dep_ == "prep" and c.lower_ in SPATIAL and any(g.dep_ == "pobj" for g in c.children)]
        if not places:
            continue
        name = " ".join(t.lower_ for t in root.subtree if t.i <= root.i and t.dep_ in ("compound", "amod") or t.i == root.i)
        where = " ".join(t.lower_ for t in doc[places[0].left_edge.i : places[0].right_edge.i + 1])
        records.setdefault(
            name,
            ObjectRecord(name=name, kind="object", identity=[f"named in on-screen text '{text}'"], value=where),
        )
    return list(records.values())


def named_in_text(texts: list[str]) -> list[ObjectRecord]:
    """People that spaCy's NER finds named in on-screen text, with the text itself as what is
    known of them. Text in capitals is read in sentence case: the small English model tags
    'ALICE OPENS' as a name but finds 'Alice' in 'Alice opens the door'."""
    if not texts:
        return []
    nlp = load_spacy()
    records: dict[str, ObjectRecord] = {}
    for text in texts:
        doc = nlp(text.capitalize() if text.isupper() else text)
        for ent in doc.ents:
            tokens = ent.text.split()
            if ent.label_ != "PERSON" or not 1 <= len(tokens) <= 2 or not all(t.isalpha() for t in tokens):
                continue
            name = " ".join(t.capitalize() for t in tokens)
            records.setdefault(
                name.lower(),
                ObjectRecord(
                    name=name,
                    kind="person",
                    identity=[f"named in on-screen text '{text}'"],
                    value=f"named in on-screen text '{text}'",
                ),
            )
    return list(records.values())


def shape_record(track: ShapeTrack) -> ObjectRecord:
    shape = track.first
    start, end = shape.position, track.last.position
    if track.event == "moves":
        value = (
            f"goes from {place_name(start)} to {place_name(end)}"
            if start != end
            else f"goes {_direction(track)} {position_phrase(end)}"
        )
    elif track.event == "appears":
        value = f"appears {position_phrase(end)}"
    elif track.event == "leaves":
        value = f"{position_phrase(start)}, then leaves the view"
    else:
        value = position_phrase(start)
    return ObjectRecord(
        name=shape.name,
        kind="object",
        appearance=[shape.colour, shape.form],
        identity=[f"{shape.form} {shape.colour} {shape.kind}", f"about {max(1, round(shape.area * 100))}% of the frame"],
        value=value,
    )
