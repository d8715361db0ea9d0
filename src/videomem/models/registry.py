"""Build the models a run needs from a `models/*.yaml` profile.

The two generative roles are task backends: `vision` (the profile's `vlm`) and `language` (its
`llm`). A backend implements the task protocols it serves (`models/tasks/`), and a consumer
takes it through `tasks.require` as the protocol it calls, so a backend needs no stubs for
tasks nobody asks of it.

Each role is built on first use, so `videomem info` never loads a model and `ingest --stages
sample` never loads a VLM. Backends are imported lazily: vllm, open_clip or transformers are
only imported when a profile names them.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from videomem.config import ModelsConfig, RoleConfig, load_models
from videomem.errors import ModelError
from videomem.models.engines import LanguageModel, TextEmbedder, VisionLanguageModel, VisualEmbedder
from videomem.models.tasks import require
from videomem.models.tasks.agent import Answering
from videomem.models.usage import UsageMeter

if TYPE_CHECKING:
    from videomem.models.asr import SpeechRecognizer
    from videomem.models.offline.language import OfflineLanguage
    from videomem.models.offline.scene import SceneAnalyser
    from videomem.models.offline.vision import OfflineVision
    from videomem.models.prompted import PromptedLanguage, PromptedVision


def build_engine(cfg: RoleConfig, role: str, meter: UsageMeter) -> VisionLanguageModel | LanguageModel:
    """A generative engine for a non-offline role."""
    if cfg.backend == "openai":
        from videomem.models.openai_compat import OpenAICompatEngine

        return OpenAICompatEngine(cfg, role, meter)
    if cfg.backend == "vllm":
        from videomem.models.vllm_engine import VLLMEngine

        return VLLMEngine(cfg, role, meter)
    if cfg.backend == "transformers":
        from videomem.models.hf_transformers import TransformersEngine

        return TransformersEngine(cfg, role, meter)
    raise ModelError(f"backend {cfg.backend!r} cannot generate text")


def image_limit(cfg: ModelsConfig) -> int | None:
    """The most images the vision engine takes in one request (None: no known limit): the vlm's
    `max_images`, which an in-process vLLM engine is built with. Tools that send frames send at
    most this many."""
    if cfg.vlm.backend == "vllm":
        from videomem.models.vllm_engine import image_limit as engine_limit

        return engine_limit(cfg.vlm)
    return cfg.vlm.max_images


def engine_window(cfg: RoleConfig) -> int | None:
    """Clips a stage hands a local generative engine at once (its `batching` window), read from
    the profile without loading the model; None for backends without one (HTTP, offline)."""
    if cfg.backend == "vllm":
        from videomem.models.vllm_engine import window

        return window(cfg)
    if cfg.backend == "transformers":
        from videomem.models.hf_transformers import WINDOW

        return WINDOW
    return None


class ModelSet:
    """The four roles of one profile, built lazily, sharing one usage meter."""

    def __init__(self, cfg: ModelsConfig) -> None:
        self.cfg = cfg
        self.meter = UsageMeter()

    @classmethod
    def from_file(cls, path: str | Path | None = None) -> ModelSet:
        return cls(load_models(path))

    @cached_property
    def text_embedder(self) -> TextEmbedder:
        """The profile's text embedder; recently embedded texts (an agent's question, asked of
        every tool) are answered from memory (`models/recent.py`)."""
        from videomem.models.recent import RecentTexts

        cfg = self.cfg.text_embedder
        if cfg.backend == "openai":
            from videomem.models.openai_compat import OpenAICompatEmbedder

            return RecentTexts(OpenAICompatEmbedder(cfg, "text_embedder", self.meter))
        from videomem.models.text_embed import SentenceTransformerEmbedder, offline_minilm_path

        source = offline_minilm_path() if cfg.backend == "offline" else cfg.model
        return RecentTexts(SentenceTransformerEmbedder(str(source), cfg, "text_embedder", self.meter))

    @cached_property
    def visual_embedder(self) -> VisualEmbedder | None:
        cfg = self.cfg.visual_embedder
        if cfg is None:
            return None
        if cfg.backend == "offline":
            from videomem.models.offline.visual_embed import OfflineVisualEmbedder

            return OfflineVisualEmbedder(cfg, self.meter, self.text_embedder, self.offline_scene)
        from videomem.models.open_clip import OpenClipEmbedder

        return OpenClipEmbedder(cfg, "visual_embedder", self.meter)

    @cached_property
    def asr(self) -> SpeechRecognizer | None:
        """The speech model, or None when the profile has none (the offline one)."""
        if self.cfg.asr is None:
            return None
        from videomem.models.asr import build_recognizer

        return build_recognizer(self.cfg.asr, self.meter)

    @cached_property
    def offline_scene(self) -> SceneAnalyser:
        """The offline detectors, loaded once for the offline vision tasks and the offline visual
        embedder, which then share one cache of analysed frames."""
        from videomem.models.offline.scene import SceneAnalyser

        return SceneAnalyser()

    @cached_property
    def vision(self) -> PromptedVision | OfflineVision:
        """The vlm role's backend: per-clip captions and object records, answers from frames."""
        cfg = self.cfg.vlm
        if cfg.backend == "offline":
            from videomem.models.offline.vision import OfflineVision

            return OfflineVision(cfg, self.meter, require(self.language, Answering), self.offline_scene)
        from videomem.models.prompted import PromptedVision

        return PromptedVision(build_engine(cfg, "vlm", self.meter), cfg)

    @cached_property
    def language(self) -> PromptedLanguage | OfflineLanguage:
        """The llm role's backend: the text tasks of the memories, the agents and imports."""
        cfg = self.cfg.llm
        if cfg.backend == "offline":
            from videomem.models.offline.language import OfflineLanguage

            return OfflineLanguage(cfg, self.meter, self.text_embedder)
        from videomem.models.prompted import PromptedLanguage

        return PromptedLanguage(build_engine(cfg, "llm", self.meter), cfg)
