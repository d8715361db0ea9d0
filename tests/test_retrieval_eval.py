"""`videomem eval … --retrieval`: each memory's retrieval scored against the targets, no answering model.

The store is written by hand (six 10-s clips whose event captions name what is on screen) and
the memories are the real ones with the offline models; the expected numbers are worked out
here from the clip layout, independently of `eval/retrieval.py`.
"""

import json

import pytest

from memory_stores import CLIP, captioned_store, scripted_store
from videomem.eval.lvbench import load_lvbench
from videomem.eval.retrieval import KS, PLOT_RECALL, PLOT_TIOU, RETRIEVAL_JSON, run_retrieval, target_recall
from videomem.evidence import Evidence

TEXTS = ["RED BALLOON", "TRAIN TO PARIS", "BLUE BICYCLE", "OPEN MARKET", "NIGHT FIREWORKS", "SNOWY MOUNTAIN"]


def _lvbench(tmp_path, qa):
    path = tmp_path / "video_info.meta.jsonl"
    path.write_text(json.dumps({"key": "v", "type": "test", "qa": qa}) + "\n", encoding="utf-8")
    return load_lvbench(path)


def _qa(uid, question, reference):
    options = "\n(A) a train\n(B) a bus\n(C) a boat\n(D) a plane"
    return {"uid": uid, "question": question + options, "answer": "A", "question_type": ["x"], "time_reference": reference}


@pytest.fixture
def store_dir(tmp_path):
    captioned_store(tmp_path / "store", TEXTS).close()
    return tmp_path / "store"


def test_each_memory_and_caption_rag_is_scored_per_k(tmp_path, store_dir, run_cli):
    questions = _lvbench(tmp_path, [
        _qa("1", "Where does the train go, according to the on-screen text TRAIN TO PARIS?", "00:10-00:20"),
        _qa("2", "What is written on screen: NIGHT FIREWORKS?", "00:40-00:50"),
        _qa("3", "What is the video about?", ""),  # no target: left out
    ])
    report = run_retrieval(questions, store_dir, tmp_path / "out", show_progress=False)
    assert (report.asked, report.without_target, report.skipped) == (2, 1, 0)
    rows = {(r.memory, r.scale): r for r in report.rows}
    events = rows[("events", None)]
    # six captions in all: the first ten hold every clip, so each target is reached, and the
    # union of the ten ranges is the whole 60 s of which the target is one 10-s clip
    assert events.recall[10] == 1.0 and events.tiou[10] == pytest.approx(CLIP / (6 * CLIP))
    # the caption naming the on-screen words comes first: the target exactly
    assert events.recall[1] == 1.0 and events.tiou[1] == pytest.approx(1.0)
    assert events.questions == 2 and ("caption-rag", None) in rows
    # the hand-written store holds event captions only: the other memories return nothing
    assert {name for name, _ in rows} == {"events", "caption-rag"}
    assert "returned nothing" in report.not_measured["episodic"]
    assert all(0.0 <= r.recall[k] <= 1.0 and 0.0 <= r.tiou[k] <= 1.0 for r in report.rows for k in KS)

    saved = json.loads((tmp_path / "out" / RETRIEVAL_JSON).read_text())
    assert saved["questions"] == 2 and {r["memory"] for r in saved["rows"]} >= {"events", "caption-rag"}
    assert (tmp_path / "out" / PLOT_RECALL).stat().st_size > 0 and (tmp_path / "out" / PLOT_TIOU).stat().st_size > 0
    text = (tmp_path / "out" / "report.md").read_text()
    assert "| events | all | 2 | 1.000 | 1.000 | 1.000 | 100.00 |" in text

    lines = tmp_path / "video_info.meta.jsonl"
    result = run_cli("eval", "lvbench", "--questions", lines, "--store", store_dir, "--out", tmp_path / "cli", "--retrieval")
    assert result.code == 0, result.output
    assert "events: R@1 1.000, R@5 1.000, R@10 1.000; tIoU@1 100.00%" in result.stdout


def test_recall_counts_each_target_window_once():
    found = [Evidence(0, 10, "", "event", 1.0, "v"), Evidence(30, 40, "", "event", 0.5, "v")]
    assert target_recall(found, [(5, 8), (100, 110)], "v") == 0.5
    assert target_recall(found, [(10, 20)], "v") == 0.0  # touching ends do not overlap
    assert target_recall(found, [(35, 35)], "v") == 1.0  # a moment inside a range
    assert target_recall(found, [(5, 8)], "w") == 0.0  # another video's ranges never count


def test_a_memory_with_time_scales_is_scored_per_scale(tmp_path_factory):
    store_dir, corpus = scripted_store(tmp_path_factory.getbasetemp())
    report = run_retrieval(corpus.questions, store_dir, tmp_path_factory.mktemp("out"), show_progress=False)
    episodic = [r for r in report.rows if r.memory == "episodic"]
    assert episodic[0].scale is None and len(episodic) > 2  # all results, then one row per scale
    assert [r.scale for r in episodic[1:]] == sorted(r.scale for r in episodic[1:])
    assert {r.memory for r in report.rows} >= {"events", "caption-rag", "episodic"}
    best = max(r.recall[10] for r in report.rows)
    assert best > 0.5  # the scripted questions' events are found


@pytest.mark.parametrize("question_only", [False, True])
def test_every_row_is_asked_the_same_query(tmp_path, store_dir, monkeypatch, question_only):
    """Memories and caption RAG alike get the question and its options (what the agents search
    with), or all of them the question alone: no row is measured with words another lacks."""
    from videomem.eval import retrieval

    asked: dict[str, set[str]] = {}
    opened = retrieval.open_memory

    def recording(name, *args, **kwargs):
        memory = opened(name, *args, **kwargs)
        retrieve = memory.retrieve

        def spy(query, *rest, **kw):
            asked.setdefault(name, set()).add(query)
            return retrieve(query, *rest, **kw)

        monkeypatch.setattr(memory, "retrieve", spy)
        return memory

    monkeypatch.setattr(retrieval, "open_memory", recording)
    questions = _lvbench(tmp_path, [_qa("1", "Which vehicle is named on screen?", "00:10-00:20")])
    report = run_retrieval(questions, store_dir, tmp_path / "out", question_only=question_only, show_progress=False)
    assert len(asked) >= 3 and len({frozenset(q) for q in asked.values()}) == 1
    (query,) = next(iter(asked.values()))
    assert query.startswith("Which vehicle is named on screen?")
    assert ("a train" in query and "a plane" in query) is not question_only
    saved = json.loads((tmp_path / "out" / RETRIEVAL_JSON).read_text())
    assert saved["query"] == ("question" if question_only else "question_and_options")
    assert report.query in (tmp_path / "out" / "report.md").read_text()


def test_question_only_belongs_to_retrieval(tmp_path, store_dir, run_cli):
    questions = tmp_path / "video_info.meta.jsonl"
    questions.write_text(json.dumps({"key": "v", "type": "test", "qa": [_qa("1", "Which vehicle?", "00:10-00:20")]}) + "\n")
    result = run_cli("eval", "lvbench", "--questions", questions, "--store", store_dir, "--question-only")
    assert result.code != 0 and "--question-only is a setting of --retrieval" in result.output
    result = run_cli(
        "eval", "lvbench", "--questions", questions, "--store", store_dir, "--out", tmp_path / "q", "--retrieval", "--question-only"
    )
    assert result.code == 0, result.output
    assert json.loads((tmp_path / "q" / RETRIEVAL_JSON).read_text())["query"] == "question"
