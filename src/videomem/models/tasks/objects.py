"""Object tasks: TeleMem's key-value object records, read from a clip's frames (the vision
pass: `ClipObjects`, or `ClipDescription` for caption and records from one request) or from an
imported caption (`CaptionObjects`), and merged into entities by the object memory
(`EntityMerging`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from videomem.core import ClipView
from videomem.models.tasks.captioning import ClipCaptioning
from videomem.models.tasks.clips import ClipTasks, Unusable
from videomem.models.tasks.summaries import Summarising


class ObjectRecord(BaseModel):
    """TeleMem key-value object record for one clip. Key: name, kind, appearance, identity;
    value: what the entity does or its state in this clip. first_seen is set by the pipeline."""

    name: str = Field(min_length=1)
    kind: Literal["person", "object"]
    appearance: list[str] = Field(default_factory=list)
    identity: list[str] = Field(default_factory=list)
    value: str = Field(min_length=1, description="behaviour or state in this clip")


class ObjectsOut(BaseModel):
    objects: list[ObjectRecord]


class ClipNotes(BaseModel):
    """One VLM pass over a clip: its caption and its object records together, so the frames
    are sent (and prefilled) once for both memories."""

    caption: str = Field(min_length=1, description="what happens in the clip, in plain sentences")
    objects: list[ObjectRecord] = Field(description="the people and things seen, one record each")


class MergeDecision(BaseModel):
    same: bool
    reason: str = ""


@runtime_checkable
class ClipObjects(ClipTasks, Protocol):
    def extract_objects(self, clips: Sequence[ClipView]) -> list[list[ObjectRecord] | Unusable]: ...


@runtime_checkable
class ClipDescription(ClipCaptioning, ClipObjects, Protocol):
    """A vision pass that fills both the event and the object memory: clips that need both get
    one request; clips that need one of them get that task alone."""

    def describe_clips(self, clips: Sequence[ClipView]) -> list[ClipNotes | Unusable]:
        """Caption and object records of each clip from one request per clip."""
        ...


@runtime_checkable
class CaptionObjects(Protocol):
    def extract_objects_from_text(self, captions: Sequence[str]) -> list[list[ObjectRecord]]:
        """Object records of a clip read from its caption alone (clips with imported captions,
        which get no vision pass)."""
        ...


@runtime_checkable
class EntityMerging(Summarising, Protocol):
    """The object memory's consolidation: does a record name a known entity, and each changed
    entity's summary."""

    def same_entity(self, pairs: Sequence[tuple[ObjectRecord, ObjectRecord]]) -> list[bool]: ...
