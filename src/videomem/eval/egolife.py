"""EgoLifeQA (`EgoLifeQA_A1_JAKE.json`): a JSON list of multiple-choice questions about a week.

A record (public schema; `*_chinese` twins and `identity` may also appear):
    {"ID": "1", "query_time": {"date": "DAY1", "time": "11210217"}, "type": "EntityLog",
     "need_audio": false, "need_name": true, "last_time": false, "trigger": "...",
     "question": "Who used the screwdriver first?", "choice_a": "Tasha", ..., "choice_d": "Lucia",
     "answer": "B", "target_time": {"date": "DAY1", "time": "11152408"},
     "keywords": "use screwdriver", "reason": "Saw Alice tightening screws with a screwdriver"}

`target_time` comes in three shapes: {date, time}; {date, time_list: [...]}; or one string of
several times such as "11153417DAY1_11181201", where each `DAYn_` sets the day of the time after
it (a time before any `DAYn_` is on the query's day). Targets are moments, kept as (t, t).

Every question is asked with until = query_time: the agent may use only what was recorded
before it. `keywords`, `reason`, `answer` and `target_time` never reach the agent.
"""

from __future__ import annotations

import re
from pathlib import Path

from videomem.errors import TimeFormatError
from videomem.eval.questions import Question, answer_letter, read_json, record_error, require
from videomem.timeline import egolife_code_to_seconds

TYPES = ("EntityLog", "EventRecall", "HabitInsight", "RelationMap", "TaskMaster")
_DATE = re.compile(r"^DAY(\d+)$", re.IGNORECASE)
_TARGET_TOKEN = re.compile(r"(?:DAY(\d+)_)?(\d{8})", re.IGNORECASE)


def load_egolife(path: str | Path) -> list[Question]:
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, list):
        raise record_error(path, 0, "(file)", f"expected a JSON list of questions, got {type(data).__name__}")
    return [_question(record, path, index) for index, record in enumerate(data)]


def _question(record: object, path: Path, index: int) -> Question:
    qid = require(record, "ID", (str, int), path, index)
    query = require(record, "query_time", dict, path, index)
    query_day = _day(query.get("date"), path, index, "query_time.date")
    until = _seconds(query.get("time"), query_day, path, index, "query_time.time")
    kind = require(record, "type", str, path, index)
    text = require(record, "question", str, path, index)
    choices = tuple(require(record, f"choice_{c}", (str, int, float), path, index) for c in "abcd")
    answer = answer_letter(require(record, "answer", str, path, index), 4, path, index)
    targets = _targets(require(record, "target_time", (dict, str), path, index), query_day, path, index)
    return Question(
        id=str(qid),
        question=text.strip(),
        choices=tuple(str(c).strip() for c in choices),
        answer=answer,
        categories=(kind,),
        video_id=None,
        until=until,
        targets=tuple((t, t) for t in targets),
    )


def _day(value: object, path: Path, index: int, field: str) -> int:
    m = _DATE.match(value.strip()) if isinstance(value, str) else None
    if not m or int(m.group(1)) < 1:
        raise record_error(path, index, field, f"expected DAYn, got {value!r}")
    return int(m.group(1))


def _seconds(value: object, day: int, path: Path, index: int, field: str) -> float:
    if not isinstance(value, str):
        raise record_error(path, index, field, f"expected an HHMMSSFF string, got {value!r}")
    try:
        return egolife_code_to_seconds(value, day)
    except TimeFormatError as exc:
        raise record_error(path, index, field, str(exc)) from None


def _targets(value: dict | str, query_day: int, path: Path, index: int) -> list[float]:
    if isinstance(value, str):
        text = value.strip()
        tokens = list(_TARGET_TOKEN.finditer(text))
        if not tokens or "".join(m.group(0) for m in tokens) != text:
            raise record_error(path, index, "target_time", f"expected times like '11153417DAY1_11181201', got {value!r}")
        times, day = [], query_day
        for m in tokens:
            day = int(m.group(1)) if m.group(1) else day
            times.append(_seconds(m.group(2), day, path, index, "target_time"))
        return times
    day = _day(value.get("date"), path, index, "target_time.date")
    if "time_list" in value:
        listed = value["time_list"]
        if not isinstance(listed, list) or not listed:
            raise record_error(path, index, "target_time.time_list", f"expected a non-empty list, got {listed!r}")
        return [_seconds(t, day, path, index, "target_time.time_list") for t in listed]
    return [_seconds(value.get("time"), day, path, index, "target_time.time")]
