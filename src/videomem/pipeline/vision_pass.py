"""One vision pass per clip for the clip-level memories (event captions, object records).

What a clip still needs is decided per clip: its caption and its records (one `describe_clips`
request, so the frames are sent and prefilled once for both memories), the caption only
(`caption_clips`: its records are done, or the run does not build objects) or the records only
(`extract_objects`: its caption is already there). Each clip's rows and progress marks are
committed in one transaction as its batch comes back, so a killed ingest loses at most the
batches in flight and never writes a row twice.

A clip whose output stayed unusable after the model layer's repairs is recorded as failed, with
the raw reply (`Store.mark_failed`, shown by `videomem info`), and the other clips go on; it
stays pending, so the next run retries only the failed clips. A backend failure (every request
of a batch lost: the server is down) ends the pass and is reported; finished clips are kept.

Each call takes the vision backend as the task protocol it needs (`models/tasks/`): a pass that
only captions asks `ClipCaptioning`, one that only records objects `ClipObjects`, and clips that
need both `ClipDescription`; a backend that lacks the task stops the pass with a line naming it.

Batches go to the model as `ClipTasks.batching` says: one large call at a time for a GPU
engine, several in flight for an HTTP server so that its `concurrency` is reached across
batches. A reader thread opens the frames of the next batches while the model works, through a
bounded queue; only the calling thread touches SQLite. Clips can be added to the plan while the
pass runs (`VisionPass`), which is how a run that samples and captions feeds the model clips as
they are decoded (pipeline/streaming.py). The Ray runner (pipeline/ray_runner.py) plans
with `pending_clips`, asks with `ask` on its actors and commits with `commit_clip`, the same
per-clip steps.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from videomem.core import ClipView, ProgressFactory, StageResult
from videomem.errors import ModelError, StoreError
from videomem.memory.build import ClipWriter
from videomem.models.engines import Batching
from videomem.models.tasks import require
from videomem.models.tasks.captioning import ClipCaptioning
from videomem.models.tasks.clips import ClipTasks, Unusable
from videomem.models.tasks.objects import ClipDescription, ClipNotes, ClipObjects
from videomem.store import Store
from videomem.store.clips import ClipRow, clips_of
from videomem.store.frames import ClipSources, clip_sources


@dataclass(frozen=True)
class Output:
    """One memory the pass fills: its stage (whose progress marks say what is done) and how it
    writes a clip's output."""

    stage: str
    write: ClipWriter


@dataclass(frozen=True)
class _Batch:
    outputs: tuple[Output, ...]
    sources: tuple[ClipSources, ...]


@dataclass
class _Loaded:
    batch: _Batch
    views: list[ClipView | StoreError]


def ask(vision: ClipTasks, kinds: tuple[str, ...], views: list[ClipView]) -> list:
    """Per clip, its outputs in `kinds` order ("caption", "objects"), or an Unusable."""
    if len(kinds) == 2:
        notes = require(vision, ClipDescription).describe_clips(views)
        return [n if isinstance(n, Unusable) else (n.caption, n.objects) for n in _checked(notes, views)]
    if kinds == ("caption",):
        outs: Sequence[Any] = require(vision, ClipCaptioning).caption_clips(views)
    else:
        outs = require(vision, ClipObjects).extract_objects(views)
    return [o if isinstance(o, Unusable) else (o,) for o in _checked(outs, views)]


def _checked(values: Sequence[ClipNotes | Any], views: list[ClipView]) -> Sequence[Any]:
    if len(values) != len(views):
        raise RuntimeError(f"the vision tasks returned {len(values)} results for {len(views)} clips")
    return values


@dataclass
class Pending:
    """What a pass over some videos has to do: per set of outputs a clip still needs, those
    clips; and a result per stage, counting what is already done. Clips are added one by one
    (`add`), so a pass can take them as they are sampled (pipeline/streaming.py)."""

    outputs: tuple[Output, ...]
    kinds: dict[str, str]
    """Output stage → the vision task kind that fills it ("caption" or "objects")."""
    results: dict[str, StageResult]
    done: dict[str, set[str]]
    """Output stage → the units it had done when the pass began."""
    exclude: frozenset[str] = frozenset()
    by_needs: dict[tuple[Output, ...], list[ClipSources]] = field(default_factory=dict)

    def kinds_of(self, outputs: tuple[Output, ...]) -> tuple[str, ...]:
        return tuple(self.kinds[o.stage] for o in outputs)

    @property
    def label(self) -> str:
        return "+".join(o.stage for o in self.outputs)

    def add(self, store: Store, clip: ClipRow) -> bool:
        """Plan `clip` if it still needs the model (True); a clip with nothing to look at is
        marked done here, with no model, and one in `exclude` is left alone."""
        needs = tuple(o for o in self.outputs if clip.unit not in self.done[o.stage])
        for o in self.outputs:
            if o not in needs:
                self.results[o.stage].skipped += 1
        if not needs or clip.unit in self.exclude:
            return False
        sources = clip_sources(store, clip)
        if sources.empty:  # nothing to look at: done with no model call
            with store.transaction() as tx:
                for o in needs:
                    Store.mark_done(tx, o.stage, clip.unit)
                    self.results[o.stage].done += 1
            return False
        self.by_needs.setdefault(needs, []).append(sources)
        return True

    def take(self, size: int, partial: bool) -> _Batch | None:
        """Up to `size` planned clips that need the same outputs, taken out of the plan: a full
        batch, or with `partial` the first group's clips however few; None when there is none."""
        for needs, group in self.by_needs.items():
            if len(group) >= size or partial:
                batch = _Batch(needs, tuple(group[:size]))
                del group[:size]
                if not group:
                    del self.by_needs[needs]
                return batch
        return None


def start_pass(
    store: Store, *, caption: Output | None = None, objects: Output | None = None, exclude: frozenset[str] = frozenset()
) -> Pending:
    """An empty plan for `caption` and/or `objects`, knowing what is done already."""
    outputs = tuple(o for o in (caption, objects) if o is not None)
    kinds = {o.stage: k for o, k in ((caption, "caption"), (objects, "objects")) if o is not None}
    results = {o.stage: StageResult(o.stage) for o in outputs}
    return Pending(outputs, kinds, results, {o.stage: store.done_units(o.stage) for o in outputs}, exclude)


def pending_clips(
    store: Store,
    video_ids: Sequence[str],
    *,
    caption: Output | None = None,
    objects: Output | None = None,
    exclude: frozenset[str] = frozenset(),
) -> Pending:
    """The clips of these videos not yet done for `caption` and/or `objects` (units in
    `exclude` left alone); a clip with nothing to look at is marked done here, with no model."""
    pending = start_pass(store, caption=caption, objects=objects, exclude=exclude)
    for clip in clips_of(store, video_ids):
        pending.add(store, clip)
    return pending


def stopped_failures(pending: Pending, reason: str, left: int) -> None:
    """A backend failure ended the pass: one failure per stage saying how much is left."""
    for o in pending.outputs:
        pending.results[o.stage].failures.append((o.stage, f"{reason} ({left} clips left to do; re-run ingest to resume)"))


def describe_pending(
    store: Store,
    vision: Callable[[], ClipTasks],
    video_ids: Sequence[str],
    batch_size: int,
    progress: ProgressFactory | None,
    *,
    caption: Output | None = None,
    objects: Output | None = None,
    exclude: frozenset[str] = frozenset(),
) -> dict[str, StageResult]:
    """Fill `caption` and/or `objects` for every clip of these videos not yet done for it
    (units in `exclude` are left alone). Returns a result per stage. `vision` builds the task
    set on first use, so a run with nothing to do loads no model."""
    pending = pending_clips(store, video_ids, caption=caption, objects=objects, exclude=exclude)
    total = sum(len(group) for group in pending.by_needs.values())
    if not total:
        return pending.results
    bar = progress(total, pending.label) if progress else None
    with VisionPass(store, vision, batch_size, pending, bar) as vision_pass:
        vision_pass.admitted(total)
        vision_pass.finish()
    if bar is not None:
        bar.close()
    return pending.results


class VisionPass:
    """Sends a plan's clips to the vision tasks in batches and commits each clip as its batch
    comes back; clips may still be added to the plan while it runs.

    `pump` is called by the thread that owns the store whenever there may be something to do:
    it commits the batches answered, then reads ahead and sends what the model's free slots
    allow (a partial batch only when asked: the caller knows no more clips are coming soon).
    `notify`, if given, is called from a model thread each time a batch is answered, so that
    the caller can wake up and `pump`. The task set is built when the first batch is sent.
    """

    def __init__(
        self,
        store: Store,
        vision: Callable[[], ClipTasks],
        batch_size: int,
        pending: Pending,
        bar: Any | None,
        notify: Callable[[], None] | None = None,
    ) -> None:
        self.store, self.vision, self.batch_size, self.pending, self.bar = store, vision, batch_size, pending, bar
        self.notify = notify
        self.left = 0
        """Clips added to the plan and not committed yet."""
        self.stopped: str | None = None
        self.tasks: ClipTasks | None = None
        self.plan: Batching | None = None
        self.loads: deque[Future[_Loaded]] = deque()
        self.calls: dict[Future[list], _Loaded] = {}
        self.reader = ThreadPoolExecutor(1, thread_name_prefix="frames")
        self.model: ThreadPoolExecutor | None = None

    def __enter__(self) -> VisionPass:
        return self

    def __exit__(self, *exc: object) -> None:
        for load in self.loads:
            load.cancel()
        self.reader.shutdown()
        if self.model is not None:
            self.model.shutdown()
        if self.stopped is not None:
            stopped_failures(self.pending, self.stopped, self.left)

    def admitted(self, n: int) -> None:
        """`n` clips were added to the plan."""
        self.left += n

    @property
    def idle(self) -> bool:
        """No batch is being read or answered."""
        return not self.loads and not self.calls

    @property
    def waiting(self) -> bool:
        """Clips are planned that only a partial batch would send now (the model is idle)."""
        return self.stopped is None and self.idle and bool(self.pending.by_needs)

    def pump(self, partial: bool = False) -> None:
        for future in [f for f in self.calls if f.done()]:
            self._commit(future)
        self._top_up(partial)

    def finish(self) -> None:
        """Send everything left in the plan, partial batches too, and commit every answer."""
        self.pump(partial=True)
        while self.calls:
            wait(self.calls, return_when=FIRST_COMPLETED)
            self.pump(partial=True)

    def _top_up(self, partial: bool) -> None:
        if self.tasks is None:
            if not self.pending.by_needs:
                return
            self.tasks = require(self.vision(), ClipTasks)
            self.plan = self.tasks.batching(self.batch_size)
            self.model = ThreadPoolExecutor(self.plan.parallel, thread_name_prefix="vision")
        assert self.plan is not None and self.model is not None
        while self.stopped is None:
            while len(self.loads) < self.plan.parallel + 1:  # frames read ahead, bounded
                batch = self.pending.take(self.plan.size, partial)
                if batch is None:
                    break
                self.loads.append(self.reader.submit(_load, batch))
            if not self.loads or len(self.calls) >= self.plan.parallel:
                return
            loaded = self.loads.popleft().result()
            call = self.model.submit(self._infer, loaded)
            self.calls[call] = loaded
            if self.notify is not None:
                call.add_done_callback(lambda _: self.notify())

    def _infer(self, loaded: _Loaded) -> list:
        views = [v for v in loaded.views if isinstance(v, ClipView)]
        if not views:
            return []
        assert self.tasks is not None
        return ask(self.tasks, self.pending.kinds_of(loaded.batch.outputs), views)

    def _commit(self, future: Future[list]) -> None:
        loaded = self.calls.pop(future)
        try:
            answers = future.result()
        except ModelError as exc:
            self.stopped = self.stopped or str(exc)
            return
        _commit(self.store, loaded, answers, self.pending.results)
        self.left -= len(loaded.batch.sources)
        if self.bar is not None:
            self.bar.update(len(loaded.batch.sources))


def _load(batch: _Batch) -> _Loaded:
    views: list[ClipView | StoreError] = []
    for sources in batch.sources:
        try:
            views.append(sources.load())
        except StoreError as exc:
            views.append(exc)
    return _Loaded(batch, views)


def _commit(store: Store, loaded: _Loaded, answers: list, results: dict[str, StageResult]) -> None:
    """Each clip of a finished batch: its rows and marks in one transaction, or its failure."""
    replies = iter(answers)
    for sources, view in zip(loaded.batch.sources, loaded.views):
        answer = view if isinstance(view, StoreError) else next(replies)
        commit_clip(store, loaded.batch.outputs, sources.clip, answer, results)


def commit_clip(
    store: Store, outputs: tuple[Output, ...], clip: ClipRow, answer: Any, results: dict[str, StageResult]
) -> None:
    """One clip's answer (its outputs in `outputs` order, an Unusable, or the StoreError that
    kept its frames from the model): its rows and marks in one transaction, or its failure."""
    unit = clip.unit
    if isinstance(answer, StoreError):
        for o in outputs:
            results[o.stage].failures.append((unit, str(answer)))
        return
    with store.transaction() as tx:
        if isinstance(answer, Unusable):
            for o in outputs:
                Store.mark_failed(tx, o.stage, unit, answer.error, answer.reply)
                results[o.stage].failures.append((unit, f"{answer.error} (recorded; re-run ingest to retry)"))
            return
        for o, value in zip(outputs, answer):
            o.write(tx, clip, value)
            Store.mark_done(tx, o.stage, unit)
            results[o.stage].done += 1
