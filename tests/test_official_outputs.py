"""Each benchmark's own output files, checked by recomputing the report's numbers from them.

A stand-in agent answers from a fixed table (the real agent runs in test_eval_e2e.py). The
recomputations below are written here, independently of `eval/official.py` and
`eval/scoring.py`: LVBench's scorer (a question once per type, once overall), EgoLife's per-type
table, and Video-MME's `eval_your_results.py` (first option letter in the response; a response
without one is left out).
"""

import json
import re
from collections import defaultdict

import pytest

import videomem.agent.react as react
from videomem.agent.answer import Answer
from videomem.eval.harness import run_eval
from videomem.evidence import Evidence
from videomem.store import Store

REPLIES: dict[str, tuple[str, tuple[float, float]]] = {}
"""question → (reply text, evidence range); set by each test."""


class StandIn:
    def __init__(self, store, models, cfg):
        pass

    def ask(self, question, choices=None, until=None, video_id=None):
        text, (start, end) = REPLIES[question]
        return Answer(text, None, [Evidence(start, end, "words", "event", 1.0, video_id or "v")], [], 10, 0.1)


@pytest.fixture
def stand_in(monkeypatch):
    monkeypatch.setattr(react, "Agent", StandIn)
    REPLIES.clear()


def _store(root, videos):
    """videos: (id, t_offset, clip seconds, number of clips) — rows only, no frames."""
    with Store(root, create=True) as store, store.transaction() as tx:
        for vid, offset, clip, n in videos:
            tx.execute(
                "INSERT INTO videos (id, path, t_offset, duration, fps, n_frames, width, height, rotation, probe_json)"
                " VALUES (?, ?, ?, ?, 20, 1, 64, 48, 0, '{}')",
                (vid, f"{vid}.mp4", offset, clip * n),
            )
            tx.executemany(
                "INSERT INTO clips (video_id, idx, t_start, t_end) VALUES (?, ?, ?, ?)",
                [(vid, i, offset + i * clip, offset + (i + 1) * clip) for i in range(n)],
            )
    return root


def _report_numbers(report: str) -> dict[str, str]:
    """category → accuracy cell of report.md's per-category table, plus 'accuracy'."""
    found = {m.group(1): m.group(2) for m in re.finditer(r"^\| ([^|]+?) \| ([\d.]+%) \| \d+ / \d+ \|$", report, re.M)}
    found["accuracy"] = re.search(r"^\| accuracy \| ([\d.]+%)", report, re.M).group(1)
    return found


def _pct(correct: int, total: int) -> str:
    return f"{100 * correct / total:.1f}%"


# ----------------------------------------------------------------------------- EgoLifeQA

H = 11 * 3600  # 11:00:00 on DAY1


def _ego(qid, kind, question, answer, target):
    record = {
        "ID": qid, "query_time": {"date": "DAY1", "time": "12000000"}, "type": kind, "question": question,
        "choice_a": "Tasha", "choice_b": "Alice", "choice_c": "Shure", "choice_d": "Lucia", "answer": answer,
        "target_time": target, "keywords": "", "reason": "",
    }
    if target is None:
        del record["target_time"]
    return record


def test_egolife_every_target_form_evaluates_and_per_type_accuracy_agrees(tmp_path, stand_in, caplog):
    # One file of 10 clips of 30 s: 11:15:00 - 11:20:00 on DAY1.
    store = _store(tmp_path / "store", [("DAY1_A1_JAKE_11150000", H + 900, 30.0, 10)])
    records = [
        _ego("1", "EntityLog", "Q moment?", "B", {"date": "DAY1", "time": "11152408"}),
        _ego("2", "EventRecall", "Q range?", "C", {"date": "DAY1", "time": "11153417DAY1_11181201"}),
        _ego("3", "HabitInsight", "Q list?", "A", {"date": "DAY1", "time_list": ["11161000", "11195919"]}),
        _ego("4", "RelationMap", "Q unreadable?", "D", {"date": "DAY1", "time": "soon"}),
        _ego("5", "TaskMaster", "Q outside?", "A", {"date": "DAY2", "time": "08000000"}),
        _ego("6", "EntityLog", "Q no letter?", "B", None),
    ]
    questions = tmp_path / "EgoLifeQA_A1_JAKE.json"
    questions.write_text(json.dumps(records))
    REPLIES.update({
        "Q moment?": ("B", (H + 900, H + 930)),  # the clip that holds 11:15:24.40: tIoU 1
        "Q range?": ("A", (H + 930, H + 960)),  # wrong; a part of the range
        "Q list?": ("A", (H + 960, H + 990)),  # one of the two clips named by the list: tIoU 1/2
        "Q unreadable?": ("D", (H + 900, H + 930)),  # right, but no target: no tIoU
        "Q outside?": ("B", (H + 900, H + 930)),  # wrong; target outside the footage
        "Q no letter?": ("no idea", (H + 900, H + 930)),  # names no option: wrong
    })
    result = run_eval("egolife", questions, store, tmp_path / "run", show_progress=False)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 2 and "(ID 4): target_time:" in warnings[0] and "(ID 6): target_time:" in warnings[1]

    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "run" / "results.jsonl").read_text().splitlines())}
    assert rows["1"]["tiou"] == 1.0
    start, end = H + 15 * 60 + 34 + 17 / 20, H + 18 * 60 + 12 + 1 / 20
    assert rows["2"]["tiou"] == pytest.approx((H + 960 - start) / (end - (H + 930)), abs=1e-4)
    assert rows["3"]["tiou"] == 0.5
    assert rows["4"]["tiou"] is None and rows["6"]["tiou"] is None
    assert rows["5"]["tiou"] == 0.0
    assert result.summary.mean_tiou == pytest.approx((1 + rows["2"]["tiou"] + 0.5 + 0) / 4)

    # Per type, recomputed from the question file and the predictions.
    answers = {str(r["ID"]): (r["type"], r["answer"]) for r in records}
    table = defaultdict(lambda: [0, 0])
    for qid, (kind, answer) in answers.items():
        for key in (kind, "Avg."):
            table[key][0] += rows[qid]["prediction"] == answer
            table[key][1] += 1
    written = json.loads((tmp_path / "run" / "egolifeqa_accuracy.json").read_text())
    assert {k: (v["correct"], v["total"]) for k, v in written.items()} == {k: tuple(v) for k, v in table.items()}
    assert all(v["accuracy"] == pytest.approx(100 * v["correct"] / v["total"]) for v in written.values())
    report = (tmp_path / "run" / "report.md").read_text()
    numbers = _report_numbers(report)
    assert numbers["accuracy"] == _pct(*table["Avg."])
    assert all(numbers[kind] == _pct(*table[kind]) for kind in table if kind != "Avg.")
    cells = [f"{100 * c / n:.1f}" for c, n in (table[k] for k in
             ("EntityLog", "EventRecall", "HabitInsight", "RelationMap", "TaskMaster", "Avg."))]
    assert "| Ent. | EvR. | Hab. | Rel. | Task | Avg. |" in report and "| " + " | ".join(cells) + " |" in report


# ----------------------------------------------------------------------------- LVBench

LV_QA = [
    ("1", "Q1?", "B", ["key information retrieval", "reasoning"]),
    ("2", "Q2?", "A", ["event understanding"]),
    ("3", "Q3?", "C", ["summarization", "reasoning"]),
    ("4", "Q4?", "D", ["entity recognition", "temporal grounding"]),
    ("5", "Q5?", "A", ["temporal grounding"]),
    ("6", "Q6?", "B", ["key information retrieval"]),
]


def test_lvbench_answers_and_result_agree_with_the_report(tmp_path, stand_in):
    store = _store(tmp_path / "store", [("vid1", 0.0, 10.0, 6)])
    lines = [
        {"key": "vid1", "type": "t", "qa": [
            {"uid": uid, "question": f"{q}\n(A) a\n(B) b\n(C) c\n(D) d", "answer": a, "question_type": tags,
             "time_reference": "00:00-00:10"}
            for uid, q, a, tags in LV_QA
        ]},
        {"key": "absent", "type": "t", "qa": [
            {"uid": "9", "question": "Q9?\n(A) a\n(B) b", "answer": "A", "question_type": ["reasoning"]}]},
    ]
    meta = tmp_path / "video_info.meta.jsonl"
    meta.write_text("".join(json.dumps(line) + "\n" for line in lines))
    REPLIES.update({
        "Q1?": ("B", (0, 10)), "Q2?": ("(C)", (0, 10)), "Q3?": ("<answer>C</answer>", (0, 10)),
        "Q4?": ("not sure", (0, 10)), "Q5?": ("A", (0, 10)), "Q6?": ("D", (0, 10)),
    })
    run_eval("lvbench", meta, store, tmp_path / "run", show_progress=False)
    answers = json.loads((tmp_path / "run" / "answers.json").read_text())
    assert answers == {"1": "B", "2": "C", "3": "C", "4": "", "5": "A", "6": "D"}  # '9': video not in store

    # LVBench's scorer, as its compute_accuracy does it.
    right, total, by_type = 0, 0, defaultdict(lambda: [0, 0])
    for line in map(json.loads, meta.read_text().splitlines()):
        for qa in line["qa"]:
            if str(qa["uid"]) in answers:
                hit = answers[str(qa["uid"])] == qa["answer"]
                for tag in qa["question_type"]:
                    by_type[tag][0] += hit
                    by_type[tag][1] += 1
                right, total = right + hit, total + 1
    names = {"key information retrieval": "KIR", "event understanding": "EU", "summarization": "Sum",
             "entity recognition": "ER", "reasoning": "Rea", "temporal grounding": "TG"}
    expected = {names[t]: c / n for t, (c, n) in by_type.items()} | {"Overall": right / total}
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result.keys() == expected.keys() and all(result[k] == pytest.approx(v) for k, v in expected.items())

    report = (tmp_path / "run" / "report.md").read_text()
    numbers = _report_numbers(report)
    assert numbers["accuracy"] == _pct(right, total) and f"({right}/{total})" in report
    assert all(numbers[t] == _pct(c, n) for t, (c, n) in by_type.items())
    order = ["KIR", "EU", "Sum", "ER", "Rea", "TG", "Overall"]
    assert "| " + " | ".join(f"{100 * expected[k]:.1f}" for k in order) + " |" in report


# ----------------------------------------------------------------------------- Video-MME


def _videomme_rows():
    rows = []
    for vid, youtube, domain, sub in (("601", "LongA", "Sports Competition", "Football"),
                                      ("602", "LongB", "Knowledge", "Astronomy")):
        for n, (task, answer) in enumerate((("Counting Problem", "A"), ("OCR Problems", "C"), ("Temporal Reasoning", "B")), 1):
            rows.append({
                "video_id": vid, "duration": "long", "domain": domain, "sub_category": sub,
                "url": f"https://www.youtube.com/watch?v={youtube}", "videoID": youtube,
                "question_id": f"{vid}-{n}", "task_type": task, "question": f"{vid} question {n}?",
                "options": ["A. One.", "B. Two.", "C. Three.", "D. Four."], "answer": answer,
            })
    return rows


def _extract(response: str) -> str:
    """Video-MME's extraction: the first option letter of the response, '' when there is none."""
    found = re.search(r"[ABCD]", response.strip())
    return found[0] if found else ""


def test_videomme_answer_layout_agrees_with_the_report(tmp_path, stand_in):
    import pyarrow as pa
    import pyarrow.parquet as pq

    store = _store(tmp_path / "store", [("LongA", 0.0, 10.0, 3)])  # LongB is not in the store
    parquet = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(_videomme_rows()), parquet)
    REPLIES.update({"601 question 1?": ("A", (0, 10)), "601 question 2?": ("I cannot tell", (0, 10)),
                    "601 question 3?": ("C. Three.", (0, 10))})
    run_eval("videomme", parquet, store, tmp_path / "run", show_progress=False)

    records = json.loads((tmp_path / "run" / "videomme_answers.json").read_text())
    assert [(r["video_id"], r["videoID"], r["missing"]) for r in records] == [("601", "LongA", False), ("602", "LongB", True)]
    assert records[0]["questions"][0]["options"] == ["A. One.", "B. Two.", "C. Three.", "D. Four."]
    assert [q["response"] for r in records for q in r["questions"]] == ["A", "", "C", "", "", ""]

    # The reads of the eval_your_results.py that Video-MME's README links today (written here
    # from its documented layout): videos filtered by `duration`, `missing` skipped with
    # skip_missing, counted per `domain` and `sub_category`; per question `task_type`,
    # `answer`, `response`, with `options` beside them.
    long = [r for r in records if r["duration"] == "long"]
    assert len(long) == 2
    correct = answered = 0
    by_task = defaultdict(lambda: [0, 0])
    by_domain = defaultdict(lambda: [0, 0])
    for record in long:
        if record["missing"]:
            continue
        assert (record["domain"], record["sub_category"]) == ("Sports Competition", "Football")
        for q in record["questions"]:
            assert len(q["options"]) == 4 and q["options"][0].startswith("A. ")
            letter = _extract(q["response"])
            if letter:
                answered += 1
                correct += letter == q["answer"]
                by_task[q["task_type"]][0] += letter == q["answer"]
                by_task[q["task_type"]][1] += 1
                by_domain[record["domain"]][0] += letter == q["answer"]
                by_domain[record["domain"]][1] += 1
    assert by_domain == {"Sports Competition": [1, 2]}
    assert (correct, answered) == (1, 2)
    report = (tmp_path / "run" / "report.md").read_text()
    assert f"{100 * correct / answered:.1f} ({correct}/{answered} answered; 1 left out)" in report
    assert all(f"| {t} | {100 * c / n:.1f} | {c} / {n} |" in report for t, (c, n) in by_task.items())
    assert _report_numbers(report)["accuracy"] == _pct(1, 3)  # the report counts the unnamed reply wrong
    assert "Answered: 3 of the file's 6 questions, on 1 of its 2 videos" in report
