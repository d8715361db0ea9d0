"""Every memory registers here, once.

The agent's `memory.<name>` tools, `videomem search`, `videomem info`, the HTTP server and the
MCP server are thin views over this table, so a memory added here appears in all of them
without touching their code. A memory is anything with the two verbs of the design:
built by a pipeline stage, and `retrieve(query, top_k, until, video_id) → [Evidence]`.

Each entry is a factory `(store, models, agent config) → Memory`, so a memory whose
retrieval has settings of its own (WorldMM's per-scale k, PPR damping, ...) reads them from
the agent profile, and one without settings ignores it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from videomem.config import AgentConfig
from videomem.errors import VideomemError
from videomem.evidence import Evidence
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


Factory = Callable[[Store, ModelSet, AgentConfig], Memory]

ToolKind = Literal["list", "look"]
"""How the agent's `memory.<name>` tool reads a memory: "list" shows what `retrieve` returns;
"look" (a `FrameMemory`) shows the frames a query or time range finds to the vision-language
model with the question being answered, and returns its answer."""


@dataclass(frozen=True)
class Registered:
    cls: type
    """The memory's class: its docstring describes it to planners and in `--help`."""
    factory: Factory | None = None
    """How to open it with the agent's settings; None: `cls(store, models)`."""
    tool: ToolKind = "list"
    """The kind of agent tool it gets."""

    def open(self, store: Store, models: ModelSet, cfg: AgentConfig) -> Memory:
        return self.factory(store, models, cfg) if self.factory else self.cls(store, models)

    @property
    def description(self) -> str:
        """The first paragraph of the class docstring, on one line."""
        doc = inspect.getdoc(self.cls) or ""
        return " ".join(doc.split("\n\n")[0].split())


MEMORIES: dict[str, Registered] = {
    "events": Registered(EventMemory),
    "objects": Registered(ObjectMemory),
    "episodic": Registered(EpisodicMemory, lambda store, models, cfg: EpisodicMemory(store, models, cfg.episodic)),
    "semantic": Registered(SemanticMemory, lambda store, models, cfg: SemanticMemory(store, models, cfg.semantic)),
    "timeline": Registered(TimelineMemory),
    "visual": Registered(VisualMemory, lambda store, models, cfg: VisualMemory(store, models, cfg.visual), tool="look"),
}
"""Memory name → entry, in the order `info`, `search --help` and the tools list them."""


def open_memory(name: str, store: Store, models: ModelSet, cfg: AgentConfig | None = None) -> Memory:
    if name not in MEMORIES:
        raise VideomemError(f"unknown memory {name!r}; available: {', '.join(MEMORIES)}")
    return MEMORIES[name].open(store, models, cfg or AgentConfig())
