"""The two benchmark formats a script is written in: question specs, their options, and the
LVBench (`video_info.meta.jsonl`) and EgoLifeQA (`EgoLifeQA_A1_JAKE.json`) writers."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from videomem.core import LETTERS
from videomem.timeline import format_egolife

SynthFormat = Literal["lvbench", "egolife"]

CLIP_SECONDS = {"lvbench": 10.0, "egolife": 30.0}
"""Event granularity: the clip length of the shipped pipelines `default` and `egolife`."""


@dataclass
class QSpec:
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


def shuffle_options(rng: random.Random, spec: QSpec) -> None:
    strong = [d for d in dict.fromkeys(spec.strong) if d != spec.correct][:3]
    pool = [d for d in dict.fromkeys(spec.distractors) if d != spec.correct and d not in strong]
    if len(strong) + len(pool) < 3:
        raise AssertionError(f"script bug: fewer than 3 distractors for {spec.question!r}")
    options = [spec.correct, *strong, *rng.sample(pool, 3 - len(strong))]
    rng.shuffle(options)
    spec.options = options
    spec.letter = LETTERS[options.index(spec.correct)]


def write_lvbench(path: Path, key: str, specs: list[QSpec]) -> None:
    qa = []
    for uid, spec in enumerate(specs, 1):
        options = "".join(f"\n({LETTERS[i]}) {opt}" for i, opt in enumerate(spec.options))
        qa.append(
            {
                "uid": str(uid),
                "question": spec.question + options,
                "answer": spec.letter,
                "question_type": spec.categories,
                "time_reference": ", ".join(time_range(a, b) for a, b in spec.targets),
                **({"need_audio": True} if spec.need_audio else {}),
            }
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": key, "type": "synthetic", "qa": qa}) + "\n", encoding="utf-8")


def write_egolife(path: Path, specs: list[QSpec]) -> None:
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


def mmss(seconds: float) -> str:
    total = int(round(seconds))
    if total >= 3600:
        return f"{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}"
    return f"{total // 60:02d}:{total % 60:02d}"


def time_range(t_start: float, t_end: float) -> str:
    return f"{mmss(t_start)}-{mmss(t_end)}"


def sentence(text: str) -> str:
    return text[0] + text[1:].lower()

