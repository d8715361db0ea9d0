"""What the offline detectors see in one clip, as plain facts (no sentences yet).

Captions and object records are both written from these facts, so the analysis runs once per
clip and is cached: the caption stage and the objects stage ask about the same clips. Each
frame of a clip is also cached as a one-frame clip, built from the detections already made,
because the offline visual embedder describes frames one at a time (the visual stage follows
in the same ingest); a frame whose text was taken from the nearly identical frame before it
keeps that reading.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np
from PIL.Image import Image

from videomem.core import ClipView
from videomem.models.offline.colours import (
    MIN_COLOUR_SHARE,
    PALETTE,
    Shape,
    dominant_colours,
    find_shapes,
    name_map,
    position_name,
    shrink,
)
from videomem.models.offline.imagenet import ImageNetTagger
from videomem.models.offline.nlp import load_spacy, squash
from videomem.models.offline.ocr import OcrReader, TextBlock, blocks
from videomem.models.offline.people import Box, PeopleDetector
from videomem.video.transcripts import transcript_text

FRAME_MAX_SIDE = 640
"""Frames are analysed at most this large; the pipeline stores them at 640 already."""
STILL = 0.02
"""Mean absolute grey-level difference (0..1) below which two frames show the same thing."""
CHANGING = 0.08
"""Difference above which the view itself changed (a cut or a camera move)."""
TAG_MIN_PROB = 0.3
"""ImageNet class probability (mean over the clip's frames) needed to name a tag."""
CACHE_CLIPS = 4096
"""Clips (and single frames) whose facts are kept, least recently used dropped first."""


@dataclass(frozen=True)
class Person:
    box: Box
    frame_width: int
    frame_height: int
    top: str | None
    bottom: str | None
    motion: str
    """'walking left', 'walking right', 'standing' or 'in view' (no match in another frame)."""
    name: str | None = None
    name_text: str | None = None

    @property
    def position(self) -> str:
        cx, cy = self.box.centre
        return position_name(cx / self.frame_width, cy / self.frame_height)


@dataclass(frozen=True)
class ShapeTrack:
    first: Shape
    last: Shape
    event: str
    """'still', 'moves', 'appears' (only in later frames) or 'leaves' (only in earlier frames)."""


@dataclass
class ClipFacts:
    texts: list[str] = field(default_factory=list)
    people: list[Person] = field(default_factory=list)
    shapes: list[ShapeTrack] = field(default_factory=list)
    colours: list[tuple[str, float]] = field(default_factory=list)
    tags: list[tuple[str, float]] = field(default_factory=list)
    change: float | None = None
    """Largest difference between consecutive frames; None with a single frame."""
    transcript: str = ""
    """The words transcribed in the clip (with their speakers)."""
    heard: bool = False
    """Speech was heard in the clip whose words nobody transcribed (`Speech.transcribed`)."""


@dataclass
class _Frame:
    rgb: np.ndarray
    grey: np.ndarray
    shares: np.ndarray
    shapes: list[Shape]
    people: list[Box]
    text: list[TextBlock] | None = None
    """None until read."""


def as_array(image: Image) -> np.ndarray:
    rgb = np.asarray(image.convert("RGB"))
    h, w = rgb.shape[:2]
    if max(h, w) > FRAME_MAX_SIDE:
        scale = FRAME_MAX_SIDE / max(h, w)
        rgb = cv2.resize(rgb, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
    return rgb


class SceneAnalyser:
    """Runs the detectors over clips; every model is loaded once, on first use. One analysis
    runs at a time (agents answering in threads share it): the detectors are CPU-bound and
    single-threaded by design, and the cache and lazy loading stay consistent."""

    def __init__(self) -> None:
        self.ocr = OcrReader()
        self.people = PeopleDetector()
        self.tagger = ImageNetTagger()
        self._cache: OrderedDict[tuple, ClipFacts] = OrderedDict()
        self._lock = threading.Lock()

    def analyse(self, clips: Sequence[ClipView]) -> list[ClipFacts]:
        with self._lock:
            return self._analyse(clips)

    def _analyse(self, clips: Sequence[ClipView]) -> list[ClipFacts]:
        spoken = [_spoken(c) for c in clips]
        keys = [_key(c.frames, said) for c, said in zip(clips, spoken)]
        todo = [i for i, k in enumerate(keys) if k not in self._cache]
        frames = {i: [self._frame(as_array(img)) for img in clips[i].frames] for i in todo}
        flat = [f.rgb for i in todo for f in frames[i]]
        probs = self.tagger.probabilities(flat)
        offset = 0
        for i in todo:
            n = len(frames[i])
            frame_probs = probs[offset : offset + n]
            offset += n
            clip_probs = frame_probs.mean(axis=0) if n else np.zeros(probs.shape[1:])
            self._cache[keys[i]] = self._facts(frames[i], clip_probs, *spoken[i])
            if n > 1:
                for image, frame, p in zip(clips[i].frames, frames[i], frame_probs):
                    self._cache.setdefault(_key([image], ("", False)), self._facts([frame], p, "", False))
        out = [self._cache[k] for k in keys]
        for key in keys:
            self._cache.move_to_end(key)
        while len(self._cache) > CACHE_CLIPS:
            self._cache.popitem(last=False)
        return out

    def _frame(self, rgb: np.ndarray) -> _Frame:
        small = shrink(rgb)
        names = name_map(small)
        return _Frame(
            rgb=rgb,
            grey=cv2.cvtColor(small, cv2.COLOR_RGB2GRAY).astype(np.float32) / 255.0,
            shares=np.bincount(names.ravel(), minlength=len(PALETTE)) / names.size,
            shapes=find_shapes(rgb),
            people=self.people.detect(rgb),
        )

    def _facts(self, frames: list[_Frame], probs: np.ndarray, transcript: str, heard: bool) -> ClipFacts:
        facts = ClipFacts(transcript=" ".join(transcript.split()), heard=heard)
        if not frames:
            return facts
        changes = [_difference(a, b) for a, b in zip(frames, frames[1:])]
        facts.change = max(changes) if changes else None
        self._read_text(frames, changes)
        facts.texts = _distinct([b.text for f in frames for b in f.text])
        shares = np.mean([f.shares for f in frames], axis=0)
        order = sorted(range(len(PALETTE)), key=lambda i: (-shares[i], i))
        facts.colours = [(PALETTE[i], float(shares[i])) for i in order if shares[i] >= MIN_COLOUR_SHARE]
        facts.tags = self.tagger.tags(probs, TAG_MIN_PROB) if probs.size else []
        facts.people = _people(frames)
        facts.shapes = _shape_tracks(frames[0].shapes, frames[-1].shapes) if len(frames) > 1 else [
            ShapeTrack(s, s, "still") for s in frames[0].shapes
        ]
        return facts

    def _read_text(self, frames: list[_Frame], changes: list[float]) -> None:
        """OCR each frame not read yet, unless it shows the same thing as the frame before (then reuse)."""
        for i, frame in enumerate(frames):
            if frame.text is not None:
                continue
            if i > 0 and changes[i - 1] < STILL:
                frame.text = frames[i - 1].text
                continue
            frame.text = blocks(self.ocr.read(frame.rgb))


def _spoken(clip: ClipView) -> tuple[str, bool]:
    """The words the clip's transcribed lines say, and whether speech nobody transcribed was heard
    in it: from its typed lines (`ClipView.speech`); a view built from text alone has words only."""
    if not clip.speech:
        return clip.transcript, False
    said = [line for line in clip.speech if line.transcribed]
    return transcript_text(said), len(said) < len(clip.speech)


def _key(frames: Sequence[Image], spoken: tuple[str, bool]) -> tuple:
    """A clip's content (pixels and words), so two views of the same frames share one analysis."""
    digest = hashlib.blake2b(digest_size=16)
    for image in frames:
        digest.update(f"{image.size}{image.mode}".encode())
        digest.update(image.tobytes())
    return digest.hexdigest(), spoken


def _difference(a: _Frame, b: _Frame) -> float:
    if a.grey.shape != b.grey.shape:
        return 1.0
    return float(np.abs(a.grey - b.grey).mean())


def _distinct(texts: list[str]) -> list[str]:
    """Texts in order of first appearance, each once. Two readings count as one text only when
    their letters and digits agree ('ROOM 418' = 'ROOM418'): a near match may be a different text
    ('ROOM 419', 'KEYS IN …' / 'KEYS ON …'), and quoting a misread twice costs less than losing one."""
    kept: dict[str, str] = {}
    for text in texts:
        kept.setdefault(squash(text), text)
    return list(kept.values())


def _colour_of(rgb: np.ndarray) -> str | None:
    names = dominant_colours(rgb, limit=1)
    return names[0] if names else None


def _hist(rgb: np.ndarray, box: Box) -> np.ndarray:
    crop = rgb[int(box.y0) : int(box.y1), int(box.x0) : int(box.x1)]
    if crop.size == 0:
        return np.zeros((8 * 8,), np.float32)
    hsv = cv2.cvtColor(crop, cv2.COLOR_RGB2HSV)
    hist = cv2.calcHist([hsv], [0, 1], None, [8, 8], [0, 180, 0, 256]).ravel()
    return hist / max(hist.sum(), 1.0)


def _motion(box: Box, rgb: np.ndarray, other: _Frame, forward: bool) -> str:
    """Match a person to the most similar-looking detection nearby in another frame."""
    width = rgb.shape[1]
    own = _hist(rgb, box)
    best, best_similarity = None, 0.5
    for candidate in other.people:
        ratio = (candidate.y1 - candidate.y0) / max(box.y1 - box.y0, 1.0)
        distance = abs(candidate.centre[0] - box.centre[0]) + abs(candidate.centre[1] - box.centre[1])
        if not 0.67 <= ratio <= 1.5 or distance > 0.4 * width:
            continue
        similarity = float(np.minimum(own, _hist(other.rgb, candidate)).sum())
        if similarity > best_similarity:
            best, best_similarity = candidate, similarity
    if best is None:
        return "in view"
    dx = (best.centre[0] - box.centre[0]) * (1 if forward else -1)
    if abs(dx) < 0.25 * (box.x1 - box.x0) and box.iou(best) > 0.3:
        return "standing"
    if abs(dx) < 0.25 * (box.x1 - box.x0):
        return "in view"
    return "walking right" if dx > 0 else "walking left"


def _people(frames: list[_Frame]) -> list[Person]:
    """People of the frame that shows the most, each with clothing colours and motion."""
    ref = max(range(len(frames)), key=lambda i: (len(frames[i].people), -i))
    frame = frames[ref]
    other, forward = (frames[ref + 1], True) if ref + 1 < len(frames) else (frames[ref - 1], False) if ref else (None, True)
    h, w = frame.rgb.shape[:2]
    people = []
    for box in frame.people:
        bw, bh = box.x1 - box.x0, box.y1 - box.y0
        x0, x1 = int(box.x0 + 0.25 * bw), int(box.x1 - 0.25 * bw)
        top = frame.rgb[int(box.y0 + 0.2 * bh) : int(box.y0 + 0.5 * bh), x0:x1]
        bottom = frame.rgb[int(box.y0 + 0.55 * bh) : int(box.y0 + 0.9 * bh), x0:x1]
        motion = _motion(box, frame.rgb, other, forward) if other is not None else "in view"
        name, name_text = _name_near(box, frame.text, bh)
        people.append(Person(box, w, h, _colour_of(top), _colour_of(bottom), motion, name, name_text))
    return people


def _name_near(box: Box, text: list[TextBlock], height: float) -> tuple[str | None, str | None]:
    """A short text on the person or just above the head that spaCy reads as a name (a PERSON
    entity or a proper noun, in title case: 'ALICE' yes, 'OFFICE' no) is their name."""
    width = box.x1 - box.x0
    for block in text:
        cx = (block.box[0] + block.box[2]) / 2
        cy = (block.box[1] + block.box[3]) / 2
        near = box.x0 - 0.25 * width <= cx <= box.x1 + 0.25 * width and box.y0 - 0.5 * height <= cy <= box.y1
        tokens = block.text.split()
        if not (near and 1 <= len(tokens) <= 2 and all(t.isalpha() and len(t) >= 2 for t in tokens)):
            continue
        name = " ".join(t.capitalize() for t in tokens)
        doc = load_spacy()(name)
        if any(e.label_ == "PERSON" for e in doc.ents) or all(t.pos_ == "PROPN" for t in doc):
            return name, block.text
    return None, None


def _shape_tracks(first: list[Shape], last: list[Shape]) -> list[ShapeTrack]:
    """Pair shapes of the first and last frame by colour and kind, nearest first."""
    tracks = []
    unmatched = list(last)
    for shape in first:
        candidates = [s for s in unmatched if s.name == shape.name]
        if not candidates:
            tracks.append(ShapeTrack(shape, shape, "leaves"))
            continue
        match = min(candidates, key=lambda s: (s.cx - shape.cx) ** 2 + (s.cy - shape.cy) ** 2)
        unmatched.remove(match)
        moved = ((match.cx - shape.cx) ** 2 + (match.cy - shape.cy) ** 2) ** 0.5 > 0.1
        tracks.append(ShapeTrack(shape, match, "moves" if moved else "still"))
    tracks.extend(ShapeTrack(s, s, "appears") for s in unmatched)
    return tracks
