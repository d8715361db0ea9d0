"""Translation of imported captions into the language the corpus is asked in."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field


class TranslationOut(BaseModel):
    translation: str = Field(min_length=1)


@runtime_checkable
class Translation(Protocol):
    def translate(self, texts: Sequence[str], language: str) -> list[str]:
        """Each text in `language` (imported captions; a backend without a translator returns
        them as written and says so)."""
        ...
