"""Local pipeline runner: find the videos, then run each stage the pipeline lists, in the
registry's order (`memory.registry.stage_order`: the pipeline's own stages, then each memory's
build after the stages it reads), `sample` and `caption` streaming into each other
(pipeline/streaming.py).

An ingest holds the store's writer lock from start to end, records the pipeline it ran with
(the `pipeline` key of the `meta` table, part of an eval run's fingerprint), and refuses a file
whose id already names a different file in the store.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from videomem.config import PipelineConfig, check_stages
from videomem.core import ProgressFactory, StageResult, VideoSource
from videomem.errors import ConfigError, VideomemError
from videomem.memory.registry import MEMORIES, stage_order
from videomem.models.usage import Usage
from videomem.models.registry import ModelSet
from videomem.pipeline.base import MemoryStage, Stage, StageContext
from videomem.pipeline.caption import CaptionStage
from videomem.pipeline.ray_runner import RAY_STAGES, RayOptions, connect, ray_stage
from videomem.pipeline.sample import FRAMELESS_FPS, SampleStage
from videomem.pipeline.streaming import StreamedStages, streamed
from videomem.pipeline.transcribe import TranscribeStage
from videomem.store import PIPELINE_META, Store
from videomem.store.ids import video_id_of
from videomem.timeline import TimelineKind, egolife_start
from videomem.video.probe import content_hash

if TYPE_CHECKING:
    from videomem.pipeline.imports import CaptionGridStage

VIDEO_EXTENSIONS = {".mp4", ".mkv", ".avi", ".mov", ".webm", ".m4v", ".mpg", ".mpeg", ".ts", ".flv", ".wmv"}
TRANSCRIPT_EXTENSIONS = (".srt", ".vtt", ".json")

_OWN_STAGES: dict[str, Callable[[], Stage]] = {stage.name: stage for stage in (SampleStage, TranscribeStage, CaptionStage)}
"""The pipeline's own stages (`config.PIPELINE_STAGES`), by name; every other stage is a memory's build."""


def build_stage(name: str, ray: RayOptions | None = None) -> Stage:
    """The stage `name`; with `ray`, its Ray version when its clip-level work runs on a cluster."""
    if ray is not None and name in RAY_STAGES:
        return ray_stage(name, ray)
    return _OWN_STAGES[name]() if name in _OWN_STAGES else MemoryStage(name)


def reads_footage(name: str) -> bool:
    """Whether stage `name` reads a video's pixels or sound (transcribe, a memory whose entry
    says so): skipped in a store built from captions alone. (`caption` runs there: every clip
    has its imported caption, so it makes no vision call.)"""
    return name == TranscribeStage.name or (name in MEMORIES and MEMORIES[name].footage)


@dataclass
class IngestReport:
    results: list[StageResult] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    usage: dict[str, Usage] = field(default_factory=dict)
    """Model usage per role over the run (empty when no stage needed a model)."""

    @property
    def ok(self) -> bool:
        return not self.failures and all(not r.failures for r in self.results)

    def all_failures(self) -> list[tuple[str, str]]:
        return self.failures + [f for r in self.results for f in r.failures]


def _sidecar_transcript(video: Path) -> Path | None:
    for ext in TRANSCRIPT_EXTENSIONS:
        candidate = video.with_suffix(ext)
        if candidate.is_file():
            return candidate
    return None


def _videos_at(path: Path, failures: list[tuple[str, str]]) -> list[Path]:
    """The file `path`, or the video files under the folder `path`; what cannot be read (a
    name too long, a folder without permission) is a failure of its own, the rest is taken."""

    def unreadable(exc: OSError) -> None:
        failures.append((str(exc.filename or path), exc.strerror or type(exc).__name__))

    try:
        if path.is_dir():
            found = []
            for folder, _, names in os.walk(path, onerror=unreadable):
                found += [Path(folder, n) for n in names if Path(n).suffix.lower() in VIDEO_EXTENSIONS]
            found = sorted(p for p in found if p.is_file())
            if not found:
                failures.append((str(path), "directory holds no video files"))
            return found
        if path.is_file():
            return [path]
    except OSError as exc:
        unreadable(exc)
        return []
    failures.append((str(path), "no such file or directory"))
    return []


def discover_sources(
    paths: Sequence[str | Path], timeline: TimelineKind = "single", roots: Sequence[Path] | None = None
) -> tuple[list[VideoSource], list[tuple[str, str]]]:
    """Expand directories, assign ids and timeline offsets. Returns (sources, failures).

    Files named explicitly are taken whatever their extension (a bad one fails at probe, with
    its own message); directories contribute files with a video extension, recursively. With
    `roots` (a server's ingest roots), a file that resolves outside all of them (a symlink
    leading out) is a failure.
    """
    files: list[Path] = []
    failures: list[tuple[str, str]] = []
    for raw in paths:
        if not str(raw):  # Path("") is the working directory: never what was meant
            failures.append(("''", "an empty path"))
            continue
        # the store records where the file is, whatever folder the ingest runs in
        files.extend(_videos_at(Path(raw).absolute(), failures))

    by_id: dict[str, Path] = {}
    sources: list[VideoSource] = []
    for file in files:
        if roots is not None and not any(file.resolve().is_relative_to(root) for root in roots):
            failures.append((str(file), "leads outside the server's ingest roots"))
            continue
        try:
            video_id = video_id_of(file)
        except VideomemError as exc:
            failures.append((str(file), str(exc)))
            continue
        if video_id in by_id:
            if by_id[video_id].resolve() == file.resolve():
                continue
            raise ConfigError(f"two videos share the id {video_id!r}: {by_id[video_id]} and {file}")
        by_id[video_id] = file
        try:
            offset = egolife_start(file) if timeline == "egolife" else 0.0
        except VideomemError as exc:
            failures.append((str(file), str(exc)))
            continue
        sources.append(VideoSource(file, video_id, offset, _sidecar_transcript(file)))
    return sources, failures


def ingest(
    paths: Sequence[str | Path],
    store: Store,
    pipeline: PipelineConfig,
    models_factory: Callable[[], ModelSet],
    *,
    stages: Sequence[str] | None = None,
    timeline: TimelineKind = "single",
    workers: int = 1,
    force: bool = False,
    show_progress: bool = True,
    bars: ProgressFactory | None = None,
    captions: str | Path | None = None,
    transcripts: str | Path | None = None,
    ray: RayOptions | None = None,
    roots: Sequence[Path] | None = None,
    checked: CheckedRequest | None = None,
) -> IngestReport:
    """Run the pipeline's stages (or `stages`) over `paths` into `store`.

    A bad file is reported in the result and skipped; the others are ingested. `bars` replaces
    the terminal's progress bars (`StageContext.progress`), for a caller that reports progress.
    `captions` and `transcripts` are EgoLifeCap directories imported right after sampling
    (pipeline/imports.py); with no `paths`, the memory is built from them alone (no frames). With `ray`, decoding, the vision pass and the visual embeddings run
    on a Ray cluster (pipeline/ray_runner.py); the store is written here all the same. Without
    `ray` and imports, `sample` and `caption` stream into each other (pipeline/streaming.py).
    `roots` limits the files read to those folders (`discover_sources`). `checked`: what
    `check_request` returned for these same arguments, when the caller checked first (the import
    folders are then not scanned again).
    """
    request = _asked(pipeline, stages, captions, transcripts, timeline)
    if checked is None:
        checked = check_request(pipeline, stages, captions, transcripts, timeline)
    elif checked.request != request:
        raise ValueError(f"ingest: checked for {checked.request}, called with {request}")
    chosen, imports = checked.stages, checked.imports
    grid = _caption_grid(imports, pipeline) if not paths else None
    if ray is not None:
        connect(ray)
    with store.writer():
        sources, failures = discover_sources(paths, timeline, roots) if grid is None else (grid.sources, [])
        sources, conflicts = _same_files(store, sources, replace=force)
        report = IngestReport(failures=failures + conflicts)
        with store.transaction() as tx:
            Store.set_meta(tx, PIPELINE_META, pipeline.model_dump_json())
        ctx = StageContext(
            store,
            pipeline,
            models_factory,
            workers=workers,
            force=force,
            show_progress=show_progress,
            bars=bars,
            stages=chosen,
        )
        run = [
            build_stage(name, ray) if grid is None else _without_video(name, grid, ray)
            for name in stage_order()
            if name in chosen
        ]
        after_sample = 1 if run and run[0].name == "sample" else 0
        run[after_sample:after_sample] = imports
        if force:  # all first: a stage may do a later stage's work in its pass (caption writes objects)
            for stage in run:
                stage.reset(store, sources)
        stream = ray is None and not imports and not _frameless(store)
        for stage in streamed(run) if stream else run:
            if isinstance(stage, StreamedStages):
                report.results += stage.run(ctx, sources)
            else:
                started = time.perf_counter()
                report.results.append(stage.run(ctx, sources))
                report.results[-1].seconds = time.perf_counter() - started
    if ctx.models_built is not None:
        report.usage = ctx.models_built.meter.by_role()
    return report


@dataclass(frozen=True)
class CheckedRequest:
    """An ingest request that passed `check_request`: its stages and its import steps (their
    folders scanned once), for the arguments in `request`."""

    stages: tuple[str, ...]
    imports: list[Stage]
    request: tuple
    """(pipeline stages, stages asked, captions, transcripts, timeline) as checked."""


def check_request(
    pipeline: PipelineConfig,
    stages: Sequence[str] | None,
    captions: str | Path | None,
    transcripts: str | Path | None,
    timeline: TimelineKind,
) -> CheckedRequest:
    """The stages an ingest runs and its import steps, or the ConfigError that refuses it before
    any work; a caller that creates the store calls this first, so a refusal leaves none behind,
    and hands the result to `ingest(checked=...)`."""
    try:
        chosen = check_stages(stages) if stages else pipeline.stages
    except ValueError as exc:
        raise ConfigError(f"--stages: {exc}") from None
    order = stage_order()
    unbuilt = [s for s in chosen if s not in order]
    if unbuilt:
        raise ConfigError(f"stage {unbuilt[0]!r}: the memory {unbuilt[0]!r} has no build")
    return CheckedRequest(
        chosen, _import_stages(captions, transcripts, timeline), _asked(pipeline, stages, captions, transcripts, timeline)
    )


def _asked(
    pipeline: PipelineConfig,
    stages: Sequence[str] | None,
    captions: str | Path | None,
    transcripts: str | Path | None,
    timeline: TimelineKind,
) -> tuple:
    """The arguments a check holds for (`CheckedRequest.request`)."""
    return pipeline.stages, tuple(stages) if stages else None, captions, transcripts, timeline


def _import_stages(captions: str | Path | None, transcripts: str | Path | None, timeline: TimelineKind) -> list[Stage]:
    """One import step per EgoLifeCap directory given; their files are checked before any video
    is decoded, so a misnamed file stops the run at once."""
    from videomem.pipeline.imports import ImportStage

    given = [(kind, d) for kind, d in (("transcripts", transcripts), ("captions", captions)) if d is not None]
    if given and timeline != "egolife":
        raise ConfigError("--captions/--transcripts: EgoLifeCap files are placed by day and hour; use --timeline egolife")
    stages: list[Stage] = []
    for kind, directory in given:
        try:
            stages.append(ImportStage(kind, directory))
        except VideomemError as exc:
            raise ConfigError(f"--{kind}: {exc}") from None
    return stages


def _caption_grid(imports: list[Stage], pipeline: PipelineConfig) -> CaptionGridStage:
    """The `sample` step of a run with no video files: clips where the imported files have cues."""
    from videomem.pipeline.imports import CaptionGridStage, ImportStage

    if not any(isinstance(s, ImportStage) and s.kind == "captions" for s in imports):
        raise ConfigError("no video files given: pass videos, or --captions (with --transcripts) to build the memory "
                          "from the captions alone")
    try:
        return CaptionGridStage([s for s in imports if isinstance(s, ImportStage)], pipeline.clip_seconds)
    except VideomemError as exc:
        raise ConfigError(f"--captions/--transcripts: {exc}") from None


def _without_video(name: str, grid: Stage, ray: RayOptions | None) -> Stage:
    """Stage `name` of a run with no video files: the grid samples, those that read the
    footage skip, the others run as usual."""
    from videomem.pipeline.imports import NeedsFootage

    if name == "sample":
        return grid
    return NeedsFootage(name) if reads_footage(name) else build_stage(name, ray)


def _frameless(store: Store) -> bool:
    """The store holds clips built from captions alone, which sampled clips may adopt: then the
    caption stage must see what was adopted before it starts, so the stages run one by one."""
    sql = "SELECT 1 FROM clips c JOIN videos v ON v.id = c.video_id WHERE v.fps = ? LIMIT 1"
    return bool(store.query(sql, (FRAMELESS_FPS,)))


def _same_files(
    store: Store, sources: list[VideoSource], replace: bool
) -> tuple[list[VideoSource], list[tuple[str, str]]]:
    """Sources whose id is new to the store or names this very file (same path, or same content
    hash: a moved file resumes), and a failure for each id that names a different file. With
    `replace` (--force) the new file replaces the stored one."""
    stored = {r["id"]: r for r in store.query("SELECT id, path, content_hash FROM videos")}
    kept, conflicts = [], []
    for source in sources:
        row = stored.get(source.video_id)
        if row is None or replace or Path(row["path"]).resolve() == source.path.resolve():
            kept.append(source)
            continue
        try:
            same = row["content_hash"] is not None and content_hash(source.path) == row["content_hash"]
        except OSError:
            same = False
        if same:
            kept.append(source)
        else:
            conflicts.append((
                str(source.path),
                f"its id {source.video_id!r} already names a different file in the store, {row['path']}; "
                "rename this file (a video's id is its file name without extension), use another --store, "
                "or pass --force to replace the stored video",
            ))
    return kept, conflicts
