"""The `sample` stage: videos → clips, frames (JPEG) and transcript segments.

Per video: probe, record it, plan clips, then for each clip not yet done decode its frames,
write them as JPEG and commit the clip's rows and its progress mark in one transaction. A
killed ingest therefore resumes at the first clip without a mark; a JPEG written for a clip
whose transaction never committed is simply written again.

Unit keys are `"{video_id}:{clip index}"`. With `--workers N`, N processes decode and write
JPEGs for different videos (or parts of one long video); only the main process writes SQLite.
With `--ray` (pipeline/ray_runner.py), decode tasks on the cluster run `encode_clips` and send the
JPEG bytes back, and this process writes them (`save_frames`) before committing each clip.

A frame is stored only inside its own clip's time range. A clip the video has no frame for (a
long gap between frames, or past the end of a cut-off file) is recorded with no frames; when
that is the video's end, the summary reports the file as truncated with the time its frames
stop. A re-run restores frame files deleted from the store at their recorded times (`repair`),
touching no row, so nothing built on those frames is redone.

A store built from captions alone (`pipeline/imports.py`, `CaptionGridStage`) holds clips of
video rows with no file (`fps = FRAMELESS_FPS`). A video sampled later into it adopts them: a
sampled clip whose midpoint lies in such a clip takes it over (same row id, so its captions,
speech and object records stay), gets its video, index, span and frames, and the progress
marks of its old unit move to the new one; no second clip is stored for that time.
"""

from __future__ import annotations

import io
import json
import math
import multiprocessing
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from videomem.config import PipelineConfig
from videomem.core import StageResult, VideoSource
from videomem.errors import VideoError, VideomemError
from videomem.pipeline.base import StageContext
from videomem.store import Store
from videomem.store.clips import ClipRow
from videomem.store.ids import inside
from videomem.video.clips import ClipSpan, plan_clips
from videomem.video.decode import FrameRequest, FrameSampler
from videomem.video.probe import VideoInfo, content_hash, frames_end, probe
from videomem.video.transcripts import Segment, align, load_transcript

MIN_CHUNK = 8
"""Clips per worker task at least, so a task's set-up (open, seek) is paid over several clips."""
EDGE = 1e-3
"""Seconds of float slack at a clip's edges when checking that a frame lies inside it."""
FRAMELESS_FPS = 0.0
"""`videos.fps` of a video row recorded from captions alone: no file, no frames."""


def unit_key(video_id: str, index: int) -> str:
    return f"{video_id}:{index}"


def frame_relpath(video_id: str, clip_index: int, k: int) -> str:
    """Where frame k of a clip lives, relative to the store root."""
    return f"frames/{video_id}/{clip_index:06d}_{k}.jpg"


@dataclass(frozen=True)
class ClipJob:
    """Clips of one video for one worker: everything it needs, picklable."""

    info: VideoInfo
    video_id: str
    clips: tuple[ClipSpan, ...]
    store_root: str
    frames_per_clip: int
    tolerance: float
    max_side: int
    jpeg_quality: int


@dataclass(frozen=True)
class SampledFrame:
    t: float
    path: str
    width: int
    height: int


@dataclass(frozen=True)
class SampledClip:
    clip: ClipSpan
    frames: tuple[SampledFrame, ...]


@dataclass(frozen=True)
class EncodedClip:
    """A sampled clip whose frames are JPEG bytes not yet in the store: what a remote decode
    worker sends back (`save_frames` writes them)."""

    clip: ClipSpan
    frames: tuple[SampledFrame, ...]
    jpegs: tuple[bytes, ...]


def encode_clips(job: ClipJob) -> Iterator[EncodedClip]:
    """Decode each clip's frames and encode them as JPEG; yields clip by clip. Reads only the
    video file, writes nothing."""
    with FrameSampler(job.info, max_side=job.max_side) as sampler:
        for clip in job.clips:
            frames = sampler.read(clip.frame_requests(job.frames_per_clip, job.tolerance))
            kept, jpegs = [], []
            for k, frame in enumerate(frames):
                if frame is None or not clip.t_start - EDGE <= frame.t <= clip.t_end + EDGE:
                    continue
                buffer = io.BytesIO()
                Image.fromarray(frame.image).save(buffer, "JPEG", quality=job.jpeg_quality)
                height, width = frame.image.shape[:2]
                kept.append(SampledFrame(frame.t, frame_relpath(job.video_id, clip.index, k), width, height))
                jpegs.append(buffer.getvalue())
            yield EncodedClip(clip, tuple(kept), tuple(jpegs))


def save_frames(root: Path, encoded: EncodedClip) -> SampledClip:
    """Write an encoded clip's JPEGs under the store root; the clip as the store records it."""
    for frame, jpeg in zip(encoded.frames, encoded.jpegs):
        path = inside(root / "frames", root / frame.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(jpeg)
    return SampledClip(encoded.clip, encoded.frames)


def sample_clips(job: ClipJob) -> Iterator[SampledClip]:
    """Decode each clip's frames and write them as JPEG; yields clip by clip."""
    root = Path(job.store_root)
    for encoded in encode_clips(job):
        yield save_frames(root, encoded)


def _sample_all(job: ClipJob) -> list[SampledClip]:
    return list(sample_clips(job))


def _reason(exc: VideomemError, path: Path) -> str:
    """The error's message without the path it starts with (the summary names the file)."""
    return str(exc).removeprefix(f"{path}: ")


@dataclass
class _Video:
    source: VideoSource
    info: VideoInfo
    segments: dict[int, list[Segment]]


@dataclass
class SamplePlan:
    """The decode jobs of a run and what its clips' commits need: filled by `SampleStage.plan`,
    advanced by `SampleStage.take` per outcome, summed up by `SampleStage.summary`."""

    result: StageResult
    videos: dict[str, _Video] = field(default_factory=dict)
    jobs: list[ClipJob] = field(default_factory=list)
    failed: set[str] = field(default_factory=set)
    empty: dict[str, set[int]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Clips to decode."""
        return sum(len(j.clips) for j in self.jobs)


class SampleStage:
    name = "sample"
    max_chunk: int | None = None
    """Most clips in one decode job (None: as many as splitting over the workers gives)."""

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult:
        plan = self.plan(ctx, sources)
        with ctx.progress(plan.total, desc="sample") as bar:
            for job, outcome in self.outcomes(ctx, plan.jobs):
                if self.take(ctx.store, plan, job, outcome) is not None:
                    bar.update(1)
        return self.summary(ctx.pipeline, plan)

    def plan(self, ctx: StageContext, sources: list[VideoSource]) -> SamplePlan:
        """Probe and record each video, restore its deleted frame files, and cut the clips it
        still lacks into decode jobs; a file that cannot be read is a failure of the plan."""
        store, cfg = ctx.store, ctx.pipeline
        plan = SamplePlan(StageResult(self.name))
        done = store.done_units(self.name)
        for source in sources:
            try:
                info = probe(source.path)
                segments = load_transcript(source.transcript, video_start=source.t_offset) if source.transcript else []
            except VideomemError as exc:
                plan.result.failures.append((str(source.path), _reason(exc, source.path)))
                continue
            clips = plan_clips(info.duration, cfg.clip_seconds)
            todo = [c for c in clips if unit_key(source.video_id, c.index) not in done]
            plan.result.skipped += len(clips) - len(todo)
            _record_video(store, source, info)
            try:
                plan.result.repaired += repair(store, cfg, source, info)
            except VideomemError as exc:
                plan.result.failures.append((str(source.path), _reason(exc, source.path)))
            plan.videos[source.video_id] = _Video(source, info, align(segments, clips))
            plan.jobs += _jobs(store, cfg, info, source.video_id, todo, ctx.workers, self.max_chunk)
        return plan

    def take(self, store: Store, plan: SamplePlan, job: ClipJob, outcome: SampledClip | VideoError) -> ClipRow | None:
        """Commit a sampled clip (its row as stored), or record the error that stopped its job."""
        video = plan.videos[job.video_id]
        if isinstance(outcome, VideoError):
            if job.video_id not in plan.failed:
                plan.failed.add(job.video_id)
                plan.result.failures.append((str(video.source.path), _reason(outcome, Path(job.info.path))))
            return None
        row = _write_clip(store, video, outcome)
        if not outcome.frames:
            plan.empty.setdefault(job.video_id, set()).add(outcome.clip.index)
        plan.result.done += 1
        return row

    def summary(self, cfg: PipelineConfig, plan: SamplePlan) -> StageResult:
        """The stage's result, with each video whose last clips had no frame reported truncated."""
        for video_id, indices in plan.empty.items():
            video = plan.videos[video_id]
            if len(plan_clips(video.info.duration, cfg.clip_seconds)) - 1 in indices and video_id not in plan.failed:
                plan.result.failures.append((str(video.source.path), _truncated(video, indices)))
        return plan.result

    def outcomes(self, ctx: StageContext, jobs: list[ClipJob]) -> Iterator[tuple[ClipJob, SampledClip | VideoError]]:
        """Each job's sampled clips, their frames written to the store, as they are ready (or
        the VideoError that stopped the job): here in this process or in `--workers` processes."""
        return _outcomes(jobs, ctx.workers)

    def reset(self, store: Store, sources: list[VideoSource]) -> None:
        """Forget these videos, their clips and everything built on them: rows in any table that
        references their clips or the videos, and every stage's progress on their clip units."""
        on_clips, on_videos = _references(store, "clips"), _references(store, "videos")
        folders = [inside(store.frames_dir, store.frames_dir / source.video_id) for source in sources]
        with store.transaction() as tx:
            for source in sources:
                vid = source.video_id
                for table, column in on_clips:
                    tx.execute(f"DELETE FROM {table} WHERE {column} IN (SELECT id FROM clips WHERE video_id = ?)", (vid,))
                for table, column in on_videos:
                    tx.execute(f"DELETE FROM {table} WHERE {column} = ?", (vid,))
                prefix = f"{vid}:"  # every clip-level stage keys its units as unit_key(video_id, index)
                tx.execute("DELETE FROM stage_progress WHERE substr(unit, 1, ?) = ?", (len(prefix), prefix))
                tx.execute("DELETE FROM stage_failures WHERE substr(unit, 1, ?) = ?", (len(prefix), prefix))
                tx.execute("DELETE FROM videos WHERE id = ?", (vid,))
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


def repair(store: Store, cfg: PipelineConfig, source: VideoSource, info: VideoInfo) -> int:
    """Write again the frame files of this video that are missing from the store, each at its
    recorded time through the decoder path that first wrote it (windowed: PyAV, a keyframe alone
    when it was one; exact: decord), so the same frame comes back under the same name. Returns
    how many were restored."""
    rows = store.query("SELECT t, path FROM frames WHERE video_id = ? ORDER BY t", (source.video_id,))
    missing = [r for r in rows if not (store.root / r["path"]).is_file()]
    for row in missing:  # paths recorded by this store, written to again: they must stay in its frames
        inside(store.frames_dir, store.root / row["path"])
    if not missing:
        return 0
    times = [r["t"] - source.t_offset for r in missing]
    requests = [FrameRequest(t, t - EDGE, t + EDGE) if cfg.keyframe_tolerance > 0 else FrameRequest.at(t) for t in times]
    with FrameSampler(info, max_side=cfg.frame_max_side) as sampler:
        frames = sampler.read(requests)
    for row, t, frame in zip(missing, times, frames):
        if frame is None or abs(frame.t - t) > EDGE:
            raise VideoError(f"{source.path}: cannot restore {row['path']}: the video has no frame at {t:.3f}s any more")
        (store.root / row["path"]).parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(frame.image).save(store.root / row["path"], "JPEG", quality=cfg.jpeg_quality)
    return len(missing)


def _truncated(video: _Video, empty: set[int]) -> str:
    return (
        f"truncated: its frames stop at {frames_end(video.info):.1f}s of the {video.info.duration:.1f}s its header "
        f"states; {len(empty)} clip(s) without frames are stored empty"
    )


def _references(db: Store | sqlite3.Connection, target: str) -> list[tuple[str, str]]:
    """(table, column) pairs with a foreign key into `target`, in the schema as it is now."""
    query = db.query if isinstance(db, Store) else lambda sql: db.execute(sql).fetchall()
    tables = [r[0] for r in query("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return [
        (table, fk[3])  # the referencing column ("from")
        for table in tables
        for fk in query(f"PRAGMA foreign_key_list({table})")
        if fk[2] == target
    ]


def _record_video(store: Store, source: VideoSource, info: VideoInfo) -> None:
    """The video's row, with the content hash that tells a moved copy from a different file
    (hashed once per path: a resumed ingest reads nothing more of the file)."""
    known = store.query("SELECT path, content_hash FROM videos WHERE id = ?", (source.video_id,))
    same_path = known and known[0]["path"] == str(source.path) and known[0]["content_hash"]
    digest = known[0]["content_hash"] if same_path else content_hash(source.path)
    with store.transaction() as tx:
        tx.execute(
            """INSERT INTO videos (id, path, t_offset, duration, fps, n_frames, width, height, rotation, probe_json,
                 content_hash)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (id) DO UPDATE SET path = excluded.path, t_offset = excluded.t_offset,
                 duration = excluded.duration, fps = excluded.fps, n_frames = excluded.n_frames,
                 width = excluded.width, height = excluded.height, rotation = excluded.rotation,
                 probe_json = excluded.probe_json, content_hash = excluded.content_hash""",
            (
                source.video_id,
                str(source.path),
                source.t_offset,
                info.duration,
                info.fps,
                info.n_frames,
                info.width,
                info.height,
                info.rotation,
                json.dumps(info.to_json(), sort_keys=True),
                digest,
            ),
        )


def _jobs(
    store: Store,
    cfg: PipelineConfig,
    info: VideoInfo,
    video_id: str,
    todo: list[ClipSpan],
    workers: int,
    max_chunk: int | None = None,
) -> list[ClipJob]:
    """One job per video when decoding in-process; with workers, long videos are split so that
    several processes can share one video; no job holds more than `max_chunk` clips."""
    if not todo:
        return []
    size = len(todo) if workers <= 1 else max(MIN_CHUNK, math.ceil(len(todo) / workers))
    size = min(size, max_chunk or size)
    return [
        ClipJob(
            info=info,
            video_id=video_id,
            clips=tuple(todo[i : i + size]),
            store_root=str(store.root),
            frames_per_clip=cfg.frames_per_clip,
            tolerance=cfg.keyframe_tolerance,
            max_side=cfg.frame_max_side,
            jpeg_quality=cfg.jpeg_quality,
        )
        for i in range(0, len(todo), size)
    ]


def _exit_with_parent(parent: int) -> None:
    """A killed ingest never shuts its pool down, and forked workers hold the task pipe open
    themselves, so they would wait forever: each follows its parent out instead."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _outcomes(jobs: list[ClipJob], workers: int) -> Iterator[tuple[ClipJob, SampledClip | VideoError]]:
    """Sampled clips as they are ready, or the VideoError that stopped a job."""
    if workers <= 1:
        for job in jobs:
            try:
                for sampled in sample_clips(job):
                    yield job, sampled
            except VideoError as exc:
                yield job, exc
        return
    # fork: a worker starts in milliseconds with the modules already imported, where spawn
    # re-imports for most of a second — as long as sampling a short video takes. Workers only
    # decode and write JPEGs; they never touch SQLite or models.
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_exit_with_parent, initargs=(os.getpid(),)
    ) as pool:
        futures = {pool.submit(_sample_all, job): job for job in jobs}
        for future in as_completed(futures):
            job = futures[future]
            try:
                sampled_clips = future.result()
            except VideoError as exc:
                yield job, exc
                continue
            for sampled in sampled_clips:
                yield job, sampled


def _write_clip(store: Store, video: _Video, sampled: SampledClip) -> ClipRow:
    """The clip (or the caption-only clip it adopts), its frames, its transcript segments and its
    progress mark: all or nothing."""
    offset, vid, clip = video.source.t_offset, video.source.video_id, sampled.clip
    row = ClipRow(0, vid, clip.index, offset + clip.t_start, offset + clip.t_end)
    with store.transaction() as tx:
        clip_id = _adopt(tx, row) or tx.execute(
            "INSERT INTO clips (video_id, idx, t_start, t_end) VALUES (?, ?, ?, ?)",
            (vid, clip.index, row.t_start, row.t_end),
        ).lastrowid
        tx.executemany(
            "INSERT INTO frames (clip_id, video_id, t, path, width, height) VALUES (?, ?, ?, ?, ?, ?)",
            [(clip_id, vid, offset + f.t, f.path, f.width, f.height) for f in sampled.frames],
        )
        tx.executemany(
            "INSERT INTO transcripts (clip_id, video_id, t_start, t_end, speaker, text) VALUES (?, ?, ?, ?, ?, ?)",
            [(clip_id, vid, offset + s.t_start, offset + s.t_end, s.speaker, s.text) for s in video.segments[clip.index]],
        )
        Store.mark_done(tx, SampleStage.name, unit_key(vid, clip.index))
    return ClipRow(clip_id, vid, clip.index, row.t_start, row.t_end)


def _adopt(tx: sqlite3.Connection, new: ClipRow) -> int | None:
    """Take over the caption-only clip holding `new`'s midpoint, if there is one: it becomes
    `new` (video, index, span), the rows on it follow, and so do its progress marks. Returns its
    id, or None when no such clip exists."""
    found = tx.execute(
        "SELECT c.id, c.video_id, c.idx, c.t_start, c.t_end FROM clips c JOIN videos v ON v.id = c.video_id "
        "WHERE v.fps = ? AND c.t_start <= ? AND c.t_end > ? ORDER BY c.t_start LIMIT 1",
        (FRAMELESS_FPS, mid := (new.t_start + new.t_end) / 2, mid),
    ).fetchone()
    if found is None:
        return None
    old = ClipRow(*found)
    tx.execute("UPDATE clips SET video_id = ?, idx = ?, t_start = ?, t_end = ? WHERE id = ?",
               (new.video_id, new.idx, new.t_start, new.t_end, old.id))
    for table, _ in _references(tx, "clips"):
        columns = {c[1] for c in tx.execute(f"PRAGMA table_info({table})")}
        if "video_id" in columns:
            tx.execute(f"UPDATE {table} SET video_id = ? WHERE clip_id = ?", (new.video_id, old.id))
        if {"t_start", "t_end"} <= columns:  # rows that span the clip (a caption) span it still
            tx.execute(f"UPDATE {table} SET t_start = ?, t_end = ? WHERE clip_id = ? AND t_start = ? AND t_end = ?",
                       (new.t_start, new.t_end, old.id, old.t_start, old.t_end))
    for table in ("stage_progress", "stage_failures"):
        tx.execute(f"UPDATE OR REPLACE {table} SET unit = ? WHERE unit = ?", (new.unit, old.unit))
    return old.id
