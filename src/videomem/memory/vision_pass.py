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

Batches go to the model as `VisionTasks.batching` says: one large call at a time for a GPU
engine, several in flight for an HTTP server so that its `concurrency` is reached across
batches. A reader thread opens the frames of the next batches while the model works, through a
bounded queue; only this thread touches SQLite. The Ray runner (pipeline/ray_runner.py) plans
with `pending_clips`, asks with `ask` on its actors and commits with `commit_clip`, the same
per-clip steps.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from videomem.errors import ModelError, StoreError
from videomem.memory.clips import ClipRow, ClipSources, clip_sources, clips_of
from videomem.models.base import ClipNotes, ClipView, Unusable, VisionTasks
from videomem.pipeline.base import StageResult
from videomem.store import Store
from videomem.store.vectors import ProgressFactory

Writer = Callable[[sqlite3.Connection, ClipRow, Any], None]
"""Writes one clip's output (a caption, or a list of object records) inside a transaction."""


@dataclass(frozen=True)
class Output:
    """One memory the pass fills: its stage (whose progress marks say what is done) and how it
    writes a clip's output."""

    stage: str
    write: Writer


@dataclass(frozen=True)
class _Batch:
    outputs: tuple[Output, ...]
    sources: tuple[ClipSources, ...]


@dataclass
class _Loaded:
    batch: _Batch
    views: list[ClipView | StoreError]


def ask(vision: VisionTasks, kinds: tuple[str, ...], views: list[ClipView]) -> list:
    """Per clip, its outputs in `kinds` order ("caption", "objects"), or an Unusable."""
    if len(kinds) == 2:
        notes = vision.describe_clips(views)
        return [n if isinstance(n, Unusable) else (n.caption, n.objects) for n in _checked(notes, views)]
    task = vision.caption_clips if kinds == ("caption",) else vision.extract_objects
    return [o if isinstance(o, Unusable) else (o,) for o in _checked(task(views), views)]


def _checked(values: Sequence[ClipNotes | Any], views: list[ClipView]) -> Sequence[Any]:
    if len(values) != len(views):
        raise RuntimeError(f"the vision tasks returned {len(values)} results for {len(views)} clips")
    return values


@dataclass
class Pending:
    """What a pass over some videos has to do: per set of outputs a clip still needs, those
    clips; and a result per stage, counting what is already done."""

    outputs: tuple[Output, ...]
    kinds: dict[str, str]
    """Output stage → the vision task kind that fills it ("caption" or "objects")."""
    results: dict[str, StageResult]
    by_needs: dict[tuple[Output, ...], list[ClipSources]]

    def kinds_of(self, outputs: tuple[Output, ...]) -> tuple[str, ...]:
        return tuple(self.kinds[o.stage] for o in outputs)

    @property
    def label(self) -> str:
        return "+".join(o.stage for o in self.outputs)


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
    outputs = tuple(o for o in (caption, objects) if o is not None)
    kinds = {o.stage: k for o, k in ((caption, "caption"), (objects, "objects")) if o is not None}
    results = {o.stage: StageResult(o.stage) for o in outputs}
    done = {o.stage: store.done_units(o.stage) for o in outputs}
    by_needs: dict[tuple[Output, ...], list[ClipSources]] = {}
    for clip in clips_of(store, video_ids):
        needs = tuple(o for o in outputs if clip.unit not in done[o.stage])
        for o in outputs:
            if o not in needs:
                results[o.stage].skipped += 1
        if not needs or clip.unit in exclude:
            continue
        sources = clip_sources(store, clip)
        if sources.empty:  # nothing to look at: done with no model call
            with store.transaction() as tx:
                for o in needs:
                    Store.mark_done(tx, o.stage, clip.unit)
                    results[o.stage].done += 1
            continue
        by_needs.setdefault(needs, []).append(sources)
    return Pending(outputs, kinds, results, by_needs)


def stopped_failures(pending: Pending, reason: str, left: int) -> None:
    """A backend failure ended the pass: one failure per stage saying how much is left."""
    for o in pending.outputs:
        pending.results[o.stage].failures.append((o.stage, f"{reason} ({left} clips left to do; re-run ingest to resume)"))


def describe_pending(
    store: Store,
    vision: Callable[[], VisionTasks],
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
    results, by_needs = pending.results, pending.by_needs
    if not by_needs:
        return results

    tasks = vision()
    plan = tasks.batching(batch_size)
    batches = [
        _Batch(needs, tuple(group[i : i + plan.size]))
        for needs, group in by_needs.items()
        for i in range(0, len(group), plan.size)
    ]
    total = sum(len(b.sources) for b in batches)
    bar = progress(total, pending.label) if progress else None

    def infer(loaded: _Loaded) -> list:
        views = [v for v in loaded.views if isinstance(v, ClipView)]
        if not views:
            return []
        return ask(tasks, pending.kinds_of(loaded.batch.outputs), views)

    left = total
    stopped: str | None = None
    with ThreadPoolExecutor(1, thread_name_prefix="frames") as reader, ThreadPoolExecutor(
        plan.parallel, thread_name_prefix="vision"
    ) as model:
        loads: deque[Future[_Loaded]] = deque()
        calls: dict[Future[list], _Loaded] = {}
        queue: Iterator[_Batch] = iter(batches)

        def top_up() -> None:
            while stopped is None:
                while len(loads) < plan.parallel + 1:  # frames read ahead, bounded
                    batch = next(queue, None)
                    if batch is None:
                        break
                    loads.append(reader.submit(_load, batch))
                if not loads or len(calls) >= plan.parallel:
                    return
                loaded = loads.popleft().result()
                calls[model.submit(infer, loaded)] = loaded

        top_up()
        while calls:
            finished, _ = wait(calls, return_when=FIRST_COMPLETED)
            for future in finished:
                loaded = calls.pop(future)
                try:
                    answers = future.result()
                except ModelError as exc:
                    stopped = stopped or str(exc)
                    continue
                _commit(store, loaded, answers, results)
                left -= len(loaded.batch.sources)
                if bar is not None:
                    bar.update(len(loaded.batch.sources))
            top_up()
        for load in loads:
            load.cancel()
    if bar is not None:
        bar.close()
    if stopped is not None:
        stopped_failures(pending, stopped, left)
    return results


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
