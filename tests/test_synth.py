"""The scripted benchmark generator: deterministic, aligned to clips, readable by OCR, and
asking questions whose answers depend on the right moment."""

import hashlib
import json
import random
import re
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import av
import pytest

from videomem.eval.egolife import load_egolife
from videomem.eval.lvbench import load_lvbench
from videomem.errors import SynthError, VideomemError
from videomem.synth import MIN_MINUTES, synth, write_second
from videomem.synth.second_egolife import day_items, hours_phrase
from videomem.synth.vocabulary import COUNT_WORDS
from videomem.timeline import UNTIL_SLACK, egolife_start


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    return synth(tmp_path_factory.mktemp("single"), minutes=MIN_MINUTES, seed=7)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return synth(tmp_path_factory.mktemp("ego"), days=2, seed=7)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_same_seed_same_benchmark_other_seed_other_one(single, tmp_path):
    again = synth(tmp_path / "again", minutes=MIN_MINUTES, seed=7)
    assert again.events == single.events
    assert again.questions == single.questions
    assert _digest(again.videos[0]) == _digest(single.videos[0])
    assert _digest(again.questions_file) == _digest(single.questions_file)
    other = synth(tmp_path / "other", minutes=MIN_MINUTES, seed=8)
    assert [e.text for e in other.events] != [e.text for e in single.events]


def test_single_video_events_fill_whole_clips(single):
    with av.open(str(single.videos[0])) as container:
        stream = container.streams.video[0]
        duration = float(stream.duration * stream.time_base)
    assert duration == pytest.approx(MIN_MINUTES * 60, abs=0.5)
    events = sorted(single.events, key=lambda e: e.t_start)
    for event in events:
        assert event.t_start % 10 == 0 and event.t_end % 10 == 0 and 10 <= event.t_end - event.t_start <= 20
        assert 0 <= event.t_start and event.t_end <= duration
        assert event.video_id == single.videos[0].stem
    for before, after in zip(events, events[1:]):
        assert before.t_end < after.t_start  # at least one quiet clip between events
    script = json.loads((single.root / "script.json").read_text())
    assert [e["text"] for e in script] == [e.text for e in single.events]


def test_single_video_questions_point_at_their_events(single):
    spans = {(e.t_start, e.t_end): e for e in single.events}
    assert len(single.questions) >= 20
    for q in single.questions:
        assert q.video_id == single.videos[0].stem and q.until is None
        assert len(q.choices) == 4 and len(set(q.choices)) == 4
        assert all(span in spans for span in q.targets), q
    letters = {q.answer for q in single.questions}
    assert len(letters) >= 3  # answers are spread over the options


def test_distractors_also_appear_in_the_video(single):
    on_screen = " ".join(e.text for e in single.events)
    what = [q for q in single.questions if q.question.startswith("What does")]
    where_put = [q for q in single.questions if re.match(r"Where (is|are) the .* put", q.question)]
    assert what and where_put
    for q in what + where_put:
        for choice in q.choices:
            assert choice.upper().removeprefix("THE ") in on_screen, (q.question, choice)
        # The right answer is the one shown with the question's subject, at its own time.
        (event,) = [e for e in single.events if (e.t_start, e.t_end) == q.targets[0]]
        assert q.answer_text.upper().removeprefix("THE ") in event.text


def test_frame_text_is_readable_by_ocr(single):
    from rapidocr import RapidOCR

    event = next(e for e in single.events if e.kind == "action")
    with av.open(str(single.videos[0])) as container:
        stream = container.streams.video[0]
        middle = (event.t_start + event.t_end) / 2
        container.seek(int(middle / stream.time_base), stream=stream)
        frame = next(f for f in container.decode(stream) if f.time >= middle - 0.5)
    result = RapidOCR()(frame.to_ndarray(format="bgr24"))
    read = " ".join(result.txts or ())
    assert event.text in read
    assert event.location in read


def test_egolife_corpus_names_files_by_start_time(corpus):
    # 8 scripted events a day, 3 distractor events and 3 idle clips: not every clip answers something.
    assert len(corpus.videos) == 28 and len(corpus.events) == 22
    assert sum(e.kind == "distractor" for e in corpus.events) == 6
    starts = {egolife_start(path): path for path in corpus.videos}
    for path in corpus.videos:
        assert re.fullmatch(r"DAY[12]_A1_JAKE_\d{8}\.mp4", path.name) and path.parent.name == path.name[:4]
    for event in corpus.events:
        assert starts[event.t_start].stem == event.video_id and event.t_end - event.t_start == 30


def test_egolife_answers_depend_on_query_time(corpus):
    by_question: dict[str, list] = {}
    for q in corpus.questions:
        assert q.until is not None and q.video_id is None
        assert all(t + 15 <= q.until + UNTIL_SLACK for t, _ in q.targets), q  # the answer was recorded in time
        by_question.setdefault(q.question, []).append(q)
    keys = by_question["Where did I last put the keys?"]
    assert len(keys) == 4 and len({q.answer_text for q in keys}) == 4
    for earlier, later in zip(keys, keys[1:]):
        assert earlier.until < later.until
        # Each earlier answer is still among the options later, and wrong there.
        assert earlier.answer_text in later.choices and earlier.answer_text != later.answer_text
    changing = [qs for qs in by_question.values() if len({q.answer_text for q in qs}) > 1]
    assert len(changing) >= 3  # keys, lunch, shopping list


def test_egolife_question_file_has_the_public_fields(corpus):
    records = json.loads(corpus.questions_file.read_text())
    assert corpus.questions_file.name == "EgoLifeQA_A1_JAKE.json"
    required = {"ID", "query_time", "type", "question", "choice_a", "choice_b", "choice_c", "choice_d", "answer",
                "target_time", "keywords", "reason", "need_audio", "need_name", "last_time", "trigger"}
    for record in records:
        assert required <= set(record)
    times = [r["target_time"].get("time", "") for r in records]
    assert all(isinstance(r["target_time"], dict) for r in records)
    assert any(re.fullmatch(r"\d{8}", t) for t in times)  # a moment
    assert any(re.fullmatch(r"\d{8}DAY\d_\d{8}", t) for t in times)  # a range across days


def test_bad_arguments_are_one_line_errors(tmp_path):
    with pytest.raises(VideomemError, match="at least 12 minutes"):
        synth(tmp_path / "a", minutes=5)
    with pytest.raises(VideomemError, match="2 to 7 days"):
        synth(tmp_path / "b", days=1)
    with pytest.raises(VideomemError, match="cannot be used with --format lvbench"):
        synth(tmp_path / "c", days=2, fmt="lvbench")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"fmt": "videomme"}, "'videomme' is not one of: lvbench, egolife"),
        ({"fps": 0}, "fps 0 is out of range"),
        ({"size": (161, 90)}, "needs even sides of at least 160x90"),
        ({"size": (640, 80)}, "needs even sides of at least 160x90"),
        ({"days": 8}, "2 to 7 days"),
    ],
)
def test_bad_options_are_synth_errors_and_write_nothing(tmp_path, options, message):
    with pytest.raises(SynthError, match=re.escape(message)):
        synth(tmp_path / "out", **options)
    assert not (tmp_path / "out").exists()


def test_an_output_path_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "out").write_text("not a directory", encoding="utf-8")
    with pytest.raises(SynthError, match="exists and is not a directory"):
        synth(tmp_path / "out")


def test_cli_writes_a_benchmark_and_refuses_to_overwrite(tmp_path):
    command = [sys.executable, "-m", "videomem.cli", "synth", str(tmp_path / "b"), "--days", "2", "--seed", "1"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "28 video(s), 22 events, 12 questions" in done.stdout
    assert (tmp_path / "b" / "EgoLifeQA_A1_JAKE.json").is_file()
    again = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert again.returncode == 2
    assert again.stderr.strip().startswith("error:") and "already holds a generated benchmark" in again.stderr


def test_distractors_name_what_is_asked_but_answer_nothing(single):
    distractors = [e for e in single.events if e.kind == "distractor"]
    people = {e.text.split()[0] for e in single.events if e.kind == "action"}
    assert len(distractors) == 4 and all(e.text.split()[0] in people for e in distractors)
    for q in single.questions:
        assert not any(span == (e.t_start, e.t_end) for e in distractors for span in q.targets)
        named = [c.upper().removeprefix("THE ") for c in q.choices if c.upper() not in people]
        assert not any(c in e.text for e in distractors for c in named), q  # only people are shared


def test_paraphrased_questions_same_answers_other_words(single):
    paraphrased = load_lvbench(single.paraphrased_file)
    assert single.paraphrased_file == single.root / "paraphrased" / single.questions_file.name
    assert len(paraphrased) == len(single.questions)
    for plain, reworded in zip(single.questions, paraphrased):
        assert reworded.question != plain.question and set(reworded.choices) == set(plain.choices)
        assert reworded.answer_text == plain.answer_text and reworded.targets == plain.targets
        assert reworded.choices != plain.choices  # every option list is reordered


def _picture_digest(path: Path) -> tuple[str, bool]:
    """(digest of the video stream's packets, whether the file has sound)."""
    digest = hashlib.sha256()
    with av.open(str(path)) as container:
        for packet in container.demux(container.streams.video[0]):
            digest.update(bytes(packet))
        return digest.hexdigest(), bool(container.streams.audio)


def test_speech_adds_sound_and_questions_and_changes_nothing_else(corpus, speech_synth):
    plain, spoken = corpus, speech_synth
    assert [p.relative_to(plain.root) for p in plain.videos] == [p.relative_to(spoken.root) for p in spoken.videos]
    for before, after in zip(plain.videos, spoken.videos):
        (picture, sound), (same_picture, has_sound) = _picture_digest(before), _picture_digest(after)
        assert picture == same_picture and not sound and has_sound, after.name
    assert (spoken.root / "script.json").read_text() == (plain.root / "script.json").read_text()
    for name in (plain.questions_file, plain.paraphrased_file):
        records = json.loads(name.read_text())
        extended = json.loads((spoken.root / name.relative_to(plain.root)).read_text())
        assert extended[: len(records)] == records and not any(r["need_audio"] for r in records)
        heard = extended[len(records):]
        assert len(heard) == len(spoken.speech) and all(r["need_audio"] and r["reason"].startswith("Heard: ") for r in heard)
    assert json.loads((spoken.root / "speech.json").read_text()) == [asdict(line) for line in spoken.speech]
    assert not (plain.root / "speech.json").exists()


def test_spoken_answers_never_appear_on_screen(speech_synth):
    on_screen = {word for e in speech_synth.events for word in re.findall(r"[A-Z0-9]+", f"{e.text} {e.location}")}
    records = {r["ID"]: r for r in json.loads(speech_synth.questions_file.read_text()) if r["need_audio"]}
    assert {r["type"] for r in records.values()} == {"EntityLog", "RelationMap", "TaskMaster"}
    for q in (q for q in speech_synth.questions if q.id in records):
        for option in q.choices:
            *_, last = option.upper().split()  # the place's noun, the name, the number
            assert last not in on_screen, (q.question, option)
        # The right option is what the line spoken at the target time says.
        ((t, _),) = q.targets
        (line,) = [line for line in speech_synth.speech if line.t_start <= t <= line.t_end]
        assert q.answer_text.casefold() in line.text.casefold() and q.until > line.t_end, q.question


def test_speech_without_espeak_is_a_one_line_error(tmp_path, monkeypatch, run_cli):
    monkeypatch.setattr("videomem.synth.speech.shutil.which", lambda name: None)
    result = run_cli("synth", tmp_path / "b", "--days", "2", "--speech")
    assert result.code == 2 and result.stderr.strip() == (
        "error: --speech needs espeak-ng, which is not installed (apt-get install espeak-ng)"
    )
    assert not (tmp_path / "b").exists()


def test_second_writer_shares_no_sentence_form_and_its_answers_hold(single, corpus):
    path = write_second(single.root, seed=7)
    second = load_lvbench(path)
    first = [*single.questions, *load_lvbench(single.paraphrased_file)]
    openings = {" ".join(q.question.split()[:2]).lower() for q in first}
    assert len(second) > len(single.questions) and all(
        " ".join(q.question.split()[:2]).lower() not in openings for q in second
    ), "no question opens as one of the first writer's (or its paraphrases') does"
    by_time = {(e.t_start, e.t_end): e for e in single.events}
    for q in second:
        answer = q.answer_text
        assert q.targets and all(t in by_time for t in q.targets)
        if q.question.startswith("Which happened earlier"):
            earliest = by_time[min(q.targets)]
            assert answer.split()[0].upper() == earliest.text.split()[0], "the earlier event is the answer"
        if "how long" in q.question:
            (t0, t1), = q.targets
            assert answer == f"roughly {int(t1 - t0)} seconds"


def test_second_writer_on_days_asks_its_own_families_and_their_answers_hold(corpus):
    path = write_second(corpus.root, seed=7)
    second = load_egolife(path)
    first = [*corpus.questions, *load_egolife(corpus.paraphrased_file)]
    openings = {" ".join(q.question.split()[:2]).lower() for q in first}
    assert not {" ".join(q.question.split()[:2]).lower() for q in second} & openings
    items = day_items(json.loads((corpus.root / "script.json").read_text()), random.Random("second-7"))
    assert [q.question for q in second] == [i.question for i in items]
    spans = {(e.t_start, e.t_end): e for e in corpus.events}
    for q, item in zip(second, items):
        assert q.answer_text == item.correct and q.until == item.until
        assert item.targets and all(t in spans and t[1] <= item.until for t in item.targets), q.question
        if q.question.startswith(("Since the recording", "All told", "Up to now")):
            assert q.answer_text == COUNT_WORDS[len(item.targets)]
        if "how much time passed between" in q.question:
            (a, _), (b, _) = item.targets
            assert q.answer_text == hours_phrase(b - a)
        if q.question.startswith("How long has it been"):
            ((t, _),) = item.targets
            assert q.answer_text == hours_phrase(q.until - t)
        if "Which colour" in q.question:
            assert q.answer_text.upper() == spans[item.targets[0]].colour
    families = {"colour", "how much time", "How long has it been", "which came first", "sums up", "who came round",
                "keys have been found", "part of the house"}
    assert all(any(f in q.question for q in second) for f in families)
