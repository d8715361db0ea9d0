"""Ray-distributed ingestion (`videomem ingest --ray`): the clip-level work on a Ray cluster.

Decoding and sampling frames, the vision pass (captions and object records) and the visual
embeddings run as Ray Data pipelines (`map_batches`); every other stage (transcribe, object
consolidation, episodic, semantic, the indexes and graphs) runs on the driver with the local
runner's code. Each Ray stage is the local stage with only its execution swapped, so both runners
call the same per-clip functions:

* sample: decode tasks run `sample.encode_clips` anywhere in the cluster (a video must be
  readable at the same path on every node) and send each clip's frames back as JPEG bytes; the
  driver writes them with `sample.save_frames` and commits the clip as the local stage does.
* caption: the driver plans the pending clips (`vision_pass.pending_clips`); a read step pinned
  to the driver's node reads their frame files as bytes; a pool of actors that each hold the
  vision model (`models_factory()` built once per actor: a vLLM engine or a transformers model on
  its GPU for a GPU profile, the offline models on a CPU) answers with `vision_pass.ask`; the
  driver commits each clip with `vision_pass.commit_clip`.
* visual: the same with actors holding the visual embedder (`visual.pooled_vectors`).

Only the driver touches SQLite: the store has the local runner's format and transactions, one per
clip (per segment), and a re-run skips what is done. Ray Data restarts an actor that dies and
gives its batch again; nothing is written before the driver has an answer, so a retried batch
cannot write twice.

Ray is imported only here, and only when `--ray` is given (`pip install 'videomem[ray]'`).
"""

from __future__ import annotations

import logging
import pickle
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from videomem.config import PipelineConfig, RoleConfig
from videomem.core import StageResult
from videomem.errors import ConfigError, ModelError, StoreError, VideoError
from videomem.memory import visual
from videomem.models.usage import Usage, UsageMeter
from videomem.models.registry import ModelSet, engine_window
from videomem.pipeline.base import MemoryStage, Stage, StageContext
from videomem.pipeline.caption import CaptionStage
from videomem.pipeline.sample import ClipJob, EncodedClip, SampledClip, SampleStage, encode_clips, save_frames
from videomem.pipeline.vision_pass import Output, ask, commit_clip, pending_clips, stopped_failures
from videomem.store.frames import decode_frame, frame_bytes

if TYPE_CHECKING:
    from ray.data import Dataset

RAY_STAGES = (SampleStage.name, CaptionStage.name, visual.VisualMemory.name)
"""Stages whose clip-level work runs on the cluster; the others run on the driver."""
DECODE_CHUNK = 16
"""Clips per decode task: a task's open and seek are paid over several clips, and what it sends
back stays a few megabytes of JPEG."""
READ_CHUNK = 8
"""Items per read step on the driver's node."""
MAX_BLOCKS = 512
"""Blocks a work list is cut into: enough to spread over a large cluster, few enough that Ray's
per-block overhead stays small for a week of clips."""
READ_CPUS = 0.25
"""A read step only reads files: it should not hold a whole CPU away from the model actors."""


@dataclass(frozen=True)
class RayOptions:
    """Where the cluster is and how large the model actor pools are."""

    address: str | None = None
    """None: start Ray on this machine; 'auto' or 'host:port' / 'ray://host:port': join a cluster."""
    actors: int | None = None
    """Actors per model pool (vision, visual embedder); None: the pipeline's ray_*_actors."""


@dataclass(frozen=True)
class _Stopped:
    """The backend failed for a whole batch (a ModelError): the pass stops, as the local one does."""

    reason: str


def _ray() -> Any:
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise ConfigError("--ray needs Ray, which is not installed: pip install 'videomem[ray]'") from None
    return ray


def connect(options: RayOptions) -> None:
    """Join the cluster (or start a local one) unless this process already has; Ray Data's own
    progress bars and logs are turned off, the runner draws its own."""
    ray = _ray()
    if not ray.is_initialized():
        try:
            ray.init(address=options.address, logging_level=logging.WARNING)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = options.address or "a local Ray"
            raise ConfigError(f"--ray: cannot start or join {where} ({' '.join(str(exc).split())})") from None
    data = ray.data.DataContext.get_current()
    data.enable_progress_bars = False
    data.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)


def ray_stage(name: str, options: RayOptions) -> Stage:
    """The Ray version of a stage in RAY_STAGES."""
    return dict(zip(RAY_STAGES, (RaySampleStage, RayCaptionStage, RayVisualStage)))[name](options)


# ---------------------------------------------------------------- rows and steps


def _rows(items: list[Any]) -> Dataset:
    """A dataset of pickled items, one row each, in at most MAX_BLOCKS blocks."""
    rows = [{"payload": pickle.dumps(item)} for item in items]
    return _ray().data.from_items(rows, override_num_blocks=min(len(rows), MAX_BLOCKS))


def _apply(fn: Callable[[list[Any]], list[Any]], batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    out = fn([pickle.loads(p) for p in batch["payload"]])
    column = np.empty(len(out), dtype=object)
    column[:] = [pickle.dumps(item) for item in out]
    return {"payload": column}


def _results(dataset: Dataset) -> Iterator[Any]:
    """The pipeline's output items as they arrive (leaving the loop early stops the pipeline)."""
    for row in dataset.iter_rows():
        yield pickle.loads(row["payload"])


def _on_driver_node() -> dict[str, Any]:
    """`map_batches` arguments that keep a step on this machine, the one whose disk holds the store."""
    node = _ray().get_runtime_context().get_node_id()
    return {"num_cpus": READ_CPUS, "label_selector": {"ray.io/node-id": node}}


def _actors(size: int) -> Any:
    return _ray().data.ActorPoolStrategy(size=size)


GPU_BACKENDS = ("vllm", "transformers", "open_clip")


def gpus_per_actor(role: RoleConfig | None, cluster_gpus: float) -> float:
    """GPUs one actor of a model pool takes: a vLLM engine its tensor-parallel size; a
    transformers or open_clip model one, unless its profile puts it on the CPU or the cluster has
    no GPU; anything else (offline, HTTP clients) none."""
    if role is None or role.backend not in GPU_BACKENDS:
        return 0.0
    if role.backend == "vllm":
        if not cluster_gpus:
            raise ConfigError(f"--ray: the profile runs {role.model} in a vLLM engine per GPU, and the Ray cluster has no GPU")
        return float(role.options.get("engine_args", {}).get("tensor_parallel_size", 1))
    return 1.0 if cluster_gpus and (role.device or "cuda").startswith("cuda") else 0.0


def vision_call_size(pipeline: PipelineConfig, vlm: RoleConfig) -> int:
    """Clips per call to a vision actor: the pipeline's `ray_vision_batch_size`, else what the
    local runner hands the engine (a GPU engine's window, so it batches as many), else
    `caption_batch_size`."""
    if pipeline.ray_vision_batch_size is not None:
        return pipeline.ray_vision_batch_size
    return max(pipeline.caption_batch_size, engine_window(vlm) or 0)


def _cluster_gpus() -> float:
    return float(_ray().cluster_resources().get("GPU", 0))


def _usage_since(before: dict[str, Usage], meter: UsageMeter) -> dict[str, Usage]:
    return {role: usage - before.get(role, Usage()) for role, usage in meter.by_role().items()}


def _add_usage(ctx: StageContext, usage: dict[str, Usage]) -> None:
    for role, spent in usage.items():
        ctx.models.meter.add(role, spent)


class _ModelWorker(ABC):
    """An actor of a model pool: the profile's models, built once, answer batch after batch."""

    def __init__(self, models_factory: Callable[[], ModelSet]) -> None:
        self.models = models_factory()

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return _apply(self.answer, batch)

    @abstractmethod
    def answer(self, items: list[Any]) -> list[Any]:
        """One output item per input item of a batch."""


# ---------------------------------------------------------------- sample


def _decode(batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return _apply(lambda jobs: [_decode_job(i, job) for i, job in jobs], batch)


def _decode_job(index: int, job: ClipJob) -> tuple[int, list[EncodedClip], VideoError | None]:
    """A job's clips as JPEG bytes, up to the VideoError that stopped it, if any."""
    encoded: list[EncodedClip] = []
    try:
        for clip in encode_clips(job):
            encoded.append(clip)
    except VideoError as exc:
        return index, encoded, exc
    return index, encoded, None


class RaySampleStage(SampleStage):
    """`sample` with decoding on the cluster (`--workers` decode tasks at a time)."""

    max_chunk = DECODE_CHUNK

    def __init__(self, options: RayOptions) -> None:
        self.options = options

    def outcomes(self, ctx: StageContext, jobs: list[ClipJob]) -> Iterator[tuple[ClipJob, SampledClip | VideoError]]:
        if not jobs:
            return
        decoded = _rows(list(enumerate(jobs))).map_batches(
            _decode, batch_size=1, compute=_ray().data.TaskPoolStrategy(size=ctx.workers)
        )
        for index, encoded, error in _results(decoded):
            job = jobs[index]
            for clip in encoded:
                yield job, save_frames(ctx.store.root, clip)
            if error is not None:
                yield job, error


# ---------------------------------------------------------------- caption


def _read_clips(batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    def read(items: list[Any]) -> list[Any]:
        out = []
        for index, kinds, sources in items:
            try:
                out.append((index, kinds, sources.read()))
            except StoreError as exc:
                out.append((index, kinds, exc))
        return out

    return _apply(read, batch)


class _VisionWorker(_ModelWorker):
    """Answers clips with `vision_pass.ask`, one call per kind of work in the batch."""

    def answer(self, items: list[Any]) -> list[Any]:
        before = self.models.meter.by_role()
        answers: dict[int, Any] = {}
        groups: dict[tuple[str, ...], list[tuple[int, Any]]] = {}
        for index, kinds, clip in items:
            try:
                if isinstance(clip, StoreError):
                    raise clip
                groups.setdefault(kinds, []).append((index, clip.view()))
            except StoreError as exc:
                answers[index] = exc
        try:
            for kinds, group in groups.items():
                for (index, _), answer in zip(group, ask(self.models.vision, kinds, [v for _, v in group])):
                    answers[index] = answer
        except ModelError as exc:
            answers = {index: _Stopped(str(exc)) for index, _, _ in items}
        usage = _usage_since(before, self.models.meter)
        return [(index, answers[index], usage if n == 0 else {}) for n, (index, _, _) in enumerate(items)]


class RayCaptionStage(CaptionStage):
    """`caption` with the vision pass on a pool of actors that hold the vision model."""

    def __init__(self, options: RayOptions) -> None:
        self.options = options

    def describe(
        self, ctx: StageContext, video_ids: list[str], *, caption: Output, objects: Output | None, exclude: frozenset[str]
    ) -> dict[str, StageResult]:
        pending = pending_clips(ctx.store, video_ids, caption=caption, objects=objects, exclude=exclude)
        clips = [(needs, sources) for needs, group in pending.by_needs.items() for sources in group]
        if not clips:
            return pending.results
        rows = [(i, pending.kinds_of(needs), sources) for i, (needs, sources) in enumerate(clips)]
        answered = (
            _rows(rows)
            .map_batches(_read_clips, batch_size=READ_CHUNK, **_on_driver_node())
            .map_batches(
                _VisionWorker,
                batch_size=vision_call_size(ctx.pipeline, ctx.models.cfg.vlm),
                compute=_actors(self.options.actors or ctx.pipeline.ray_vision_actors),
                num_gpus=gpus_per_actor(ctx.models.cfg.vlm, _cluster_gpus()),
                fn_constructor_kwargs={"models_factory": ctx.models_factory},
            )
        )
        left, stopped = len(clips), None
        with ctx.progress(len(clips), pending.label) as bar:
            for index, answer, usage in _results(answered):
                _add_usage(ctx, usage)
                if isinstance(answer, _Stopped):
                    stopped = answer.reason
                    break
                needs, sources = clips[index]
                commit_clip(ctx.store, needs, sources.clip, answer, pending.results)
                left -= 1
                bar.update(1)
        if stopped is not None:
            stopped_failures(pending, stopped, left)
        return pending.results


# ---------------------------------------------------------------- visual


def _read_segments(batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    def read(items: list[Any]) -> list[Any]:
        out = []
        for index, root, segments in items:
            frames = []
            for paths in segments:
                try:
                    frames.append([(root / p, frame_bytes(root, p)) for p in paths])
                except StoreError as exc:
                    frames.append(exc)
            out.append((index, frames))
        return out

    return _apply(read, batch)


class _EmbedWorker(_ModelWorker):
    """Pools the frame embeddings of each segment with `visual.pooled_vectors`."""

    def answer(self, items: list[Any]) -> list[Any]:
        out = []
        for index, segments in items:
            before = self.models.meter.by_role()
            images, errors = [], []
            for frames in segments:
                try:
                    if isinstance(frames, StoreError):
                        raise frames
                    images.append([decode_frame(data, path) for path, data in frames])
                    errors.append(None)
                except StoreError as exc:
                    errors.append(exc)
            try:
                pooled: np.ndarray | _Stopped = visual.pooled_vectors(self.models.visual_embedder, images)
            except ModelError as exc:
                pooled = _Stopped(str(exc))
            out.append((index, errors, pooled, _usage_since(before, self.models.meter)))
        return out


class RayVisualMemory(visual.VisualMemory):
    """Visual memory whose segment embeddings come from a pool of embedder actors."""

    def __init__(self, ctx: StageContext, options: RayOptions) -> None:
        super().__init__(ctx.store, ctx.models)
        self.ctx = ctx
        self.options = options

    def embedded(
        self, batches: list[list[visual.Segment]], result: StageResult
    ) -> Iterator[tuple[list[visual.Segment], list[visual.Segment], np.ndarray]]:
        if not batches:
            return
        root = self.store.root
        rows = [(i, root, [s.frames for s in batch]) for i, batch in enumerate(batches)]
        embedded = (
            _rows(rows)
            .map_batches(_read_segments, batch_size=1, **_on_driver_node())
            .map_batches(
                _EmbedWorker,
                batch_size=1,
                compute=_actors(self.options.actors or self.ctx.pipeline.ray_embed_actors),
                num_gpus=gpus_per_actor(self.models.cfg.visual_embedder, _cluster_gpus()),
                fn_constructor_kwargs={"models_factory": self.ctx.models_factory},
            )
        )
        for index, errors, pooled, usage in _results(embedded):
            _add_usage(self.ctx, usage)
            if isinstance(pooled, _Stopped):
                raise ModelError(pooled.reason)
            batch = batches[index]
            for segment, error in zip(batch, errors):
                if error is not None:
                    result.failures.append((segment.unit, str(error)))
            yield batch, [s for s, e in zip(batch, errors) if e is None], pooled


class RayVisualStage(MemoryStage):
    """`visual` with the segment embeddings on a pool of actors that hold the visual embedder."""

    def __init__(self, options: RayOptions) -> None:
        super().__init__(visual.VisualMemory.name)
        self.options = options

    def memory(self, ctx: StageContext) -> visual.VisualMemory:
        return RayVisualMemory(ctx, self.options)
