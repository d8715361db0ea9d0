"""Benchmark loaders on fixtures written in the public schemas (field for field)."""

import json

import pytest

from videomem.eval.egolife import load_egolife
from videomem.eval.lvbench import load_lvbench
from videomem.eval.questions import DatasetError
from videomem.eval.videomme import load_videomme
from videomem.timeline import DAY


def _egolife_record(**overrides):
    """A record as EgoLifeQA_A1_JAKE.json writes it, Chinese twins included."""
    record = {
        "ID": "1",
        "query_time": {"date": "DAY1", "time": "11210217"},
        "type": "EntityLog",
        "type_chinese": "实体日志",
        "need_audio": False,
        "need_name": True,
        "last_time": False,
        "trigger": "The table was filled with various tools and parts",
        "trigger_chinese": "桌上摆满了各种工具和零件",
        "question": "Who used the screwdriver first?",
        "question_chinese": "谁最先使用过螺丝刀？",
        "choice_a": "Tasha",
        "choice_a_chinese": "Tasha",
        "choice_b": "Alice",
        "choice_b_chinese": "Alice",
        "choice_c": "Shure",
        "choice_c_chinese": "Shure",
        "choice_d": "Lucia",
        "choice_d_chinese": "Lucia",
        "answer": "B",
        "target_time": {"date": "DAY1", "time": "11152408"},
        "keywords": "use screwdriver",
        "reason": "Saw Alice tightening screws with a screwdriver",
        "reason_chinese": "看见Alice用螺丝刀紧螺丝",
    }
    record.update(overrides)
    return record


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_egolife_three_target_shapes_and_query_time(tmp_path):
    path = _write(
        tmp_path,
        "EgoLifeQA_A1_JAKE.json",
        [
            _egolife_record(),
            _egolife_record(
                ID="2",
                type="EventRecall",
                query_time={"date": "DAY2", "time": "12000000"},
                target_time={"date": "DAY1", "time_list": ["11153417", "11181201"]},
                answer="d",
            ),
            _egolife_record(
                ID=3,
                type="HabitInsight",
                query_time={"date": "DAY3", "time": "09300510"},
                target_time="11153417DAY1_11181201DAY2_08000000",
            ),
        ],
    )
    single, listed, string = load_egolife(path)

    assert single.id == "1" and single.categories == ("EntityLog",)
    assert single.question == "Who used the screwdriver first?"
    assert single.choices == ("Tasha", "Alice", "Shure", "Lucia")
    assert single.answer == "B" and single.answer_text == "Alice"
    assert single.video_id is None
    assert single.until == pytest.approx(11 * 3600 + 21 * 60 + 2 + 17 / 20)
    t = 11 * 3600 + 15 * 60 + 24 + 8 / 20
    assert single.targets[0] == pytest.approx((t, t)) and len(single.targets) == 1

    assert listed.answer == "D"
    assert listed.until == pytest.approx(DAY + 12 * 3600)
    first, second = 11 * 3600 + 15 * 60 + 34 + 17 / 20, 11 * 3600 + 18 * 60 + 12 + 1 / 20
    assert [a for a, _ in listed.targets] == pytest.approx([first, second])

    # The first time has no DAYn_ prefix: it is on the query's day (DAY3); DAY1_ and DAY2_ then
    # set the day of the time after each.
    assert string.id == "3"
    assert [a for a, _ in string.targets] == pytest.approx(
        [2 * DAY + first, second, DAY + 8 * 3600]
    )


def test_egolife_never_exposes_hints_to_the_question(tmp_path):
    (question,) = load_egolife(_write(tmp_path, "q.json", [_egolife_record()]))
    shown = json.dumps([question.question, question.choices])
    assert "screwdriver first" in shown
    assert "tightening" not in shown and "use screwdriver" not in shown


@pytest.mark.parametrize(
    "change,field",
    [
        ({"answer": "E"}, "answer"),
        ({"query_time": {"date": "DAY1", "time": "11216017"}}, "query_time.time"),
        ({"query_time": {"date": "1", "time": "11210217"}}, "query_time.date"),
        ({"target_time": "DAY1-1115"}, "target_time"),
        ({"target_time": {"date": "DAY1", "time_list": []}}, "target_time.time_list"),
        ({"choice_c": None}, "choice_c"),
    ],
)
def test_egolife_malformed_record_names_file_record_and_field(tmp_path, change, field):
    path = _write(tmp_path, "bad.json", [_egolife_record(), _egolife_record(ID="2", **change)])
    with pytest.raises(DatasetError) as info:
        load_egolife(path)
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message and "record 1" in message and f"{field}:" in message


def test_egolife_missing_field(tmp_path):
    record = _egolife_record()
    del record["question"]
    with pytest.raises(DatasetError, match=r"record 0: question: missing"):
        load_egolife(_write(tmp_path, "bad.json", [record]))


LVBENCH_LINES = [
    {
        "key": "Cm73ma6Ibcs",
        "type": "documentary",
        "qa": [
            {
                "uid": "55",
                "question": "What year appears in the opening caption of the video?\n(A) 1636\n(B) 1366\n(C) 1363\n(D) 1633",
                "answer": "D",
                "question_type": ["key information retrieval"],
                "time_reference": "00:15-00:19",
            },
            {
                "uid": 56,
                "question": "Why does the man in the red coat leave the castle?\n(A) He is exiled\n(B) He goes to war\n(C) He is ill\n(D) He marries",
                "answer": "b",
                "question_type": ["reasoning", "event understanding"],
                "time_reference": "1:02:03-1:02:40",
            },
        ],
    },
    {"key": "xyz987", "type": "sports", "qa": []},
]


def _write_jsonl(tmp_path, lines):
    path = tmp_path / "video_info.meta.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_lvbench_options_tags_and_time_reference(tmp_path):
    single, multi = load_lvbench(_write_jsonl(tmp_path, LVBENCH_LINES))
    assert single.id == "55" and single.video_id == "Cm73ma6Ibcs"
    assert single.question == "What year appears in the opening caption of the video?"
    assert single.choices == ("1636", "1366", "1363", "1633")
    assert single.answer == "D" and single.until is None
    assert single.targets == ((15.0, 19.0),)
    assert multi.id == "56" and multi.answer == "B"
    assert multi.categories == ("reasoning", "event understanding")
    assert multi.choices[1] == "He goes to war"
    assert multi.targets == ((3723.0, 3760.0),)


@pytest.mark.parametrize(
    "change,field",
    [
        ({"question": "No options here?"}, "question"),
        ({"question": "Q?\n(A) x\n(C) y"}, "question"),
        ({"answer": "E"}, "answer"),
        ({"question_type": []}, "question_type"),
        ({"time_reference": "00:15 to 00:19"}, "time_reference"),
        ({"time_reference": "00:19-00:15"}, "time_reference"),
    ],
)
def test_lvbench_malformed_record_names_file_record_and_field(tmp_path, change, field):
    lines = json.loads(json.dumps(LVBENCH_LINES))
    lines[0]["qa"][1].update(change)
    path = _write_jsonl(tmp_path, lines)
    with pytest.raises(DatasetError) as info:
        load_lvbench(path)
    message = str(info.value)
    assert str(path) in message and "record 0 qa[1]" in message and f"{field}:" in message


def test_lvbench_bad_json_line(tmp_path):
    path = tmp_path / "video_info.meta.jsonl"
    path.write_text(json.dumps(LVBENCH_LINES[0]) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"line 2: not valid JSON"):
        load_lvbench(path)


VIDEOMME_ROWS = [
    {
        "video_id": "001",
        "duration": "short",
        "domain": "Knowledge",
        "sub_category": "Humanity & History",
        "url": "https://www.youtube.com/watch?v=fFjv93ACGo8",
        "videoID": "fFjv93ACGo8",
        "question_id": "001-1",
        "task_type": "Counting Problem",
        "question": "When demonstrating the Germany modern Christmas tree is initially decorated with apples, candles and berries, which kind of the decoration has the largest number?",
        "options": ["A. Apples.", "B. Candles.", "C. Berries.", "D. The three kinds are of the same number."],
        "answer": "C",
    },
    {
        "video_id": "601",
        "duration": "long",
        "domain": "Sports Competition",
        "sub_category": "Football",
        "url": "https://www.youtube.com/watch?v=LongGame01",
        "videoID": "LongGame01",
        "question_id": "601-2",
        "task_type": "Temporal Reasoning",
        "question": "What happens right after the first goal?",
        "options": ["A. A red card.", "B. Half time.", "C. A substitution.", "D. A penalty."],
        "answer": "C",
    },
]


def test_videomme_long_subset_flat_rows(tmp_path):
    path = _write(tmp_path, "videomme.json", VIDEOMME_ROWS)
    (question,) = load_videomme(path)
    assert question.id == "601-2" and question.video_id == "LongGame01"
    assert question.choices == ("A red card.", "Half time.", "A substitution.", "A penalty.")
    assert question.answer == "C" and question.categories == ("Temporal Reasoning",)
    assert question.until is None and question.targets == ()
    assert len(load_videomme(path, duration=None)) == 2


def test_videomme_jsonl_and_grouped_layout(tmp_path):
    jsonl = tmp_path / "videomme.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in VIDEOMME_ROWS), encoding="utf-8")
    assert [q.id for q in load_videomme(jsonl)] == ["601-2"]
    grouped = {k: v for k, v in VIDEOMME_ROWS[1].items() if k not in ("question_id", "task_type", "question", "options", "answer")}
    grouped["questions"] = [
        {k: VIDEOMME_ROWS[1][k] for k in ("question_id", "task_type", "question", "options", "answer")}
    ]
    (question,) = load_videomme(_write(tmp_path, "grouped.json", [grouped]))
    assert question.id == "601-2" and question.video_id == "LongGame01"


def test_videomme_bad_option_prefix(tmp_path):
    rows = json.loads(json.dumps(VIDEOMME_ROWS))
    rows[1]["options"][2] = "Substitution"
    with pytest.raises(DatasetError, match=r"record 1: options: option 2 should start with 'C.'"):
        load_videomme(_write(tmp_path, "videomme.json", rows))


def test_missing_file_is_one_line_error(tmp_path):
    with pytest.raises(DatasetError, match="no such file"):
        load_egolife(tmp_path / "absent.json")
