"""SIGKILL in the middle of every stage that writes, then a plain re-run: the store is complete,
nothing is duplicated, it equals a run that was never killed, and each index agrees with SQLite.

(The sample stage's own kill test is in test_ingest.py.) The killed process is
`tests/kill_stage.py` with scripted models, killed at an exact point: inside a unit's
transaction (rows written, COMMIT not reached) or between an index file and its sidecar.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import faiss
import pytest
from kill_stage import ScriptedModels, contents, run_stages

from conftest import make_video
from videomem.memory.events import EventMemory
from videomem.memory.objects import ObjectMemory
from videomem.store import Store

KILLER = Path(__file__).with_name("kill_stage.py")
SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(scope="module")
def sampled(tmp_path_factory) -> tuple[Path, list[Path]]:
    """Two videos of 24 s cut into 2-s clips: 24 clips, sampled once for every test here."""
    root = tmp_path_factory.mktemp("kill")
    videos = [make_video(root / f"{name}.mp4", seconds=24, size=(64, 48), fps=2, gop=4) for name in ("a", "b")]
    run_stages(root / "sampled", videos, ["sample"])
    return root / "sampled", videos


def _copy(sampled: Path, to: Path) -> Path:
    shutil.copytree(sampled, to)
    return to


def _kill(store: Path, videos: list[Path], stages: str, at: str) -> None:
    done = subprocess.run(
        [sys.executable, str(KILLER), str(store), *map(str, videos), "--stages", stages, "--kill-at", at],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{KILLER.parent}"},
    )
    assert done.returncode == -signal.SIGKILL, done.stderr


def _index_agrees(root: Path, name: str, table: str) -> None:
    index = faiss.read_index(str(root / "index" / f"{name}.faiss"))
    sidecar = json.loads((root / "index" / f"{name}.json").read_text())
    with Store(root) as store:
        ids = sorted(r[0] for r in store.query(f"SELECT id FROM {table}"))
        assert sorted(faiss.vector_to_array(index.id_map).tolist()) == ids
        assert sidecar["count"] == index.ntotal == len(ids)
        memory = EventMemory(store, ScriptedModels()) if name == "events" else ObjectMemory(store, ScriptedModels())
        assert memory.index.ensure() is False  # nothing stale left to rebuild


def test_sigkill_while_captioning_then_resume(sampled, tmp_path: Path) -> None:
    store, videos = sampled
    clean = run_stages(_copy(store, tmp_path / "clean"), videos, ["caption"])
    killed = _copy(store, tmp_path / "killed")
    _kill(killed, videos, "caption", "INTO events:5")
    assert len(contents(killed)["events"]) == 4  # the 5th clip's caption was rolled back with its progress
    run_stages(killed, videos, ["caption"])
    assert contents(killed) == contents(clean)
    assert len(contents(killed)["events"]) == 24
    _index_agrees(killed, "events", "events")


def test_sigkill_while_consolidating_objects_then_resume(sampled, tmp_path: Path) -> None:
    store, videos = sampled
    clean = run_stages(_copy(store, tmp_path / "clean"), videos, ["objects"])
    killed = _copy(store, tmp_path / "killed")
    _kill(killed, videos, "objects", "UPDATE object_observations SET object_id:3")
    with Store(killed) as db:  # every clip's records were kept; the 3rd group of 8 was not linked
        assert db.query("SELECT COUNT(*) FROM object_observations")[0][0] == 48
        pending = db.query("SELECT COUNT(*) FROM object_observations WHERE object_id IS NULL")[0][0]
        assert pending == 48 - 2 * 8
    run_stages(killed, videos, ["objects"])
    after = contents(killed)
    assert after == contents(clean)
    assert len(after["observations"]) == 48 and all(row[4] is not None for row in after["observations"])
    assert [o[0] for o in after["objects"]].count("person 1") == 1  # one person, never created twice
    _index_agrees(killed, "object_observations", "object_observations")


def test_sigkill_between_an_index_and_its_sidecar_then_resume(sampled, tmp_path: Path) -> None:
    store, videos = sampled
    killed = _copy(store, tmp_path / "killed")
    run_stages(killed, videos[:1], ["caption"])  # an index over the first video's captions
    _kill(killed, videos, "caption", "index:events")  # the second video's captions, then the index write
    index = faiss.read_index(str(killed / "index" / "events.faiss"))
    assert index.ntotal == 24 and json.loads((killed / "index" / "events.json").read_text())["count"] == 12
    run_stages(killed, videos, ["caption"])
    _index_agrees(killed, "events", "events")
    assert not [p for p in (killed / "index").iterdir() if p.suffix == ".tmp"]


def test_sigkill_while_transcribing_then_resume(speech_video: Path, tmp_path: Path) -> None:
    """8-s chunks of a 24-s spoken track: killed inside the 2nd chunk's transaction."""
    sampled = run_stages(tmp_path / "sampled", [speech_video], ["sample"])
    clean = run_stages(_copy(sampled, tmp_path / "clean"), [speech_video], ["transcribe"])
    killed = _copy(sampled, tmp_path / "killed")
    _kill(killed, [speech_video], "transcribe", "INTO transcripts:2")
    speech = "SELECT c.idx, t.t_start, t.t_end, t.text, t.source FROM transcripts t JOIN clips c ON c.id = t.clip_id ORDER BY 2, 1"
    progress = "SELECT stage, unit FROM stage_progress WHERE stage = 'transcribe' ORDER BY unit"
    with Store(killed) as db:
        assert [tuple(r) for r in db.query(progress)] == [("transcribe", "speech:audio0")]
        assert {r["t_start"] < 8 for r in db.query(speech)} == {True}, "only the 1st chunk's lines survive"
    run_stages(killed, [speech_video], ["transcribe"])
    with Store(killed) as db, Store(clean) as ref:
        assert [tuple(r) for r in db.query(speech)] == [tuple(r) for r in ref.query(speech)]
        assert [tuple(r) for r in db.query(progress)] == [tuple(r) for r in ref.query(progress)]
        assert len(db.query(speech)) >= 3 and {r["source"] for r in db.query(speech)} == {"asr"}


def test_sigkill_while_sampling_and_captioning_then_resume(sampled, tmp_path: Path) -> None:
    """One streaming run (sample, caption and objects together) from scratch: killed inside the
    5th caption's transaction, while later clips were being decoded and committed."""
    _, videos = sampled
    stages = ["sample", "caption", "objects"]
    clean = run_stages(tmp_path / "clean", videos, stages)
    killed = tmp_path / "killed"
    _kill(killed, videos, ",".join(stages), "INTO events:5")
    at_kill = contents(killed)
    assert len(at_kill["events"]) == 4 and len(at_kill["clips"]) >= 5
    run_stages(killed, videos, stages)
    after = contents(killed)
    assert after == contents(clean)
    assert len(after["clips"]) == len(after["events"]) == 24 and len(after["observations"]) == 48
    _index_agrees(killed, "events", "events")
