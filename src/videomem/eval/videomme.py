"""Video-MME, long subset: one row per question (the released `test` split: parquet, or JSON/JSONL).

A row (public schema):
    {"video_id": "001", "duration": "short", "domain": "Knowledge", "sub_category": "Humanity & History",
     "url": "https://www.youtube.com/watch?v=fFjv93ACGo8", "videoID": "fFjv93ACGo8",
     "question_id": "001-1", "task_type": "Counting Problem", "question": "...",
     "options": ["A. Apples.", "B. Candles.", "C. Berries.", "D. The three kinds are of the same number."],
     "answer": "C"}

The original release groups questions under their video ({video_id, duration, ..., "questions":
[{question_id, task_type, question, options, answer}]}); both layouts load. Video files are
named by `videoID` (the YouTube id), so that is the question's video id in a store. Only rows
whose `duration` is "long" (30-60 min) are kept unless `duration=None`.

The release's `test-00000-of-00001.parquet` is read with pyarrow (the `eval` extra) and goes
through the same checks as JSON rows. Each question keeps the fields Video-MME's own scorer
reads back (`video_id`, `duration`, `domain`, `sub_category`, `url`, options as written), so the run
can write its answers in that layout (`eval/official.py`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from videomem.eval.questions import (
    LETTERS,
    DatasetError,
    Question,
    answer_letter,
    option_count,
    read_json,
    read_jsonl,
    record_error,
    require,
)

DURATIONS = ("short", "medium", "long")
_PREFIX = re.compile(r"^\s*\(?([A-Z])[.)]\s*")


def load_videomme(path: str | Path, duration: str | None = "long") -> list[Question]:
    path = Path(path)
    if duration is not None and duration not in DURATIONS:
        raise DatasetError(f"duration {duration!r} is not one of: {', '.join(DURATIONS)}")
    rows = _rows(path)
    questions = []
    for index, row in rows:
        if duration is not None and require(row, "duration", str, path, index) != duration:
            continue
        questions.append(_question(row, path, index))
    return questions


def _rows(path: Path) -> list[tuple[int | str, dict[str, Any]]]:
    if path.suffix == ".parquet":
        records = list(enumerate(_read_parquet(path)))
    elif path.suffix == ".jsonl":
        records = list(read_jsonl(path))
    else:
        records = list(enumerate(_as_list(read_json(path), path)))
    rows: list[tuple[int | str, dict[str, Any]]] = []
    for index, record in records:
        if isinstance(record, dict) and "questions" in record:
            nested = require(record, "questions", list, path, index)
            shared = {k: v for k, v in record.items() if k != "questions"}
            rows += [(f"{index} questions[{i}]", {**shared, **q}) for i, q in enumerate(nested) if isinstance(q, dict)]
        else:
            rows.append((index, record))
    return rows


def _read_parquet(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DatasetError(f"{path}: reading parquet needs pyarrow: pip install 'videomem[eval]'") from None
    try:
        return pq.read_table(path).to_pylist()
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError, ArrowIOError an OSError
        raise DatasetError(f"{path}: not a readable parquet file ({' '.join(str(exc).split())})") from None


def _as_list(data: Any, path: Path) -> list:
    if not isinstance(data, list):
        raise record_error(path, 0, "(file)", f"expected a JSON list of rows, got {type(data).__name__}")
    return data


def _question(row: dict[str, Any], path: Path, index: int | str) -> Question:
    video = require(row, "videoID", str, path, index)
    qid = require(row, "question_id", (str, int), path, index)
    raw = require(row, "options", list, path, index)
    option_count(len(raw), path, index)
    options = []
    for i, option in enumerate(raw):
        m = _PREFIX.match(option) if isinstance(option, str) else None
        if not m or m.group(1) != LETTERS[i]:
            raise record_error(path, index, "options", f"option {i} should start with '{LETTERS[i]}.', got {option!r}")
        options.append(option[m.end():].strip())
    if len(options) < 2:
        raise record_error(path, index, "options", f"expected at least 2 options, got {raw!r}")
    return Question(
        id=str(qid),
        question=require(row, "question", str, path, index).strip(),
        choices=tuple(options),
        answer=answer_letter(require(row, "answer", str, path, index), len(options), path, index),
        categories=(require(row, "task_type", str, path, index),),
        video_id=video,
        record={
            "video_id": row.get("video_id"),
            "duration": row.get("duration"),
            "domain": row.get("domain"),
            "sub_category": row.get("sub_category"),
            "url": row.get("url"),
            "options": list(raw),
        },
    )
