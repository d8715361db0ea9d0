"""What an eval run leaves behind: `results.jsonl`, `report.md` and two PNG plots.

`results.jsonl` holds one row per question (snake_case keys, stable): id, video_id, category
(tags joined by ", "), categories, prediction, answer, correct, response, evidence
[{video_id, t_start, t_end}], tiou, tool_calls, tools (the tools called, in order; memory tools
as memory.<name>), tokens (model tokens the question cost),
evidence_tokens (whitespace-separated words of the evidence the answer cites), seconds.

The benchmark's own output files (LVBench `answers.json` / `result.json`, EgoLifeQA per-type
accuracy, Video-MME's answer layout) are written by `eval/official.py`; report.md shows their
numbers too.

`run.json` records what produced the rows (benchmark, questions file, agent, models, and the
run's fingerprint), so a run in a sibling directory on the same questions (such as the
caption-RAG baseline) is found and compared in the report: the memory/agent gain over plain
RAG, measured the same way. A sibling measured on another footing (another store's contents,
pipeline or models profile) is not compared; the report says what differs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from videomem.eval.fingerprint import SAME_FOOTING, unlike
from videomem.eval.questions import DatasetError
from videomem.eval.scoring import accuracy, per_category

RESULTS = "results.jsonl"
RUN = "run.json"
REPORT = "report.md"
PLOT_CATEGORIES = "accuracy_by_category.png"
PLOT_TOKENS = "accuracy_vs_tokens.png"
BASELINE_KIND = "caption_rag"


@dataclass(frozen=True)
class Summary:
    name: str
    """The agent profile's name, e.g. telemem or caption-rag."""
    kind: str
    n: int
    correct: int
    categories: dict[str, tuple[int, int]]
    mean_tiou: float | None
    tokens: float
    evidence_tokens: float
    seconds: float
    tool_calls: float
    unanswered: int
    """Questions whose reply named no option (scored wrong)."""

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else 0.0


def read_results(out_dir: str | Path) -> list[dict[str, Any]]:
    """Rows written so far. A last line cut off by a kill is dropped (that question reruns)."""
    path = Path(out_dir) / RESULTS
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            if number == len(lines):
                path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
                break
            raise DatasetError(f"{path}: line {number} is not valid JSON; remove it to resume") from None
    return rows


def read_run(out_dir: str | Path) -> dict[str, Any] | None:
    path = Path(out_dir) / RUN
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def summarize(rows: list[dict[str, Any]], run: dict[str, Any]) -> Summary:
    n = len(rows)
    tious = [r["tiou"] for r in rows if r.get("tiou") is not None]

    def mean(key: str) -> float:
        return sum(r[key] for r in rows) / n if n else 0.0

    return Summary(
        name=run.get("agent", "?"),
        kind=run.get("agent_kind", "?"),
        n=n,
        correct=sum(bool(r["correct"]) for r in rows),
        categories=per_category((r["categories"], bool(r["correct"])) for r in rows),
        mean_tiou=sum(tious) / len(tious) if tious else None,
        tokens=mean("tokens"),
        evidence_tokens=mean("evidence_tokens"),
        seconds=mean("seconds"),
        tool_calls=mean("tool_calls"),
        unanswered=sum(r["prediction"] is None for r in rows),
    )


def sibling_runs(out_dir: Path, run: dict[str, Any]) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Other runs beside this one on the same benchmark and question file."""
    found = []
    for other in sorted(p for p in out_dir.resolve().parent.iterdir() if p.is_dir() and p != out_dir.resolve()):
        meta = read_run(other)
        if meta and all(meta.get(k) == run.get(k) for k in ("benchmark", "questions", "questions_sha256")):
            rows = read_results(other)
            if rows:
                found.append(({**meta, "out": other.name}, rows))
    return found


def compared_runs(out_dir: Path, run: dict[str, Any]) -> tuple[list[tuple[dict[str, Any], list[dict[str, Any]]]], list[str]]:
    """Sibling runs on the same questions and footing, and one line for each sibling that is
    not compared, saying what differs (from it to this run)."""
    same, refused = [], []
    for meta, rows in sibling_runs(out_dir, run):
        changed = unlike(run, meta, SAME_FOOTING)
        if changed:
            refused.append(f"{meta.get('agent', '?')} ({meta['out']}): {'; '.join(changed)}")
        else:
            same.append((meta, rows))
    return same, refused


def write_report(out_dir: str | Path, skipped: int = 0, official: Sequence[str] = ()) -> Summary:
    """Write report.md and the plots from results.jsonl; returns this run's summary. `official`
    are the lines with the benchmark's own numbers (see eval/official.py)."""
    out_dir = Path(out_dir)
    run = read_run(out_dir)
    if run is None:
        raise DatasetError(f"{out_dir}: no {RUN} here; is this an eval output directory?")
    rows = read_results(out_dir)
    summary = summarize(rows, run)
    same, refused = compared_runs(out_dir, run)
    others = [(meta, summarize(r, meta), r) for meta, r in same]
    lines = [
        f"# {run['benchmark']} — {summary.name}",
        "",
        f"Questions: `{run['questions']}`  ",
        f"Store: `{run['store']}`  ",
        f"Agent: {summary.name} ({summary.kind}); models: {run.get('models', '?')}",
        "",
        "| metric | value |",
        "|---|---|",
        f"| questions answered | {summary.n} |",
        f"| accuracy | {_pct(summary.accuracy)} ({summary.correct}/{summary.n}) |",
        f"| mean tIoU | {_num(summary.mean_tiou)} |",
        f"| tokens per question | {summary.tokens:.0f} |",
        f"| evidence tokens per question | {summary.evidence_tokens:.0f} |",
        f"| seconds per question | {summary.seconds:.2f} |",
        f"| tool calls per question | {summary.tool_calls:.2f} |",
        f"| no option named (scored wrong) | {summary.unanswered} |",
    ]
    if skipped:
        lines.append(f"| skipped (video not in store) | {skipped} |")
    lines += ["", "## Accuracy per category", "", "A question with several tags counts once in each.", ""]
    lines += ["| category | accuracy | correct / total |", "|---|---|---|"]
    for category, (correct, total) in summary.categories.items():
        lines.append(f"| {category} | {_pct(correct / total)} | {correct} / {total} |")
    lines += official
    baselines = [(meta, s, r) for meta, s, r in others if meta.get("agent_kind") == BASELINE_KIND]
    if summary.kind != BASELINE_KIND and baselines:
        lines += _comparison(rows, summary, baselines)
    if others:
        lines += ["", "## Runs on the same questions", ""]
        lines += ["| run | accuracy | mean tIoU | tokens / q | seconds / q |", "|---|---|---|---|---|"]
        for s in [summary] + [s for _, s, _ in others]:
            lines.append(f"| {s.name} | {_pct(s.accuracy)} | {_num(s.mean_tiou)} | {s.tokens:.0f} | {s.seconds:.2f} |")
    if refused:
        lines += ["", "## Runs on the same questions not compared", "", "Measured on another footing (its value → this run's):", ""]
        lines += [f"- {line}" for line in refused]
    lines += ["", f"![accuracy per category]({PLOT_CATEGORIES})", "", f"![accuracy vs tokens]({PLOT_TOKENS})", ""]
    (out_dir / REPORT).write_text("\n".join(lines), encoding="utf-8")
    _plot_categories(out_dir / PLOT_CATEGORIES, summary)
    _plot_tokens(out_dir / PLOT_TOKENS, [summary] + [s for _, s, _ in others])
    return summary


def _comparison(rows: list[dict], summary: Summary, baselines: list[tuple[dict, Summary, list[dict]]]) -> list[str]:
    """Gain over the baseline, on the questions both runs answered."""
    lines = ["", "## Gain over the caption-RAG baseline", ""]
    mine = {r["id"]: r for r in rows}
    for _, base, base_rows in baselines:
        shared = [(mine[r["id"]], r) for r in base_rows if r["id"] in mine]
        ours = accuracy([bool(a["correct"]) for a, _ in shared])
        theirs = accuracy([bool(b["correct"]) for _, b in shared])
        lines += [
            f"On the {len(shared)} questions both runs answered: {summary.name} {_pct(ours)}, "
            f"{base.name} {_pct(theirs)}, gain {100 * (ours - theirs):+.1f} points.",
            "",
            f"| category | {summary.name} | {base.name} | gain |",
            "|---|---|---|---|",
        ]
        ours_cat = per_category((a["categories"], bool(a["correct"])) for a, _ in shared)
        theirs_cat = per_category((b["categories"], bool(b["correct"])) for _, b in shared)
        for category, (correct, total) in ours_cat.items():
            base_correct = theirs_cat[category][0]
            lines.append(
                f"| {category} | {_pct(correct / total)} | {_pct(base_correct / total)} | "
                f"{100 * (correct - base_correct) / total:+.1f} |"
            )
    return lines


def _plot_categories(path: Path, summary: Summary) -> None:
    names = list(summary.categories)
    values = [100 * c / t for c, t in summary.categories.values()]
    figure = Figure(figsize=(7, 0.45 * len(names) + 1.5))
    axes = figure.subplots()
    axes.barh(names, values, color="#4C72B0")
    for y, ((correct, total), value) in enumerate(zip(summary.categories.values(), values)):
        axes.text(value + 1, y, f"{correct}/{total}", va="center", fontsize=8)
    axes.set_xlim(0, 110)
    axes.invert_yaxis()
    axes.set_xlabel("accuracy (%)")
    axes.set_title(f"{summary.name}: accuracy per category (overall {_pct(summary.accuracy)})")
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def _plot_tokens(path: Path, summaries: list[Summary]) -> None:
    figure = Figure(figsize=(6, 4))
    axes = figure.subplots()
    for s in summaries:
        axes.scatter([s.tokens], [100 * s.accuracy], s=60)
        axes.annotate(s.name, (s.tokens, 100 * s.accuracy), textcoords="offset points", xytext=(6, 4))
    axes.set_xlabel("tokens per question")
    axes.set_ylabel("accuracy (%)")
    axes.set_ylim(0, 105)
    axes.set_xlim(left=0, right=max(1.0, max(s.tokens for s in summaries)) * 1.3)
    axes.set_title("accuracy vs tokens")
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
