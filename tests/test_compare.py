"""Agents side by side: the comparison report from hand-written eval runs, and the refusal to
compare runs made on another footing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from videomem.errors import VideomemError
from videomem.eval.compare import COMPARE, COMPARE_JSON, write_comparison
from videomem.eval.report import RESULTS, RUN

RUN_BASE = {"benchmark": "egolife", "questions": "/q.json", "questions_sha256": "abc", "store": "/s", "models": "offline"}
STORE = {"schema_version": 9, "rows": {"events": 3}, "sha256": "e3"}


def _row(qid: str, category: str, correct: bool, tools: list[str], tiou: float | None = 0.5) -> dict:
    return {
        "id": qid, "video_id": None, "category": category, "categories": [category], "prediction": "A",
        "answer": "A" if correct else "B", "correct": correct, "response": "", "evidence": [], "tiou": tiou,
        "tool_calls": len(tools), "tools": tools, "tokens": 100, "evidence_tokens": 10, "seconds": 1.0,
    }


def _run(root: Path, agent: str, kind: str, rows: list[dict], contents: dict = STORE, **changes: object) -> Path:
    out = root / agent
    out.mkdir(parents=True)
    footing = {"store": contents, "pipeline": {"name": "egolife"}, "models": {"name": "offline"}, "agent": {"name": agent}}
    (out / RUN).write_text(json.dumps({**RUN_BASE, "agent": agent, "agent_kind": kind, "fingerprint": footing, **changes}))
    (out / RESULTS).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def test_report_compares_agents_on_shared_questions(tmp_path: Path) -> None:
    worldmm = _run(tmp_path, "worldmm", "worldmm", [
        _row("1", "HabitInsight", True, ["memory.semantic", "memory.episodic"]),
        _row("2", "EntityLog", True, ["memory.visual"]),
        _row("3", "EntityLog", False, ["memory.visual", "memory.visual"]),
    ])
    rag = _run(tmp_path, "caption-rag", "caption_rag", [
        _row("1", "HabitInsight", False, ["caption_retrieval"], tiou=None),
        _row("2", "EntityLog", True, ["caption_retrieval"], tiou=None),
        _row("3", "EntityLog", False, ["caption_retrieval"], tiou=None),
        _row("4", "EntityLog", True, ["caption_retrieval"], tiou=None),  # not answered by worldmm: left out
    ])
    summaries = write_comparison([worldmm, rag], tmp_path)
    assert [(s.name, s.correct, s.n) for s in summaries] == [("worldmm", 2, 3), ("caption-rag", 1, 3)]

    report = (tmp_path / COMPARE).read_text()
    assert "| worldmm | worldmm | 66.7% (2/3) | 0.500 | 100 | 1.00 | " in report
    assert "| caption-rag | caption_rag | 33.3% (1/3) | n/a |" in report
    assert "| HabitInsight | 100.0% | 0.0% |" in report and "| EntityLog | 50.0% | 50.0% |" in report
    assert "| memory.visual | 66.7% | 0.0% |" in report and "| caption_retrieval | 0.0% | 100.0% |" in report
    assert "| 1 | HabitInsight | ✓ memory.semantic, memory.episodic | ✗ caption_retrieval |" in report
    assert "| 3 | EntityLog | ✗ memory.visual |" in report, "a memory searched twice is named once"
    data = json.loads((tmp_path / COMPARE_JSON).read_text())
    assert data["agents"][0]["questions_used"]["2"] == {"correct": True, "tools": ["memory.visual"]}


def test_runs_on_another_footing_or_with_one_name_are_refused(tmp_path: Path) -> None:
    first = _run(tmp_path, "worldmm", "worldmm", [_row("1", "x", True, [])])
    grown = _run(tmp_path, "telemem", "react", [_row("1", "x", True, [])],
                 contents={**STORE, "rows": {"events": 4}, "sha256": "e4"})
    with pytest.raises(VideomemError, match=r"cannot be compared with .*store rows: events 3 → 4"):
        write_comparison([first, grown], tmp_path)
    other_questions = _run(tmp_path, "rag", "caption_rag", [_row("1", "x", True, [])], questions_sha256="def")
    with pytest.raises(VideomemError, match=r"questions_sha256: 'abc' → 'def'"):
        write_comparison([first, other_questions], tmp_path)
    copied = _run(tmp_path, "copy", "react", [_row("1", "x", True, [])], store="/copy")
    assert len(write_comparison([first, copied], tmp_path)) == 2, "a copy of the store elsewhere is the same footing"
    twin = _run(tmp_path / "b", "worldmm", "react", [_row("1", "x", True, [])])
    with pytest.raises(VideomemError, match="share the agent name 'worldmm'"):
        write_comparison([first, twin], tmp_path)
