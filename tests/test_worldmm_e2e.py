"""Issue 10 end to end with the offline models: a scripted two-day EgoLife-style corpus is
ingested with every stage of the EgoLife pipeline (episodic, semantic and visual memory
included); the WorldMM agent answers a colour question — the colour is only in the pixels, no
on-screen text names it — through visual memory and a habit question through semantic memory,
and `videomem eval` with the worldmm, telemem and caption-rag agents writes the side-by-side
report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memory_stores import offline_models
from typer.testing import CliRunner

from videomem.agent.react import Agent
from videomem.cli import app
from videomem.config import PROJECT_ROOT, load_agent, load_pipeline
from videomem.eval.synth import synth
from videomem.pipeline.runner import ingest
from videomem.store import Store
from videomem.timeline import DAY, format_egolife

pytestmark = pytest.mark.slow

AGENTS = PROJECT_ROOT / "agents"
COLOURS = ["Orange", "Green", "Blue", "Purple"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(store, questions file): the corpus ingested once, a colour and a habit question."""
    root = tmp_path_factory.mktemp("issue10")
    made = synth(root / "bench", days=2, seed=0)
    store_dir = root / "store"
    pipeline = load_pipeline(made.pipeline)
    assert {"episodic", "semantic", "visual"} <= set(pipeline.stages)
    with Store(store_dir, create=True) as store:
        report = ingest(made.videos, store, pipeline, offline_models, timeline="egolife", show_progress=False)
        assert report.ok, report.all_failures()
        assert store.query("SELECT COUNT(*) FROM semantic_triplets WHERE retired_at IS NULL")[0][0] > 0
    coffee = [e for e in made.events if e.text == "MAKING COFFEE"]
    assert coffee and all(c.upper() not in e.text for e in coffee for c in COLOURS), "no colour is written on screen"
    end = 2 * DAY - 60
    date, time = format_egolife(end)
    habit = next(q for q in made.questions if "HabitInsight" in q.categories and "morning" in q.question)
    records = [
        {
            "ID": "colour", "query_time": {"date": date, "time": time}, "type": "EntityLog",
            "question": "What colour was the shape on screen while I was making coffee?",
            **{f"choice_{c}": colour for c, colour in zip("abcd", COLOURS)}, "answer": "A",
            "target_time": {"date": "DAY1", "time": format_egolife(coffee[0].t_start)[1]},
        },
        {
            "ID": "habit", "query_time": {"date": date, "time": time}, "type": "HabitInsight",
            "question": habit.question, **{f"choice_{c}": o for c, o in zip("abcd", habit.choices)},
            "answer": habit.answer, "target_time": {"date": "DAY1", "time": format_egolife(coffee[0].t_start)[1]},
        },
    ]
    questions = root / "EgoLifeQA_issue10.json"
    questions.write_text(json.dumps(records))
    return store_dir, questions


def _memories(trace: list[dict]) -> list[str]:
    return [step["memory"] for step in trace if "memory" in step and not step.get("error")]


def test_worldmm_uses_visual_for_colour_and_semantic_for_habit(corpus: tuple[Path, Path]) -> None:
    store_dir, questions = corpus
    records = json.loads(questions.read_text())
    cfg = load_agent(AGENTS / "worldmm.yaml")
    with Store(store_dir) as store:
        agent = Agent(store, offline_models(), cfg)
        until = 2 * DAY - 60
        colour = agent.ask(records[0]["question"], COLOURS, until=until)
        habit = agent.ask(records[1]["question"], [records[1][f"choice_{c}"] for c in "abcd"], until=until)

    assert _memories(colour.trace)[0] == "visual" and "'colour'" in colour.trace[0]["thought"]
    assert colour.choice == "A", colour.render(str)
    seen = [e for e in colour.evidence if e.source == "visual"]
    assert seen and seen[0].frames and "orange" in seen[0].text.lower()

    assert _memories(habit.trace)[0] == "semantic" and "'usually'" in habit.trace[0]["thought"]
    assert any(e.source == "semantic" for e in habit.evidence)
    assert habit.choice == records[1]["answer"], habit.render(str)


def test_eval_compares_worldmm_telemem_and_caption_rag(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    store_dir, questions = corpus
    out = tmp_path / "agents"
    result = CliRunner().invoke(app, [
        "eval", "egolife", "--questions", str(questions), "--store", str(store_dir), "--out", str(out),
        "--agent", str(AGENTS / "worldmm.yaml"), "--agent", str(AGENTS / "telemem.yaml"),
        "--agent", str(AGENTS / "caption-rag.yaml"),
    ])
    assert result.exit_code == 0, result.output
    assert f"comparison: {out / 'compare.md'}" in result.output
    for name in ("worldmm", "telemem", "caption-rag"):
        assert (out / name / "results.jsonl").is_file() and f"{name}: accuracy " in result.output
    report = (out / "compare.md").read_text()
    rows = {line.split(" | ")[0].strip("| "): line for line in report.splitlines() if line.startswith("| ")}
    assert {"worldmm", "telemem", "caption-rag"} <= set(rows)
    worldmm = json.loads((out / "compare.json").read_text())["agents"][0]
    assert worldmm["agent"] == "worldmm"
    assert worldmm["questions_used"]["colour"]["tools"][0] == "memory.visual"
    assert worldmm["questions_used"]["habit"]["tools"][0] == "memory.semantic"
    assert "| colour | EntityLog | ✓ memory.visual" in report
