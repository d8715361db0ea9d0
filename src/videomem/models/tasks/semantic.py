"""The semantic memory's tasks (WorldMM): induce lasting knowledge from the episodic facts of a
segment, then consolidate it with what semantic memory already holds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from videomem.models.tasks.episodic import Triplet


@dataclass(frozen=True)
class EpisodicFact:
    """An episodic triplet put to semantic induction, with the coarse segment that saw it."""

    triplet: Triplet
    segment: int
    """0: the segment being added to semantic memory; 1, 2, ...: earlier segments, most recent
    first, whose similar facts were recalled so that a recurring habit can be seen."""
    when: str
    """The segment's time range as observations print it."""


class SemanticTriplet(Triplet):
    evidence: list[int] = Field(default_factory=list, description="indices of the supporting episodic facts")


class SemanticOut(BaseModel):
    triplets: list[SemanticTriplet]


@dataclass(frozen=True)
class KnownTriplet:
    """A semantic triplet already in memory, put to consolidation beside a new one."""

    id: int
    triplet: Triplet
    support: int
    """Distinct segments whose episodic facts support it."""
    similarity: float
    """Embedding cosine to the new triplet."""


@dataclass(frozen=True)
class NewTriplet:
    """A newly induced semantic triplet and the semantic memory it may overlap."""

    triplet: Triplet
    support: int
    known: Sequence[KnownTriplet]


class ConsolidationOut(BaseModel):
    """WorldMM's consolidation: the new triplet (possibly rewritten), the existing triplet it
    restates if any (its evidence is merged into that one), and the existing triplets it
    contradicts or outdates (retired from now on)."""

    triplet: Triplet
    same_as: int | None = Field(None, description="id of an existing triplet stating the same knowledge")
    retire: list[int] = Field(default_factory=list, description="ids of existing triplets it contradicts or outdates")


@runtime_checkable
class SemanticTasks(Protocol):
    def induce_semantic(self, facts: Sequence[EpisodicFact], min_segments: int) -> list[SemanticTriplet]:
        """Lasting knowledge (relations, habits, preferences, abilities) behind the facts of
        segment 0; evidence = indices into `facts`. A habit should recur in `min_segments`
        distinct segments."""
        ...

    def consolidate(self, items: Sequence[NewTriplet]) -> list[ConsolidationOut]:
        """For each new triplet: its final form, the known triplet it restates, the ones it retires."""
        ...
