"""Agents side by side: one report over the eval runs of several agents on one store.

`videomem eval ... --agent a.yaml --agent b.yaml --out DIR` runs each agent into `DIR/<agent
name>/` (each an ordinary, resumable run with its own report) and then writes `DIR/compare.md`
and `DIR/compare.json`: accuracy overall and per category, mean tIoU, tokens, seconds and tool
calls per question, how often each agent used each tool or memory, and per question which
memories it searched and whether it was right. Numbers are compared on the questions every run
answered.

Runs are comparable only when measured on the same footing: the same questions and the same
fingerprint but for the agent (store contents, pipeline and models: `eval/fingerprint.py`).
`footing_changes` is the one place that decides it; a run on another footing is refused with
what differs. (Resuming one agent's run on another footing is refused by the run itself.)
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from videomem.errors import VideomemError
from videomem.eval.fingerprint import SAME_FOOTING, unlike
from videomem.eval.report import Summary, read_results, read_run, summarize

COMPARE = "compare.md"
COMPARE_JSON = "compare.json"
QUESTION_KEYS = ("benchmark", "questions_sha256")
"""run.json keys that say which questions a run answered."""


def footing_changes(run: dict[str, Any], first: dict[str, Any]) -> list[str]:
    """What differs between two runs' setups beside the agent (empty: comparable)."""
    asked = [f"{key}: {first.get(key)!r} → {run.get(key)!r}" for key in QUESTION_KEYS if run.get(key) != first.get(key)]
    return asked + unlike(run, first, SAME_FOOTING)


def used(row: dict[str, Any]) -> list[str]:
    """The tools a question's answer called, in order, each once (memory tools as `memory.<name>`)."""
    return list(dict.fromkeys(row.get("tools", [])))


def write_comparison(run_dirs: Sequence[Path], out_dir: Path) -> list[Summary]:
    """Compare the runs in `run_dirs` (the first is the reference for the footing check) on the
    questions all of them answered; writes compare.md and compare.json into `out_dir`."""
    runs = []
    for path in run_dirs:
        run = read_run(path)
        if run is None:
            raise VideomemError(f"{path}: no eval run here to compare")
        runs.append((path, run, read_results(path)))
    _, first, _ = runs[0]
    for path, run, _ in runs[1:]:
        changes = footing_changes(run, first)
        if changes:
            raise VideomemError(f"{path} cannot be compared with {run_dirs[0]}: {'; '.join(changes)}")
    names = [run["agent"] for _, run, _ in runs]
    if len(set(names)) != len(names):
        raise VideomemError(f"two runs share the agent name {Counter(names).most_common(1)[0][0]!r}; give each profile its own name")
    shared = set.intersection(*({r["id"] for r in rows} for _, _, rows in runs))
    kept = [(run, [r for r in rows if r["id"] in shared]) for _, run, rows in runs]
    summaries = [summarize(rows, run) for run, rows in kept]
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / COMPARE).write_text(_markdown(first, summaries, kept), encoding="utf-8")
    (out_dir / COMPARE_JSON).write_text(json.dumps(_json(summaries, kept), indent=2) + "\n", encoding="utf-8")
    return summaries


def _markdown(first: dict[str, Any], summaries: list[Summary], kept: list[tuple[dict, list[dict]]]) -> str:
    n = summaries[0].n
    lines = [
        f"# {first['benchmark']} — agents side by side",
        "",
        f"Questions: `{first['questions']}` ({n} answered by every run)  ",
        f"Store: `{first['store']}`; models: {first.get('models', '?')}",
        "",
        "| agent | kind | accuracy | mean tIoU | tokens / q | seconds / q | tool calls / q |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in summaries:
        tiou = "n/a" if s.mean_tiou is None else f"{s.mean_tiou:.3f}"
        lines.append(
            f"| {s.name} | {s.kind} | {_pct(s.correct, s.n)} ({s.correct}/{s.n}) | {tiou} | {s.tokens:.0f} | "
            f"{s.seconds:.2f} | {s.tool_calls:.2f} |"
        )
    categories = list(dict.fromkeys(c for s in summaries for c in s.categories))
    lines += ["", "## Accuracy per category", "", "| category | " + " | ".join(s.name for s in summaries) + " |"]
    lines.append("|---|" + "---|" * len(summaries))
    for category in categories:
        cells = [_pct(*s.categories[category]) if category in s.categories else "–" for s in summaries]
        lines.append(f"| {category} | " + " | ".join(cells) + " |")
    tools = sorted({t for _, rows in kept for r in rows for t in used(r)})
    lines += ["", "## Share of questions using each tool", ""]
    if tools:
        lines += ["| tool | " + " | ".join(s.name for s in summaries) + " |", "|---|" + "---|" * len(summaries)]
        for tool in tools:
            cells = [_pct(sum(tool in used(r) for r in rows), len(rows)) for _, rows in kept]
            lines.append(f"| {tool} | " + " | ".join(cells) + " |")
    else:
        lines.append("No run called a tool.")
    lines += ["", "## Per question", "", "✓ right, ✗ wrong; then the tools it used.", ""]
    lines += ["| question | category | " + " | ".join(s.name for s in summaries) + " |"]
    lines.append("|---|---|" + "---|" * len(summaries))
    by_id = [{r["id"]: r for r in rows} for _, rows in kept]
    for qid in sorted(by_id[0]):
        cells = []
        for rows in by_id:
            row = rows[qid]
            cells.append(("✓ " if row["correct"] else "✗ ") + (", ".join(used(row)) or "no tool"))
        lines.append(f"| {qid} | {by_id[0][qid]['category']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _json(summaries: list[Summary], kept: list[tuple[dict, list[dict]]]) -> dict[str, Any]:
    return {
        "agents": [
            {
                "agent": s.name,
                "kind": s.kind,
                "questions": s.n,
                "correct": s.correct,
                "accuracy": s.accuracy,
                "categories": {c: {"correct": k, "total": t} for c, (k, t) in s.categories.items()},
                "mean_tiou": s.mean_tiou,
                "tokens": s.tokens,
                "seconds": s.seconds,
                "tool_calls": s.tool_calls,
                "fingerprint": run.get("fingerprint"),
                "questions_used": {r["id"]: {"correct": r["correct"], "tools": used(r)} for r in rows},
            }
            for s, (run, rows) in zip(summaries, kept)
        ]
    }


def _pct(part: int, total: int) -> str:
    return f"{100 * part / total:.1f}%" if total else "n/a"
