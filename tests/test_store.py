"""Store: WAL, versioned schema, atomic units of work, clear errors."""

import sqlite3
from pathlib import Path

import pytest

from videomem.errors import StoreError
from videomem.store import SCHEMA_VERSION, Store


def _add_video(tx: sqlite3.Connection) -> None:
    tx.execute(
        "INSERT INTO videos (id, path, t_offset, duration, fps, n_frames, width, height, rotation, probe_json)"
        " VALUES ('v', 'v.mp4', 0, 20, 25, 500, 64, 48, 0, '{}')"
    )


def test_new_store_is_wal_and_current(tmp_path: Path) -> None:
    with Store(tmp_path / "s", create=True) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.query("PRAGMA journal_mode")[0][0] == "wal"
        tables = {r[0] for r in store.query("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"videos", "clips", "frames", "transcripts", "stage_progress", "events", "objects"} <= tables


def test_reopen_keeps_rows_and_does_not_remigrate(tmp_path: Path) -> None:
    with Store(tmp_path, create=True) as store:
        with store.transaction() as tx:
            _add_video(tx)
    with Store(tmp_path) as store:
        assert store.query("SELECT COUNT(*) FROM videos")[0][0] == 1


def test_failed_unit_leaves_nothing(tmp_path: Path) -> None:
    with Store(tmp_path, create=True) as store:
        with store.transaction() as tx:
            _add_video(tx)
        with pytest.raises(RuntimeError):
            with store.transaction() as tx:
                tx.execute("INSERT INTO clips (video_id, idx, t_start, t_end) VALUES ('v', 0, 0, 10)")
                Store.mark_done(tx, "sample", "v:0")
                raise RuntimeError("killed mid-unit")
        assert store.query("SELECT COUNT(*) FROM clips")[0][0] == 0
        assert not store.is_done("sample", "v:0")


def test_missing_store_and_newer_schema(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no store here"):
        Store(tmp_path / "absent")
    with Store(tmp_path, create=True) as store:
        store.conn.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="newer than this videomem"):
        Store(tmp_path)


def test_not_a_database(tmp_path: Path) -> None:
    (tmp_path / "memory.sqlite").write_text("this is not sqlite, it is a text file" * 20)
    with pytest.raises(StoreError, match="not a usable SQLite store"):
        Store(tmp_path)


def test_speech_in_is_a_range_of_the_time_index_and_finds_long_lines(tmp_path: Path) -> None:
    from videomem.store.clips import speech_in

    with Store(tmp_path, create=True) as store:
        with store.transaction() as tx:
            _add_video(tx)
            tx.execute("INSERT INTO clips (video_id, idx, t_start, t_end) VALUES ('v', 0, 0, 20)")
            lines = [(t, t + 1, f"line {t}") for t in range(0, 20, 2)] + [(0.5, 15.0, "a long speech")]
            tx.executemany(
                "INSERT INTO transcripts (clip_id, video_id, t_start, t_end, speaker, text) VALUES (1, 'v', ?, ?, 'Ann', ?)",
                lines,
            )
        assert [s.text for s in speech_in(store, "v", 13.2, 14.5)] == ["a long speech", "line 14"], (
            "a line that began long before the range still overlaps it"
        )
        assert speech_in(store, "v", 15.2, 15.8) == () and speech_in(store, "w", 0, 20) == ()
        ran: list[str] = []
        store.conn.set_trace_callback(ran.append)
        speech_in(store, "v", 12.0, 14.0)
        store.conn.set_trace_callback(None)
        plan = " ".join(r[3] for r in store.query("EXPLAIN QUERY PLAN " + ran[-1]))
        assert "transcripts_time (video_id=? AND t_start>? AND t_start<?)" in plan, plan
