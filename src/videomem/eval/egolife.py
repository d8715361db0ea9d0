"""EgoLifeQA (`EgoLifeQA_A1_JAKE.json`): a JSON list of multiple-choice questions about a week.

A record (public schema; `*_chinese` twins and `identity` may also appear):
    {"ID": "1", "query_time": {"date": "DAY1", "time": "11210217"}, "type": "EntityLog",
     "need_audio": false, "need_name": true, "last_time": false, "trigger": "...",
     "question": "Who used the screwdriver first?", "choice_a": "Tasha", ..., "choice_d": "Lucia",
     "answer": "B", "target_time": {"date": "DAY1", "time": "11152408"},
     "keywords": "use screwdriver", "reason": "Saw Alice tightening screws with a screwdriver"}

`target_time` comes in the release's four forms:

* `{"date": "DAY1", "time": "11152408"}` — one moment, HHMMSSFF on `date`;
* `{"date": "DAY1", "time": "11153417DAY1_11181201"}` — a range: START on `date`, then
  `DAYn_` and END on day n (which may be a later day: the range spans the days between);
* `{"date": "DAY4", "time": "17044917DAY4_20593813DAY6_19483807"}` — three times chained the
  same way: the moments of something that happened three times ("How many times has Shure
  played the guitar?"), read as three moments (WorldMM's evaluation drops these targets);
* `{"date": "DAY1", "time_list": ["11153417", "11181201"]}` — several moments on `date`.

A range is kept as (start, end); a moment as (t, t), which the harness scores against the
stored clip that contains it (`eval/targets.py`). Times written with fewer than eight digits
(an hour below 10 that lost its leading zero) are zero-padded, as WorldMM pads them; frame
digits 20–99 are read inside their second (`timeline.egolife_code_to_seconds`).

Options are asked as written, a repeated one too (the release has `Choiszt` as A, B and D):
the reply is scored by its letter.

Every question is asked with until = query_time: the agent may use only what was recorded
before it. `keywords`, `reason`, `answer` and `target_time` never reach the agent.

A record without an ID, question, four choices, answer letter or readable query time cannot
be asked: it is left out with a one-line warning naming the file, the record, its ID and the
field, and the other records are asked (a file none of whose records can be asked is an
error). A record whose `type` or `target_time` cannot be read is still asked and scored for
accuracy — without tIoU when the target is the problem — and a one-line warning names its ID.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from videomem.errors import TimeFormatError
from videomem.eval.questions import DatasetError, Question, answer_letter, read_json, record_error, require
from videomem.timeline import egolife_code_to_seconds

TYPES = ("EntityLog", "EventRecall", "HabitInsight", "RelationMap", "TaskMaster")
UNTYPED = "(no type)"
"""Category of a record whose `type` is missing or not a string."""

log = logging.getLogger(__name__)

_DATE = re.compile(r"^DAY(\d+)$", re.IGNORECASE)
_CODE = re.compile(r"^\d{1,8}$")
_CHAIN = re.compile(r"^(\d{1,8})((?:DAY\d+_\d{1,8})+)$", re.IGNORECASE)
_LINK = re.compile(r"DAY(\d+)_(\d{1,8})", re.IGNORECASE)


def load_egolife(path: str | Path) -> list[Question]:
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, list):
        raise record_error(path, 0, "(file)", f"expected a JSON list of questions, got {type(data).__name__}")
    questions, refused = [], []
    for index, record in enumerate(data):
        try:
            questions.append(_question(record, path, index))
        except DatasetError as exc:
            log.warning("%s; this record is left out", exc)
            refused.append(str(exc))
    if refused and not questions:
        raise DatasetError(f"none of the {len(data)} records can be asked; the first: {refused[0]}")
    return questions


def _question(record: object, path: Path, index: int) -> Question:
    qid = str(require(record, "ID", (str, int), path, index))
    where = f"{index} (ID {qid})"
    query = require(record, "query_time", dict, path, where)
    until = _query_time(query, path, where)
    text = require(record, "question", str, path, where)
    if not text.strip():
        raise record_error(path, where, "question", "empty")
    choices = tuple(require(record, f"choice_{c}", (str, int, float), path, where) for c in "abcd")
    answer = answer_letter(require(record, "answer", str, path, where), 4, path, where)
    kind = record.get("type")
    if not isinstance(kind, str) or not kind.strip():
        log.warning("%s: record %s: type: expected a string, got %r; counted as %s", path, where, kind, UNTYPED)
        kind = UNTYPED
    try:
        targets = target_spans(record.get("target_time"))
    except ValueError as exc:
        log.warning("%s: record %s: target_time: %s; asked and scored without tIoU", path, where, exc)
        targets = ()
    return Question(
        id=qid,
        question=text.strip(),
        choices=tuple(str(c).strip() for c in choices),
        answer=answer,
        categories=(kind.strip(),),
        video_id=None,
        until=until,
        targets=targets,
    )


def target_spans(value: object) -> tuple[tuple[float, float], ...]:
    """The spans of a `target_time` in corpus seconds: (start, end) for a range, (t, t) for a
    moment. Anything else is a ValueError saying what was expected."""
    if not isinstance(value, dict):
        raise ValueError(f"expected {{date, time}} or {{date, time_list}}, got {value!r}")
    day = _day(value.get("date"), "date")
    if "time_list" in value:
        listed = value["time_list"]
        if not isinstance(listed, list) or not listed:
            raise ValueError(f"time_list: expected a non-empty list of HHMMSSFF times, got {listed!r}")
        moments = [_time(t, day, "time_list") for t in listed]
        return tuple((t, t) for t in moments)
    time = value.get("time")
    text = str(time).strip() if isinstance(time, (str, int)) and not isinstance(time, bool) else None
    chain = _CHAIN.match(text) if text else None
    if chain:
        links = _LINK.findall(chain.group(2))
        points = [_time(chain.group(1), day, "time")]
        points += [_time(code, _day(f"DAY{n}", "time"), "time") for n, code in links]
        if len(points) > 2:
            return tuple((t, t) for t in points)
        start, end = points
        if end < start:
            raise ValueError(f"time: the range {text!r} ends before it starts")
        return ((start, end),)
    moment = _time(time, day, "time")
    return ((moment, moment),)


def _day(value: object, field: str) -> int:
    m = _DATE.match(value.strip()) if isinstance(value, str) else None
    if not m or int(m.group(1)) < 1:
        raise ValueError(f"{field}: expected DAYn, got {value!r}")
    return int(m.group(1))


def _time(value: object, day: int, field: str) -> float:
    """HHMMSSFF (as a string or a number; fewer than 8 digits are zero-padded) on `day`."""
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    if not _CODE.match(text):
        raise ValueError(f"{field}: expected an HHMMSSFF time, got {value!r}")
    try:
        return egolife_code_to_seconds(text.zfill(8), day)
    except TimeFormatError as exc:
        raise ValueError(f"{field}: {exc}") from None


def _query_time(query: dict, path: Path, where: str) -> float:
    try:
        day = _day(query.get("date"), "query_time.date")
        return _time(query.get("time"), day, "query_time.time")
    except ValueError as exc:
        field, _, problem = str(exc).partition(": ")
        raise record_error(path, where, field, problem) from None
