"""Benchmark loaders on fixtures written in the public schemas (field for field)."""

import json
from pathlib import Path

import pytest

from videomem.eval.egolife import load_egolife
from videomem.eval.lvbench import load_lvbench
from videomem.eval.questions import DatasetError
from videomem.eval.videomme import load_videomme
from videomem.timeline import DAY, parse_time


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


def _t(hh, mm, ss, ff=0, day=1):
    return (day - 1) * DAY + hh * 3600 + mm * 60 + ss + ff / 20


def _flat(spans):
    return [t for span in spans for t in span]


def test_egolife_every_target_form_of_the_release(tmp_path, caplog):
    path = _write(
        tmp_path,
        "EgoLifeQA_A1_JAKE.json",
        [
            _egolife_record(),  # one moment
            _egolife_record(  # a range, both ends on DAY1
                ID="2", type="EventRecall", target_time={"date": "DAY1", "time": "11153417DAY1_11181201"}
            ),
            _egolife_record(  # a range from DAY2 to DAY3
                ID=3, query_time={"date": "DAY3", "time": "09300510"},
                target_time={"date": "DAY2", "time": "23595000DAY3_00001000"},
            ),
            _egolife_record(  # several moments on one day; an hour written without its leading zero
                ID="4", type="HabitInsight", query_time={"date": "DAY2", "time": "12000000"},
                target_time={"date": "DAY1", "time_list": ["9153417", "11181201"]}, answer="d",
            ),
        ],
    )
    moment, short, long, listed = load_egolife(path)
    assert not caplog.records

    assert moment.id == "1" and moment.categories == ("EntityLog",)
    assert moment.question == "Who used the screwdriver first?"
    assert moment.choices == ("Tasha", "Alice", "Shure", "Lucia")
    assert moment.answer == "B" and moment.answer_text == "Alice"
    assert moment.video_id is None
    assert moment.until == pytest.approx(_t(11, 21, 2, 17))
    assert _flat(moment.targets) == pytest.approx([_t(11, 15, 24, 8)] * 2)

    assert _flat(short.targets) == pytest.approx([_t(11, 15, 34, 17), _t(11, 18, 12, 1)])
    assert long.id == "3" and long.until == pytest.approx(_t(9, 30, 5, 10, day=3))
    assert _flat(long.targets) == pytest.approx([_t(23, 59, 50, day=2), _t(0, 0, 10, day=3)])

    assert listed.answer == "D" and listed.until == pytest.approx(_t(12, 0, 0, day=2))
    assert _flat(listed.targets) == pytest.approx([_t(9, 15, 34, 17)] * 2 + [_t(11, 18, 12, 1)] * 2)


@pytest.mark.parametrize(
    "target",
    [
        "11153417DAY1_11181201",  # outside the dict
        {"date": "DAY1", "time": "11156017"},  # 60 seconds
        {"date": "DAY1", "time": "11181201DAY1_11153417"},  # ends before it starts
        {"date": "DAY1", "time": "11153417DAY0_11181201"},  # no day 0
        {"date": "DAY1", "time_list": []},
        {"time": "11152408"},  # no date
        None,
    ],
)
def test_egolife_unreadable_target_is_asked_without_tiou_and_named_once(tmp_path, caplog, target):
    record = _egolife_record(ID="7", target_time=target) if target is not None else _egolife_record(ID="7")
    if target is None:
        del record["target_time"]
    path = _write(tmp_path, "q.json", [_egolife_record(), record])
    first, second = load_egolife(path)
    assert first.targets and second.targets == ()
    assert second.answer == "B" and second.until == first.until  # still asked and scored
    (warning,) = caplog.records
    message = warning.getMessage()
    assert warning.levelname == "WARNING" and "\n" not in message
    assert "record 1 (ID 7): target_time:" in message and "without tIoU" in message


def test_egolife_record_without_type_is_counted_apart(tmp_path, caplog):
    record = _egolife_record(ID="9")
    del record["type"]
    (question,) = load_egolife(_write(tmp_path, "q.json", [record]))
    assert question.categories == ("(no type)",)
    assert "record 0 (ID 9): type:" in caplog.records[0].getMessage()


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
        ({"query_time": {"date": "DAY1", "time": "11153417DAY1_11181201"}}, "query_time.time"),
        ({"choice_c": None}, "choice_c"),
        ({"question": "  "}, "question"),
    ],
)
def test_egolife_record_that_cannot_be_asked_is_left_out_with_a_warning_naming_it(tmp_path, caplog, change, field):
    records = [_egolife_record(), _egolife_record(ID="2", **change), _egolife_record(ID="3")]
    path = _write(tmp_path, "bad.json", records)
    assert [q.id for q in load_egolife(path)] == ["1", "3"]  # the records after it are asked too
    (warning,) = caplog.records
    message = warning.getMessage()
    assert warning.levelname == "WARNING" and "\n" not in message
    assert str(path) in message and "record 1 (ID 2)" in message and f"{field}:" in message
    assert "left out" in message


@pytest.mark.parametrize("field", ["question", "query_time", "answer", "ID"])
def test_egolife_file_none_of_whose_records_can_be_asked_is_an_error(tmp_path, field):
    record = _egolife_record()
    del record[field]
    with pytest.raises(DatasetError, match=rf"none of the 2 records can be asked; the first: .*record 0.*: {field}: missing"):
        load_egolife(_write(tmp_path, "bad.json", [record, record]))


RELEASED_RECORDS = Path(__file__).parent / "fixtures" / "egolifeqa_records.json"
"""Single records copied unchanged from the release's EgoLifeQA_A1_JAKE_DAYn.json files: frame
digits of 20 and more (187, 213, 335, 399, 423, 456, 459–467, 495), a two-part range (228),
time_list (189, 192, 245, 495), three-part targets (338, 482; 482 spans DAY4 to DAY6) and
repeated options (118, 324, 373, 395)."""
RELEASE = Path(__file__).resolve().parents[2] / "shared" / "data" / "egolife" / "EgoLifeQA"
"""The release's EgoLifeQA files, beside the repository (../shared/data/egolife)."""


def _worldmm_order(date, code):
    """How WorldMM's EgoLife evaluation compares two times: the digits of day and HHMMSSFF as one number."""
    return int(date.replace("DAY", "") + code.zfill(8))


def test_egolife_released_records_all_load_with_their_targets(caplog):
    questions = {q.id: q for q in load_egolife(RELEASED_RECORDS)}
    records = {r["ID"]: r for r in json.loads(RELEASED_RECORDS.read_text(encoding="utf-8"))}
    assert not caplog.records and questions.keys() == records.keys()
    assert all(q.targets for q in questions.values())

    # frame digits 20-99 stay inside their second: 21044820 .. 21044827 (IDs 459-467), 16202750 (187)
    for qid in ("459", "460", "461", "467"):
        assert _t(21, 4, 48, day=6) + 19 / 20 < questions[qid].until < _t(21, 4, 49, day=6)
    assert questions["459"].until == questions["460"].until < questions["461"].until < questions["467"].until
    assert _t(16, 20, 27, 19, day=3) < questions["187"].until < _t(16, 20, 28, day=3)
    assert _t(16, 55, 32, 19, day=3) < questions["213"].targets[0][0] < _t(16, 55, 33, day=3)  # a target too

    assert _flat(questions["228"].targets) == pytest.approx([_t(16, 35, 49, 13, day=3), _t(16, 40, 17, 0, day=3)])
    # three-part targets are the moments they list (482: "How many times has Shure played the guitar?")
    assert _flat(questions["482"].targets) == pytest.approx(
        [t for t in (_t(17, 4, 49, 17, day=4), _t(20, 59, 38, 13, day=4), _t(19, 48, 38, 7, day=6)) for _ in "se"]
    )
    assert len(questions["338"].targets) == 3
    assert len(questions["189"].targets) == 3

    # repeated options are kept as written, so a reply is scored by its letter
    assert questions["118"].choices == ("Choiszt", "Choiszt", "Nicous", "Choiszt") and questions["118"].answer == "A"
    assert questions["395"].answer_text == "This afternoon" and questions["395"].answer == "B"


def test_egolife_released_times_order_as_worldmm_compares_them():
    """Every query and target time of the fixture records, ordered as seconds, orders as
    WorldMM's evaluation orders their digits (equal digits give equal seconds)."""
    records = json.loads(RELEASED_RECORDS.read_text(encoding="utf-8"))
    times = {(r["query_time"]["date"], r["query_time"]["time"]) for r in records}
    times |= {(r["target_time"]["date"], code) for r in records for code in r["target_time"].get("time_list", [])}
    times |= {(r["target_time"]["date"], r["target_time"]["time"]) for r in records if len(r["target_time"].get("time", "")) == 8}
    assert any(int(code[6:]) >= 20 for _, code in times)
    seconds = {t: parse_time(f"{t[0]} {t[1]}") for t in times}
    for a in times:
        for b in times:
            assert (seconds[a] < seconds[b]) == (_worldmm_order(*a) < _worldmm_order(*b)), (a, b)


@pytest.mark.skipif(not RELEASE.is_dir(), reason=f"the EgoLife release files are not at {RELEASE}")
def test_every_record_of_the_released_egolifeqa_files_loads(caplog):
    files = sorted(RELEASE.glob("EgoLifeQA_*.json"))
    assert files
    for path in files:
        records = json.loads(path.read_text(encoding="utf-8"))
        questions = load_egolife(path)
        assert [q.id for q in questions] == [str(r["ID"]) for r in records], path
        assert all(q.targets and q.until is not None for q in questions), path
    assert not caplog.records


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
    "reference,targets",
    [
        ("00:15-00:19", ((15.0, 19.0),)),  # MM:SS
        ("1:02:03-1:02:40", ((3723.0, 3760.0),)),  # H:MM:SS past the hour
        ("01:02:03-01:02:40", ((3723.0, 3760.0),)),  # HH:MM:SS
        ("59:30-1:00:10", ((3570.0, 3610.0),)),  # across the hour, each end in its own form
        ("00:15 - 00:19", ((15.0, 19.0),)),
        ("00:15–00:19", ((15.0, 19.0),)),
        ("00:15-00:19, 12:00-12:30", ((15.0, 19.0), (720.0, 750.0))),  # several ranges
        ("00:15-00:19;12:00-12:30", ((15.0, 19.0), (720.0, 750.0))),
        (["00:15-00:19", "12:00-12:30"], ((15.0, 19.0), (720.0, 750.0))),
        ("12:05", ((725.0, 725.0),)),  # one moment
        ("", ()),  # no span (summaries)
        (None, ()),
    ],
)
def test_lvbench_every_form_of_time_reference(tmp_path, reference, targets):
    lines = json.loads(json.dumps(LVBENCH_LINES))
    lines[0]["qa"][0]["time_reference"] = reference
    (question, _) = load_lvbench(_write_jsonl(tmp_path, lines))
    assert question.targets == targets


@pytest.mark.parametrize(
    "change,field",
    [
        ({"question": "No options here?"}, "question"),
        ({"question": "Q?\n(A) x\n(C) y"}, "question"),
        ({"answer": "E"}, "answer"),
        ({"question_type": []}, "question_type"),
        ({"time_reference": "00:15 until 00:19"}, "time_reference"),
        ({"time_reference": "00:19-00:15"}, "time_reference"),
        ({"time_reference": "00:15-00:19, 01:61-01:70"}, "time_reference"),
        ({"time_reference": 15}, "time_reference"),
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


def test_videomme_parquet_as_released(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(VIDEOMME_ROWS), path)
    from_json = load_videomme(_write(tmp_path, "videomme.json", VIDEOMME_ROWS), duration=None)
    from_parquet = load_videomme(path, duration=None)
    assert from_parquet == from_json and [q.id for q in load_videomme(path)] == ["601-2"]
    assert from_parquet[1].record == {
        "video_id": "601", "duration": "long", "domain": "Sports Competition", "sub_category": "Football",
        "url": VIDEOMME_ROWS[1]["url"], "options": VIDEOMME_ROWS[1]["options"],
    }
    rows = json.loads(json.dumps(VIDEOMME_ROWS))
    rows[1]["options"][2] = "Substitution"
    pq.write_table(pa.Table.from_pylist(rows), path)
    with pytest.raises(DatasetError, match=r"record 1: options: option 2 should start with 'C.'"):
        load_videomme(path)
    path.write_bytes(b"PAR1 not really a parquet file")
    with pytest.raises(DatasetError, match=r"not a readable parquet file"):
        load_videomme(path)


def test_videomme_bad_option_prefix(tmp_path):
    rows = json.loads(json.dumps(VIDEOMME_ROWS))
    rows[1]["options"][2] = "Substitution"
    with pytest.raises(DatasetError, match=r"record 1: options: option 2 should start with 'C.'"):
        load_videomme(_write(tmp_path, "videomme.json", rows))


def test_missing_file_is_one_line_error(tmp_path):
    with pytest.raises(DatasetError, match="no such file"):
        load_egolife(tmp_path / "absent.json")
