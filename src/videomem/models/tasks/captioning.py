"""The caption stage's task: one caption per clip (TeleMem's event memory)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from videomem.core import ClipView
from videomem.models.tasks.clips import ClipTasks, Unusable


class CaptionOut(BaseModel):
    caption: str = Field(min_length=1, description="what happens in the clip, in plain sentences")


@runtime_checkable
class ClipCaptioning(ClipTasks, Protocol):
    def caption_clips(self, clips: Sequence[ClipView]) -> list[str | Unusable]: ...
