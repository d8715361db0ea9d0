"""Ingest jobs started over HTTP: one at a time per store, in a background thread, with
progress to poll.

A store has one writer. The server runs at most one ingest at a time and refuses a second
(`IngestBusy`) while the first runs; a writer in another process is the store's own
business (its lock or SQLite's): the job then fails with that error's line. Questions keep
being answered during an ingest from what is committed; when the job ends, the readers are
refreshed so that questions see the new memory.

An ingest reads only what the operator allowed: video paths and pipeline profiles under the
server's ingest roots (`serve --ingest-root DIR`), or a profile shipped with videomem by its
name. A server with no ingest root refuses every ingest (`IngestRefused`).

Progress comes from the stages' own progress bars (`ingest(bars=...)`): the job records the
stage in hand and its units done out of total.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from videomem.config import PipelineConfig, check_stages, default_path, load_pipeline, shipped_profiles, stage_names
from videomem.errors import VideomemError
from videomem.models.registry import ModelSet
from videomem.pipeline.runner import IngestReport, ingest
from videomem.store import Store

log = logging.getLogger(__name__)


class IngestBusy(VideomemError):
    """An ingest into this store is already running."""


class IngestRefused(VideomemError):
    """An ingest would read outside the server's ingest roots, or the server has none."""


ServerPath = Annotated[str, Field(min_length=1, max_length=4096)]


class IngestRequest(BaseModel):
    """What `videomem ingest` takes, as JSON. Paths are absolute, on the server's machine,
    under one of its ingest roots."""

    model_config = ConfigDict(extra="forbid")

    paths: list[ServerPath] = Field(
        min_length=1, max_length=1000, description="video files or directories (searched recursively)"
    )
    pipeline: ServerPath | None = Field(
        None,
        description=f"a shipped profile's name ({', '.join(shipped_profiles('pipelines'))}) or a profile file under an "
        "ingest root; default: default",
    )
    stages: list[str] | None = Field(None, description=f"a subset of {', '.join(stage_names())}; default: the pipeline's")
    timeline: Literal["single", "egolife"] = "single"
    workers: int = Field(
        1, ge=1, description="decode processes (forked; 1 decodes in the job's thread), at most the server's CPU cores"
    )
    force: bool = Field(False, description="redo stages already done")

    @field_validator("stages")
    @classmethod
    def _known_stages(cls, stages: list[str] | None) -> list[str] | None:
        return list(check_stages(stages)) if stages else stages

    @field_validator("workers")
    @classmethod
    def _at_most_the_cores(cls, workers: int) -> int:
        """More decode processes than cores only slow the server's other work down."""
        cores = os.cpu_count() or 1
        if workers > cores:
            raise ValueError(f"at most {cores} decode processes: the server's machine has {cores} CPU cores")
        return workers


State = Literal["running", "done", "failed"]


@dataclass
class Job:
    id: int
    request: IngestRequest
    state: State = "running"
    stage: str | None = None
    """Description of the progress bar in hand ("sample", "caption", "index events", ...)."""
    done: int = 0
    total: int = 0
    unit: str = "clip"
    results: list[dict[str, Any]] = field(default_factory=list)
    failures: list[list[str]] = field(default_factory=list)
    error: str | None = None
    started: float = field(default_factory=time.time)
    finished: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    ended: threading.Event = field(default_factory=threading.Event, repr=False)
    """Set once the job is done or failed."""

    def to_json(self) -> dict[str, Any]:
        with self.lock:
            return {
                "id": self.id,
                "state": self.state,
                "request": self.request.model_dump(),
                "progress": {"stage": self.stage, "done": self.done, "total": self.total, "unit": self.unit},
                "results": list(self.results),
                "failures": list(self.failures),
                "error": self.error,
                "started": self.started,
                "finished": self.finished,
            }

    def bar(self, total: int, desc: str, unit: str = "clip") -> _Bar:
        """A progress factory for `ingest(bars=...)`: each new bar is the stage in hand."""
        with self.lock:
            self.stage, self.done, self.total, self.unit = desc, 0, total, unit
        return _Bar(self, desc)

    def finish(self, report: IngestReport | None, error: str | None) -> None:
        with self.lock:
            if report is not None:
                self.results = [
                    {"stage": r.stage, "done": r.done, "skipped": r.skipped, "failed": len(r.failures)}
                    for r in report.results
                ]
                self.failures = [[what, why] for what, why in report.all_failures()]
            self.error = error
            self.state = "failed" if error is not None else "done"
            self.finished = time.time()


class _Bar:
    """The part of a tqdm bar the stages use, counting into the job while its stage is the one in
    hand (streaming stages keep several bars open; the job shows the last one opened)."""

    def __init__(self, job: Job, stage: str) -> None:
        self.job, self.stage = job, stage

    def update(self, n: int = 1) -> None:
        with self.job.lock:
            if self.job.stage == self.stage:
                self.job.done += n

    @property
    def total(self) -> int:
        return self.job.total

    @total.setter
    def total(self, total: int) -> None:
        with self.job.lock:
            if self.job.stage == self.stage:
                self.job.total = total

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> _Bar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Jobs:
    """The ingest jobs of one served store (kept for the life of the process)."""

    def __init__(
        self, store_dir: Path, models: ModelSet, on_done: Callable[[], None], roots: Sequence[Path] = ()
    ) -> None:
        self.store_dir = store_dir
        self.models = models
        self.on_done = on_done
        self.roots = [root.resolve() for root in roots]
        self._jobs: dict[int, Job] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def start(self, request: IngestRequest) -> Job:
        """Start an ingest in the background; paths outside the ingest roots and a bad pipeline
        profile are refused here, at once."""
        if not self.roots:
            raise IngestRefused("remote ingest is off: the server was started without --ingest-root")
        for path in request.paths:
            self._allowed(path)
        pipeline = load_pipeline(self._profile(request.pipeline))
        with self._lock:
            running = [j for j in self._jobs.values() if j.state == "running"]
            if running:
                raise IngestBusy(f"ingest job {running[0].id} is still running; one ingest at a time per store")
            job = Job(next(self._ids), request)
            self._jobs[job.id] = job
        threading.Thread(target=self._run, args=(job, pipeline), name=f"videomem-ingest-{job.id}", daemon=True).start()
        return job

    def _allowed(self, raw: str) -> Path:
        """`raw` as a path under an ingest root once resolved; IngestRefused if not."""
        path = Path(raw)
        if not path.is_absolute():
            raise IngestRefused(f"{raw!r}: give an absolute path on the server")
        try:
            resolved = path.resolve()
        except (OSError, RuntimeError, ValueError):
            resolved = None
        if resolved is None or not any(resolved.is_relative_to(root) for root in self.roots):
            raise IngestRefused(f"{raw}: not under an ingest root of this server")
        return path

    def _profile(self, given: str | None) -> Path:
        """The pipeline profile file: a shipped one by name, or a file under an ingest root."""
        if given is None or given in shipped_profiles("pipelines"):
            return default_path("pipelines", given or "default")
        try:
            return self._allowed(given)
        except IngestRefused:
            raise IngestRefused(
                f"pipeline {given!r}: neither a shipped profile ({', '.join(shipped_profiles('pipelines'))}) "
                "nor a file under an ingest root of this server"
            ) from None

    def get(self, job_id: int) -> Job | None:
        return self._jobs.get(job_id)

    def all(self) -> list[Job]:
        return list(self._jobs.values())

    def _run(self, job: Job, pipeline: PipelineConfig) -> None:
        report, error = None, None
        request = job.request
        try:
            with Store(self.store_dir) as store:
                report = ingest(
                    request.paths,
                    store,
                    pipeline,
                    lambda: self.models,
                    stages=request.stages,
                    timeline=request.timeline,
                    workers=request.workers,
                    force=request.force,
                    show_progress=False,
                    bars=job.bar,
                    roots=self.roots,
                )
        except VideomemError as exc:
            error = str(exc)
        except Exception as exc:  # a bug: keep the server up, say so in the job, log the traceback
            log.exception("ingest job %d failed", job.id)
            error = f"internal error: {type(exc).__name__}: {exc}"
        finally:
            self.on_done()
            job.finish(report, error)
            job.ended.set()
