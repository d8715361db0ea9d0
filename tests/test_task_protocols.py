"""Task protocols split by consumer (`models/tasks/`): a backend implements only the protocols
of the consumers it serves, each consumer takes it as the protocol it calls, and a backend that
lacks a task is one line naming what it lacks."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import pytest
from kill_stage import ScriptedModels
from memory_stores import captioned_store, hand_store, offline_models

from videomem.agent.react import Agent
from videomem.config import AgentConfig, PipelineConfig
from videomem.core import ClipView, VideoSource
from videomem.errors import ModelError
from videomem.evidence import Evidence
from videomem.models import tasks
from videomem.models.engines import Batching
from videomem.models.offline.language import OfflineLanguage
from videomem.models.offline.vision import OfflineVision
from videomem.models.prompted import PromptedLanguage, PromptedVision
from videomem.models.tasks import captioning, clips, episodic, objects, require, semantic, summaries, translation
from videomem.models.tasks import agent as agent_tasks
from videomem.models.tasks.agent import Answering, AnswerOut, FrameAnswering, StepPlanning
from videomem.models.tasks.captioning import ClipCaptioning
from videomem.models.tasks.episodic import EpisodicTasks
from videomem.models.tasks.objects import ClipDescription, ClipObjects
from videomem.pipeline.base import StageContext
from videomem.pipeline.caption import CaptionStage

VIDEO = [VideoSource(Path("v.mp4"), "v")]
PROTOCOL_MODULES = (clips, captioning, objects, summaries, episodic, semantic, agent_tasks, translation)
VISION_PROTOCOLS = {ClipCaptioning, ClipObjects, ClipDescription, FrameAnswering}


class CaptionOnly:
    """A vision backend that only captions (a VLM wired for the caption stage alone): no object
    records, no frame answers, and no stubs for them."""

    def batching(self, batch_size: int) -> Batching:
        return Batching(batch_size)

    def caption_clips(self, clips: Sequence[ClipView]) -> list[str]:
        return [f"A clip from {c.t_start:g} to {c.t_end:g} s." for c in clips]


class BatchingOnly:
    """`CaptionOnly` with its one task removed."""

    def batching(self, batch_size: int) -> Batching:
        return Batching(batch_size)


class AnswerOnly:
    """A language backend that only answers from evidence (all caption-RAG needs)."""

    def answer(self, question: str, choices: list[str] | None, evidence: Sequence[Evidence], now: float | None = None) -> AnswerOut:
        return AnswerOut(answer=f"{len(evidence)} captions")


def _caption(root: Path, vision: object):
    store = hand_store(root, ["ONE", "TWO", "THREE"])
    ctx = StageContext(store, PipelineConfig(), lambda: ScriptedModels(vision=vision), show_progress=False, stages=("caption",))
    return store, CaptionStage().run(ctx, VIDEO)


def test_a_caption_only_backend_serves_the_caption_stage(tmp_path: Path) -> None:
    assert isinstance(CaptionOnly(), ClipCaptioning)
    assert not isinstance(CaptionOnly(), ClipObjects) and not isinstance(CaptionOnly(), ClipDescription)
    store, result = _caption(tmp_path, CaptionOnly())
    assert (result.done, result.failures) == (3, [])
    texts = [r[0] for r in store.query("SELECT text FROM events ORDER BY t_start")]
    assert texts == ["A clip from 0 to 10 s.", "A clip from 10 to 20 s.", "A clip from 20 to 30 s."]


def test_a_backend_without_the_task_fails_the_stage_with_one_line(tmp_path: Path) -> None:
    assert not isinstance(BatchingOnly(), ClipCaptioning)
    store, result = _caption(tmp_path, BatchingOnly())
    assert result.done == 0 and store.query("SELECT COUNT(*) FROM events")[0][0] == 0
    (_, line), *_ = result.failures
    assert "BatchingOnly does not serve ClipCaptioning: it has no caption_clips" in line
    assert "\n" not in line


def test_require_names_every_missing_member_and_accepts_forwarding_wrappers() -> None:
    with pytest.raises(ModelError, match=r"^object does not serve EpisodicTasks: it has no extract_entities, "
                                         r"extract_triplets, summarise$"):
        require(object(), EpisodicTasks)

    class Forwarding:  # a test double that wraps a real backend, as several tests' doubles do
        def __init__(self, real: object) -> None:
            self.real = real

        def __getattr__(self, name: str) -> object:
            return getattr(self.real, name)

    wrapped = Forwarding(CaptionOnly())
    assert require(wrapped, ClipCaptioning) is wrapped
    assert tasks.missing(wrapped, ClipDescription) == ["describe_clips", "extract_objects"]


def _protocols() -> set[type]:
    return {
        cls for module in PROTOCOL_MODULES for cls in vars(module).values()
        if inspect.isclass(cls) and cls.__module__ == module.__name__ and Protocol in cls.__mro__
    }


def test_the_shipped_backends_serve_the_protocols_of_their_role() -> None:
    found = _protocols()
    assert VISION_PROTOCOLS <= found and EpisodicTasks in found and len(found) == 15
    for backend in (PromptedVision, OfflineVision):
        assert {p: tasks.missing(backend, p) for p in VISION_PROTOCOLS} == {p: [] for p in VISION_PROTOCOLS}
    text = found - VISION_PROTOCOLS - {clips.ClipTasks}
    for backend in (PromptedLanguage, OfflineLanguage):
        assert {p: tasks.missing(backend, p) for p in text} == {p: [] for p in text}
    # the roles stay apart: a text backend has no clip tasks, a vision backend no text tasks
    assert tasks.missing(PromptedLanguage, ClipCaptioning) == ["caption_clips", "batching"]
    assert tasks.missing(OfflineVision, EpisodicTasks) == ["extract_entities", "extract_triplets", "summarise"]


def test_an_answer_only_backend_serves_caption_rag_and_not_react(tmp_path: Path) -> None:
    store = captioned_store(tmp_path, ["RED BALLOON", "TRAIN TO PARIS"])
    real = offline_models()

    class Models:
        cfg, meter, text_embedder = real.cfg, real.meter, real.text_embedder
        language = AnswerOnly()
        vision = CaptionOnly()

    assert isinstance(Models.language, Answering) and not isinstance(Models.language, StepPlanning)
    answer = Agent(store, Models(), AgentConfig(kind="caption_rag", top_k=2)).ask("Where does the train go?")
    assert answer.text == "2 captions"
    with pytest.raises(ModelError, match="AnswerOnly does not serve StepPlanning: it has no plan_step"):
        Agent(store, Models(), AgentConfig(kind="react")).ask("Where does the train go?")
