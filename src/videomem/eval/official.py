"""What each benchmark's own tools read, written beside `results.jsonl` by every eval run.

* **LVBench** — `answers.json`, `{"uid": "A", ...}`: the file THUDM/LVBench's scorer takes
  (a question whose reply named no option is `""`, which that scorer counts wrong, as the report
  does), and `result.json`, the leaderboard's keys (`KIR`, `EU`, `Sum`, `ER`, `Rea`, `TG`,
  `Overall`) with accuracies as fractions computed as that scorer does: a question counts once
  in each of its types and once overall. A tag outside the six types has no leaderboard key and
  appears only in report.md.
* **EgoLifeQA** — `egolifeqa_accuracy.json`: correct, total and accuracy (percent) per question
  type and `Avg.` over all questions, the columns EgoLife and WorldMM report (Ent., EvR., Hab.,
  Rel., Task, Avg.; WorldMM's Avg. is the accuracy over all questions, not a mean of types).
* **Video-MME** — `videomme_answers.json`: one record per video of the question file, in the
  layout of the release's rows that the `eval_your_results.py` linked from Video-MME's README
  reads (`video_id`, `duration`, `domain`, `sub_category`, `url`, `videoID`, `missing`, and
  `questions` with `question_id`, `task_type`, `question`, `options`, `answer` and the model's
  `response`). The response is the option letter the reply was scored as, `""` when it named
  none; that scorer leaves such questions out of its denominator, so its accuracy can be higher
  than the report's (which counts them wrong), and report.md shows both, and how many of the
  file's videos and questions (300 and 900 in the long subset) were answered. A video with no
  answered question is `missing`: that scorer counts it only with `skip_missing`.

Each writer returns the lines report.md shows under "As the benchmark reports it".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from videomem.eval.egolife import TYPES as EGOLIFE_TYPES
from videomem.eval.questions import Question
from videomem.eval.scoring import per_category

LVBENCH_ANSWERS = "answers.json"
LVBENCH_RESULT = "result.json"
EGOLIFE_ACCURACY = "egolifeqa_accuracy.json"
VIDEOMME_ANSWERS = "videomme_answers.json"

LVBENCH_KEYS = {
    "key information retrieval": "KIR",
    "event understanding": "EU",
    "summarization": "Sum",
    "entity recognition": "ER",
    "reasoning": "Rea",
    "temporal grounding": "TG",
}
LVBENCH_OVERALL = "Overall"
EGOLIFE_COLUMNS = dict(zip(EGOLIFE_TYPES, ("Ent.", "EvR.", "Hab.", "Rel.", "Task")))
EGOLIFE_ALL = "Avg."

Rows = list[dict[str, Any]]


def write_official(benchmark: str, questions: Sequence[Question], rows: Rows, out_dir: Path) -> list[str]:
    """Write the benchmark's own output files for these rows; returns report.md lines (none
    while no question has been answered)."""
    if not rows:
        return []
    writers: dict[str, Callable[[Sequence[Question], Rows, Path], list[str]]] = {
        "lvbench": _lvbench,
        "egolife": _egolife,
        "videomme": _videomme,
    }
    return ["", "## As the benchmark reports it", "", *writers[benchmark](questions, rows, out_dir)]


def _write(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _lvbench(questions: Sequence[Question], rows: Rows, out_dir: Path) -> list[str]:
    _write(out_dir / LVBENCH_ANSWERS, {r["id"]: r["prediction"] or "" for r in rows})
    table = per_category((r["categories"], bool(r["correct"])) for r in rows)
    result = {key: table[tag][0] / table[tag][1] for tag, key in LVBENCH_KEYS.items() if tag in table}
    result[LVBENCH_OVERALL] = sum(bool(r["correct"]) for r in rows) / len(rows)
    _write(out_dir / LVBENCH_RESULT, result)
    keys = [*LVBENCH_KEYS.values(), LVBENCH_OVERALL]
    return [
        f"LVBench leaderboard (`{LVBENCH_RESULT}`, from `{LVBENCH_ANSWERS}` as LVBench's scorer counts: "
        "a question once in each of its types, once overall):",
        "",
        "| " + " | ".join(keys) + " |",
        "|" + "---|" * len(keys),
        "| " + " | ".join(_pct(result.get(k)) for k in keys) + " |",
    ]


def _egolife(questions: Sequence[Question], rows: Rows, out_dir: Path) -> list[str]:
    table = per_category((r["categories"], bool(r["correct"])) for r in rows)
    order = [t for t in EGOLIFE_TYPES if t in table] + [t for t in table if t not in EGOLIFE_TYPES]
    counts = {t: table[t] for t in order}
    counts[EGOLIFE_ALL] = (sum(bool(r["correct"]) for r in rows), len(rows))
    _write(
        out_dir / EGOLIFE_ACCURACY,
        {k: {"correct": c, "total": n, "accuracy": 100 * c / n} for k, (c, n) in counts.items()},
    )
    columns = [*EGOLIFE_TYPES, EGOLIFE_ALL]
    return [
        f"EgoLifeQA per type (`{EGOLIFE_ACCURACY}`; the columns of EgoLife's and WorldMM's tables, "
        "Avg. over all questions):",
        "",
        "| " + " | ".join(EGOLIFE_COLUMNS.get(c, c) for c in columns) + " |",
        "|" + "---|" * len(columns),
        "| " + " | ".join(_pct(counts[c][0] / counts[c][1]) if c in counts else "n/a" for c in columns) + " |",
    ]


def _videomme(questions: Sequence[Question], rows: Rows, out_dir: Path) -> list[str]:
    by_id = {r["id"]: r for r in rows}
    videos: dict[str, dict[str, Any]] = {}
    for q in questions:
        video = q.record.get("video_id") or q.video_id
        record = videos.setdefault(video, {
            "video_id": video,
            "duration": q.record.get("duration"),
            "domain": q.record.get("domain"),
            "sub_category": q.record.get("sub_category"),
            "url": q.record.get("url"),
            "videoID": q.video_id,
            "missing": True,
            "questions": [],
        })
        row = by_id.get(q.id)
        record["missing"] = record["missing"] and row is None
        record["questions"].append({
            "question_id": q.id,
            "task_type": q.category,
            "question": q.question,
            "options": list(q.record.get("options", q.choices)),
            "answer": q.answer,
            "response": (row["prediction"] or "") if row else "",
        })
    _write(out_dir / VIDEOMME_ANSWERS, list(videos.values()))
    named = [r for r in rows if r["prediction"]]
    table = per_category((r["categories"], bool(r["correct"])) for r in named)
    correct = sum(bool(r["correct"]) for r in named)
    answered_videos = sum(not v["missing"] for v in videos.values())
    lines = [
        f"Video-MME (`{VIDEOMME_ANSWERS}`, as its eval_your_results.py counts: a question whose reply "
        f"named no option is left out): {_pct(correct / len(named) if named else None)} "
        f"({correct}/{len(named)} answered; {len(rows) - len(named)} left out).",
        "",
        f"Answered: {len(rows)} of the file's {len(questions)} questions, on {answered_videos} of its "
        f"{len(videos)} videos (the long subset has 900 and 300; the scorer counts a video with no "
        "answer only with skip_missing).",
        "",
        "| task type | accuracy | correct / answered |",
        "|---|---|---|",
    ]
    lines += [f"| {t} | {_pct(c / n)} | {c} / {n} |" for t, (c, n) in table.items()]
    return lines


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"
