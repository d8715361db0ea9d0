"""Engine protocols: the models themselves, batch-first so that GPU backends can batch.

`VisionLanguageModel` and `LanguageModel` generate text (openai_compat, vllm_engine,
hf_transformers); `TextEmbedder` and `VisualEmbedder` embed (text_embed, open_clip, the offline
ones). Task protocols (`models/tasks/`) are fulfilled on top of them by `prompted.py`, or
without them by `offline/`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
from PIL.Image import Image

from videomem.models.usage import Usage


@dataclass
class Generation:
    text: str
    usage: Usage
    finish_reason: str | None = None
    """"stop", or "length" when the token budget cut the reply (None when the backend cannot tell)."""
    error: str | None = None
    """Set when this request failed for good (its retries spent) while others of its batch did not."""


@dataclass(frozen=True)
class Batching:
    """How a stage hands clips to a vision task set: `size` clips per call and `parallel` calls
    in flight at once (an HTTP server batches whatever arrives together; a GPU engine wants one
    large call)."""

    size: int
    parallel: int = 1


@dataclass
class VLRequest:
    prompt: str
    images: list[Image] = field(default_factory=list)
    system: str | None = None
    json_schema: dict[str, Any] | None = None
    max_tokens: int | None = None


@dataclass
class LMRequest:
    prompt: str
    system: str | None = None
    json_schema: dict[str, Any] | None = None
    max_tokens: int | None = None


@runtime_checkable
class VisionLanguageModel(Protocol):
    def generate(self, requests: Sequence[VLRequest]) -> list[Generation]: ...


@runtime_checkable
class LanguageModel(Protocol):
    def generate(self, requests: Sequence[LMRequest]) -> list[Generation]: ...


@runtime_checkable
class TextEmbedder(Protocol):
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array (len(texts), dim) with L2-normalised rows (inner product = cosine)."""
        ...


@runtime_checkable
class VisualEmbedder(Protocol):
    dim: int

    def embed_images(self, images: Sequence[Image]) -> np.ndarray: ...

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray: ...
