"""The stage contract.

A stage turns what earlier stages stored into new rows. Each stage is idempotent and
resumable: it records finished units in `stage_progress` inside the same transaction as the
unit's rows, and on a re-run only processes units not recorded. `reset` forgets a stage's
output so `--force` can redo it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from tqdm import tqdm

from videomem.config import PipelineConfig
from videomem.models.registry import ModelSet
from videomem.store import Store
from videomem.store.vectors import ProgressFactory


@dataclass(frozen=True)
class VideoSource:
    """One input video file and where it sits on the corpus timeline."""

    path: Path
    video_id: str
    t_offset: float = 0.0
    transcript: Path | None = None


@dataclass
class StageResult:
    stage: str
    done: int = 0
    skipped: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    """(what failed — a file or unit —, one-line reason)."""
    repaired: int = 0
    """Derived files restored for work already done (frames deleted from the store)."""
    note: str = ""
    """What the stage did not do and why, for the summary (a stage skipped with no video files)."""
    seconds: float = 0.0
    """Wall time of the stage's run (0 for stages streamed into each other)."""


@dataclass
class StageContext:
    store: Store
    pipeline: PipelineConfig
    models_factory: Callable[[], ModelSet]
    workers: int = 1
    force: bool = False
    show_progress: bool = True
    bars: ProgressFactory | None = None
    """Makes the progress bars instead of tqdm on the terminal (a server's job reports them)."""
    stages: tuple[str, ...] = ()
    """The stages this run executes, so a stage can do a later one's work in the same pass."""
    ahead: dict[str, StageResult] = field(default_factory=dict)
    """Work an earlier stage did for a later one (stage → its result so far)."""
    _models: ModelSet | None = None

    @property
    def models(self) -> ModelSet:
        """Built on first use, so stages that need no model load none."""
        if self._models is None:
            self._models = self.models_factory()
        return self._models

    @property
    def models_built(self) -> ModelSet | None:
        """The models, if any stage needed them (so a run can report their usage)."""
        return self._models

    def progress(self, total: int, desc: str, unit: str = "clip") -> tqdm:
        if self.bars is not None:
            return self.bars(total, desc, unit=unit)
        return tqdm(total=total, desc=desc, unit=unit, disable=not self.show_progress, dynamic_ncols=True, leave=True)


class Stage(Protocol):
    name: str

    def run(self, ctx: StageContext, sources: list[VideoSource]) -> StageResult: ...

    def reset(self, store: Store, sources: list[VideoSource]) -> None: ...
