"""Retrieval-level evaluation: what each memory returns for a question, scored against where
the answer is, with no answering model (`videomem eval … --retrieval`).

Every memory of the registry (`memory/registry.py`) is asked `retrieve(query, until=query
time, video_id)` for each question that has a target, and so is caption RAG's retrieval (the
event captions opened with `agents/caption-rag.yaml`'s settings: by meaning alone, where the
agent's own memories may fuse keywords in). Every row is asked the same query: the question and
its options, which is what the agents search with (the offline planner's first query, caption
RAG's `rag_query`), or the question alone (`question_only`), so that no row is measured with
words another is not given.
Targets are read as the answering run reads them: ranges as they are, a moment as the stored
clip that contains it (`eval/targets.py`).

Two numbers per memory, for k = 1, 5, 10 over its first k results:

* **recall@k** — the share of a question's target windows that at least one of the k ranges
  overlaps, averaged over questions (for a question with one target: whether it was reached);
* **tIoU@k** — the temporal IoU of the union of the k ranges with the union of the targets
  (`scoring.temporal_iou`), averaged over questions: the measure of WorldMM's Table 3 (average
  tIoU of the retrieved segments with the ground-truth segments; 10.09 % on EgoLifeQA, 9.57 %
  on LVBench for its episodic retrieval), shown in percent as that table is.

A memory whose results carry a time scale (episodic memory's windows) is also scored per scale:
the first k results of that scale, in the memory's own order, out of a pool of `POOL` results.
A memory that cannot be asked on this store (built by another embedder), or that returns
nothing for any question (not built), is listed with the reason and not scored. Written beside each other in the output directory: report.md,
retrieval.json and one plot per measure.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from tqdm import tqdm

from videomem.choice import search_text
from videomem.config import load_agent, load_models
from videomem.errors import VideomemError
from videomem.eval.questions import Question
from videomem.eval.report import REPORT
from videomem.eval.scoring import Span, temporal_iou
from videomem.eval.targets import with_clip_windows
from videomem.evidence import Evidence
from videomem.memory.registry import MEMORIES, Memory, open_memory
from videomem.models.registry import ModelSet
from videomem.store import Store

KS = (1, 5, 10)
POOL = 100
"""Results asked of each memory: the overall scores use the first 10, a scale's the first 10 of it."""
CAPTION_RAG = "caption-rag"
CAPTION_RAG_MEMORY = "events"
"""Caption RAG searches the event captions (`Agent._caption_rag`), as its profile (`agents/caption-rag.yaml`) says."""
RETRIEVAL_JSON = "retrieval.json"
PLOT_RECALL = "retrieval_recall.png"
PLOT_TIOU = "retrieval_tiou.png"


@dataclass(frozen=True)
class Row:
    memory: str
    scale: float | None
    """Seconds per window of the scale scored alone; None: all the memory's results."""
    questions: int
    recall: dict[int, float]
    tiou: dict[int, float]
    """Mean tIoU as a fraction (report.md shows percent)."""

    @property
    def label(self) -> str:
        return self.memory if self.scale is None else f"{self.memory} {self.scale:g}s"

    def to_json(self) -> dict[str, Any]:
        return {
            "memory": self.memory,
            "scale": self.scale,
            "questions": self.questions,
            "recall": {str(k): round(v, 4) for k, v in self.recall.items()},
            "tiou": {str(k): round(v, 4) for k, v in self.tiou.items()},
        }


@dataclass(frozen=True)
class RetrievalReport:
    rows: list[Row]
    asked: int
    """Questions with a target whose video is in the store: the ones scored."""
    without_target: int
    skipped: int
    """Questions whose video is not in the store."""
    not_measured: dict[str, str]
    """Memory → why it could not be asked on this store."""
    out_dir: Path
    question_only: bool = False
    """Asked with the question alone, not the question and its options."""

    @property
    def query(self) -> str:
        return "the question" if self.question_only else "the question and its options"


def run_retrieval(
    questions: Sequence[Question],
    store_dir: str | Path,
    out_dir: str | Path,
    *,
    agent_path: str | Path | None = None,
    models_path: str | Path | None = None,
    question_only: bool = False,
    show_progress: bool = True,
) -> RetrievalReport:
    """Score every registered memory's and caption RAG's retrieval on `questions`, each asked
    with the question and its options (the question alone with `question_only`); write the
    report into `out_dir`."""
    models = ModelSet(load_models(models_path))
    cfg = load_agent(agent_path)
    with Store(store_dir, read_only=True) as store:
        videos = {r["id"] for r in store.query("SELECT id FROM videos")}
        present = [q for q in questions if q.video_id is None or q.video_id in videos]
        targeted = [t for t in (with_clip_windows(store, q) for q in present) if t.targets]
        askers: dict[str, Memory] = {}
        not_measured: dict[str, str] = {}
        for name in MEMORIES:
            try:
                askers[name] = open_memory(name, store, models, cfg)
            except VideomemError as exc:
                not_measured[name] = str(exc)
        if CAPTION_RAG_MEMORY in askers:
            askers[CAPTION_RAG] = open_memory(CAPTION_RAG_MEMORY, store, models, load_agent(CAPTION_RAG))
        query = _question if question_only else _question_and_options
        found: dict[str, list[tuple[Question, list[Evidence]]]] = defaultdict(list)
        bar = tqdm(total=len(targeted) * len(askers), desc="retrieval", unit="q", disable=not show_progress)
        try:
            for name, memory in askers.items():
                try:
                    for q in targeted:
                        found[name].append((q, memory.retrieve(query(q), POOL, q.until, q.video_id)))
                        bar.update(1)
                except VideomemError as exc:
                    not_measured[name] = str(exc)
                    found.pop(name, None)
        finally:
            bar.close()
    for name, pairs in list(found.items()):
        if not any(results for _, results in pairs):
            not_measured[name] = "returned nothing for any question (not built on this store?)"
            del found[name]
    rows = [row for name, pairs in found.items() for row in score(name, pairs)]
    report = RetrievalReport(
        rows, len(targeted), len(present) - len(targeted), len(questions) - len(present), not_measured, Path(out_dir),
        question_only,
    )
    write(report)
    return report


def _question(q: Question) -> str:
    return q.question


def _question_and_options(q: Question) -> str:
    return search_text(q.question, q.choices)


def score(memory: str, pairs: Sequence[tuple[Question, list[Evidence]]]) -> list[Row]:
    """The memory's row over all its results, then one per time scale its results carry."""
    rows = [_row(memory, None, [(q, found) for q, found in pairs])]
    scales = sorted({e.scale for _, found in pairs for e in found if e.scale is not None})
    for scale in scales:
        rows.append(_row(memory, scale, [(q, [e for e in found if e.scale == scale]) for q, found in pairs]))
    return rows


def _row(memory: str, scale: float | None, pairs: Sequence[tuple[Question, list[Evidence]]]) -> Row:
    recall = {k: _mean([target_recall(found[:k], q.targets, q.video_id) for q, found in pairs]) for k in KS}
    tiou = {
        k: _mean([temporal_iou([(e.video_id, e.t_start, e.t_end) for e in found[:k]], q.targets, q.video_id) or 0.0
                  for q, found in pairs])
        for k in KS
    }
    return Row(memory, scale, len(pairs), recall, tiou)


def target_recall(found: Sequence[Evidence], targets: Sequence[Span], video_id: str | None) -> float:
    """The share of `targets` that at least one range of `found` overlaps (in the question's
    video; touching ends do not overlap, a zero-length range overlaps what contains it)."""
    spans = [(e.t_start, e.t_end) for e in found if video_id is None or e.video_id == video_id]
    reached = sum(any(_overlap(span, target) for span in spans) for target in targets)
    return reached / len(targets) if targets else 0.0


def _overlap(a: Span, b: Span) -> bool:
    start, end = max(a[0], b[0]), min(a[1], b[1])
    return end > start or (end == start and (a[0] == a[1] or b[0] == b[1]))


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def write(report: RetrievalReport) -> None:
    out = report.out_dir
    out.mkdir(parents=True, exist_ok=True)
    (out / RETRIEVAL_JSON).write_text(
        json.dumps(
            {
                "ks": list(KS),
                "questions": report.asked,
                "without_target": report.without_target,
                "skipped": report.skipped,
                "query": "question" if report.question_only else "question_and_options",
                "rows": [r.to_json() for r in report.rows],
                "not_measured": report.not_measured,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    _plot(out / PLOT_RECALL, report.rows, "recall", "recall@k of the target windows")
    _plot(out / PLOT_TIOU, report.rows, "tiou", "mean tIoU@k (%)")
    (out / REPORT).write_text("\n".join(report_lines(report)) + "\n", encoding="utf-8")


def report_lines(report: RetrievalReport) -> list[str]:
    head = ["memory", "scale", "questions", *(f"R@{k}" for k in KS), *(f"tIoU@{k} %" for k in KS)]
    lines = [
        "# Retrieval",
        "",
        f"Each memory's `retrieve(query, until=query time)`, the query {report.query}, "
        f"on {report.asked} question(s) with a target "
        f"({report.without_target} without a target and {report.skipped} whose video is not in the store left out); "
        "no answering model. R@k: share of the target windows one of the first k ranges overlaps; "
        "tIoU@k: temporal IoU of the first k ranges with the targets, in percent (WorldMM's Table 3 measure).",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for r in report.rows:
        cells = [r.memory, "all" if r.scale is None else f"{r.scale:g} s", str(r.questions)]
        cells += [f"{r.recall[k]:.3f}" for k in KS] + [f"{100 * r.tiou[k]:.2f}" for k in KS]
        lines.append("| " + " | ".join(cells) + " |")
    for name, why in report.not_measured.items():
        lines.append(f"\nnot measured: {name} ({why})")
    lines += ["", f"![recall@k]({PLOT_RECALL})", f"![tIoU@k]({PLOT_TIOU})"]
    return lines


def _plot(path: Path, rows: Sequence[Row], measure: str, title: str) -> None:
    figure = Figure(figsize=(7, 0.4 * max(len(rows), 3) + 1.5))
    axes = figure.subplots()
    height = 0.8 / len(KS)
    for i, k in enumerate(KS):
        values = [getattr(r, measure)[k] * (100 if measure == "tiou" else 1) for r in rows]
        axes.barh([n + i * height for n in range(len(rows))], values, height=height, label=f"k = {k}")
    axes.set_yticks([n + height for n in range(len(rows))], [r.label for r in rows])
    axes.invert_yaxis()
    axes.set_title(title)
    axes.legend(loc="best")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
