"""Who may write a store and who may read it: one writer at a time, readers that never write,
rows that cannot be stored twice, and one line (never a traceback) when a path cannot work."""

from __future__ import annotations

import ctypes
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import faiss
import pytest
from memory_stores import hand_store, offline_models

from conftest import make_video
from videomem.config import default_path
from videomem.errors import StoreError
from videomem.memory.events import EventMemory
from videomem.store import Store, db

SAMPLE = ("--stages", "sample")
SRC = Path(__file__).resolve().parents[1] / "src"
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2


def _events_store(root: Path) -> Store:
    store = hand_store(root, [None] * 4)
    with store.transaction() as tx:
        for clip, text in zip(store.query("SELECT * FROM clips ORDER BY idx"), ["red balloon", "train to Paris", "blue bike", "market"]):
            tx.execute(
                "INSERT INTO events (clip_id, video_id, t_start, t_end, text) VALUES (?, 'v', ?, ?, ?)",
                (clip["id"], clip["t_start"], clip["t_end"], f"On-screen text reads '{text}'."),
            )
    return store


def _one_line_error(result, text: str) -> None:
    assert result.code == 2, result.output
    assert text in result.stderr and result.stderr.strip().count("\n") == 0 and "Traceback" not in result.output


# ------------------------------------------------------------------ one writer


def test_a_second_writer_is_refused_with_the_holders_pid(run_cli, tmp_path: Path, short_video: Path) -> None:
    root = tmp_path / "s"
    with Store(root, create=True) as holder, holder.writer():
        refused = run_cli("ingest", short_video, "--store", root, *SAMPLE)
        _one_line_error(refused, f"another videomem process (pid {os.getpid()}) is writing this store")
    with Store(root) as store:
        assert store.query("SELECT COUNT(*) FROM clips")[0][0] == 0
    assert run_cli("ingest", short_video, "--store", root, *SAMPLE).code == 0  # released: it runs


def test_rows_cannot_be_stored_twice_and_old_duplicates_are_dropped(tmp_path: Path, monkeypatch) -> None:
    number = next(i for i, sql in enumerate(db.MIGRATIONS) if "observations_once" in sql)
    monkeypatch.setattr(db, "SCHEMA_VERSION", number)  # a store as the version before wrote it
    observation = (
        "INSERT INTO object_observations (clip_id, video_id, t_start, t_end, name, kind, appearance_json, "
        "identity_json, value, object_id) VALUES (1, 'v', 0, 10, 'red box', 'object', '[]', '[]', 'on a table', ?)"
    )
    with Store(tmp_path, create=True) as old, old.transaction() as tx:
        tx.execute("INSERT INTO videos (id, path, t_offset, duration, fps, n_frames, width, height, rotation, probe_json)"
                   " VALUES ('v', 'v.mp4', 0, 10, 25, 250, 64, 48, 0, '{}')")
        tx.execute("INSERT INTO clips (video_id, idx, t_start, t_end) VALUES ('v', 0, 0, 10)")
        for object_id in (1, 2):  # two writers each extracted the clip and consolidated it
            tx.execute("INSERT INTO objects (id, name, kind, appearance_json, identity_json, first_seen, last_seen, "
                       "summary) VALUES (?, 'red box', 'object', '[]', '[]', 0, 10, 'on a table')", (object_id,))
            tx.execute(observation, (object_id,))
    monkeypatch.undo()
    with Store(tmp_path) as store:
        assert store.query("SELECT COUNT(*) FROM object_observations")[0][0] == 1
        assert [r[0] for r in store.query("SELECT id FROM objects")] == [1]
        with pytest.raises(sqlite3.IntegrityError), store.transaction() as tx:
            tx.execute(observation, (1,))


def test_two_writers_of_one_index_never_share_a_temporary_file(tmp_path: Path, monkeypatch) -> None:
    _events_store(tmp_path).close()
    models = offline_models()
    write = faiss.write_index

    def slow_write(index, path: str) -> None:  # both writers are between writing and renaming at once
        write(index, path)
        time.sleep(0.5)

    monkeypatch.setattr(faiss, "write_index", slow_write)
    start, errors = threading.Barrier(2), []

    def build() -> None:
        with Store(tmp_path) as store:
            index = EventMemory(store, models).index
            start.wait()
            try:
                index.ensure()
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    monkeypatch.undo()
    with Store(tmp_path) as store:
        assert EventMemory(store, models).index.ensure() is False  # the pair on disk is whole and current
    assert sorted(p.name for p in (tmp_path / "index").iterdir()) == ["events.faiss", "events.json", "events.lock"]


def test_an_index_that_cannot_be_written(tmp_path: Path) -> None:
    _events_store(tmp_path).close()
    (tmp_path / "index").write_text("a file where the index folder should be")
    with Store(tmp_path) as store, pytest.raises(StoreError, match=r"index: cannot write index 'events' \("):
        EventMemory(store, offline_models()).index.ensure()
    with Store(tmp_path, read_only=True) as store:  # a reader keeps the index in memory
        assert EventMemory(store, offline_models()).retrieve("train to Paris", 1)[0].t_start == 10


def test_a_store_under_a_regular_file_is_one_line(run_cli, tmp_path: Path, short_video: Path) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("not a folder")
    result = run_cli("ingest", short_video, "--store", blocker / "store", *SAMPLE)
    _one_line_error(result, f"{blocker / 'store'}: cannot create a store here (Not a directory")


def test_a_read_only_open_never_writes(tmp_path: Path) -> None:
    _events_store(tmp_path).close()
    with Store(tmp_path, read_only=True) as store:
        with pytest.raises(StoreError, match="opened read-only"), store.transaction():
            pass
        with pytest.raises(StoreError, match="opened read-only"), store.writer():
            pass
    with pytest.raises(StoreError, match="no store here"):
        Store(tmp_path / "absent", create=True, read_only=True)


# ------------------------------------------------------------------ a store nobody may write


def _without_override() -> None:
    """Root ignores file modes through CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH; dropped from the
    bounding set before exec, the child is a root that read-only files stop, like anyone else."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _read_only(root: Path) -> None:
    for path in [*root.rglob("*"), root]:
        path.chmod(0o555 if path.is_dir() else 0o444)


def test_a_store_nobody_may_write_can_still_be_read(tmp_path: Path) -> None:
    store = _events_store(tmp_path / "s")
    store.close()
    _read_only(tmp_path / "s")  # no index yet: a reader builds it in memory
    env = {**os.environ, "PYTHONPATH": str(SRC)}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "videomem.cli", *args], capture_output=True, text=True,
                              timeout=300, env=env, preexec_fn=_without_override if os.geteuid() == 0 else None)

    info = cli("info", "--store", str(tmp_path / "s"))
    assert info.returncode == 0, info.stderr
    assert "clips: 4" in info.stdout and "memory events: captions 4" in info.stdout
    rag = default_path("agents", "caption-rag")
    asked = cli("ask", "Which train?", "--store", str(tmp_path / "s"), "--agent", str(rag), "--choices", "to Paris,to Rome")
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.startswith("Answer: A. to Paris") and "00:00:10-00:00:20" in asked.stdout
    assert not (tmp_path / "s" / "index").exists()

    video = make_video(tmp_path / "clip.mp4", seconds=2, size=(64, 48), fps=5)
    new = cli("ingest", str(video), "--store", str(tmp_path / "s" / "new"), *SAMPLE)
    assert new.returncode == 2 and "Traceback" not in new.stderr
    assert f"{tmp_path / 's' / 'new'}: cannot create a store here (Permission denied" in new.stderr
