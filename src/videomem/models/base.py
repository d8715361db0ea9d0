"""Model protocols.

Two layers, so that a memory or a tool never knows which backend it talks to:

* **Engines** (batch-first, so GPU backends can batch): `VisionLanguageModel`,
  `LanguageModel`, `TextEmbedder`, `VisualEmbedder`. Implemented by openai_compat, vllm_engine,
  hf_transformers, open_clip, text_embed.
* **Tasks** (`VisionTasks`, `LanguageTasks`): what the pipeline and agent actually ask for —
  caption a clip, extract objects, summarise, extract entities and then triplets, decide a
  merge, re-rank captions across time scales, induce and consolidate semantic triplets, plan
  the next agent step or WorldMM retrieval round, answer. `models/prompted.py` fulfils tasks on any engine with a prompt file and
  a JSON schema; `models/offline/` fulfils each with an explicit algorithm.

Every generation records its tokens and seconds in a `UsageMeter`, so a run can report totals
and a question its own cost.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from PIL.Image import Image
from pydantic import BaseModel, Field

from videomem.core import ClipView, OptionLetter
from videomem.evidence import Evidence


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    calls: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.seconds + other.seconds,
            self.calls + other.calls,
        )

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens - other.prompt_tokens,
            self.completion_tokens - other.completion_tokens,
            self.seconds - other.seconds,
            self.calls - other.calls,
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class UsageMeter:
    """Thread-safe running totals per role ("vlm", "llm", "text_embedder", ...)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_role: dict[str, Usage] = {}

    def add(self, role: str, usage: Usage) -> None:
        with self._lock:
            self._by_role[role] = self._by_role.get(role, Usage()) + usage

    def by_role(self) -> dict[str, Usage]:
        with self._lock:
            return dict(self._by_role)

    def total(self) -> Usage:
        total = Usage()
        for usage in self.by_role().values():
            total = total + usage
        return total


# ---------------------------------------------------------------- engines


class WallShare:
    """Usage seconds, counted the same way by every backend: the wall time a request is in
    flight, shared equally among the requests in flight with it. A batch of n that runs for t
    seconds gives each t / n; the seconds of a run add up to the time the model was busy, however
    the requests overlapped (concurrent HTTP requests are not summed)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens = itertools.count()
        self._open: dict[int, float] = {}
        self._last = time.perf_counter()

    def _advance(self) -> None:
        now = time.perf_counter()
        if self._open:
            share = (now - self._last) / len(self._open)
            for token in self._open:
                self._open[token] += share
        self._last = now

    def start(self, n: int = 1) -> list[int]:
        """Open n requests; returns their tokens for `stop`."""
        with self._lock:
            self._advance()
            tokens = [next(self._tokens) for _ in range(n)]
            self._open.update((token, 0.0) for token in tokens)
            return tokens

    def stop(self, tokens: Sequence[int]) -> list[float]:
        """Close these requests; returns the seconds each was charged."""
        with self._lock:
            self._advance()
            return [self._open.pop(token) for token in tokens]


@dataclass
class Generation:
    text: str
    usage: Usage
    finish_reason: str | None = None
    """"stop", or "length" when the token budget cut the reply (None when the backend cannot tell)."""
    error: str | None = None
    """Set when this request failed for good (its retries spent) while others of its batch did not."""


@dataclass(frozen=True)
class Unusable:
    """A request whose reply stayed unusable after the bounded re-asks (or whose transport
    failed): why, and the raw reply, so a stage records the clip as failed and goes on."""

    error: str
    reply: str = ""


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


# ---------------------------------------------------------------- task inputs and outputs


class CaptionOut(BaseModel):
    caption: str = Field(min_length=1, description="what happens in the clip, in plain sentences")


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


class SummaryOut(BaseModel):
    summary: str = Field(min_length=1)


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


class TranslationOut(BaseModel):
    translation: str = Field(min_length=1)


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


# ---------------------------------------------------------------- tasks


class VisionTasks(Protocol):
    """Clip tasks answer per clip: a clip whose output stayed unusable comes back as `Unusable`
    and the others of its call are kept."""

    def describe_clips(self, clips: Sequence[ClipView]) -> list[ClipNotes | Unusable]:
        """Caption and object records of each clip from one request per clip."""
        ...

    def caption_clips(self, clips: Sequence[ClipView]) -> list[str | Unusable]: ...

    def extract_objects(self, clips: Sequence[ClipView]) -> list[list[ObjectRecord] | Unusable]: ...

    def batching(self, batch_size: int) -> Batching:
        """How to hand clips over, given the pipeline's `caption_batch_size`."""
        ...

    def answer_from_frames(
        self, question: str, clip: ClipView, choices: list[str] | None = None
    ) -> AnswerOut:
        """video.qa: answer looking at frames of a time range (clip.frames may span many clips)."""
        ...


class LanguageTasks(Protocol):
    def summarise(self, groups: Sequence[Sequence[str]]) -> list[str]: ...

    def extract_entities(self, texts: Sequence[str]) -> list[list[str]]:
        """The entities each text names (people, objects, places, times, on-screen text)."""
        ...

    def extract_triplets(self, texts: Sequence[str], entities: Sequence[Sequence[str]]) -> list[list[Triplet]]:
        """Subject–relation–object facts of each text, built around its `entities`; "I" stays "I"."""
        ...

    def rerank(self, query: str, candidates: Sequence[RankCandidate]) -> list[int]:
        """Ids of the candidates that answer `query`, most relevant first, across time scales."""
        ...

    def induce_semantic(self, facts: Sequence[EpisodicFact], min_segments: int) -> list[SemanticTriplet]:
        """Lasting knowledge (relations, habits, preferences, abilities) behind the facts of
        segment 0; evidence = indices into `facts`. A habit should recur in `min_segments`
        distinct segments."""
        ...

    def consolidate(self, items: Sequence[NewTriplet]) -> list[ConsolidationOut]:
        """For each new triplet: its final form, the known triplet it restates, the ones it retires."""
        ...

    def same_entity(self, pairs: Sequence[tuple[ObjectRecord, ObjectRecord]]) -> list[bool]: ...

    def plan_step(self, state: AgentState) -> ToolCall: ...

    def answer(
        self, question: str, choices: list[str] | None, evidence: Sequence[Evidence], now: float | None = None
    ) -> AnswerOut:
        """The answer from the evidence; `now`: the query time (corpus seconds) that relative
        times ("how long ago") are measured to, None when the question has none."""
        ...

    def decide_retrieval(self, state: RetrievalState) -> RetrievalDecision:
        """WorldMM's retrieval agent: the next memory and query, or stop and answer."""
        ...

    def respond(
        self, question: str, choices: list[str] | None, rounds: Sequence[RoundRecord], now: float | None = None
    ) -> AnswerOut:
        """WorldMM's response agent: the answer from the question and the retrieval rounds (`now`
        as in `answer`)."""
        ...

    def translate(self, texts: Sequence[str], language: str) -> list[str]:
        """Each text in `language` (imported captions; a backend without a translator returns
        them as written and says so)."""
        ...

    def extract_objects_from_text(self, captions: Sequence[str]) -> list[list[ObjectRecord]]:
        """Object records of a clip read from its caption alone (clips with imported captions,
        which get no vision pass)."""
        ...
