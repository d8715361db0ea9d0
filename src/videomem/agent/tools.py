"""The agent's tools over event and object memory and the stored frames (TeleMem, Alg. 1).

Each tool is a typed method; its argument model and JSON schema are generated from the
signature (pydantic), so what the planner is shown and what is validated cannot drift apart.
A call that names no tool or whose arguments do not validate raises `ToolCallError`, which
the agent shows to the planner and re-asks; it never reaches the user as a crash.

Every registered memory is a `memory.<name>` tool of the kind its registry entry names: one
that lists what the memory returns; for a memory of frames (visual memory), one that shows the
frames to the vision-language model with the question being answered and returns its answer
(frames mean nothing to the text-only answer step); or the memory's own tool, whose typed
arguments its `tool` method declares (timeline memory's operations).

Every tool sees only what the question may see: memory recorded by `until`, in `video_id`; a
search (`video.retrieval`, `video.rag`, `memory.*`) may look at less (`before`: what was
recorded by an earlier moment the question is about), never at more.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Annotated, Any, cast, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from videomem.config import AgentConfig, tool_name
from videomem.errors import TimeFormatError, VideomemError
from videomem.evidence import Evidence
from videomem.memory.registry import MEMORIES, FrameMemory, Memory, Registered, ToolMemory, open_memory
from videomem.models.registry import ModelSet, image_limit
from videomem.models.tasks import require
from videomem.models.tasks.agent import Answering, FrameAnswering
from videomem.store import Store
from videomem.store.clips import evenly, timeline_kind, visible_frames
from videomem.store.frames import frames_view
from videomem.timeline import TimeArgument, TimeText, parse_range

FINISH = "finish"
"""Always available; planners know it by name, so it is not listed among the tool schemas."""
SHOWN_CHARS = 240
"""Characters of each memory entry quoted in a retrieval observation (evidence keeps all)."""
NO_FRAMES = (
    "This store has no frames: its memory was built from captions alone, with no video files, so {tool} "
    "cannot look at the footage; use the text memories (ingest the videos into the store to add frames)"
)
"""What `video.qa` and `memory.visual` answer in a store built from captions alone."""
DESCRIBE_FRAMES = "Describe what these frames show: people, objects, colours, places and any written text."
"""What `memory.visual` asks about frames when the toolbox was given no question."""


class ToolCallError(Exception):
    """A malformed call: unknown tool or invalid arguments. Shown to the planner, then re-asked."""


Query = Annotated[str, Field(min_length=1, description="short keyword query: people, objects, actions, on-screen text")]
MAX_TOP_K = 50
"""Most entries one search returns, wherever it is asked for (a tool call, MCP, HTTP)."""
TopK = Annotated[int | None, Field(ge=1, le=MAX_TOP_K, description="how many entries (default: the agent's top_k)")]
Before = Annotated[
    TimeArgument | None,
    Field(description="only memory recorded by this time, for a question about an earlier moment or day "
          "('where were the keys at DAY1 10:00:00?'); default and latest: the query time"),
]
VisualQuery = Annotated[
    str,
    Field(
        min_length=1,
        description="what the frames should show (a scene, an object, a colour, written words), "
        "or a time range 'DAY1 11:00:00 - DAY1 11:02:00' / '00:10:00 - 00:12:00'",
    ),
]


@dataclass
class ToolResult:
    observation: str
    evidence: list[Evidence] = field(default_factory=list)


class Memories:
    """The memories the tools read, each opened on first use and kept, so indexes and graphs
    load once per agent."""

    def __init__(self, store: Store, models: ModelSet, cfg: AgentConfig | None = None) -> None:
        self.store = store
        self.models = models
        self.cfg = cfg or AgentConfig()
        self._open: dict[str, Memory] = {}

    @classmethod
    def open(cls, store: Store, models: ModelSet, cfg: AgentConfig | None = None) -> Memories:
        return cls(store, models, cfg)

    def __getitem__(self, name: str) -> Memory:
        if name not in self._open:
            self._open[name] = open_memory(name, self.store, self.models, self.cfg)
        return self._open[name]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    arguments: type[BaseModel]
    function: Callable[..., ToolResult]

    def schema(self) -> dict[str, Any]:
        parameters = self.arguments.model_json_schema()
        parameters.pop("title", None)
        return {"name": self.name, "description": self.description, "parameters": parameters}


SCOPE = ("self", "until", "video_id")
"""Parameters of a memory's own `tool` method that the toolbox fills (the question's scope)."""


def as_tool(name: str, function: Callable[..., ToolResult], spec: Callable[..., Any] | None = None) -> Tool:
    """A tool whose argument model comes from the signature of `spec` (default: `function`) and
    its description from `spec`'s doc's first paragraph; a memory's own tool method (`spec`)
    leaves out its scope parameters (`SCOPE`)."""
    spec = spec or function
    hints = get_type_hints(spec, include_extras=True)
    fields = {
        param.name: (hints[param.name], ... if param.default is inspect.Parameter.empty else param.default)
        for param in inspect.signature(spec).parameters.values()
        if param.name not in SCOPE
    }
    model = create_model(f"{name.replace('.', '_')}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    description = inspect.getdoc(spec).split("\n\n")[0].replace("\n", " ")
    return Tool(name, description, model, function)


def _validation_message(err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        where = ".".join(str(p) for p in e["loc"]) or "(arguments)"
        parts.append(f"{where}: {e['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


class Toolbox:
    """The tools for one question: scoped to its query time and video."""

    def __init__(
        self,
        store: Store,
        models: ModelSet,
        memories: Memories,
        cfg: AgentConfig,
        *,
        until: float | None = None,
        video_id: str | None = None,
        question: str = "",
    ) -> None:
        self.store = store
        self.models = models
        self.memories = memories
        self.cfg = cfg
        self.until = until
        self.video_id = video_id
        self.question = question
        """The question being answered, which `memory.visual` puts to the vision model."""
        self.time = TimeText(timeline_kind(store))
        self._several_videos = video_id is None and store.query("SELECT COUNT(*) AS n FROM videos")[0]["n"] > 1
        self._has_frames = bool(store.query("SELECT 1 FROM frames LIMIT 1"))
        own = {"video.retrieval": self.retrieval, "video.rag": self.rag, "video.qa": self.qa, FINISH: self.finish}
        makers = {name: partial(as_tool, name, function) for name, function in own.items()}
        makers |= {tool_name(name): partial(self._memory_tool, name, entry) for name, entry in MEMORIES.items()}
        self.tools = {name: makers[name]() for name in (*cfg.tools, FINISH)}

    def schemas(self) -> list[dict[str, Any]]:
        """JSON schemas of the enabled video tools (not `finish`), for the planner."""
        return [tool.schema() for name, tool in self.tools.items() if name != FINISH]

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Validate and run one call. Malformed → ToolCallError; a failing tool → an observation."""
        tool = self.tools.get(name)
        if tool is None:
            raise ToolCallError(f"unknown tool {name!r}; available: {', '.join(self.tools)}")
        try:
            validated = tool.arguments.model_validate(arguments)
        except ValidationError as err:
            raise ToolCallError(f"invalid arguments for {name}: {_validation_message(err)}") from None
        try:
            return tool.function(**dict(validated))
        except VideomemError as exc:
            return ToolResult(f"{name} failed: {exc}")

    # ------------------------------------------------------------ tools

    def retrieval(self, query: Query, top_k: TopK = None, before: Before = None) -> ToolResult:
        """Find the clips most related to a query. Returns clip time ranges ranked by similarity
        over event captions and object records, with a short excerpt of each.

        One entry per clip range: the best-scoring memory entry for it."""
        k = top_k or self.cfg.top_k
        ranked, seen = [], set()
        for entry in self._search(query, k, before):
            key = (entry.video_id, entry.t_start, entry.t_end)
            if key not in seen:
                seen.add(key)
                ranked.append(entry)
        ranked = ranked[:k]
        if not ranked:
            return ToolResult(self._nothing(before))
        lines = [f"{n}. {self._entry(e)}" for n, e in enumerate(ranked, start=1)]
        return ToolResult("Clips ranked by relevance:\n" + "\n".join(lines), ranked)

    def rag(self, query: Query, top_k: TopK = None, before: Before = None) -> ToolResult:
        """Answer a query with the language model from the top-k memory entries (captions and
        object records) most similar to it; the answer cites their time ranges."""
        k = top_k or self.cfg.top_k
        entries = self._search(query, k, before)[:k]
        if not entries:
            return ToolResult(self._nothing(before))
        out = require(self.models.language, Answering).answer(query, None, entries)
        cited = ", ".join(dict.fromkeys(self._span(e) for e in entries))
        return ToolResult(f"{out.answer.strip()} (from memory entries at {cited})", entries)

    def qa(self, question: Annotated[str, Field(min_length=1)], t_start: TimeArgument, t_end: TimeArgument) -> ToolResult:
        """Ask the vision-language model a question about the frames of a time range, for visual
        details the text memory may lack (appearance, positions, states, on-screen text)."""
        if t_end < t_start:
            raise ToolCallError(f"invalid arguments for video.qa: t_end ({t_end}) is before t_start ({t_start})")
        if not self._has_frames:
            return ToolResult(NO_FRAMES.format(tool="video.qa"))
        frames = visible_frames(self.store, t_start, max(t_end, t_start + 1e-3), self.until, self.video_id)
        if not frames:
            return ToolResult(f"No frames recorded between {self.time(t_start)} and {self.time(t_end)}" + self._before())
        videos = sorted({f["video_id"] for f in frames})
        if len(videos) > 1:
            return ToolResult(f"That range covers several videos ({', '.join(videos)}); the question must name one")
        covered_start = min(f["c_start"] for f in frames)
        covered_end = max(f["c_end"] for f in frames)
        span = min(t_end, covered_end) - max(t_start, covered_start)
        budget = min(self.cfg.qa_max_frames, max(1, int(span * self.cfg.qa_fps)))
        frames = evenly(frames, min(budget, self._image_limit))
        view = frames_view(self.store, frames, covered_start, covered_end)
        out = require(self.models.vision, FrameAnswering).answer_from_frames(question, view)
        evidence = Evidence(covered_start, covered_end, out.answer.strip(), "qa", 1.0, videos[0])
        return ToolResult(
            f"From {len(frames)} frame(s) at {self._span(evidence)}: {evidence.text}", [evidence]
        )

    def _memory_tool(self, memory: str, entry: Registered) -> Tool:
        """`memory.<name>`: one memory searched directly, entries as it ranks them (or looked
        at, or asked through its own tool)."""
        if entry.tool == "look":
            return as_tool(tool_name(memory), self._looking_tool(memory))
        if entry.tool == "own":
            return as_tool(tool_name(memory), self._own_tool(memory), spec=entry.cls.tool)

        def search(query: Query, top_k: TopK = None, before: Before = None) -> ToolResult:
            found = self.memories[memory].retrieve(query, top_k or self.cfg.top_k, self._by(before), self.video_id)
            if not found:
                return ToolResult(self._nothing(before))
            lines = [f"{n}. {self._entry(e)}" for n, e in enumerate(found, start=1)]
            return ToolResult(f"From {memory} memory:\n" + "\n".join(lines), found)

        search.__doc__ = entry.description
        return as_tool(tool_name(memory), search)

    def _own_tool(self, memory: str) -> Callable[..., ToolResult]:
        """`memory.<name>` through the memory's own `tool` method: its headline, then the
        intervals (or entries) it came from."""

        def ask(**arguments: Any) -> ToolResult:
            headline, found = cast(ToolMemory, self.memories[memory]).tool(self.until, self.video_id, **arguments)
            lines = [f"{n}. {self._entry(e)}" for n, e in enumerate(found, start=1)]
            return ToolResult(f"From {memory} memory, " + "\n".join([headline, *lines]), found)

        return ask

    def _looking_tool(self, name: str) -> Callable[..., ToolResult]:
        """`memory.<name>` over a memory of frames: the vision model looks at what it finds."""

        def look(query: VisualQuery, top_k: TopK = None, before: Before = None) -> ToolResult:
            """Visual memory, looked at by the vision-language model with the question being answered:
            a time range ('DAY1 11:00:00 - DAY1 11:02:00', '00:10:00 - 00:12:00') shows it the frames
            recorded then; any other query finds the segments whose frames look most like it (a
            scene, an object, a colour, written words) and shows it the best one's frames. For visual
            details text memory lacks: appearance, colours, positions.

            Text queries list the `top_k` segments; the model looks at the first `visual.inspect`."""
            if not self._has_frames:
                return ToolResult(NO_FRAMES.format(tool=tool_name(name)))
            memory = cast(FrameMemory, self.memories[name])
            try:
                span = parse_range(query)
            except TimeFormatError as exc:
                raise ToolCallError(f"invalid arguments for {tool_name(name)}: {exc}") from None
            if span is not None:
                return self._look_at_range(name, memory, *span)
            found = memory.search(query, top_k or self.cfg.top_k, self._by(before), self.video_id)
            if not found:
                return ToolResult(self._nothing(before))
            lines = [f"{n}. {self._entry(e)}" for n, e in enumerate(found, start=1)]
            looked = []
            for n, segment in enumerate(found[: self.cfg.visual.inspect], start=1):
                frames = memory.segment_frames(segment, self._image_limit)
                if frames:
                    looked.append(self._look(name, frames, segment.t_start, segment.t_end, segment.score))
                    lines.append(f"Looking at the {len(frames)} frame(s) of {n}: {looked[-1].text}")
            heading = f"From {name} memory, segments that look most like the query:\n"
            return ToolResult(heading + "\n".join(lines), looked or found)

        return look

    def _look_at_range(self, source: str, memory: FrameMemory, t_start: float, t_end: float) -> ToolResult:
        """The model sees the range's frames as one sequence, also across videos that follow each
        other on the timeline (EgoLife's 30-s files; the evidence names the first); videos that
        overlap in time (a store of separate videos, each from 0) need the question's video."""
        frames = memory.range_frames(t_start, t_end, self.until, self.video_id, self._image_limit)
        if not frames:
            return ToolResult(f"No frames recorded between {self.time(t_start)} and {self.time(t_end)}" + self._before())
        spans: dict[str, tuple[float, float]] = {}
        for f in frames:
            first, last = spans.get(f["video_id"], (f["c_start"], f["c_end"]))
            spans[f["video_id"]] = (min(first, f["c_start"]), max(last, f["c_end"]))
        ordered = sorted(spans.values())
        if any(later[0] < earlier[1] for earlier, later in zip(ordered, ordered[1:])):
            videos = ", ".join(sorted(spans))
            return ToolResult(f"That range covers several videos recorded at the same time ({videos}); the question must name one")
        start, end = max(t_start, ordered[0][0]), min(t_end, ordered[-1][1])
        seen = self._look(source, frames, start, max(start, end), 1.0)
        return ToolResult(f"From {len(frames)} frame(s) at {self._span(seen)}: {seen.text}", [seen])

    def _look(self, source: str, frames: Sequence, t_start: float, t_end: float, score: float) -> Evidence:
        """The vision model's answer to the question from these frames, as evidence (of `source`,
        the memory looked at) with the frames."""
        seeing = require(self.models.vision, FrameAnswering)
        out = seeing.answer_from_frames(self.question or DESCRIBE_FRAMES, frames_view(self.store, frames, t_start, t_end))
        paths = tuple(f["path"] for f in frames)
        return Evidence(t_start, t_end, out.answer.strip(), source, score, frames[0]["video_id"], frames=paths)

    def finish(self, answer: Annotated[str, Field(description="the answer, if already known")] = "") -> ToolResult:
        """Stop searching; the answer is then written from all observations gathered."""
        return ToolResult(f"finished: {answer}" if answer else "finished")

    # ------------------------------------------------------------ helpers

    @property
    def _image_limit(self) -> int:
        """Frames one vision request may carry: the models profile's engine limit."""
        limit = image_limit(self.models.cfg)
        return limit if limit is not None else sys.maxsize

    def _search(self, query: str, k: int, before: float | None = None) -> list[Evidence]:
        """The top k of each memory merged by similarity (up to 2k entries; callers cut)."""
        found = self.memories["events"].retrieve(query, k, self._by(before), self.video_id)
        found += self.memories["objects"].retrieve(query, k, self._by(before), self.video_id)
        return sorted(found, key=lambda e: (-e.score, e.t_start, e.source))

    def _entry(self, e: Evidence) -> str:
        """One observation line: time range, where it came from, score, and an excerpt."""
        scale = f", {e.scale:g} s scale" if e.scale is not None else ""
        return f"{self._span(e)} ({e.source}{scale}, {e.score:.2f}): {_excerpt(e.text)}"

    def _span(self, e: Evidence) -> str:
        prefix = f"{e.video_id} " if self._several_videos else ""
        return prefix + self.time.span(e.t_start, e.t_end)

    def _by(self, before: float | None) -> float | None:
        """What a search may see: memory recorded by `before`, never later than the query time."""
        if before is None:
            return self.until
        return before if self.until is None else min(before, self.until)

    def _before(self, before: float | None = None) -> str:
        by = self._by(before)
        if by is None:
            return ""
        return f" before {self.time(by)}" if by != self.until else f" before the query time {self.time(by)}"

    def _nothing(self, before: float | None = None) -> str:
        return "No memory entries found" + self._before(before)


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."
