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
from videomem.models.base import Generation, LMRequest, Usage
from videomem.models.prompted import PromptedLanguage
from videomem.models.registry import ModelSet
from videomem.pipeline.runner import ingest
from videomem.store import Store
from videomem.timeline import DAY
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
    no_translator = [r for r in caplog.records if "no translator" in r.getMessage()]
    assert len(no_translator) == 1

    start = H11 + 59 * 60 + 30
    events = _rows(store_dir, "SELECT t_start, text, source FROM events ORDER BY t_start")
    assert [(round(t - start), source) for t, _, source in events] == [(0, "egolifecap"), (10, "egolifecap"),
                                                                       (20, "egolifecap"), (30, "egolifecap"),
                                                                       (40, "egolifecap")]
    texts = [text for _, text, _ in events]
    assert texts[0] == " ".join(c[2] for c in CAPTIONS["DAY1/DAY1_A1_JAKE_11000000.srt"][:2])
    assert texts[1] == "Alice puts the screwdriver in the red toolbox."
    assert texts[2] == texts[3] == "Lucia carries a blue vase to the table."  # across the hour and the files
    assert texts[4] == "Shure在沙发上弹吉他。"  # kept as written: the offline backend cannot translate

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
