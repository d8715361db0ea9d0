"""What every per-clip vision task shares: how a stage batches clips for it (`ClipTasks`) and
the per-clip failure (`Unusable`). A clip whose output stayed unusable comes back as `Unusable`
and the others of its call are kept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from videomem.models.engines import Batching


@dataclass(frozen=True)
class Unusable:
    """A request whose reply stayed unusable after the bounded re-asks (or whose transport
    failed): why, and the raw reply, so a stage records the clip as failed and goes on."""

    error: str
    reply: str = ""


@runtime_checkable
class ClipTasks(Protocol):
    def batching(self, batch_size: int) -> Batching:
        """How to hand clips over, given the pipeline's `caption_batch_size`."""
        ...
