"""EgoLifeCap as memory: the release's captions and transcripts imported onto the corpus
timeline, aligned to clips, marked by source, and the stages after captioning running on them
with no vision-model call.

Fixtures follow the release's layout: `DenseCaption/<person>/DAYn/DAYn_<person>_HH000000.srt`
(one file per hour, cue times from that hour) and `Transcript/...` with bilingual cues, the
English line last.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import make_video

from videomem.config import RoleConfig, load_models, load_pipeline
from videomem.errors import ConfigError, TranscriptError
from videomem.eval.harness import run_eval
from videomem.memory.registry import open_memory
from videomem.models.engines import Generation, LMRequest
from videomem.models.usage import Usage
from videomem.models.prompted import PromptedLanguage
from videomem.models.registry import ModelSet
from videomem.pipeline.runner import ingest
from videomem.store import Store
from videomem.timeline import DAY, frame_offset
from videomem.video.egolifecap import hour_files, read_egolifecap

H11, H12 = 11 * 3600, 12 * 3600


def _srt(cues: Sequence[tuple[str, str, str]]) -> str:
    return "".join(f"{n}\n{a} --> {b}\n{text}\n\n" for n, (a, b, text) in enumerate(cues, 1))


def _write(path: Path, cues: Sequence[tuple[str, str, str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_srt(cues), encoding="utf-8")
    return path


CAPTIONS = {
    "DAY1/DAY1_A1_JAKE_11000000.srt": [
        ("00:59:31,000", "00:59:36,000", "Alice tightens the screws of the shelf with a small screwdriver."),
        ("00:59:38,000", "00:59:43,000", "Alice puts the screwdriver in the red toolbox."),  # crosses a clip boundary
        ("00:59:55,000", "01:00:04,000", "Lucia carries a blue vase to the table."),  # crosses the hour and a file
    ],
    "DAY1/DAY1_A1_JAKE_12000000.srt": [
        ("00:00:12,000", "00:00:18,000", "Shure在沙发上弹吉他。"),  # not translated offline
        ("00:30:00,000", "00:30:05,000", "Nobody filmed this."),  # outside the footage
    ],
}
TRANSCRIPTS = {
    "DAY1/DAY1_A1_JAKE_11000000.srt": [
        ("00:59:32,000", "00:59:34,000", "好的，我们开始吧。\nOK, let's start."),
        ("00:59:48,000", "00:59:52,000", "把螺丝刀给我。\nPass me the screwdriver."),  # crosses a clip boundary
    ],
}


def _tree(root: Path, files: dict[str, list]) -> Path:
    for relative, cues in files.items():
        _write(root / relative, cues)
    return root


# ----------------------------------------------------------------------------- reading the files


def test_files_are_placed_by_day_and_hour_and_cues_keep_their_hour(tmp_path: Path) -> None:
    captions = _tree(tmp_path / "DenseCaption" / "A1_JAKE", CAPTIONS)
    _write(captions / "DAY2" / "A1_JAKE_07.srt", [("00:00:01,000", "00:00:02,000", "Day from the folder.")])
    files = hour_files(captions)
    assert [(f.day, f.hour) for f in files] == [(1, 11), (1, 12), (2, 7)]
    segments = read_egolifecap(files, "captions")
    assert [(s.t_start, s.t_end) for s in segments[:3]] == [
        (H11 + 3571, H11 + 3576), (H11 + 3578, H11 + 3583), (H11 + 3595, H12 + 4),
    ]
    assert segments[-1].t_start == DAY + 7 * 3600 + 1 and segments[-1].text == "Day from the folder."

    transcripts = _tree(tmp_path / "Transcript" / "A1_JAKE", TRANSCRIPTS)
    assert [s.text for s in read_egolifecap(hour_files(transcripts), "transcripts")] == [
        "OK, let's start.", "Pass me the screwdriver."
    ]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("A1_JAKE/notes_11000000.srt", "no DAYn in the file name or its folder name"),
        ("A1_JAKE/DAY1/DAY1_A1_JAKE_xx.srt", "does not start with an hour"),
        ("A1_JAKE/DAY1/DAY1_A1_JAKE_25000000.srt", "does not start with an hour"),
        ("A2_ALICE/DAY1/DAY1_A2_ALICE_11000000.srt", "two files for DAY1 hour 11; pass one person's folder"),
    ],
)
def test_misplaced_files_are_one_line_errors(tmp_path: Path, name: str, message: str) -> None:
    _write(tmp_path / "A1_JAKE" / "DAY1" / "DAY1_A1_JAKE_11000000.srt", [("00:00:01,000", "00:00:02,000", "x")])
    bad = _write(tmp_path / name, [("00:00:01,000", "00:00:02,000", "x")])
    with pytest.raises(TranscriptError) as err:
        hour_files(tmp_path)
    assert message in str(err.value) and bad.name in str(err.value) and "\n" not in str(err.value)


# ----------------------------------------------------------------------------- import into a store


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two EgoLife files of 30 s and 20 s at 11:59:30 and 12:00:00 on DAY1, cut into 10-s clips."""
    root = tmp_path_factory.mktemp("egolifecap")
    make_video(root / "videos" / "DAY1" / "DAY1_A1_JAKE_11593000.mp4", seconds=30, size=(64, 48), fps=2, gop=4)
    make_video(root / "videos" / "DAY1" / "DAY1_A1_JAKE_12000000.mp4", seconds=20, size=(64, 48), fps=2, gop=4)
    (root / "pipeline.yaml").write_text(
        "name: egolifecap-test\nclip_seconds: 10\nframes_per_clip: 1\nstages: [sample, caption, objects, episodic, semantic]\n"
        "episodic_scales: [10, 30]\n"
        "imported_caption_language: English\n"
    )
    _tree(root / "EgoLifeCap" / "DenseCaption" / "A1_JAKE", CAPTIONS)
    _tree(root / "EgoLifeCap" / "Transcript" / "A1_JAKE", TRANSCRIPTS)
    return root


def _ingest(corpus: Path, store_dir: Path, models: ModelSet, **options):
    with Store(store_dir, create=True) as store:
        return ingest(
            [corpus / "videos"], store, load_pipeline(corpus / "pipeline.yaml"), lambda: models,
            timeline="egolife", show_progress=False,
            captions=corpus / "EgoLifeCap" / "DenseCaption" / "A1_JAKE",
            transcripts=corpus / "EgoLifeCap" / "Transcript" / "A1_JAKE", **options,
        )


def _rows(store_dir: Path, sql: str) -> list[tuple]:
    with Store(store_dir) as store:
        return [tuple(r) for r in store.query(sql)]


def test_egolifecap_builds_memory_with_no_vision_call_and_answers(corpus, tmp_path, run_cli, caplog) -> None:
    store_dir = tmp_path / "store"
    with caplog.at_level(logging.WARNING):
        report = _ingest(corpus, store_dir, ModelSet(load_models()))
    assert report.ok, report.all_failures()
    assert "vlm" not in report.usage  # no vision-model call in the whole run
    assert report.usage["llm"].calls > 0  # objects were read from the captions by the text model
    by_stage = {r.stage: (r.done, r.skipped) for r in report.results}
    assert by_stage["import-captions"] == (5, 0) and by_stage["caption"] == (0, 5)
    assert not [r for r in caplog.records if "translates only" in r.getMessage()]  # every caption was glossed

    start = H11 + 59 * 60 + 30
    events = _rows(store_dir, "SELECT t_start, text, source FROM events ORDER BY t_start")
    assert [(round(t - start), source) for t, _, source in events] == [(0, "egolifecap"), (10, "egolifecap"),
                                                                       (20, "egolifecap"), (30, "egolifecap"),
                                                                       (40, "egolifecap")]
    texts = [text for _, text, _ in events]  # the clip's caption cues, then its speech
    assert texts[0] == " ".join(c[2] for c in CAPTIONS["DAY1/DAY1_A1_JAKE_11000000.srt"][:2]) + " OK, let's start."
    assert texts[1] == "Alice puts the screwdriver in the red toolbox. Pass me the screwdriver."
    assert texts[2] == "Lucia carries a blue vase to the table. Pass me the screwdriver."
    assert texts[3] == "Lucia carries a blue vase to the table."  # across the hour and the files
    # Chinese, glossed word by word into English by the offline backend (models/offline/gloss.py)
    assert texts[4].startswith("Shure ") and {"sofa", "guitar."} <= set(texts[4].split())

    speech = _rows(store_dir, "SELECT c.idx, c.video_id, t.text, t.source FROM transcripts t "
                              "JOIN clips c ON c.id = t.clip_id ORDER BY t.t_start, c.t_start")
    assert [(idx, text) for idx, _, text, _ in speech] == [
        (0, "OK, let's start."), (1, "Pass me the screwdriver."), (2, "Pass me the screwdriver.")
    ]
    assert {source for *_, source in speech} == {"egolifecap"}

    observed = _rows(store_dir, "SELECT c.video_id, c.idx, o.name, o.kind FROM object_observations o "
                                "JOIN clips c ON c.id = o.clip_id")
    assert ("DAY1_A1_JAKE_11593000", 0, "Alice", "person") in observed
    assert ("DAY1_A1_JAKE_11593000", 0, "small screwdriver", "object") in observed
    assert ("DAY1_A1_JAKE_12000000", 0, "Lucia", "person") in observed

    info = run_cli("info", "--store", store_dir)
    assert info.code == 0, info.output
    assert "memory events: captions 5, egolifecap captions 5" in info.stdout
    assert "transcripts: 3 (egolifecap 3)" in info.stdout

    # A question about a captioned event, answered from that memory.
    questions = tmp_path / "EgoLifeQA_A1_JAKE.json"
    questions.write_text(json.dumps([{
        "ID": "1", "query_time": {"date": "DAY1", "time": "12010000"}, "type": "EntityLog",
        "question": "Who put the screwdriver in the toolbox?", "choice_a": "Tasha", "choice_b": "Alice",
        "choice_c": "Shure", "choice_d": "Lucia", "answer": "B",
        "target_time": {"date": "DAY1", "time": "11593800DAY1_11594300"},
    }]))
    result = run_eval("egolife", questions, store_dir, tmp_path / "run", agent_path="agents/caption-rag.yaml",
                      show_progress=False)
    (row,) = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert row["correct"] and result.summary.correct == 1
    assert row["tiou"] > 0  # the evidence covers the captioned range
    with Store(store_dir, read_only=True) as db:  # episodic memory, built from the imported captions
        found = open_memory("episodic", db, ModelSet(load_models())).retrieve(
            "Who put the screwdriver in the toolbox?", 3, until=H12 + 10 * 60
        )
    assert found and "screwdriver in the red toolbox" in found[0].text
    assert found[0].t_start <= start + 10 and found[0].t_end >= start + 20

    # Nothing is imported twice; --force forgets and imports again, still with no vision call.
    again = _ingest(corpus, store_dir, ModelSet(load_models()))
    assert {r.stage: r.done for r in again.results}["import-captions"] == 0
    forced = _ingest(corpus, store_dir, ModelSet(load_models()), force=True)
    assert forced.ok and "vlm" not in forced.usage
    assert _rows(store_dir, "SELECT text, source FROM events ORDER BY t_start") == [(t, s) for _, t, s in events]
    assert len(_rows(store_dir, "SELECT id FROM transcripts")) == 3


class Translator:
    """Text-engine stand-in: translates from a table, finds no objects; records the texts asked."""

    TABLE = {"Shure在沙发上弹吉他。": "Shure plays the guitar on the sofa."}

    def __init__(self) -> None:
        self.translated: list[str] = []

    def generate(self, requests: Sequence[LMRequest]) -> list[Generation]:
        out = []
        for request in requests:
            if "Reply as JSON: {\"translation\"" in request.prompt:
                source = next(t for t in [*self.TABLE, *(c[2] for f in CAPTIONS.values() for c in f)]
                              if f"\n{t}\n" in request.prompt)
                self.translated.append(source)
                out.append(json.dumps({"translation": self.TABLE.get(source, source)}, ensure_ascii=False))
            else:
                out.append('{"objects": []}')
        return [Generation(text, Usage(10, 5, 0.0, 1)) for text in out]


def test_captions_are_translated_by_the_text_model_when_the_pipeline_asks(corpus, tmp_path) -> None:
    engine = Translator()
    models = ModelSet(load_models())
    models.language = PromptedLanguage(engine, RoleConfig(backend="openai", model="m", base_url="http://unused"))
    report = _ingest(corpus, tmp_path / "store", models, stages=["sample", "caption"])
    assert report.ok, report.all_failures()
    assert "vlm" not in report.usage
    cues = [c[2] for f in CAPTIONS.values() for c in f][:4]
    assert sorted(engine.translated) == sorted(cues)  # each cue once, though one spans two clips
    texts = [t for (t,) in _rows(tmp_path / "store", "SELECT text FROM events ORDER BY t_start")]
    assert texts[-1] == "Shure plays the guitar on the sofa."


def test_import_needs_the_egolife_timeline_and_readable_folders(corpus, tmp_path) -> None:
    with Store(tmp_path / "s", create=True) as store:
        pipeline = load_pipeline(corpus / "pipeline.yaml")
        with pytest.raises(ConfigError, match="use --timeline egolife"):
            ingest([corpus / "videos"], store, pipeline, ModelSet.from_file, captions=corpus / "EgoLifeCap")
        with pytest.raises(ConfigError, match=r"--transcripts: .*absent: no such directory"):
            ingest([corpus / "videos"], store, pipeline, ModelSet.from_file, timeline="egolife",
                   transcripts=tmp_path / "absent")
        assert not store.query("SELECT 1 FROM clips")  # refused before any video was decoded


# ----------------------------------------------------------------------------- memory from the files alone

# Cues copied as released: A1_JAKE's DAY1 11:00 files (DenseCaption and Transcript), first cues.
REAL_CAPTIONS = [
    ("00:09:43,500", "00:09:44,800", "我拿着手机"),
    ("00:09:45,000", "00:09:47,366", "我面向餐桌拿着手机"),
    ("00:09:47,866", "00:09:49,266", "我讲了句话"),
    ("00:09:59,900", "00:10:02,800", "我把 手机放到餐桌中间"),
    ("00:10:07,233", "00:10:12,366", "Katrina递给Alice，又传给Tasha"),
]
REAL_TRANSCRIPTS = [
    ("00:09:47,100", "00:09:50,766", "Jake: 好然后一个秒表\nJake: Okay, then we need a stopwatch."),
    ("00:09:54,700", "00:09:55,700", "Shure:  时间戳呗\nShure: Mark a timestamp, right?"),
    ("00:09:56,033", "00:09:56,833", "Jake: 对 戳一下\nJake: Yes, mark it."),
    ("00:10:00,233", "00:10:01,200", "Jake: 来都戳一下\nJake: Come on, everyone mark it."),
    ("00:10:34,166", "00:10:35,266", "Jake: 传过去戳一下哎\nJake: Pass it along and mark it, hey."),  # speech alone
]
HOUR_FILE = "DAY1/A1_JAKE_DAY1_11000000.srt"


def test_transcript_cues_keep_their_speaker(tmp_path: Path) -> None:
    transcripts = _tree(tmp_path / "Transcript" / "A1_JAKE", {HOUR_FILE: REAL_TRANSCRIPTS})
    segments = read_egolifecap(hour_files(transcripts), "transcripts")
    assert [(s.speaker, s.text) for s in segments[:2]] == [
        ("Jake", "Okay, then we need a stopwatch."), ("Shure", "Mark a timestamp, right?")
    ]
    # A cue that names nobody keeps its line as it is (the older fixtures above).
    plain = read_egolifecap(hour_files(_tree(tmp_path / "plain", TRANSCRIPTS)), "transcripts")
    assert [(s.speaker, s.text) for s in plain][:1] == [(None, "OK, let's start.")]


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One person's EgoLifeCap files (real cues), the egolife pipeline's grid and stages, and two
    of that person's videos as EgoLife cuts them (the first starts off the 30-s grid)."""
    root = tmp_path_factory.mktemp("release")
    _tree(root / "DenseCaption" / "A1_JAKE", {HOUR_FILE: REAL_CAPTIONS})
    _tree(root / "Transcript" / "A1_JAKE", {HOUR_FILE: REAL_TRANSCRIPTS})
    (root / "pipeline.yaml").write_text(
        "name: captions-only-test\nclip_seconds: 30\nframes_per_clip: 1\n"
        "stages: [sample, transcribe, caption, objects, episodic, semantic, visual]\nepisodic_scales: [30, 180]\n"
    )
    make_video(root / "videos" / "DAY1_A1_JAKE_11094208.mp4", seconds=17.6, size=(64, 48), fps=2, gop=4)
    make_video(root / "videos" / "DAY1_A1_JAKE_11100000.mp4", seconds=30, size=(64, 48), fps=2, gop=4)
    return root


def test_memory_from_the_captions_alone_then_the_videos_add_frames(release, tmp_path, run_cli) -> None:
    from videomem.agent.tools import NO_FRAMES, Memories, Toolbox
    from videomem.config import AgentConfig

    store_dir = tmp_path / "store"
    files = ["--timeline", "egolife", "--pipeline", release / "pipeline.yaml", "--store", store_dir,
             "--captions", release / "DenseCaption" / "A1_JAKE", "--transcripts", release / "Transcript" / "A1_JAKE"]
    built = run_cli("ingest", *files)
    assert built.code == 0, built.output
    assert "sample: 3 done, 0 already done, 0 failed (no video files: clips on the 30-s grid, no frames)" in built.stdout
    for stage in ("transcribe", "visual"):
        assert f"{stage}: 0 done, 0 already done, 0 failed (skipped: it needs the videos" in built.stdout
    assert "vlm:" not in built.stdout  # no vision-model call

    start = H11 + 9 * 60 + 30
    clips = _rows(store_dir, "SELECT id, video_id, idx, t_start, t_end FROM clips ORDER BY t_start")
    assert [(v, i, t0 - start, t1 - start) for _, v, i, t0, t1 in clips] == [
        ("A1_JAKE_DAY1_11000000", 19, 0, 30), ("A1_JAKE_DAY1_11000000", 20, 30, 60),
        ("A1_JAKE_DAY1_11000000", 21, 60, 90),  # speech alone
    ]
    assert _rows(store_dir, "SELECT fps, path FROM videos") == [(0.0, str(release / "DenseCaption" / "A1_JAKE"))]
    assert not _rows(store_dir, "SELECT 1 FROM frames")
    events = [text for (text,) in _rows(store_dir, "SELECT text FROM events ORDER BY t_start")]
    assert events[0] == ("我拿着手机 我面向餐桌拿着手机 我讲了句话 我把 手机放到餐桌中间 Jake: Okay, then we need a stopwatch. "
                         "Shure: Mark a timestamp, right? Jake: Yes, mark it.")
    assert events[2] == "Jake: Pass it along and mark it, hey."
    speakers = _rows(store_dir, "SELECT speaker, text FROM transcripts ORDER BY t_start, clip_id")
    assert speakers[1] == ("Shure", "Mark a timestamp, right?") and {s for s, _ in speakers} == {"Jake", "Shure"}

    # Who said what: a person record per speaker, a triplet per line, the speakers among the entities.
    people = _rows(store_dir, "SELECT name, value FROM object_observations WHERE kind = 'person' ORDER BY t_start, name")
    assert ("Shure", "says: Mark a timestamp, right?") in people
    # Things are read from what the caption saw, not from what was said: 'a stopwatch' was only spoken of.
    assert "stopwatch" not in {name for (name,) in _rows(store_dir, "SELECT name FROM object_observations")}
    assert ("Shure", "said", "Mark a timestamp, right?") in _rows(
        store_dir, "SELECT subject, relation, object FROM episodic_triplets")
    coarse = _rows(store_dir, "SELECT e.name FROM episodic_entities e JOIN episodic_captions c ON c.id = e.caption_id "
                              "WHERE c.scale = 180")
    assert {"jake", "shure"} <= {name.casefold() for (name,) in coarse}

    # The evidence shows who spoke; the tools that look at frames say there are none.
    with Store(store_dir, read_only=True) as db:
        models = ModelSet(load_models())
        found = open_memory("events", db, models).retrieve("Who said to mark a timestamp?", 1)
        assert "Shure: Mark a timestamp, right?" in found[0].text
        # ... and as typed fields, from the transcript rows, for a reader that parses no prose.
        assert ("Shure", "Mark a timestamp, right?", True) in [(s.speaker, s.text, s.transcribed) for s in found[0].speech]
        windows = open_memory("episodic", db, models).retrieve("Who said to mark a timestamp?", 3)
        assert windows and all(s.speaker in {"Jake", "Shure"} and s.transcribed for e in windows for s in e.speech)
        assert any(s.speaker == "Shure" for e in windows for s in e.speech)
        cfg = AgentConfig(tools=("video.qa", "memory.visual"))
        toolbox = Toolbox(db, models, Memories.open(db, models, cfg), cfg)
        asked = toolbox.call("video.qa", {"question": "What is on the table?", "t_start": start, "t_end": start + 30})
        assert asked.observation == NO_FRAMES.format(tool="video.qa")
        assert toolbox.call("memory.visual", {"query": "a phone"}).observation == NO_FRAMES.format(tool="memory.visual")

    # Nothing is done twice; then the videos add frames to the same clips.
    again = run_cli("ingest", *files)
    assert again.code == 0 and "sample: 0 done, 3 already done" in again.stdout
    imported = _rows(store_dir, "SELECT clip_id, text, source FROM events ORDER BY clip_id")
    videos = run_cli("ingest", release / "videos", *files[:-4])
    assert videos.code == 0, videos.output
    assert "vlm:" not in videos.stdout, videos.stdout  # the adopted clips keep their imported captions
    after = _rows(store_dir, "SELECT id, video_id, idx, t_start, t_end FROM clips ORDER BY t_start")
    assert [c[0] for c in after] == [c[0] for c in clips]  # the same clips, no new ones
    assert [(v, i) for _, v, i, *_ in after] == [
        ("DAY1_A1_JAKE_11094208", 0), ("DAY1_A1_JAKE_11100000", 0), ("A1_JAKE_DAY1_11000000", 21)
    ]
    assert after[0][3] == pytest.approx(start + 12.4)  # the video's own span
    framed = _rows(store_dir, "SELECT DISTINCT clip_id, video_id FROM frames ORDER BY clip_id")
    assert framed == [(clips[0][0], "DAY1_A1_JAKE_11094208"), (clips[1][0], "DAY1_A1_JAKE_11100000")]
    assert _rows(store_dir, "SELECT clip_id, text, source FROM events ORDER BY clip_id") == imported
    assert _rows(store_dir, "SELECT DISTINCT video_id FROM events WHERE clip_id = ?".replace("?", str(clips[0][0]))) == [
        ("DAY1_A1_JAKE_11094208",)
    ]
    done = {u for (u,) in _rows(store_dir, "SELECT unit FROM stage_progress WHERE stage = 'objects'")}
    assert {"DAY1_A1_JAKE_11094208:0", "DAY1_A1_JAKE_11100000:0"} <= done  # nothing redone
    assert _rows(store_dir, "SELECT COUNT(*) FROM visual_segments")[0][0] > 0
    assert run_cli("ingest", *files).code == 0  # the files again: the adopted windows are not made twice
    assert len(_rows(store_dir, "SELECT id FROM clips")) == 3


def test_an_ingest_scans_each_import_folder_once(release, tmp_path, run_cli, monkeypatch) -> None:
    from videomem.pipeline import imports

    scanned: list[Path] = []

    def counted(directory: str | Path) -> list:
        scanned.append(Path(directory))
        return hour_files(directory)

    monkeypatch.setattr(imports, "hour_files", counted)
    captions, transcripts = release / "DenseCaption" / "A1_JAKE", release / "Transcript" / "A1_JAKE"
    built = run_cli("ingest", "--timeline", "egolife", "--pipeline", release / "pipeline.yaml", "--store", tmp_path / "s",
                    "--stages", "sample", "--captions", captions, "--transcripts", transcripts)
    assert built.code == 0, built.output
    assert sorted(scanned) == sorted([captions, transcripts]), "checked before the store is made, and not again"


def test_ingest_refuses_a_check_made_for_other_arguments(release, tmp_path) -> None:
    from videomem.pipeline.runner import check_request

    pipeline = load_pipeline(release / "pipeline.yaml")
    checked = check_request(pipeline, ["sample"], release / "DenseCaption" / "A1_JAKE", None, "egolife")
    with Store(tmp_path / "s", create=True) as store, pytest.raises(ValueError, match="checked for"):
        ingest([], store, pipeline, ModelSet.from_file, stages=["sample", "caption"], timeline="egolife",
               captions=release / "DenseCaption" / "A1_JAKE", checked=checked)


def test_captions_alone_need_the_captions_folder(release, tmp_path, run_cli) -> None:
    only_speech = run_cli("ingest", "--timeline", "egolife", "--store", tmp_path / "s",
                          "--transcripts", release / "Transcript" / "A1_JAKE")
    assert only_speech.code == 2 and "pass videos, or --captions" in only_speech.stderr
    assert not (tmp_path / "s").exists()  # refused before any store is made


# ----------------------------------------------------------------------------- WorldMM's released captions

def _worldmm(start: str, end: str, text: str, date: str = "DAY1") -> dict:
    return {"start_time": start, "end_time": end, "text": text, "date": date,
            "video_path": f"/EgoLife/A1_JAKE/{date}/{date}_A1_JAKE_{start}.mp4"}


WORLDMM = {  # the layout of WorldMM's data/EgoLife/caption.zip: one list per scale, English, first person
    "A1_JAKE_30sec.json": [
        _worldmm("11094250", "11100000", "I hold my phone at the dining table and ask for a stopwatch."),  # FF >= 20
        _worldmm("11100000", "11103000", "I pass the phone around the table so everyone can mark the time."),
        _worldmm("11103000", "11110000", "Katrina hands the phone to Alice, who passes it on to Tasha."),
        _worldmm("11110000", "11113000", "I put the phone away and open the whiteboard."),
    ],
    "A1_JAKE_3min.json": [
        _worldmm("11094250", "11113000", "At the dining table I start a stopwatch and everyone marks a timestamp on my phone."),
    ],
    "A1_JAKE_10min.json": [
        _worldmm("11094250", "11113000", "The group gathers at the table in the morning to synchronise their timestamps."),
    ],
    "A1_JAKE_1h.json": [
        _worldmm("11094250", "11113000", "Morning of the first day: the housemates meet and set up the timestamps."),
    ],
}


def test_worldmm_captions_import_at_their_scales(release, tmp_path, monkeypatch) -> None:
    folder = tmp_path / "caption"
    folder.mkdir()
    for name, entries in WORLDMM.items():
        (folder / name).write_text(json.dumps(entries), encoding="utf-8")
    models = ModelSet(load_models())
    monkeypatch.setattr(models.language, "summarise", lambda groups: pytest.fail(f"summarised again: {groups}"))
    pipeline = load_pipeline("pipelines/egolife.yaml")

    def run() -> object:  # the stages with episodic captions (the object memory summarises objects)
        with Store(tmp_path / "store", create=True) as store:
            return ingest([], store, pipeline, lambda: models, timeline="egolife", show_progress=False,
                          stages=["sample", "caption", "episodic"],
                          captions=folder, transcripts=release / "Transcript" / "A1_JAKE")

    report = run()
    assert report.ok, report.all_failures()
    start = H11 + 9 * 60 + 30
    events = _rows(tmp_path / "store", "SELECT t_start - ?, text, source FROM events ORDER BY t_start".replace("?", str(start)))
    assert [(t, source) for t, _, source in events] == [(0, "worldmm"), (30, "worldmm"), (60, "worldmm"), (90, "worldmm")]
    assert events[2][1].startswith("Katrina hands the phone to Alice, who passes it on to Tasha. Jake: Pass it along")
    scales = _rows(tmp_path / "store", "SELECT scale, t_start, t_end, text FROM episodic_captions WHERE scale > 30 ORDER BY scale")
    assert [(scale, text) for scale, _, _, text in scales] == [
        (180.0, WORLDMM["A1_JAKE_3min.json"][0]["text"]), (600.0, WORLDMM["A1_JAKE_10min.json"][0]["text"]),
        (3600.0, WORLDMM["A1_JAKE_1h.json"][0]["text"]),
    ]
    assert scales[0][1] == pytest.approx(H11 + 9 * 60 + 42 + frame_offset(50)) and scales[0][2] == H11 + 11 * 60 + 30  # FF 50: in its second
    assert len(_rows(tmp_path / "store", "SELECT 1 FROM episodic_captions WHERE scale = 30")) == 4  # the clip captions
    entities = _rows(tmp_path / "store", "SELECT DISTINCT c.scale FROM episodic_entities e "
                                          "JOIN episodic_captions c ON c.id = e.caption_id")
    assert {scale for (scale,) in entities} == {30.0, 180.0, 600.0, 3600.0}  # the imported ones read for the graph

    with Store(tmp_path / "store", read_only=True) as db:
        found = open_memory("episodic", db, models).retrieve("When did everyone mark a timestamp on the phone?", 5)
    assert any(e.scale == 180 and e.text == WORLDMM["A1_JAKE_3min.json"][0]["text"] for e in found)

    again = run()  # nothing imported or rebuilt twice
    assert {r.stage: r.done for r in again.results}["episodic"] == 0
    assert len(_rows(tmp_path / "store", "SELECT 1 FROM episodic_captions WHERE scale > 30")) == 3


def test_worldmm_caption_files_are_checked(tmp_path) -> None:
    from videomem.video.worldmmcap import caption_files, read_captions

    (tmp_path / "A1_JAKE_30sec.json").write_text(json.dumps([_worldmm("11094208", "11100000", "x", date="Day one")]))
    assert caption_files(tmp_path / "A1_JAKE_30sec.json") == {30.0: tmp_path / "A1_JAKE_30sec.json"}
    with pytest.raises(TranscriptError, match=r"A1_JAKE_30sec.json: entry 0: date: 'Day one' is not DAYn"):
        read_captions(tmp_path / "A1_JAKE_30sec.json")
    (tmp_path / "A2_ALICE_30sec.json").write_text("[]")
    with pytest.raises(TranscriptError, match="two people"):
        caption_files(tmp_path)
