"""Harness mechanics (rows, resume, run identity, report numbers) with a scripted stand-in agent.

The stand-in answers from a fixed table so every number in the report is known in advance; the
real agent is exercised end to end in test_eval_e2e.py.
"""

import json
import threading
from pathlib import Path

import pytest

import videomem.agent.react as react
from videomem.agent.answer import Answer
from videomem.config import default_path
from videomem.errors import MalformedOutputError, ModelError, VideomemError
from videomem.eval.harness import run_eval
from videomem.evidence import Evidence
from videomem.store import Store

REPLIES = {
    # question: (reply text, choice, evidence range)
    "Q1?": ("<answer>B</answer>", None, (0.0, 10.0)),  # right, parsed from the text; tIoU 1
    "Q2?": ("A. one", "A", (0.0, 10.0)),  # right; target [5, 15] -> tIoU 5/15
    "Q3?": ("not sure", None, (20.0, 30.0)),  # no option named: wrong; tIoU 0
    "Q4?": ("C. three", "C", (40.0, 50.0)),  # wrong (answer D); no target
}
FAILURES: dict[str, Exception] = {}
"""question → error the stand-in raises instead of answering (set per test)."""


class ScriptedAgent:
    calls: list[str] = []
    lock = threading.Lock()

    def __init__(self, store, models, cfg):
        self.store = store

    def ask(self, question, choices=None, until=None, video_id=None):
        with self.lock:
            ScriptedAgent.calls.append(question)
        if question in FAILURES:
            raise FAILURES[question]
        text, choice, (start, end) = REPLIES[question]
        evidence = [Evidence(start, end, "caption words here", "event", 1.0, video_id)]
        trace = [{"step": 1, "tool": "video.retrieval"}, {"step": 2, "tool": "finish"}, {"step": 3, "tool": "answer"}]
        return Answer(text, choice, evidence, trace, tokens=100, seconds=0.5)


@pytest.fixture
def bench(tmp_path, monkeypatch):
    monkeypatch.setattr(react, "Agent", ScriptedAgent)
    ScriptedAgent.calls = []
    FAILURES.clear()
    qa = [
        {"uid": "1", "question": "Q1?\n(A) a\n(B) b\n(C) c\n(D) d", "answer": "B", "question_type": ["x", "y"], "time_reference": "00:00-00:10"},
        {"uid": "2", "question": "Q2?\n(A) one\n(B) two\n(C) three\n(D) four", "answer": "A", "question_type": ["x"], "time_reference": "00:05-00:15"},
        {"uid": "3", "question": "Q3?\n(A) a\n(B) b\n(C) c\n(D) d", "answer": "C", "question_type": ["y"], "time_reference": "01:00-01:10"},
        {"uid": "4", "question": "Q4?\n(A) one\n(B) two\n(C) three\n(D) four", "answer": "D", "question_type": ["y"], "time_reference": ""},
    ]
    lines = [{"key": "vid1", "type": "test", "qa": qa}, {"key": "absent", "type": "test", "qa": [
        {"uid": "5", "question": "Q5?\n(A) a\n(B) b", "answer": "A", "question_type": ["x"], "time_reference": ""}]}]
    questions = tmp_path / "video_info.meta.jsonl"
    questions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with Store(tmp_path / "store", create=True) as store, store.transaction() as tx:
        tx.execute(
            "INSERT INTO videos (id, path, t_offset, duration, fps, n_frames, width, height, rotation, probe_json)"
            " VALUES ('vid1', 'vid1.mp4', 0, 100, 2, 200, 640, 360, 0, '{}')"
        )
    return questions, tmp_path / "store", tmp_path / "runs"


def test_rows_report_and_resume(bench):
    questions, store, runs = bench
    first = run_eval("lvbench", questions, store, runs / "telemem", limit=2, show_progress=False)
    assert first.answered == 2 and ScriptedAgent.calls == ["Q1?", "Q2?"]

    second = run_eval("lvbench", questions, store, runs / "telemem", jobs=2, show_progress=False)
    assert second.answered == 2 and sorted(ScriptedAgent.calls[2:]) == ["Q3?", "Q4?"]
    assert second.skipped == ["5"]  # its video is not in the store

    rows = {r["id"]: r for r in map(json.loads, (runs / "telemem" / "results.jsonl").read_text().splitlines())}
    assert sorted(rows) == ["1", "2", "3", "4"]
    assert [rows[i]["prediction"] for i in "1234"] == ["B", "A", None, "C"]
    assert [rows[i]["correct"] for i in "1234"] == [True, True, False, False]
    assert rows["1"]["tiou"] == 1.0 and rows["2"]["tiou"] == pytest.approx(1 / 3, abs=1e-4)
    assert rows["3"]["tiou"] == 0.0 and rows["4"]["tiou"] is None
    assert rows["1"]["categories"] == ["x", "y"] and rows["1"]["category"] == "x, y"
    assert rows["1"]["tool_calls"] == 1 and rows["1"]["evidence_tokens"] == 3
    assert rows["1"]["evidence"] == [{"video_id": "vid1", "t_start": 0.0, "t_end": 10.0}]

    s = second.summary
    assert (s.n, s.correct, s.unanswered) == (4, 2, 1)
    assert s.categories == {"x": (2, 2), "y": (1, 3)}
    assert s.mean_tiou == pytest.approx((1 + 1 / 3 + 0) / 3, abs=1e-4)
    report = (runs / "telemem" / "report.md").read_text()
    assert "| accuracy | 50.0% (2/4) |" in report
    assert "| x | 100.0% | 2 / 2 |" in report and "| y | 33.3% | 1 / 3 |" in report
    assert "| mean tIoU | 0.444 |" in report and "| skipped (video not in store) | 1 |" in report
    for plot in ("accuracy_by_category.png", "accuracy_vs_tokens.png"):
        assert (runs / "telemem" / plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    third = run_eval("lvbench", questions, store, runs / "telemem", show_progress=False)
    assert third.answered == 0 and len(ScriptedAgent.calls) == 4


def test_baseline_beside_the_run_is_compared(bench, tmp_path):
    questions, store, runs = bench
    run_eval("lvbench", questions, store, runs / "caption-rag", agent_path="agents/caption-rag.yaml", limit=2,
             show_progress=False)
    run_eval("lvbench", questions, store, runs / "telemem", show_progress=False)
    report = (runs / "telemem" / "report.md").read_text()
    assert "## Gain over the caption-RAG baseline" in report
    assert "On the 2 questions both runs answered: telemem 100.0%, caption-rag 100.0%, gain +0.0 points." in report
    assert "| caption-rag | 100.0% |" in report


def test_killed_mid_line_resumes_and_other_setup_is_refused(bench):
    questions, store, runs = bench
    run_eval("lvbench", questions, store, runs / "r", limit=3, show_progress=False)
    results = runs / "r" / "results.jsonl"
    text = results.read_text()
    results.write_text(text + text.splitlines()[0][:20])  # a kill while writing the 4th row
    again = run_eval("lvbench", questions, store, runs / "r", show_progress=False)
    assert again.answered == 1
    assert len(results.read_text().splitlines()) == 4
    with pytest.raises(VideomemError, match=r'holds a run made on another footing \(agent: kind "react" → "caption_rag", '):
        run_eval("lvbench", questions, store, runs / "r", agent_path="agents/caption-rag.yaml", show_progress=False)
    with pytest.raises(VideomemError, match="not one of"):
        run_eval("nope", questions, store, runs / "x", show_progress=False)
    questions.write_text(questions.read_text().replace('"answer": "B"', '"answer": "C"'))
    with pytest.raises(VideomemError, match="changed since this run began"):
        run_eval("lvbench", questions, store, runs / "r", show_progress=False)


def test_a_resume_on_another_footing_is_refused_with_what_differs(bench, tmp_path):
    questions, store, runs = bench
    run_eval("lvbench", questions, store, runs / "r", limit=1, show_progress=False)
    fingerprint = json.loads((runs / "r" / "run.json").read_text())["fingerprint"]
    assert set(fingerprint) == {"store", "pipeline", "models", "agent"}
    assert fingerprint["store"]["rows"]["videos"] == 1 and fingerprint["agent"]["name"] == "telemem"

    slower = tmp_path / "offline-30s.yaml"  # the same models, one value changed
    slower.write_text((default_path("models", "offline")).read_text() + "question_deadline_s: 30\n")
    with pytest.raises(VideomemError, match=r"another footing \(models: question_deadline_s 600.0 → 30.0\); use another"):
        run_eval("lvbench", questions, store, runs / "r", models_path=slower, show_progress=False)

    with Store(store) as db, db.transaction() as tx:  # the store changed since the run began
        tx.execute("INSERT INTO clips (video_id, idx, t_start, t_end) VALUES ('vid1', 0, 0, 10)")
    with pytest.raises(VideomemError, match=r"another footing \(store rows: clips 0 → 1\); use another --out"):
        run_eval("lvbench", questions, store, runs / "r", show_progress=False)
    run = json.loads((runs / "r" / "run.json").read_text())
    del run["fingerprint"]  # a run an older videomem made
    (runs / "r" / "run.json").write_text(json.dumps(run))
    with Store(store) as db, db.transaction() as tx:
        tx.execute("DELETE FROM clips")
    with pytest.raises(VideomemError, match="no fingerprint recorded"):
        run_eval("lvbench", questions, store, runs / "r", show_progress=False)


def test_a_baseline_on_another_store_is_not_compared(bench, run_cli):
    questions, store, runs = bench
    run_eval("lvbench", questions, store, runs / "caption-rag", agent_path="agents/caption-rag.yaml", show_progress=False)
    with Store(store) as db, db.transaction() as tx:
        tx.execute("INSERT INTO clips (video_id, idx, t_start, t_end) VALUES ('vid1', 0, 0, 10)")
    result = run_cli("eval", "lvbench", "--questions", questions, "--store", store, "--out", runs / "telemem")
    assert result.code == 0, result.output
    assert "not compared with caption-rag (caption-rag): store rows: clips 0 → 1 (its value → this run's)" in result.stderr
    report = (runs / "telemem" / "report.md").read_text()
    assert "Gain over the caption-RAG baseline" not in report and "| caption-rag |" not in report
    assert "- caption-rag (caption-rag): store rows: clips 0 → 1" in report


def test_unusable_model_output_scores_one_question_wrong_and_the_run_goes_on(bench):
    questions, store, runs = bench
    FAILURES["Q2?"] = MalformedOutputError("answer: the llm model 'm' gave unusable output 3 time(s); last error: A")
    result = run_eval("lvbench", questions, store, runs / "telemem", show_progress=False)
    assert result.answered == 4
    rows = {r["id"]: r for r in map(json.loads, (runs / "telemem" / "results.jsonl").read_text().splitlines())}
    assert rows["2"]["prediction"] is None and rows["2"]["correct"] is False
    assert "unusable output" in rows["2"]["error"] and "error" not in rows["1"]
    assert rows["2"]["tiou"] == 0.0  # it had a target and no evidence
    assert result.summary.correct == 1 and result.summary.unanswered == 2


def test_nothing_answered_is_a_failure_and_a_file_that_is_not_utf8_is_one_line(bench, run_cli, tmp_path):
    questions, store, runs = bench
    absent = tmp_path / "absent.jsonl"  # every question is about a video the store lacks
    absent.write_text(questions.read_text().splitlines()[1] + "\n")
    result = run_cli("eval", "lvbench", "--questions", absent, "--store", store, "--out", runs / "none")
    assert result.code != 0 and "no question was answered (1 skipped)" in result.stderr
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes(questions.read_text().replace("Q1?", "Qu'a dit José ?").encode("latin-1"))
    result = run_cli("eval", "lvbench", "--questions", latin, "--store", store, "--out", runs / "latin")
    assert result.code == 2 and "Traceback" not in result.output
    assert f"{latin}: not UTF-8 text (byte " in result.stderr and result.stderr.count("\n") == 1


def test_a_backend_failure_stops_the_run_for_a_resume(bench):
    questions, store, runs = bench
    FAILURES["Q2?"] = ModelError("llm (openai backend) at http://127.0.0.1:9/v1: cannot connect")
    with pytest.raises(ModelError, match="cannot connect"):
        run_eval("lvbench", questions, store, runs / "telemem", show_progress=False)
    rows = (runs / "telemem" / "results.jsonl").read_text().splitlines()
    assert [json.loads(r)["id"] for r in rows] == ["1"]


class LetterAgent(ScriptedAgent):
    """Stand-in that always replies with the letter of a fixed option, whatever the options say."""

    def ask(self, question, choices=None, until=None, video_id=None):
        with self.lock:
            ScriptedAgent.calls.append(question)
        return Answer("<answer>B</answer>", None, [], [{"step": 1, "tool": "answer"}], tokens=1, seconds=0.0)


def test_released_egolife_records_are_all_asked_and_one_bad_record_is_left_out(tmp_path, monkeypatch, caplog):
    """The fixture copies released records (frame digits past 19, three-part targets, repeated
    options); one record that cannot be asked is added in the middle: the run goes on."""
    monkeypatch.setattr(react, "Agent", LetterAgent)
    ScriptedAgent.calls = []
    records = json.loads((Path(__file__).parent / "fixtures" / "egolifeqa_records.json").read_text(encoding="utf-8"))
    bad = {**records[0], "ID": "9999", "query_time": {"date": "DAY2"}}
    questions = tmp_path / "EgoLifeQA_A1_JAKE.json"
    questions.write_text(json.dumps(records[:5] + [bad] + records[5:]), encoding="utf-8")
    Store(tmp_path / "store", create=True).close()
    result = run_eval("egolife", questions, tmp_path / "store", tmp_path / "run", show_progress=False)
    assert result.answered == len(records) == result.summary.n
    assert "record 5 (ID 9999): query_time.time: " in caplog.text and "left out" in caplog.text
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "run" / "results.jsonl").read_text().splitlines())}
    assert "9999" not in rows
    # ID 118 repeats 'Choiszt' as A, B and D, answer A: the reply B is scored by its letter, wrong
    assert (rows["118"]["prediction"], rows["118"]["correct"]) == ("B", False)
    assert (rows["395"]["prediction"], rows["395"]["correct"]) == ("B", True)  # B repeats C's text, answer B
