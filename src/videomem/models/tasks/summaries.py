"""Summaries of groups of texts: the episodic memory's coarser scales and the object memory's
entity summaries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field


class SummaryOut(BaseModel):
    summary: str = Field(min_length=1)


@runtime_checkable
class Summarising(Protocol):
    def summarise(self, groups: Sequence[Sequence[str]]) -> list[str]:
        """One summary per group of texts."""
        ...
