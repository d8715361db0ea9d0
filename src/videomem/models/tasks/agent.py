"""The agent's tasks and the states it hands them: answering from evidence (every agent),
planning the next tool call (ReAct), choosing the next memory and query, then responding
(WorldMM's retrieval and response agents), and answering from frames (`video.qa` and the frame
tools, asked of the vision-language model)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from videomem.core import ClipView, OptionLetter
from videomem.evidence import Evidence
from videomem.timeline import TimeArgument


class ToolCall(BaseModel):
    """One ReAct step: a thought, then a tool name and its arguments (or `finish`)."""

    thought: str = ""
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class AnswerOut(BaseModel):
    answer: str = Field(min_length=1)
    choice: OptionLetter | None = None


class RetrievalDecision(BaseModel):
    """One round of WorldMM's retrieval agent: search one memory with one query, or answer."""

    decision: Literal["search", "answer"]
    memory: str | None = Field(None, description="the memory to search (decision 'search')")
    query: str | None = Field(None, description="keyword query for that memory (decision 'search')")
    before: TimeArgument | None = Field(
        None, description="only memory recorded by this time, for a question about an earlier moment or day"
    )
    reason: str = ""


@dataclass
class RoundRecord:
    """One finished round of the retrieval agent, as the next round and the response agent see it."""

    decision: str
    memory: str
    query: str
    retrieved: str
    evidence: list[Evidence] = field(default_factory=list)
    error: bool = False
    """A decision that could not be carried out; `retrieved` says why."""
    before: float | None = None
    """The latest moment the search looked at (the decision's `before`), None for the question's own."""


@dataclass
class RetrievalState:
    question: str
    choices: list[str] | None
    memories: dict[str, str]
    """Memory name → what it holds, for the memories the agent may choose."""
    history: list[RoundRecord]
    round: int
    max_rounds: int
    until: float | None = None


@dataclass
class StepRecord:
    """One completed ReAct step, as the planner sees the history."""

    thought: str
    tool: str
    arguments: dict[str, Any]
    observation: str
    evidence: list[Evidence] = field(default_factory=list)
    """What the tool returned, typed: a rule-based planner reads ranges from here, not from the text."""


@dataclass
class AgentState:
    question: str
    choices: list[str] | None
    tools: list[dict[str, Any]]
    """JSON schemas of the available tools (name, description, parameters)."""
    history: list[StepRecord]
    step: int
    max_steps: int
    until: float | None = None


@runtime_checkable
class Answering(Protocol):
    def answer(
        self, question: str, choices: list[str] | None, evidence: Sequence[Evidence], now: float | None = None
    ) -> AnswerOut:
        """The answer from the evidence; `now`: the query time (corpus seconds) that relative
        times ("how long ago") are measured to, None when the question has none."""
        ...


@runtime_checkable
class StepPlanning(Protocol):
    def plan_step(self, state: AgentState) -> ToolCall: ...


@runtime_checkable
class RetrievalAgent(Protocol):
    def decide_retrieval(self, state: RetrievalState) -> RetrievalDecision:
        """WorldMM's retrieval agent: the next memory and query, or stop and answer."""
        ...

    def respond(
        self, question: str, choices: list[str] | None, rounds: Sequence[RoundRecord], now: float | None = None
    ) -> AnswerOut:
        """WorldMM's response agent: the answer from the question and the retrieval rounds (`now`
        as in `Answering.answer`)."""
        ...


@runtime_checkable
class FrameAnswering(Protocol):
    def answer_from_frames(
        self, question: str, clip: ClipView, choices: list[str] | None = None
    ) -> AnswerOut:
        """video.qa: answer looking at frames of a time range (clip.frames may span many clips)."""
        ...
