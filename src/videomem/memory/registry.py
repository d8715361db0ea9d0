"""Every memory registers here, once.

A memory is one class (`Memory`): its `name`, its `build` (run by `ingest` as the stage of its
name, after the stages its entry says it reads), `reset` (what `--force` forgets),
`retrieve(query, top_k, until, video_id) → [Evidence]`, `stats`, and, where a list of entries
is not the right tool, its own agent tool. The pipeline's stage order and construction, the
agent's `memory.<name>` tools, `videomem search`, `videomem info`, the HTTP server and the MCP
server are thin views over this table, so a memory added here appears in all of them without
touching their code. Adding one is its module, a line here, and its name in
`core.MEMORY_NAMES` (the layer that validates profiles is below the memories).

An entry opens its memory with a factory `(store, models, agent config) → Memory`, so a memory
whose retrieval has settings of its own (WorldMM's per-scale k, PPR damping, ...) reads them
from the agent profile, and one without settings ignores it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol

from videomem.config import PIPELINE_STAGES, AgentConfig
from videomem.core import StageResult
from videomem.errors import ConfigError, VideomemError
from videomem.evidence import Evidence
from videomem.memory.build import BuildContext
from videomem.memory.episodic import EpisodicMemory
from videomem.memory.events import EventMemory
from videomem.memory.objects import ObjectMemory
from videomem.memory.semantic import SemanticMemory
from videomem.memory.timeline_memory import TimelineMemory
from videomem.memory.visual import VisualMemory
from videomem.models.registry import ModelSet
from videomem.store import Store


class Memory(Protocol):
    """What every memory offers a reader. The class docstring's first paragraph is what a
    planner is told about the memory (its tool description)."""

    name: ClassVar[str]
    """Its name: the registry's key, its stage, its `memory.<name>` tool, its progress marks."""

    def retrieve(
        self, query: str, top_k: int, until: float | None = None, video_id: str | None = None
    ) -> list[Evidence]:
        """The `top_k` entries that best answer `query`, among those recorded by `until`, in
        `video_id` (None: every video), best first."""
        ...

    def stats(self) -> dict[str, int | str]:
        """Sizes worth showing in `videomem info` (rows, captions per scale, graph nodes, ...),
        and what built them where it matters (visual memory's embedder)."""
        ...


class BuiltMemory(Memory, Protocol):
    """A memory with a build of its own: every memory but the event memory (which the caption
    stage fills)."""

    def build(self, ctx: BuildContext, video_ids: Sequence[str]) -> StageResult:
        """Bring the memory up to date with what earlier stages stored for `video_ids` (a
        corpus-wide memory may look at the whole store), one transaction per unit with its
        progress mark, so a killed run resumes and a re-run skips what is done."""
        ...

    @staticmethod
    def reset(store: Store, video_ids: Sequence[str]) -> None:
        """Forget what the build made of these videos, so the next build makes it again
        (`ingest --force`)."""
        ...


class FrameMemory(Memory, Protocol):
    """A memory whose entries are stored frames (visual memory): what a "look" tool reads."""

    def search(self, query: str, top_k: int, until: float | None = None, video_id: str | None = None) -> list[Evidence]:
        """The `top_k` visible segments that look most like `query`, best first."""
        ...

    def segment_frames(self, segment: Evidence, limit: int | None = None) -> list:
        """A found segment's frames, at most `limit`, as rows (`t`, `path`, `video_id`, `clip_id`,
        `c_start`, `c_end`)."""
        ...

    def range_frames(
        self, t_start: float, t_end: float, until: float | None = None, video_id: str | None = None,
        limit: int | None = None,
    ) -> list:
        """The visible frames of a time range, at most `limit`, as rows like `segment_frames`'."""
        ...


class ToolMemory(Memory, Protocol):
    """A memory with its own agent tool (timeline memory: typed operations)."""

    def tool(self, until: float | None, video_id: str | None, **arguments: Any) -> tuple[str, list[Evidence]]:
        """The tool's answer within the question's scope: a first line stating the result, and
        the evidence it came from. The parameters after the scope are the tool's arguments, and
        the docstring's first paragraph is the tool's description."""
        ...


Factory = Callable[[Store, ModelSet, AgentConfig], Memory]

ToolKind = Literal["list", "look", "own"]
"""How the agent's `memory.<name>` tool reads a memory: "list" shows what `retrieve` returns;
"look" (a `FrameMemory`) shows the frames a query or time range finds to the vision-language
model with the question being answered, and returns its answer; "own" (a `ToolMemory`): the
memory's `tool` method is the tool."""


@dataclass(frozen=True)
class Registered:
    cls: type
    """The memory's class: its docstring describes it to planners and in `--help`."""
    factory: Factory | None = None
    """How to open it with the agent's settings; None: `cls(store, models)`."""
    tool: ToolKind = "list"
    """The kind of agent tool it gets."""
    after: tuple[str, ...] = ()
    """The stages whose output its build reads: it runs after those of them a run holds."""
    footage: bool = False
    """Its build reads the videos' frames, so a store built from captions alone skips it."""

    @property
    def builds(self) -> bool:
        """Whether the memory has a build (a stage of its name)."""
        return callable(getattr(self.cls, "build", None))

    def open(self, store: Store, models: ModelSet, cfg: AgentConfig) -> Memory:
        return self.factory(store, models, cfg) if self.factory else self.cls(store, models)

    @property
    def description(self) -> str:
        """The first paragraph of the class docstring, on one line."""
        doc = inspect.getdoc(self.cls) or ""
        return " ".join(doc.split("\n\n")[0].split())


def _half_life_s(cfg: AgentConfig) -> float | None:
    hours = cfg.recency_half_life_hours
    return None if hours is None else hours * 3600.0


def _by_name(*entries: Registered) -> dict[str, Registered]:
    return {entry.cls.name: entry for entry in entries}


MEMORIES: dict[str, Registered] = _by_name(
    Registered(EventMemory, lambda store, models, cfg: EventMemory(store, models, cfg.lexical, _half_life_s(cfg))),
    Registered(
        ObjectMemory, lambda store, models, cfg: ObjectMemory(store, models, _half_life_s(cfg)), after=("transcribe", "caption")
    ),
    Registered(
        EpisodicMemory,
        lambda store, models, cfg: EpisodicMemory(store, models, cfg.episodic, cfg.lexical, _half_life_s(cfg)),
        after=("transcribe", "caption"),
    ),
    Registered(
        SemanticMemory, lambda store, models, cfg: SemanticMemory(store, models, cfg.semantic), after=("episodic",)
    ),
    Registered(
        TimelineMemory,
        lambda store, models, cfg: TimelineMemory(store, models, cfg.lexical),
        tool="own",
        after=("transcribe", "caption", "objects", "episodic"),
    ),
    Registered(
        VisualMemory, lambda store, models, cfg: VisualMemory(store, models, cfg.visual), tool="look", after=("sample",),
        footage=True,
    ),
)
"""Memory name → entry, in the order `info`, `search --help` and the tools list them, and the
order their builds run in where their dependencies (`after`) leave a choice."""


def open_memory(name: str, store: Store, models: ModelSet, cfg: AgentConfig | None = None) -> Memory:
    if name not in MEMORIES:
        raise VideomemError(f"unknown memory {name!r}; available: {', '.join(MEMORIES)}")
    return MEMORIES[name].open(store, models, cfg or AgentConfig())


def stage_order() -> tuple[str, ...]:
    """Every stage in the order `ingest` runs them: the pipeline's own (`config.PIPELINE_STAGES`),
    then each memory's build once the stages it reads (its entry's `after`) are placed, in
    registry order where that leaves a choice. ConfigError when an entry reads a stage that does
    not exist or the dependencies form a cycle."""
    built = [name for name, entry in MEMORIES.items() if entry.builds]
    for name in built:
        unknown = [s for s in MEMORIES[name].after if s not in PIPELINE_STAGES and s not in built]
        if unknown:
            raise ConfigError(f"memory {name!r} is built after {unknown[0]!r}, which is no stage")
    order = list(PIPELINE_STAGES)
    while len(order) < len(PIPELINE_STAGES) + len(built):
        ready = next((n for n in built if n not in order and all(s in order for s in MEMORIES[n].after)), None)
        if ready is None:
            left = [n for n in built if n not in order]
            raise ConfigError(f"the builds of {', '.join(left)} each wait for another: their `after` forms a cycle")
        order.append(ready)
    return tuple(order)
