"""The eval run: every question through the agent, one results row each, then the report.
Several agents on one store: `run_side_by_side` runs each, then compares them.

Resumable: rows are appended and flushed one question at a time, and a rerun skips the ids
already in `results.jsonl`. A rerun into the same directory must use the same benchmark and
question file and have the same fingerprint (store contents, pipeline, models and agent
profiles: `videomem.eval.fingerprint`), so one results file never mixes two setups.

Threads (`jobs`) each open their own Store connection and Agent (SQLite connections are per
thread); the models are shared, so a server backend sees `jobs` concurrent requests.
"""

from __future__ import annotations

import hashlib
import json
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from tqdm import tqdm

from videomem.agent.answer import Answer
from videomem.choice import resolve_choice
from videomem.config import load_agent, load_models
from videomem.errors import MalformedOutputError, VideomemError
from videomem.eval.compare import write_comparison
from videomem.eval.egolife import load_egolife
from videomem.eval.fingerprint import fingerprint, unlike
from videomem.eval.lvbench import load_lvbench
from videomem.eval.official import write_official
from videomem.eval.questions import DatasetError, Question
from videomem.eval.report import RESULTS, RUN, Summary, compared_runs, read_results, read_run, write_report
from videomem.eval.scoring import temporal_iou
from videomem.eval.targets import with_clip_windows
from videomem.eval.videomme import load_videomme
from videomem.models.registry import ModelSet
from videomem.store import Store

LOADERS: dict[str, Callable[[Path], list[Question]]] = {
    "egolife": load_egolife,
    "lvbench": load_lvbench,
    "videomme": load_videomme,
}
_SAME_RUN_KEYS = ("benchmark", "questions", "questions_sha256")


@dataclass(frozen=True)
class EvalResult:
    summary: Summary
    out_dir: Path
    answered: int
    """Questions answered in this call (the rest were already done or skipped)."""
    skipped: list[str]
    """Ids of questions whose video is not in the store."""
    not_compared: list[str]
    """Runs beside this one on the same questions that the report did not compare with, and why."""


def load_questions(benchmark: str, path: str | Path) -> list[Question]:
    if benchmark not in LOADERS:
        raise VideomemError(f"benchmark {benchmark!r} is not one of: {', '.join(LOADERS)}")
    questions = LOADERS[benchmark](Path(path))
    seen: set[str] = set()
    for q in questions:
        if q.id in seen:
            raise DatasetError(f"{path}: question id {q.id!r} appears twice; results are keyed by id")
        seen.add(q.id)
    return questions


def run_eval(
    benchmark: str,
    questions_path: str | Path,
    store_dir: str | Path,
    out_dir: str | Path,
    *,
    agent_path: str | Path | None = None,
    models_path: str | Path | None = None,
    jobs: int = 1,
    limit: int | None = None,
    show_progress: bool = True,
    models: ModelSet | None = None,
) -> EvalResult:
    from videomem.agent.react import Agent

    if jobs < 1:
        raise VideomemError(f"--jobs {jobs}: must be at least 1")
    every_question = load_questions(benchmark, questions_path)
    agent_cfg = load_agent(agent_path)
    models_cfg = load_models(models_path)
    with Store(store_dir, read_only=True) as store:
        videos = {r["id"] for r in store.query("SELECT id FROM videos")}
        every_question = [with_clip_windows(store, q) for q in every_question]
        footing = fingerprint(store, models_cfg, agent_cfg)
    questions = every_question[: max(limit, 0)] if limit is not None else every_question
    out_dir = Path(out_dir)
    run = {
        "benchmark": benchmark,
        "questions": str(Path(questions_path).resolve()),
        "questions_sha256": hashlib.sha256(Path(questions_path).read_bytes()).hexdigest(),
        "store": str(Path(store_dir).resolve()),
        "agent": agent_cfg.name,
        "agent_kind": agent_cfg.kind,
        "models": models_cfg.name,
        "fingerprint": footing.to_json(),
    }
    _claim(out_dir, run)

    skipped = [q.id for q in questions if q.video_id is not None and q.video_id not in videos]
    done = {r["id"] for r in read_results(out_dir)} | set(skipped)
    todo = [q for q in questions if q.id not in done]

    if models is None or models.cfg != models_cfg:
        models = ModelSet(models_cfg)
    pending: queue.SimpleQueue[Question] = queue.SimpleQueue()
    for q in todo:
        pending.put(q)
    lock = threading.Lock()
    errors: list[BaseException] = []
    bar = tqdm(total=len(todo), desc=f"eval {benchmark}", unit="q", disable=not show_progress, dynamic_ncols=True)

    def work(results: TextIO) -> None:
        """Answer questions until none are left (or another worker failed), on own connection."""
        try:
            with Store(store_dir, read_only=True) as store:
                agent = Agent(store, models, agent_cfg)
                while not errors:
                    try:
                        q = pending.get_nowait()
                    except queue.Empty:
                        return
                    try:
                        row = result_row(q, agent.ask(q.question, list(q.choices), q.until, q.video_id))
                    except MalformedOutputError as exc:
                        row = unanswered_row(q, str(exc))
                    with lock:
                        results.write(json.dumps(row, ensure_ascii=False) + "\n")
                        results.flush()
                        bar.update(1)
        except BaseException as exc:
            errors.append(exc)

    try:
        with (out_dir / RESULTS).open("a", encoding="utf-8") as results:
            helpers = [threading.Thread(target=work, args=(results,)) for _ in range(min(jobs, len(todo)) - 1)]
            for helper in helpers:
                helper.start()
            if todo:
                work(results)
            for helper in helpers:
                helper.join()
    finally:
        bar.close()
    if errors:
        raise errors[0]
    official = write_official(benchmark, every_question, read_results(out_dir), out_dir)
    summary = write_report(out_dir, skipped=len(skipped), official=official)
    return EvalResult(summary, out_dir, len(todo), skipped, compared_runs(out_dir, run)[1])


def run_side_by_side(
    benchmark: str,
    questions_path: str | Path,
    store_dir: str | Path,
    out_dir: str | Path,
    agent_paths: Sequence[str | Path],
    **options: Any,
) -> tuple[list[EvalResult], list[Summary]]:
    """Each agent's run into `out_dir/<agent name>/` (resumable like any run; the models are
    loaded once for all), then one comparison of them all in `out_dir` (`videomem.eval.compare`)."""
    names = [load_agent(path).name for path in agent_paths]
    models = ModelSet(load_models(options.get("models_path")))
    if len(set(names)) != len(names):
        twice = next(name for name in names if names.count(name) > 1)
        raise VideomemError(f"--agent: two profiles are named {twice!r}; each run needs its own name")
    out_dir = Path(out_dir)
    results = [
        run_eval(benchmark, questions_path, store_dir, out_dir / name, agent_path=path, models=models, **options)
        for name, path in zip(names, agent_paths)
    ]
    return results, write_comparison([r.out_dir for r in results], out_dir)


def _claim(out_dir: Path, run: dict[str, Any]) -> None:
    """Write run.json, or check that an earlier run here had the same setup."""
    if out_dir.exists() and not out_dir.is_dir():
        raise VideomemError(f"--out {out_dir}: exists and is not a directory")
    previous = read_run(out_dir)
    if previous is not None:
        differs = [k for k in _SAME_RUN_KEYS if previous.get(k) != run[k]]
        if differs == ["questions_sha256"]:
            raise VideomemError(f"--out {out_dir}: {run['questions']} changed since this run began; use another --out")
        if differs:
            key = differs[0]
            raise VideomemError(
                f"--out {out_dir} holds a run with {key}={previous.get(key)!r}, not {run[key]!r}; use another --out"
            )
        changed = unlike(run, previous)
        if changed:
            raise VideomemError(f"--out {out_dir} holds a run made on another footing ({'; '.join(changed)}); use another --out")
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / RUN).write_text(json.dumps(run, indent=2) + "\n", encoding="utf-8")


def unanswered_row(q: Question, error: str) -> dict[str, Any]:
    """The row of a question the models could not answer in a usable form: scored wrong (never
    guessed), with the reason kept so a report reader can tell it from a wrong answer."""
    trace = [{"tool": "answer", "observation": error, "error": True}]
    return {**result_row(q, Answer("", None, [], trace, tokens=0, seconds=0.0)), "error": error}


def result_row(q: Question, reply: Answer) -> dict[str, Any]:
    """One line of results.jsonl."""
    prediction = resolve_choice(reply.choice, reply.text, q.choices)
    evidence = [{"video_id": e.video_id, "t_start": e.t_start, "t_end": e.t_end} for e in reply.evidence]
    tiou = temporal_iou([(e.video_id, e.t_start, e.t_end) for e in reply.evidence], q.targets, q.video_id)
    return {
        "id": q.id,
        "video_id": q.video_id,
        "category": q.category,
        "categories": list(q.categories),
        "prediction": prediction,
        "answer": q.answer,
        "correct": prediction == q.answer,
        "response": reply.text,
        "evidence": evidence,
        "tiou": None if tiou is None else round(tiou, 4),
        "tool_calls": sum(
            1 for step in reply.trace if step.get("tool") not in ("finish", "answer") and not step.get("error")
        ),
        "tools": [
            step["tool"] for step in reply.trace if step.get("tool") not in ("finish", "answer") and not step.get("error")
        ],
        "tokens": reply.tokens,
        "evidence_tokens": sum(len(e.text.split()) for e in reply.evidence),
        "seconds": round(reply.seconds, 3),
    }
