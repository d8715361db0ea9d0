"""The episodic memory's tasks (WorldMM): to build, entities and subject–relation–object
triplets of captions for the knowledge graph of each time scale and summaries for the coarser
scales (`EpisodicTasks`); to retrieve, the cross-scale re-rank of the captions found
(`CaptionRanking`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
from pydantic import BaseModel, Field

from videomem.models.tasks.summaries import Summarising


class EntitiesOut(BaseModel):
    entities: list[str] = Field(description="people, objects, places, times and on-screen text a caption names")


class Triplet(BaseModel):
    subject: str = Field(min_length=1)
    relation: str = Field(min_length=1)
    object: str = Field(min_length=1)


class TripletsOut(BaseModel):
    triplets: list[Triplet]


@dataclass(frozen=True)
class RankCandidate:
    """A caption put to the cross-scale re-rank (WorldMM's episodic retrieval)."""

    id: int
    text: str
    t_start: float
    t_end: float
    scale: float
    """Seconds per window of the time scale it comes from."""
    rank: int
    """Its place (1 = best) among the candidates of its own scale."""
    timeline: str = ""
    """Candidates on one timeline may contain each other: a video's id when every video starts
    at 0, '' on a corpus timeline (EgoLife)."""
    vector: np.ndarray | None = field(default=None, compare=False, repr=False)
    """Its text embedding when the memory already holds one (the episodic graphs do), so that a
    re-rank by similarity does not embed every candidate again for every query."""


class RankingOut(BaseModel):
    ids: list[int] = Field(description="ids of the relevant captions, most relevant first")


@runtime_checkable
class EpisodicTasks(Summarising, Protocol):
    def extract_entities(self, texts: Sequence[str]) -> list[list[str]]:
        """The entities each text names (people, objects, places, times, on-screen text)."""
        ...

    def extract_triplets(self, texts: Sequence[str], entities: Sequence[Sequence[str]]) -> list[list[Triplet]]:
        """Subject–relation–object facts of each text, built around its `entities`; "I" stays "I"."""
        ...


@runtime_checkable
class CaptionRanking(Protocol):
    def rerank(self, query: str, candidates: Sequence[RankCandidate]) -> list[int]:
        """Ids of the candidates that answer `query`, most relevant first, across time scales."""
        ...
