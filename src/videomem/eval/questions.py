"""The one question shape every benchmark loader produces.

Loaders keep the dataset's own fields at the edge and hand the harness a `Question` whose times
are corpus seconds. The agent is shown only `question`, `choices`, `until` and `video_id`;
`answer` and `targets` are for scoring, so they can never leak into a prompt by accident.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from videomem.core import LETTERS, MAX_OPTIONS
from videomem.errors import VideomemError


class DatasetError(VideomemError):
    """A benchmark file is missing, not JSON, or has a record without a required field."""


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    """The question text without its options."""
    choices: tuple[str, ...]
    answer: str
    """The correct letter: 'A' is choices[0]."""
    categories: tuple[str, ...]
    """LVBench tags a question with several abilities; the others carry one."""
    video_id: str | None = None
    """Scopes the agent to one video of a many-video store (LVBench, Video-MME)."""
    until: float | None = None
    """Query time (EgoLifeQA): nothing recorded after it may be used."""
    targets: tuple[tuple[float, float], ...] = ()
    """Where the answer is, in corpus seconds; a point annotation is (t, t)."""
    record: Mapping[str, Any] = field(default_factory=dict, compare=False)
    """Fields of the dataset's record that its official output file repeats (Video-MME's video
    id, duration, domain, options as written); empty where the output needs none."""

    @property
    def category(self) -> str:
        return ", ".join(self.categories)

    @property
    def answer_text(self) -> str:
        return self.choices[LETTERS.index(self.answer)]


def record_error(path: Path, index: int | str, field: str, problem: str) -> DatasetError:
    return DatasetError(f"{path}: record {index}: {field}: {problem}")


def read_json(path: str | Path) -> Any:
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, exc) from None


def read_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """(record index, object) per non-empty line; the index counts records, from 0."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, exc) from None
    index = 0
    for line_no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield index, json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}: line {line_no}: not valid JSON ({exc.msg})") from None
        index += 1


def _not_utf8(path: Path, exc: UnicodeDecodeError) -> DatasetError:
    return DatasetError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.object[exc.start : exc.start + 1]!r}); save it as UTF-8")


def require(record: Any, field: str, kind: type | tuple[type, ...], path: Path, index: int | str) -> Any:
    """The field's value, or a one-line error naming file, record and field."""
    if not isinstance(record, dict):
        raise record_error(path, index, "(record)", f"expected an object, got {type(record).__name__}")
    if field not in record:
        raise record_error(path, index, field, "missing")
    value = record[field]
    if not isinstance(value, kind) or isinstance(value, bool) and bool not in _as_tuple(kind):
        raise record_error(path, index, field, f"expected {_kind_name(kind)}, got {value!r}")
    return value


def option_count(n_choices: int, path: Path, index: int | str, field: str = "options") -> int:
    """`n_choices`, or a one-line error when the alphabet has too few letters to ask them."""
    if n_choices > MAX_OPTIONS:
        raise record_error(path, index, field, f"{n_choices} options; a question has 2 to {MAX_OPTIONS} (A-{LETTERS[-1]})")
    return n_choices


def answer_letter(value: Any, n_choices: int, path: Path, index: int | str, field: str = "answer") -> str:
    option_count(n_choices, path, index)
    letter = value.strip().upper() if isinstance(value, str) else ""
    if len(letter) != 1 or letter not in LETTERS[:n_choices]:
        raise record_error(path, index, field, f"expected a letter A-{LETTERS[n_choices - 1]}, got {value!r}")
    return letter


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "a number", float: "a number", list: "a list", dict: "an object", bool: "a boolean"}
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in _as_tuple(kind)))
