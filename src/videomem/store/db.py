"""The store: one directory per corpus, SQLite (WAL) as the source of truth.

Layout of a store directory:
    memory.sqlite        every row of memory and the progress of every stage
    frames/<video_id>/   sampled frames as JPEG (paths in the `frames` table are relative)
    index/               derived vector indexes and graphs; rebuilt from SQLite when missing or stale
    writer.lock          held (flock) by the one process writing the store; holds its pid

Writes for one unit of work happen in one transaction (`with store.transaction() as tx`), so a
killed ingest resumes where it stopped and never duplicates rows; uniqueness constraints make a
duplicate impossible even so. A store has one writer at a time (`with store.writer():`, which
ingest takes); any number of readers open it with `read_only=True`, which uses SQLite's
`mode=ro` and never writes, so a store on read-only media or owned by someone else can be read.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from videomem.errors import StoreError

DB_NAME = "memory.sqlite"
WRITER_LOCK = "writer.lock"

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
    # no unit of work can be stored twice (two writers once doubled the object memory); a
    # video remembers which file it came from. Duplicates an older store holds are dropped first.
    """
    DELETE FROM object_observations WHERE id NOT IN (
        SELECT MIN(id) FROM object_observations GROUP BY clip_id, name, kind, appearance_json, identity_json, value);
    DELETE FROM objects WHERE id NOT IN (SELECT object_id FROM object_observations WHERE object_id IS NOT NULL);
    CREATE UNIQUE INDEX observations_once ON object_observations
        (clip_id, name, kind, appearance_json, identity_json, value);
    DELETE FROM frames WHERE id NOT IN (SELECT MIN(id) FROM frames GROUP BY path);
    CREATE UNIQUE INDEX frames_path ON frames (path);
    ALTER TABLE videos ADD COLUMN content_hash TEXT;
    """,
    # unit failures: a unit whose model output stayed unusable is recorded (with the raw reply)
    # instead of ending its stage; the next run retries it, and its success deletes the row.
    """
    CREATE TABLE stage_failures (
        stage TEXT NOT NULL,
        unit TEXT NOT NULL,
        error TEXT NOT NULL,
        reply TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 1,
        failed_at TEXT NOT NULL DEFAULT (datetime('now')),
        PRIMARY KEY (stage, unit)
    );
    """,
    # semantic memory (WorldMM): lasting triplets induced per coarse segment, consolidated over
    # time. valid_from / retired_at are corpus seconds (retired_at NULL: still valid); scope as
    # in episodic_captions (a video's id, or '' on a corpus timeline). Evidence: the episodic
    # triplets behind each one, dropped with them when the episodic stage rewrites a window
    # (the segment's input digest then changes and the segment is consolidated again).
    """
    CREATE TABLE semantic_segments (
        scope TEXT NOT NULL,
        idx INTEGER NOT NULL,
        t_start REAL NOT NULL,
        t_end REAL NOT NULL,
        inputs_hash TEXT NOT NULL,
        PRIMARY KEY (scope, idx)
    );
    CREATE TABLE semantic_triplets (
        id INTEGER PRIMARY KEY,
        scope TEXT NOT NULL,
        subject TEXT NOT NULL,
        relation TEXT NOT NULL,
        object TEXT NOT NULL,
        valid_from REAL NOT NULL,
        retired_at REAL
    );
    CREATE INDEX semantic_triplets_scope ON semantic_triplets (scope, retired_at);
    CREATE TABLE semantic_evidence (
        triplet_id INTEGER NOT NULL REFERENCES semantic_triplets(id) ON DELETE CASCADE,
        episodic_triplet_id INTEGER NOT NULL REFERENCES episodic_triplets(id) ON DELETE CASCADE,
        PRIMARY KEY (triplet_id, episodic_triplet_id)
    );
    CREATE INDEX semantic_evidence_episodic ON semantic_evidence (episodic_triplet_id);
    """,
    # temporal entity index (memory/timeline_index.py): one row per (window, subject, relation,
    # object) fact; `run` is the id of the first fact of its run of consecutive windows, so an
    # interval is a GROUP BY run over the facts a question may see. `timeline_terms` is the
    # vocabulary (entities with their category, relations) that matching embeds.
    """
    CREATE TABLE timeline_facts (
        id INTEGER PRIMARY KEY,
        scope TEXT NOT NULL,
        video_id TEXT NOT NULL,
        subject TEXT NOT NULL,
        relation TEXT NOT NULL,
        object TEXT NOT NULL,
        source TEXT NOT NULL,
        t_start REAL NOT NULL,
        t_end REAL NOT NULL,
        run INTEGER NOT NULL
    );
    CREATE INDEX timeline_facts_subject ON timeline_facts (subject, t_end);
    CREATE INDEX timeline_facts_object ON timeline_facts (object, t_end);
    CREATE INDEX timeline_facts_time ON timeline_facts (t_start);
    CREATE INDEX timeline_facts_run ON timeline_facts (run);
    CREATE TABLE timeline_terms (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        category TEXT NOT NULL,
        UNIQUE (kind, text)
    );
    """,
    # a video's transcript lines by time, and by length: the speech an evidence item carries
    # (`speech_in`) is a range of the first, bounded below by the longest line the second gives
    """
    CREATE INDEX transcripts_time ON transcripts (video_id, t_start);
    CREATE INDEX transcripts_length ON transcripts (video_id, t_end - t_start);
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)

PIPELINE_META = "pipeline"
"""`meta` key of the pipeline (validated, as JSON) the last ingest into a store ran with."""


class Store:
    """An open store directory: read-write (migrated to the current schema on open), or
    `read_only`. Writers take `writer()` so that two processes never write one store at once."""

    def __init__(self, root: str | Path, *, create: bool = False, read_only: bool = False) -> None:
        self.root = Path(root)
        self.read_only = read_only
        self._writer: int | None = None
        self._writer_depth = 0
        db_path = self.root / DB_NAME
        if not db_path.exists():
            if not create or read_only:
                raise StoreError(f"{self.root}: no store here (run `videomem ingest ... --store {self.root}` first)")
            if self.root.exists() and not self.root.is_dir():
                raise StoreError(f"{self.root}: exists and is not a directory")
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"{self.root}: cannot create a store here ({_os_reason(exc)})") from None
        try:
            if read_only:
                self.conn = _connect_read_only(db_path)
                self._check_schema()
            else:
                self.conn = sqlite3.connect(db_path, timeout=30, isolation_level=None)
                self.conn.row_factory = sqlite3.Row
                self.conn.execute("PRAGMA journal_mode=WAL")
                self.conn.execute("PRAGMA foreign_keys=ON")
                self.conn.execute("PRAGMA synchronous=NORMAL")
                self._migrate()
        except sqlite3.OperationalError as exc:
            if "readonly" in str(exc) or "unable to open" in str(exc):
                raise StoreError(f"{db_path}: cannot be written ({exc})") from None
            raise StoreError(f"{db_path}: not a usable SQLite store ({exc})") from None
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{db_path}: not a usable SQLite store ({exc})") from None

    @property
    def frames_dir(self) -> Path:
        return self.root / "frames"

    @property
    def index_dir(self) -> Path:
        return self.root / "index"

    def _stored_version(self) -> int:
        version = int(self.meta("schema_version") or 0)
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.root}: store schema v{version} is newer than this videomem (v{SCHEMA_VERSION}); upgrade videomem"
            )
        return version

    def _check_schema(self) -> None:
        """A reader cannot migrate: an older store is upgraded by the next ingest."""
        version = self._stored_version()
        if version < SCHEMA_VERSION:
            raise StoreError(
                f"{self.root}: store schema v{version} is older than this videomem (v{SCHEMA_VERSION}); "
                "re-run `videomem ingest` on its videos once to upgrade it (finished work is kept)"
            )

    def _migrate(self) -> None:
        self.conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        for number in range(self._stored_version(), SCHEMA_VERSION):
            with self.transaction() as tx:
                for statement in MIGRATIONS[number].split(";"):
                    if statement.strip():
                        tx.execute(statement)
                self.set_meta(tx, "schema_version", str(number + 1))

    @property
    def schema_version(self) -> int:
        return int(self.meta("schema_version") or 0)

    @contextmanager
    def writer(self) -> Iterator[Store]:
        """Hold the store's writer lock: a second writer (another process, or another Store
        object on this directory) is refused with one line naming the holder's pid. The lock is
        the kernel's (flock), so a killed writer never leaves it behind."""
        if self.read_only:
            raise StoreError(f"{self.root}: opened read-only; it cannot be written")
        if self._writer is None:
            try:
                fd = os.open(self.root / WRITER_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise StoreError(f"{self.root}: cannot take the writer lock ({_os_reason(exc)})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
                os.close(fd)
                raise StoreError(
                    f"{self.root}: another videomem process (pid {holder}) is writing this store; "
                    "wait for it to finish, then run this again"
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            self._writer = fd
        self._writer_depth += 1
        try:
            yield self
        finally:
            self._writer_depth -= 1
            if self._writer_depth == 0:
                os.close(self._writer)  # releases the flock
                self._writer = None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One unit of work: all of it is committed, or none of it (on error or a kill)."""
        if self.read_only:
            raise StoreError(f"{self.root}: opened read-only; it cannot be written")
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def query(self, sql: str, params: tuple | dict = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()

    def meta(self, key: str) -> str | None:
        """A value of the `meta` table (schema version, the pipeline that built the store)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    @staticmethod
    def set_meta(tx: sqlite3.Connection, key: str, value: str) -> None:
        tx.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def is_done(self, stage: str, unit: str) -> bool:
        return (
            self.conn.execute("SELECT 1 FROM stage_progress WHERE stage = ? AND unit = ?", (stage, unit)).fetchone()
            is not None
        )

    def done_units(self, stage: str) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT unit FROM stage_progress WHERE stage = ?", (stage,))}

    @staticmethod
    def mark_done(tx: sqlite3.Connection, stage: str, unit: str) -> None:
        """Record progress inside the same transaction as the unit's rows (a failure recorded
        for the unit by an earlier run is cleared)."""
        tx.execute("INSERT OR REPLACE INTO stage_progress (stage, unit) VALUES (?, ?)", (stage, unit))
        tx.execute("DELETE FROM stage_failures WHERE stage = ? AND unit = ?", (stage, unit))

    @staticmethod
    def mark_failed(tx: sqlite3.Connection, stage: str, unit: str, error: str, reply: str) -> None:
        """Record that a unit failed (why, and the model's raw reply); it stays pending, so the
        next run retries it. `attempts` counts the runs that failed it."""
        tx.execute(
            """INSERT INTO stage_failures (stage, unit, error, reply) VALUES (?, ?, ?, ?)
               ON CONFLICT (stage, unit) DO UPDATE SET error = excluded.error, reply = excluded.reply,
                 attempts = attempts + 1, failed_at = datetime('now')""",
            (stage, unit, error, reply),
        )

    def failures(self) -> list[sqlite3.Row]:
        """Units that failed and are not done since: stage, unit, error, reply, attempts."""
        return self.query("SELECT stage, unit, error, reply, attempts FROM stage_failures ORDER BY stage, unit")

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


def _connect_read_only(db_path: Path) -> sqlite3.Connection:
    """SQLite's `mode=ro`; where even that cannot work because the directory is not writable
    (a WAL reader needs its shared-memory file), `immutable=1`: nobody can write there either."""
    uri = db_path.resolve().as_uri()
    conn = _connect(f"{uri}?mode=ro")
    try:
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn.close()
        if os.access(db_path.parent, os.W_OK):
            raise
    conn = _connect(f"{uri}?immutable=1")
    conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    return conn


def _connect(uri: str) -> sqlite3.Connection:
    conn = sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None)
    conn.row_factory = sqlite3.Row
    return conn


def _os_reason(exc: OSError) -> str:
    return f"{exc.strerror}: {exc.filename}" if exc.filename else str(exc.strerror or exc)
