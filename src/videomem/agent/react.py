"""The question-answering agents (TeleMem, Alg. 1) and the one-shot caption-RAG baseline.

`Agent(store, models, cfg).ask(...)` is the one entry point; `cfg.kind` picks the loop:

* `react`: think → act → observe. Each step the language model plans one tool call; a
  malformed call (unknown tool, invalid arguments) is shown back with its error and re-asked
  up to `cfg.call_retries` times; the last step is always `finish`. A response step then
  writes the answer from everything gathered.
* `worldmm`: WorldMM's retrieval agent (Sec. 3.2). Each round the language model either
  answers or picks one memory among the agent's `memory.<name>` tools and one query for it;
  the round history ("Round N / Decision / Memory / Search Query / Retrieved") is what it
  decides from, at most `cfg.max_steps` rounds. Malformed decisions are re-asked as in
  `react`. The response agent then answers from the question and the rounds (Sec. 3.3).
* `caption_rag`: the baseline every report compares against — top-k event captions, one
  answer call, no loop. It retrieves with the query the agent's first step uses, the question
  and its options (`rag_query: question_and_options`), so a gain over it is the agent's and the
  memories', not query expansion; `rag_query: question` is the plain-question variant.

Tokens of a question are the usage meter's growth while it was answered; the trace records
each step's tokens and seconds (and, for a memory tool, the memory it searched), so a report
can say where the cost went. Each step is also
passed to `on_step` as soon as it is recorded, so a server can stream the steps while the
question is still being answered.

A question has a deadline (`question_deadline_s` of the models profile), checked before each
model call: past it, the question fails with one line. A backend failure (server down, no reply
by a request's own deadline) fails the question at once; only unusable output is re-asked.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from videomem.agent.answer import Answer
from videomem.agent.tools import FINISH, Memories, ToolCallError, Toolbox
from videomem.choice import resolve_choice, search_text
from videomem.core import LETTERS, MAX_OPTIONS
from videomem.config import AgentConfig
from videomem.errors import MalformedOutputError, ModelError, VideomemError
from videomem.evidence import Evidence
from videomem.store.clips import require_video
from videomem.memory.registry import MEMORIES
from videomem.config import tool_name
from videomem.models.tasks import require
from videomem.models.tasks.agent import (
    AgentState,
    Answering,
    AnswerOut,
    RetrievalAgent,
    RetrievalState,
    RoundRecord,
    StepPlanning,
    StepRecord,
    ToolCall,
)
from videomem.models.registry import ModelSet
from videomem.store import Store

OnStep = Callable[[dict[str, Any]], None]
"""Called with each trace step as it is recorded (the same dict the trace keeps)."""


@dataclass
class _Meter:
    """Tokens (those this thread's model calls used) and seconds since the last `lap()`, and the
    question's deadline."""

    models: ModelSet

    def __post_init__(self) -> None:
        self.start_tokens = self.tokens = self.models.meter.this_thread().total_tokens
        self.start_time = self.time = time.perf_counter()
        self.deadline = self.start_time + self.models.cfg.question_deadline_s

    def in_time(self) -> None:
        """Raise (one line) when the question's deadline has passed."""
        if time.perf_counter() > self.deadline:
            limit = self.models.cfg.question_deadline_s
            raise ModelError(f"the question was not answered within {limit:g} s (question_deadline_s of the models profile)")

    def lap(self) -> dict[str, Any]:
        tokens, now = self.models.meter.this_thread().total_tokens, time.perf_counter()
        lap = {"tokens": tokens - self.tokens, "seconds": round(now - self.time, 3)}
        self.tokens, self.time = tokens, now
        return lap

    def totals(self) -> tuple[int, float]:
        return self.models.meter.this_thread().total_tokens - self.start_tokens, time.perf_counter() - self.start_time


class Agent:
    def __init__(self, store: Store, models: ModelSet, cfg: AgentConfig) -> None:
        self.store = store
        self.models = models
        self.cfg = cfg
        self.memories = Memories.open(store, models, cfg)

    def ask(
        self,
        question: str,
        choices: list[str] | None = None,
        until: float | None = None,
        video_id: str | None = None,
        on_step: OnStep | None = None,
    ) -> Answer:
        """Answer one question from memory recorded by `until` (corpus seconds), in `video_id`;
        `on_step` sees each step of the trace as it happens."""
        if not question.strip():
            raise VideomemError("the question is empty")
        if choices is not None and not 2 <= len(choices) <= MAX_OPTIONS:
            raise VideomemError(f"choices: give 2 to {MAX_OPTIONS} options, got {len(choices)}")
        require_video(self.store, video_id)
        meter = _Meter(self.models)
        toolbox = Toolbox(
            self.store, self.models, self.memories, self.cfg, until=until, video_id=video_id, question=question
        )
        trace: list[dict[str, Any]] = []

        def record(step: dict[str, Any]) -> None:
            trace.append(step)
            if on_step is not None:
                on_step(step)

        if self.cfg.kind == "worldmm":
            agent = require(self.models.language, RetrievalAgent)
            rounds = self._worldmm(agent, question, choices, toolbox, meter, record)
            evidence = _unique([e for r in rounds for e in r.evidence])
            meter.in_time()
            out = agent.respond(question, choices, [r for r in rounds if not r.error], now=toolbox.until)
        else:
            answering = require(self.models.language, Answering)
            if self.cfg.kind == "caption_rag":
                query = search_text(question, choices) if self.cfg.rag_query == "question_and_options" else question
                evidence = self._caption_rag(query, toolbox, meter, record)
            else:
                evidence = self._react(question, choices, toolbox, meter, record)
            meter.in_time()
            out = answering.answer(question, choices, evidence, now=toolbox.until)
        text, choice = _resolve(out, choices)
        record({"step": len(trace) + 1, "tool": "answer", "observation": text, **meter.lap()})
        tokens, seconds = meter.totals()
        return Answer(text, choice, evidence, trace, tokens, seconds)

    def _caption_rag(self, query: str, toolbox: Toolbox, meter: _Meter, record: OnStep) -> list[Evidence]:
        evidence = self.memories["events"].retrieve(query, self.cfg.top_k, toolbox.until, toolbox.video_id)
        spans = ", ".join(toolbox.time.span(e.t_start, e.t_end) for e in evidence)
        record(
            {
                "step": 1,
                "thought": "",
                "tool": "caption_retrieval",
                "arguments": {"query": query, "top_k": self.cfg.top_k},
                "observation": f"{len(evidence)} captions: {spans}" if evidence else "no captions found",
                "evidence": [e.to_json() for e in evidence],
                **meter.lap(),
            }
        )
        return evidence

    def _react(
        self, question: str, choices: list[str] | None, toolbox: Toolbox, meter: _Meter, record: OnStep
    ) -> list[Evidence]:
        planner = require(self.models.language, StepPlanning)
        history: list[StepRecord] = []
        gathered: list[Evidence] = []
        schemas = toolbox.schemas()
        for step in range(1, self.cfg.max_steps + 1):
            if step == self.cfg.max_steps:
                record(_forced(step, "the step limit was reached", meter))
                break
            state = AgentState(question, choices, schemas, history, step, self.cfg.max_steps, toolbox.until)
            result = self._plan_and_call(
                step,
                lambda state=state: planner.plan_step(state),
                lambda call, error: history.append(StepRecord(call.thought, call.tool, call.arguments, error)),
                toolbox,
                meter,
                record,
            )
            if result is None:
                record(_forced(step, f"{self.cfg.call_retries + 1} malformed calls in a row", meter))
                break
            call, outcome = result
            record(_step(step, call, outcome, meter))
            if call.tool == FINISH:
                break
            history.append(StepRecord(call.thought, call.tool, call.arguments, outcome.observation, outcome.evidence))
            gathered += outcome.evidence
        return _unique(gathered)

    def _worldmm(
        self, agent: RetrievalAgent, question: str, choices: list[str] | None, toolbox: Toolbox, meter: _Meter,
        record: OnStep,
    ) -> list[RoundRecord]:
        """Retrieval rounds: the decision of each becomes a call of that memory's tool. An
        unusable decision stays in the history with its error (so the model can correct it),
        but never reaches the response agent."""
        memories = {m: MEMORIES[m].description for m in MEMORIES if tool_name(m) in self.cfg.tools}
        rounds: list[RoundRecord] = []

        def decide(state: RetrievalState) -> ToolCall:
            decision = agent.decide_retrieval(state)
            if decision.decision == "answer":
                return ToolCall(thought=decision.reason, tool=FINISH, arguments={})
            name = tool_name(decision.memory or "")
            arguments: dict[str, Any] = {"query": decision.query or ""}
            tool = toolbox.tools.get(name)
            if decision.before is not None and tool is not None and "before" in tool.arguments.model_fields:
                arguments["before"] = decision.before  # a memory's own tool (timeline) takes no `before`
            return ToolCall(thought=decision.reason, tool=name, arguments=arguments)

        def failed(call: ToolCall, error: str) -> None:
            rounds.append(RoundRecord("search", _memory(call.tool), str(call.arguments.get("query", "")), error, error=True))

        for n in range(1, self.cfg.max_steps + 1):
            state = RetrievalState(question, choices, memories, rounds, n, self.cfg.max_steps, toolbox.until)
            result = self._plan_and_call(n, lambda state=state: decide(state), failed, toolbox, meter, record)
            if result is None:
                record(_forced(n, f"{self.cfg.call_retries + 1} malformed decisions in a row", meter))
                return rounds
            call, outcome = result
            record(_step(n, call, outcome, meter))
            if call.tool == FINISH:
                return rounds
            rounds.append(RoundRecord("search", _memory(call.tool), call.arguments["query"], outcome.observation,
                                      outcome.evidence, before=call.arguments.get("before")))
        record(_forced(self.cfg.max_steps + 1, "the round limit was reached", meter))
        return rounds

    def _plan_and_call(
        self,
        step: int,
        plan: Callable[[], ToolCall],
        remember: Callable[[ToolCall, str], None],
        toolbox: Toolbox,
        meter: _Meter,
        record: OnStep,
    ):
        """Plan one call and run it; a malformed call goes back to the planner with its error
        (`remember` keeps it in the history, so the planner can learn from it). None after the bound."""
        for attempt in range(self.cfg.call_retries + 1):
            meter.in_time()
            try:
                call = plan()
            except MalformedOutputError as exc:
                # The planner's own JSON re-asks are spent; count it as one malformed call.
                record(
                    {
                        "step": step,
                        "attempt": attempt + 1,
                        "thought": "",
                        "tool": "plan",
                        "arguments": {},
                        "observation": str(exc),
                        "error": True,
                        **meter.lap(),
                    }
                )
                continue
            try:
                return call, toolbox.call(call.tool, call.arguments)
            except ToolCallError as exc:
                error = f"error: {exc}. Call one of the listed tools with valid arguments, or finish."
                remember(call, error)
                record(
                    {
                        "step": step,
                        "attempt": attempt + 1,
                        "thought": call.thought,
                        "tool": call.tool,
                        "arguments": call.arguments,
                        "observation": error,
                        "error": True,
                        **meter.lap(),
                    }
                )
        return None


def _memory(tool: str) -> str:
    """The memory a `memory.<name>` tool searches ('' for any other tool)."""
    return tool.removeprefix("memory.") if tool.startswith("memory.") else ""


def _step(step: int, call: ToolCall, outcome, meter: _Meter) -> dict[str, Any]:  # noqa: ANN001 - ToolResult
    """The trace entry of a completed call; `memory` names the memory a memory tool searched."""
    memory = _memory(call.tool)
    return {
        "step": step,
        "thought": call.thought,
        "tool": call.tool,
        **({"memory": memory} if memory else {}),
        "arguments": call.arguments,
        "observation": outcome.observation,
        "evidence": [e.to_json() for e in outcome.evidence],
        **meter.lap(),
    }


def _unique(evidence: list[Evidence]) -> list[Evidence]:
    """Evidence in the order found, each piece once."""
    gathered: dict[tuple, Evidence] = {}
    for e in evidence:
        gathered.setdefault((e.video_id, e.t_start, e.t_end, e.source, e.text), e)
    return list(gathered.values())


def _forced(step: int, why: str, meter: _Meter) -> dict[str, Any]:
    return {
        "step": step,
        "thought": why,
        "tool": FINISH,
        "arguments": {},
        "observation": f"forced finish: {why}",
        "forced": True,
        **meter.lap(),
    }


def _resolve(out: AnswerOut, choices: list[str] | None) -> tuple[str, str | None]:
    """Answer text and option letter. For multiple choice the text is "B. <option text>"; a
    reply that names no valid option keeps its text and gets no letter (scored wrong, never guessed)."""
    text = out.answer.strip()
    if not choices:
        return text, None
    letter = resolve_choice(out.choice, text, choices)
    if letter is None:
        return text, None
    return f"{letter}. {choices[LETTERS.index(letter)]}", letter
