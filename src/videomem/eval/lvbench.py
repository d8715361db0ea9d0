"""LVBench (`video_info.meta.jsonl`): one video per line, its questions inside.

A line (public schema; extra fields such as `video_info` are ignored):
    {"key": "Cm73ma6Ibcs", "type": "documentary", "qa": [{"uid": "55",
     "question": "What year appears in the opening caption of the video?\\n(A) 1636\\n(B) 1366\\n(C) 1363\\n(D) 1633",
     "answer": "D", "question_type": ["key information retrieval"], "time_reference": "00:15-00:19"}]}

The options live inside the question after "\\n(A) ". `question_type` is a list: a question
counts once for each of its tags. `time_reference` is "MM:SS-MM:SS" (H:MM:SS or HH:MM:SS past
the hour), empty where the question has no span; `_ranges` lists every form read. A store
holds the videos keyed by `key`.
"""

from __future__ import annotations

import re
from pathlib import Path

from videomem.errors import TimeFormatError
from videomem.eval.questions import LETTERS, Question, answer_letter, option_count, read_jsonl, record_error, require
from videomem.timeline import parse_range, parse_time

CATEGORIES = (
    "temporal grounding",
    "summarization",
    "reasoning",
    "entity recognition",
    "event understanding",
    "key information retrieval",
)
_OPTION = re.compile(r"\n\(([A-Z])\)[ \t]*")
_SEPARATOR = re.compile(r"[,;]")


def load_lvbench(path: str | Path) -> list[Question]:
    path = Path(path)
    questions: list[Question] = []
    for index, record in read_jsonl(path):
        key = require(record, "key", str, path, index)
        qa = require(record, "qa", list, path, index)
        questions += [_question(item, key, path, f"{index} qa[{i}]") for i, item in enumerate(qa)]
    return questions


def _question(item: object, key: str, path: Path, index: str) -> Question:
    uid = require(item, "uid", (str, int), path, index)
    full = require(item, "question", str, path, index)
    parts = _OPTION.split(full)
    text, letters, options = parts[0].strip(), parts[1::2], [p.strip() for p in parts[2::2]]
    option_count(len(options), path, index, "question")
    if len(options) < 2 or "".join(letters) != LETTERS[: len(letters)] or not all(options):
        raise record_error(path, index, "question", f"expected options '\\n(A) ...\\n(B) ...', got {full!r}")
    answer = answer_letter(require(item, "answer", str, path, index), len(options), path, index)
    tags = require(item, "question_type", (list, str), path, index)
    tags = [tags] if isinstance(tags, str) else tags
    if not tags or not all(isinstance(t, str) and t.strip() for t in tags):
        raise record_error(path, index, "question_type", f"expected a non-empty list of tags, got {tags!r}")
    reference = item.get("time_reference", "") if isinstance(item, dict) else ""
    return Question(
        id=str(uid),
        question=text,
        choices=tuple(options),
        answer=answer,
        categories=tuple(t.strip() for t in tags),
        video_id=key,
        until=None,
        targets=_ranges(reference, path, index),
    )


def _ranges(reference: object, path: Path, index: str) -> tuple[tuple[float, float], ...]:
    """The spans of a `time_reference`: "" or absent (no target); a range "MM:SS-MM:SS",
    "H:MM:SS-H:MM:SS" (any `timeline.parse_range` form: "-", "–", "—" or "to", spaces
    allowed); a single time, a moment (t, t); several of these separated by "," or ";", or
    given as a JSON list."""
    if reference is None or reference == "" or reference == []:
        return ()
    parts = reference if isinstance(reference, list) else [reference]
    if not all(isinstance(p, str) for p in parts):
        raise record_error(path, index, "time_reference", f"expected 'MM:SS-MM:SS', got {reference!r}")
    spans = []
    for part in (piece.strip() for text in parts for piece in _SEPARATOR.split(text)):
        if not part:
            continue
        try:
            span = parse_range(part)
            if span is None:
                moment = parse_time(part)
                span = (moment, moment)
        except TimeFormatError as exc:
            raise record_error(path, index, "time_reference", f"{part!r}: {exc}") from None
        spans.append(span)
    return tuple(spans)
