"""Visual memory (WorldMM, Sec. 3.1-3.2): segment embeddings for text search, stored frames
for time ranges.

* **Feature search.** Each video is cut into segments of `visual_segment_seconds` by the clip
  planner's rules (the last one may be shorter). A segment's stored frames, the JPEGs the sample
  stage wrote (nothing is decoded again), are embedded by the profile's `visual_embedder` and
  mean-pooled into one L2-normalised vector. A text query is embedded by the same encoder's
  text side and the top-k segments by cosine come back with their frames.
* **Time ranges.** "DAY1 11:00:00 - DAY1 11:02:00", "00:10:00 - 00:12:00" or "600-720": the
  stored frames recorded in the range (the frames of the clips it touches when none falls
  inside), at most `fps` a second per video and `max_frames` in all, spread evenly.

Why the mean: within a segment of seconds the frames show one scene, so their CLIP vectors lie
close together and their mean is the scene's direction; a query's cosine with the mean is the
average of its cosines with the frames, scaled by how alike the frames are. It is the
segment-level pooling CLIP4Clip found as good as learned temporal pooling for retrieval, and
what WorldMM's InternVideo2 baseline uses. Its cost: something seen in one frame of many counts
for 1/n of the segment, so segments should stay short (the pipelines use one clip, 10 or 30 s).

The pooled vector is the model's output for a segment, so SQLite keeps it in the segment's row,
written in one transaction with the segment's progress mark: a killed stage resumes at the first
segment left, and the FAISS index under `index/` is derived from the rows without loading the
model. A segment is redone when its span, its frames or the embedder that made it differ from
the plan (another segment length, a re-sampled video, another profile), so a second run embeds
nothing and old and new vectors never mix; a search with another embedder than the stored one
is refused rather than compared across embedding spaces. A segment is embedded only once every
clip it covers is sampled, so a partly sampled video never leaves one made of some of its frames.

A segment found by a query is its own one interval (`Evidence.intervals` stays empty): only the
pooled vector is stored, so which of its frames look like the query is not known, and its frames
sample one short scene, not separate stretches a reader could count or measure.

Query time: a segment is visible when it ends by `until`; a range returns frames of clips that
end by `until` (the rule every memory follows).
"""

from __future__ import annotations

import bisect
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

from videomem.config import VisualSettings
from videomem.core import StageResult
from videomem.errors import ConfigError, ModelError, StoreError
from videomem.memory.build import BuildContext
from videomem.evidence import Evidence
from videomem.models.engines import VisualEmbedder
from videomem.models.registry import ModelSet
from videomem.store import Store
from videomem.store.clips import timeline_kind, visible_frames, visible_ids
from videomem.store.frames import open_frame
from videomem.store.vectors import VectorIndex, embedder_identity, separated
from videomem.timeline import TimeText, parse_range
from videomem.video.clips import plan_clips

INDEX_NAME = "visual_segments"
SOURCE = "visual"
"""Evidence source of a segment (and of a vision model's answer about visual memory's frames)."""
RANGE_SOURCE = "frames"
"""Evidence source of the frames of a time range."""
_EPS = 1e-6


@dataclass(frozen=True)
class Segment:
    """A planned segment: its span on the corpus timeline and the stored frames inside it."""

    video_id: str
    idx: int
    t_start: float
    t_end: float
    frames: tuple[str, ...]

    @property
    def unit(self) -> str:
        """Stage-progress key, shaped like a clip's so the sample stage's reset of a video clears it."""
        return f"{self.video_id}:{self.idx}"


class _StoredVectors:
    """The index's embedder for visual memory: a row's payload is the pooled vector itself."""

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def embed(self, payloads: Sequence[bytes]) -> np.ndarray:
        if not payloads:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([np.frombuffer(p, dtype=np.float32) for p in payloads])


def covered(spans: Sequence[tuple[float, float]], t_start: float, t_end: float) -> bool:
    """Whether the union of `spans` (sorted by start) covers [t_start, t_end]."""
    reach = t_start
    for start, end in spans:
        if start > reach + _EPS:
            break
        reach = max(reach, end)
    return reach >= t_end - _EPS


def sample_frames(frames: Sequence, fps: float, max_frames: int) -> list:
    """At most `fps` frames a second per video (no two kept frames of one video closer than
    1/fps, earliest kept first), then at most `max_frames` in all, spread evenly over time.
    `frames`: rows with `t` and `video_id`, in time order."""
    last: dict[str, float] = {}
    kept = []
    for frame in frames:
        previous = last.get(frame["video_id"])
        if previous is None or frame["t"] - previous >= 1 / fps - _EPS:
            kept.append(frame)
            last[frame["video_id"]] = frame["t"]
    if len(kept) > max_frames:
        kept = [kept[i] for i in np.unique(np.linspace(0, len(kept) - 1, max_frames).round().astype(int))]
    return kept


class VisualMemory:
    """Visual memory: what the frames look like. A text query finds the short segments whose
    frames look most like it (a scene, an object, a colour, written words); a time range such as
    'DAY1 11:00:00 - DAY1 11:02:00' or '00:10:00 - 00:12:00' returns the frames recorded in it."""

    name = "visual"

    def __init__(self, store: Store, models: ModelSet, settings: VisualSettings | None = None) -> None:
        self.store = store
        self.models = models
        self.settings = settings or VisualSettings()
        self._index: VectorIndex | None = None

    @property
    def embedder(self) -> VisualEmbedder:
        embedder = self.models.visual_embedder
        if embedder is None:
            raise ConfigError(
                f"models profile {self.models.cfg.name!r} has no visual_embedder, which visual memory needs "
                "(models/offline.yaml and models/clip-vit-b-32.yaml have one)"
            )
        return embedder

    @property
    def embedder_id(self) -> str:
        return embedder_identity(self.models.cfg.visual_embedder, self.embedder.dim)

    @property
    def index(self) -> VectorIndex:
        """Over the rows of this profile's embedder (a search is refused while others remain)."""
        if self._index is None:
            identity = self.embedder_id
            self._index = VectorIndex(
                self.store,
                INDEX_NAME,
                lambda: (
                    (r["id"], r["vector"])
                    for r in self.store.query("SELECT id, vector FROM visual_segments WHERE embedder = ? ORDER BY id", (identity,))
                ),
                _StoredVectors(self.embedder.dim),
                identity,
            )
        return self._index

    # ------------------------------------------------------------ build

    def build(self, ctx: BuildContext, video_ids: Sequence[str]) -> StageResult:
        """Embed every segment of these videos whose stored row is missing or out of date."""
        cfg, progress = ctx.pipeline, ctx.progress
        identity = self.embedder_id
        segments, failures = self.plan(cfg.visual_segment_seconds, video_ids)
        stored = {
            (r["video_id"], r["idx"]): r
            for r in self.store.query(
                f"SELECT video_id, idx, t_start, t_end, frames_json, embedder FROM visual_segments "
                f"WHERE video_id IN ({','.join('?' * len(video_ids))})",
                tuple(video_ids),
            )
        }
        self._prune(stored, segments)
        pending = [s for s in segments if not _current(stored.get((s.video_id, s.idx)), s, identity)]
        result = StageResult(self.name, skipped=len(segments) - len(pending), failures=failures)
        bar = progress(len(pending), self.name, unit="segment")
        handled = 0
        try:
            for batch, readable, pooled in self.embedded(_batches(pending, self.models.cfg.visual_embedder.batch_size), result):
                result.done += self._store(readable, pooled, identity)
                handled += len(batch)
                bar.update(len(batch))
        except ModelError as exc:
            left = len(pending) - handled
            result.failures.append((self.name, f"{exc} ({left} segments left unembedded; re-run ingest to resume)"))
        bar.close()
        self.index.refresh()
        self.index.ensure(progress)
        return result

    def embedded(
        self, batches: list[list[Segment]], result: StageResult
    ) -> Iterator[tuple[list[Segment], list[Segment], np.ndarray]]:
        """Per batch of segments: the batch, its segments whose frames could be read (the others
        are reported in `result`) and their pooled vectors, row by row."""
        for batch in batches:
            readable, images = [], []
            for segment in batch:
                try:
                    images.append([open_frame(self.store.root, path) for path in segment.frames])
                except StoreError as exc:
                    result.failures.append((segment.unit, str(exc)))
                    continue
                readable.append(segment)
            yield batch, readable, pooled_vectors(self.embedder, images)

    def plan(self, seconds: float, video_ids: Sequence[str]) -> tuple[list[Segment], list[tuple[str, str]]]:
        """The segments of these videos that are sampled, and a failure per video that has
        segments waiting for clips not sampled yet."""
        segments: list[Segment] = []
        failures: list[tuple[str, str]] = []
        marks = ",".join("?" * len(video_ids))
        for video in self.store.query(
            f"SELECT id, t_offset, duration FROM videos WHERE id IN ({marks}) AND duration > 0 ORDER BY t_offset, id",
            tuple(video_ids),
        ):
            vid, offset = video["id"], video["t_offset"]
            clips = [(r["t_start"], r["t_end"]) for r in self.store.query(
                "SELECT t_start, t_end FROM clips WHERE video_id = ? ORDER BY t_start", (vid,)
            )]
            frames = self.store.query("SELECT t, path FROM frames WHERE video_id = ? ORDER BY t, id", (vid,))
            times = [f["t"] for f in frames]
            spans = plan_clips(video["duration"], seconds)
            waiting = 0
            for span in spans:
                t_start, t_end = offset + span.t_start, offset + span.t_end
                if not covered(clips, t_start, t_end):
                    waiting += 1
                    continue
                lo = bisect.bisect_left(times, t_start - _EPS)
                hi = bisect.bisect_right(times, t_end + _EPS) if span is spans[-1] else bisect.bisect_left(times, t_end - _EPS)
                segments.append(Segment(vid, span.index, t_start, t_end, tuple(f["path"] for f in frames[lo:hi])))
            if waiting:
                failures.append((vid, f"{waiting} visual segments wait for clips not sampled yet (run ingest with the sample stage)"))
        return segments, failures

    def _prune(self, stored: dict, segments: list[Segment]) -> None:
        """Drop rows the plan no longer has: segments of another length, segments now without
        frames or whose clips are gone."""
        planned = {(s.video_id, s.idx) for s in segments if s.frames}
        gone = [key for key in stored if key not in planned]
        if not gone:
            return
        with self.store.transaction() as tx:
            tx.executemany("DELETE FROM visual_segments WHERE video_id = ? AND idx = ?", gone)
            tx.executemany(
                "DELETE FROM stage_progress WHERE stage = ? AND unit = ?", [(self.name, f"{v}:{i}") for v, i in gone]
            )
        for key in gone:
            del stored[key]

    def _store(self, segments: list[Segment], pooled: np.ndarray, identity: str) -> int:
        """Store embedded segments, one transaction per segment. Returns how many were stored."""
        for segment, vector in zip(segments, pooled):
            with self.store.transaction() as tx:
                tx.execute(
                    "INSERT INTO visual_segments (video_id, idx, t_start, t_end, frames_json, embedder, vector) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (video_id, idx) DO UPDATE SET "
                    "t_start = excluded.t_start, t_end = excluded.t_end, frames_json = excluded.frames_json, "
                    "embedder = excluded.embedder, vector = excluded.vector",
                    (segment.video_id, segment.idx, segment.t_start, segment.t_end, json.dumps(segment.frames),
                     identity, np.asarray(vector, dtype=np.float32).tobytes()),
                )
                Store.mark_done(tx, self.name, segment.unit)
        return len(segments)

    # ------------------------------------------------------------ retrieve

    def stats(self) -> dict[str, int | str]:
        row = self.store.query("SELECT COUNT(*) AS n, SUM(json_array_length(frames_json)) AS f FROM visual_segments")[0]
        out: dict[str, int | str] = {"segments": row["n"], "frames": row["f"] or 0}
        embedders = [r["embedder"] for r in self.store.query("SELECT DISTINCT embedder FROM visual_segments ORDER BY 1")]
        if embedders:
            out["embedder"] = " + ".join(embedders)
        return out

    def retrieve(
        self, query: str, top_k: int, until: float | None = None, video_id: str | None = None
    ) -> list[Evidence]:
        """A time range → its frames (one entry per video); any other text → the `top_k`
        segments that look most like it."""
        span = parse_range(query)
        if span is not None:
            return self.frames(*span, until=until, video_id=video_id)
        return self.search(query, top_k, until, video_id)

    def search(self, query: str, top_k: int, until: float | None = None, video_id: str | None = None) -> list[Evidence]:
        """The `top_k` visible segments whose pooled frame vector is closest to the query's,
        among those the scores tell apart (`separated`: identical frames score alike and give
        nothing)."""
        self._check_embedder()
        allowed = visible_ids(self.store, "visual_segments", until, video_id)
        hits = separated(self.index.search_vector(self.embedder.embed_texts([query]), top_k + 1, allowed), top_k)
        if not hits:
            return []
        scores = dict(hits)
        marks = ",".join("?" * len(hits))
        rows = self.store.query(
            f"SELECT id, video_id, t_start, t_end, frames_json FROM visual_segments WHERE id IN ({marks})", tuple(scores)
        )
        evidence = []
        for r in rows:
            frames = tuple(json.loads(r["frames_json"]))
            text = f"segment of {len(frames)} frame{'s' if len(frames) != 1 else ''}"
            evidence.append(Evidence(r["t_start"], r["t_end"], text, SOURCE, scores[r["id"]], r["video_id"], frames=frames))
        return sorted(evidence, key=lambda e: (-e.score, e.t_start))

    def range_frames(
        self, t_start: float, t_end: float, until: float | None = None, video_id: str | None = None,
        limit: int | None = None,
    ) -> list:
        """The frames a time range returns, as rows (`t`, `path`, `video_id`, `clip_id`, `c_start`,
        `c_end`) in time order; at most `limit` (a vision engine's image limit) besides `max_frames`."""
        rows = visible_frames(self.store, t_start, t_end, until, video_id)
        inside = [r for r in rows if t_start - _EPS <= r["t"] <= t_end + _EPS]
        return sample_frames(inside or rows, self.settings.fps, min(self.settings.max_frames, limit or sys.maxsize))

    def segment_frames(self, segment: Evidence, limit: int | None = None) -> list:
        """A segment's frames as rows like `range_frames`', thinned by the same limits."""
        marks = ",".join("?" * len(segment.frames))
        rows = self.store.query(
            "SELECT f.t, f.path, f.video_id, f.clip_id FROM frames f "
            f"WHERE f.video_id = ? AND f.path IN ({marks}) ORDER BY f.t, f.id",
            (segment.video_id, *segment.frames),
        )
        return sample_frames(rows, self.settings.fps, min(self.settings.max_frames, limit or sys.maxsize))

    def frames(self, t_start: float, t_end: float, until: float | None = None, video_id: str | None = None) -> list[Evidence]:
        """A time range's frames, one entry per video, in time order."""
        time = TimeText(timeline_kind(self.store))
        by_video: dict[str, list] = {}
        for row in self.range_frames(t_start, t_end, until, video_id):
            by_video.setdefault(row["video_id"], []).append(row)
        evidence = []
        for vid, rows in by_video.items():
            start = max(t_start, min(r["c_start"] for r in rows))
            end = min(t_end, max(r["c_end"] for r in rows))
            times = ", ".join(time(r["t"]) for r in rows)
            text = f"{len(rows)} frame{'s' if len(rows) != 1 else ''} at {times}"
            evidence.append(Evidence(start, max(start, end), text, RANGE_SOURCE, 1.0, vid, frames=tuple(r["path"] for r in rows)))
        return sorted(evidence, key=lambda e: (e.t_start, e.video_id))

    def _check_embedder(self) -> None:
        identity = self.embedder_id
        other = [r[0] for r in self.store.query("SELECT DISTINCT embedder FROM visual_segments WHERE embedder != ?", (identity,))]
        if other:
            raise StoreError(
                f"{self.store.root}: visual memory was embedded by {other[0]}, this models profile embeds with "
                f"{identity}; search with the profile it was built with, or re-run ingest with the visual stage and this one"
            )

    @staticmethod
    def reset(store: Store, video_ids: Sequence[str]) -> None:
        """Forget these videos' segments so the next build embeds them again (the index notices)."""
        with store.transaction() as tx:
            tx.executemany("DELETE FROM visual_segments WHERE video_id = ?", [(v,) for v in video_ids])
            tx.executemany(
                "DELETE FROM stage_progress WHERE stage = ? AND substr(unit, 1, ?) = ?",
                [(VisualMemory.name, len(v) + 1, f"{v}:") for v in video_ids],
            )


def pooled_vectors(embedder: VisualEmbedder, images: Sequence[Sequence[Image.Image]]) -> np.ndarray:
    """One L2-normalised mean of the frame embeddings per segment (`images`: its frames)."""
    flat = [image for frames in images for image in frames]
    if not flat:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    vectors = np.asarray(embedder.embed_images(flat), dtype=np.float32)
    if vectors.shape != (len(flat), embedder.dim):
        raise RuntimeError(f"embed_images returned shape {vectors.shape} for {len(flat)} images")
    pooled = np.zeros((len(images), embedder.dim), dtype=np.float32)
    offset = 0
    for row, frames in enumerate(images):
        mean = vectors[offset : offset + len(frames)].mean(axis=0)
        pooled[row] = mean / max(float(np.linalg.norm(mean)), 1e-12)
        offset += len(frames)
    return pooled


def _batches(segments: list[Segment], max_frames: int) -> list[list[Segment]]:
    """Consecutive segments grouped so one embed call gets about `max_frames` images (a
    segment with more frames is a batch of its own; the embedder splits it)."""
    batches: list[list[Segment]] = []
    count = 0
    for segment in segments:
        if batches and count + len(segment.frames) <= max_frames:
            batches[-1].append(segment)
            count += len(segment.frames)
        else:
            batches.append([segment])
            count = len(segment.frames)
    return batches


def _current(row, segment: Segment, identity: str) -> bool:
    """Whether a stored row (None: none) is what embedding `segment` now would store; a
    segment without frames needs no row."""
    if not segment.frames:
        return True
    return (
        row is not None
        and row["embedder"] == identity
        and abs(row["t_start"] - segment.t_start) < _EPS
        and abs(row["t_end"] - segment.t_end) < _EPS
        and tuple(json.loads(row["frames_json"])) == segment.frames
    )
