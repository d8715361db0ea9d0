"""The store: one directory per corpus, SQLite (WAL) as the source of truth.

Layout of a store directory:
    memory.sqlite        every row of memory and the progress of every stage
    frames/<video_id>/   sampled frames as JPEG (paths in the `frames` table are relative)
    index/               derived vector indexes and graphs; rebuilt from SQLite when missing or stale

Writes for one unit of work happen in one transaction (`with store.transaction() as tx`), so a
killed ingest resumes where it stopped and never duplicates rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from videomem.errors import StoreError

DB_NAME = "memory.sqlite"

MIGRATIONS: tuple[str, ...] = (
    # 1: videos, clips, frames, transcripts, stage progress
    """
    CREATE TABLE videos (
        id TEXT PRIMARY KEY,
        path TEXT NOT NULL,
        t_offset REAL NOT NULL,
        duration REAL NOT NULL,
        fps REAL NOT NULL,
        n_frames INTEGER NOT NULL,
        width INTEGER NOT NULL,
        height INTEGER NOT NULL,
        rotation INTEGER NOT NULL,
        probe_json TEXT NOT NULL
    );
    CREATE TABLE clips (
        id INTEGER PRIMARY KEY,
        video_id TEXT NOT NULL REFERENCES videos(id),
        idx INTEGER NOT NULL,
        t_start REAL NOT NULL,
        t_end REAL NOT NULL,
        UNIQUE (video_id, idx)
    );
    CREATE INDEX clips_time ON clips (t_start, t_end);
    CREATE TABLE frames (
        id INTEGER PRIMARY KEY,
        clip_id INTEGER NOT NULL REFERENCES clips(id),
        video_id TEXT NOT NULL,
        t REAL NOT NULL,
        path TEXT NOT NULL,
        width INTEGER NOT NULL,
        height INTEGER NOT NULL,
        UNIQUE (clip_id, path)
    );
    CREATE INDEX frames_time ON frames (video_id, t);
    CREATE TABLE transcripts (
        id INTEGER PRIMARY KEY,
        clip_id INTEGER NOT NULL REFERENCES clips(id),
        video_id TEXT NOT NULL,
        t_start REAL NOT NULL,
        t_end REAL NOT NULL,
        speaker TEXT,
        text TEXT NOT NULL
    );
    CREATE INDEX transcripts_clip ON transcripts (clip_id);
    CREATE TABLE stage_progress (
        stage TEXT NOT NULL,
        unit TEXT NOT NULL,
        done_at TEXT NOT NULL DEFAULT (datetime('now')),
        PRIMARY KEY (stage, unit)
    );
    """,
    # 2: event memory and key-value object memory (TeleMem)
    """
    CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        clip_id INTEGER NOT NULL UNIQUE REFERENCES clips(id),
        video_id TEXT NOT NULL,
        t_start REAL NOT NULL,
        t_end REAL NOT NULL,
        text TEXT NOT NULL
    );
    CREATE INDEX events_time ON events (t_end);
    CREATE TABLE objects (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        appearance_json TEXT NOT NULL,
        identity_json TEXT NOT NULL,
        first_seen REAL NOT NULL,
        last_seen REAL NOT NULL,
        summary TEXT NOT NULL
    );
    CREATE TABLE object_observations (
        id INTEGER PRIMARY KEY,
        clip_id INTEGER NOT NULL REFERENCES clips(id),
        video_id TEXT NOT NULL,
        t_start REAL NOT NULL,
        t_end REAL NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        appearance_json TEXT NOT NULL,
        identity_json TEXT NOT NULL,
        value TEXT NOT NULL,
        object_id INTEGER REFERENCES objects(id)
    );
    CREATE INDEX observations_clip ON object_observations (clip_id);
    CREATE INDEX observations_object ON object_observations (object_id);
    """,
    # visual memory (WorldMM): one pooled embedding per fixed-length segment of a video
    """
    CREATE TABLE visual_segments (
        id INTEGER PRIMARY KEY,
        video_id TEXT NOT NULL REFERENCES videos(id),
        idx INTEGER NOT NULL,
        t_start REAL NOT NULL,
        t_end REAL NOT NULL,
        frames_json TEXT NOT NULL,
        embedder TEXT NOT NULL,
        vector BLOB NOT NULL,
        UNIQUE (video_id, idx)
    );
    CREATE INDEX visual_segments_time ON visual_segments (t_end);
    """,
    # episodic memory (WorldMM): one caption per window of each time scale, with its entities
    # and triplets. scope: the video id when every video has its own timeline, '' when the
    # corpus shares one (EgoLife). video_id: the window's video, or its first when n_videos > 1.
    """
    CREATE TABLE episodic_captions (
        id INTEGER PRIMARY KEY,
        scale REAL NOT NULL,
        scope TEXT NOT NULL,
        idx INTEGER NOT NULL,
        video_id TEXT NOT NULL REFERENCES videos(id),
        n_videos INTEGER NOT NULL,
        t_start REAL NOT NULL,
        t_end REAL NOT NULL,
        text TEXT NOT NULL,
        inputs_hash TEXT NOT NULL,
        UNIQUE (scale, scope, idx)
    );
    CREATE INDEX episodic_captions_time ON episodic_captions (scale, t_end);
    CREATE TABLE episodic_entities (
        caption_id INTEGER NOT NULL REFERENCES episodic_captions(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        name TEXT NOT NULL,
        PRIMARY KEY (caption_id, position)
    );
    CREATE TABLE episodic_triplets (
        id INTEGER PRIMARY KEY,
        caption_id INTEGER NOT NULL REFERENCES episodic_captions(id) ON DELETE CASCADE,
        subject TEXT NOT NULL,
        relation TEXT NOT NULL,
        object TEXT NOT NULL
    );
    CREATE INDEX episodic_triplets_caption ON episodic_triplets (caption_id);
    """,
    # where each caption and transcript line comes from: written by the caption stage / a
    # sidecar file (the defaults), or imported from a dataset's own files ('egolifecap')
    """
    ALTER TABLE events ADD COLUMN source TEXT NOT NULL DEFAULT 'generated';
    ALTER TABLE transcripts ADD COLUMN source TEXT NOT NULL DEFAULT 'sidecar';
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


class Store:
    """An open store directory. Not shared across processes for writing at once: one writer."""

    def __init__(self, root: str | Path, *, create: bool = False) -> None:
        self.root = Path(root)
        db_path = self.root / DB_NAME
        if not db_path.exists():
            if not create:
                raise StoreError(f"{self.root}: no store here (run `videomem ingest ... --store {self.root}` first)")
            if self.root.exists() and not self.root.is_dir():
                raise StoreError(f"{self.root}: exists and is not a directory")
            self.root.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = sqlite3.connect(db_path, timeout=30, isolation_level=None)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{db_path}: not a usable SQLite store ({exc})") from None

    @property
    def frames_dir(self) -> Path:
        return self.root / "frames"

    @property
    def index_dir(self) -> Path:
        return self.root / "index"

    def _migrate(self) -> None:
        self.conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        version = int(row[0]) if row else 0
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.root}: store schema v{version} is newer than this videomem (v{SCHEMA_VERSION}); upgrade videomem"
            )
        for number in range(version, SCHEMA_VERSION):
            with self.transaction() as tx:
                for statement in MIGRATIONS[number].split(";"):
                    if statement.strip():
                        tx.execute(statement)
                tx.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(number + 1),)
                )

    @property
    def schema_version(self) -> int:
        return int(self.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One unit of work: all of it is committed, or none of it (on error or a kill)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def query(self, sql: str, params: tuple | dict = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()

    def is_done(self, stage: str, unit: str) -> bool:
        return (
            self.conn.execute("SELECT 1 FROM stage_progress WHERE stage = ? AND unit = ?", (stage, unit)).fetchone()
            is not None
        )

    def done_units(self, stage: str) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT unit FROM stage_progress WHERE stage = ?", (stage,))}

    @staticmethod
    def mark_done(tx: sqlite3.Connection, stage: str, unit: str) -> None:
        """Record progress inside the same transaction as the unit's rows."""
        tx.execute("INSERT OR REPLACE INTO stage_progress (stage, unit) VALUES (?, ?)", (stage, unit))

    def stage_counts(self) -> dict[str, int]:
        return {
            r["stage"]: r["n"]
            for r in self.conn.execute("SELECT stage, COUNT(*) AS n FROM stage_progress GROUP BY stage")
        }

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
