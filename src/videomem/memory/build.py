"""What a memory's build is handed: the run's settings and what the pipeline does for it.

A memory builds itself from what earlier stages stored (`build(ctx, video_ids) → StageResult`,
one transaction per unit with its progress mark, so a re-run resumes); the pipeline runs it as
the stage of the memory's name (`pipeline.base.StageContext` is this context). Work that is
pipeline machinery (the batched vision pass over clips) is reached through the context, so the
memory layer stays below the pipeline.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from videomem.config import PipelineConfig
from videomem.core import StageResult
from videomem.store.clips import ClipRow

if TYPE_CHECKING:
    from tqdm import tqdm

ClipWriter = Callable[[sqlite3.Connection, ClipRow, Any], None]
"""Writes one clip's output of the vision pass inside the clip's transaction."""


class BuildContext(Protocol):
    """What a build may use besides its memory's store and models."""

    @property
    def pipeline(self) -> PipelineConfig:
        """The pipeline profile of the run."""
        ...

    def progress(self, total: int, desc: str, unit: str = "clip") -> tqdm:
        """A progress bar (the terminal's, a server job's, or a hidden one)."""
        ...

    def handed_over(self, stage: str) -> StageResult | None:
        """What an earlier stage of this run did of `stage`'s work in its own pass (the caption
        stage's vision pass writes object records too), taken once; None when none did."""
        ...

    def object_records(
        self, stage: str, write: ClipWriter, video_ids: Sequence[str], exclude: frozenset[str]
    ) -> StageResult:
        """The vision pass over the clips of `video_ids` whose `stage` unit is not done (but
        those in `exclude`): the vision model's object records of each, written by `write`."""
        ...
