"""Task protocols (`models/tasks/`) fulfilled by a generative engine: a prompt file plus the
JSON schema of the answer. `PromptedVision` serves the per-clip vision protocols and
`FrameAnswering` on a vision-language engine; `PromptedLanguage` every text protocol on a
language engine.

Every task renders `prompts/<task>.md`, sends the schema of its pydantic output model with the
request (servers that support it constrain decoding to it), and validates the reply. Models
still wrap JSON in fences or prose, or miss a field; cheap fixes are applied here, anything
else is re-asked with the reply and the validation error appended (without special-token markers
such as `<|video_pad|>`, which a server would read as tokens: `templates.quoted_reply`), at most
`cfg.json_repairs` times; a reply cut by the token budget is asked again once with a larger
budget instead. After that a clip task
hands back an `Unusable` for that clip (error and raw reply; the stage records the clip as failed
and goes on with the others), and any other task fails with one `MalformedOutputError` line.

Whole batches go to `engine.generate` at once, so GPU engines can batch them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import jsonschema
from pydantic import BaseModel

from videomem.choice import read_choice
from videomem.config import RoleConfig
from videomem.errors import MalformedOutputError, ModelError
from videomem.evidence import Evidence
from videomem.models.engines import Batching, LanguageModel, LMRequest, VisionLanguageModel, VLRequest
from videomem.models.tasks.agent import (
    AgentState,
    AnswerOut,
    RetrievalDecision,
    RetrievalState,
    RoundRecord,
    StepRecord,
    ToolCall,
)
from videomem.models.tasks.captioning import CaptionOut
from videomem.models.tasks.clips import Unusable
from videomem.models.tasks.episodic import EntitiesOut, RankCandidate, RankingOut, Triplet, TripletsOut
from videomem.models.tasks.objects import ClipNotes, MergeDecision, ObjectRecord, ObjectsOut
from videomem.models.tasks.semantic import ConsolidationOut, EpisodicFact, NewTriplet, SemanticOut, SemanticTriplet
from videomem.models.tasks.summaries import SummaryOut
from videomem.models.tasks.translation import TranslationOut
from videomem.core import LETTERS, MAX_OPTIONS, ClipView
from videomem.models.oneline import one_line
from videomem.models.templates import quoted_reply, render
from videomem.timeline import format_clock

LENGTH_GROWTH = 2
"""A reply cut by the token budget is asked again once, with this many times the budget."""
CLIP_TASKS: dict[str, type[BaseModel]] = {
    "describe_clip": ClipNotes,
    "caption_clip": CaptionOut,
    "extract_objects": ObjectsOut,
}
"""Per-clip vision tasks (prompt file) and the schema of their answer."""
FINISH = "finish"
"""Tool name with which the planner ends the search."""

Out = TypeVar("Out", bound=BaseModel)
Request = TypeVar("Request", VLRequest, LMRequest)

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def extract_json(text: str) -> Any:
    """The first JSON value in a reply, looking inside ```fences``` and past surrounding prose."""
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[{\[]", body):
        try:
            value, _ = decoder.raw_decode(body, match.start())
        except json.JSONDecodeError:
            continue
        return value
    raise ValueError("the reply holds no JSON object")


def validate_reply(text: str, model: type[Out]) -> Out:
    """Parse a reply into `model`; a bare list for a model with one list field is wrapped."""
    value = extract_json(text)
    fields = model.model_fields
    if isinstance(value, list) and len(fields) == 1:
        value = {next(iter(fields)): value}
    return model.model_validate(value)


def _options(choices: list[str] | None) -> str:
    """The options block of an answer prompt ("" for an open question)."""
    if not choices:
        return ""
    if len(choices) > MAX_OPTIONS:
        raise ValueError(f"at most {MAX_OPTIONS} choices are supported, got {len(choices)}")
    return render("multiple_choice", options=_option_lines(choices), letters=", ".join(LETTERS[: len(choices)]))


def _option_lines(choices: Sequence[str]) -> str:
    return "\n".join(f"{letter}. {choice}" for letter, choice in zip(LETTERS, choices))


def _checked_answer(out: AnswerOut, choices: list[str] | None) -> AnswerOut:
    """Keep `choice` consistent with the question: a valid letter when options exist, else None."""
    if not choices:
        return out.model_copy(update={"choice": None})
    allowed = LETTERS[: len(choices)]
    choice = out.choice if out.choice is not None else read_choice(out.answer, choices)
    if choice is None or choice not in allowed:
        raise ValueError(f"'choice' must be one of {', '.join(allowed)} (got {choice!r})")
    return out.model_copy(update={"choice": choice})


def _answer_parser(choices: list[str] | None) -> Callable[[str], AnswerOut]:
    def parse(text: str) -> AnswerOut:
        return _checked_answer(validate_reply(text, AnswerOut), choices)

    return parse


def _clip_fields(clip: ClipView) -> dict[str, str]:
    return {
        "start": format_clock(clip.t_start),
        "end": format_clock(clip.t_end),
        "frame_times": ", ".join(format_clock(t) for t in clip.frame_times) or "unknown times",
        "transcript": clip.transcript.strip() or "(none)",
    }


class _Prompted:
    """The bounded parse → repair → re-ask loop shared by both task sets."""

    role: str

    def __init__(self, engine: VisionLanguageModel | LanguageModel, cfg: RoleConfig) -> None:
        self.engine = engine
        self.cfg = cfg

    def _collect(
        self, task: str, requests: Sequence[Request], parse: Callable[[str], Any]
    ) -> tuple[list[Any], list[str]]:
        """Send the batch; re-ask only the requests whose reply `parse` rejected (at most
        `json_repairs` times each) or that the token budget cut (once, with LENGTH_GROWTH times
        the budget). Returns each request's parsed value or `Unusable`, and the transport errors
        (requests the backend failed for good)."""
        results: list[Any] = [None] * len(requests)
        lost: list[str] = []
        current = list(requests)
        repairs = [0] * len(requests)
        grown: set[int] = set()
        pending = list(range(len(requests)))
        while pending:
            generations = self.engine.generate([current[i] for i in pending])
            again = []
            for i, generation in zip(pending, generations):
                if generation.error is not None:
                    results[i] = Unusable(generation.error)
                    lost.append(generation.error)
                    continue
                if generation.finish_reason == "length" and i not in grown:
                    grown.add(i)
                    budget = current[i].max_tokens or self.cfg.max_tokens
                    current[i] = replace(current[i], max_tokens=LENGTH_GROWTH * budget)
                    again.append(i)
                    continue
                try:
                    results[i] = parse(generation.text)
                except (ValueError, jsonschema.ValidationError) as err:
                    error = one_line(err)
                    repairs[i] += 1
                    if repairs[i] > self.cfg.json_repairs:
                        results[i] = Unusable(f"{task}: {error}", generation.text)
                        continue
                    prompt = render(  # the error may quote the reply too
                        "repair", prompt=requests[i].prompt, reply=quoted_reply(generation.text), error=quoted_reply(error)
                    )
                    current[i] = replace(current[i], prompt=prompt)
                    again.append(i)
            pending = again
        return results, lost

    def _ask_each(self, task: str, requests: Sequence[Request], parse: Callable[[str], Any]) -> list[Any]:
        """`_collect` for per-item callers: a failed request is an `Unusable` in its place, and
        a ModelError is raised only when every request failed in transport (the backend is down)."""
        results, lost = self._collect(task, requests, parse)
        if lost and len(lost) == len(requests):
            raise ModelError(lost[0])
        return results

    def _ask(self, task: str, requests: Sequence[Request], parse: Callable[[str], Any]) -> list[Any]:
        """`_collect` for callers that need every answer: any failed request is an error."""
        results, lost = self._collect(task, requests, parse)
        if lost:
            raise ModelError(lost[0])
        failed = [r for r in results if isinstance(r, Unusable)]
        if failed:
            attempts = self.cfg.json_repairs + 1
            raise MalformedOutputError(
                f"{task}: the {self.role} model {self.cfg.model!r} gave unusable output "
                f"{attempts} time(s) for {len(failed)} of {len(requests)} request(s); "
                f"last error: {failed[-1].error.removeprefix(task + ': ')}",
                failed[-1].reply,
            )
        return results

    def _ask_model(self, task: str, requests: Sequence[Request], model: type[Out]) -> list[Out]:
        return self._ask(task, requests, lambda text: validate_reply(text, model))


class PromptedVision(_Prompted):
    """`ClipDescription` (hence `ClipCaptioning`, `ClipObjects`) and `FrameAnswering` on a
    vision-language engine (openai, vllm or transformers backend)."""

    role = "vlm"

    def _request(self, task: str, clip: ClipView, model: type[BaseModel], **fields: str) -> VLRequest:
        prompt = render(task, **_clip_fields(clip), **fields)
        return VLRequest(prompt=prompt, images=list(clip.frames), json_schema=model.model_json_schema())

    def clip_requests(self, task: str, clips: Sequence[ClipView]) -> list[VLRequest]:
        """The first-try requests of a clip task, one per clip (what a benchmark times)."""
        return [self._request(task, clip, CLIP_TASKS[task]) for clip in clips]

    def _per_clip(self, task: str, clips: Sequence[ClipView]) -> list[Any]:
        model = CLIP_TASKS[task]
        return self._ask_each(task, self.clip_requests(task, clips), lambda text: validate_reply(text, model))

    def describe_clips(self, clips: Sequence[ClipView]) -> list[ClipNotes | Unusable]:
        notes = self._per_clip("describe_clip", clips)
        return [n if isinstance(n, Unusable) else n.model_copy(update={"caption": n.caption.strip()}) for n in notes]

    def caption_clips(self, clips: Sequence[ClipView]) -> list[str | Unusable]:
        outs = self._per_clip("caption_clip", clips)
        return [out if isinstance(out, Unusable) else out.caption.strip() for out in outs]

    def extract_objects(self, clips: Sequence[ClipView]) -> list[list[ObjectRecord] | Unusable]:
        outs = self._per_clip("extract_objects", clips)
        return [out if isinstance(out, Unusable) else out.objects for out in outs]

    def batching(self, batch_size: int) -> Batching:
        plan = getattr(self.engine, "batching", None)
        return plan(batch_size) if plan is not None else Batching(batch_size)

    def answer_from_frames(self, question: str, clip: ClipView, choices: list[str] | None = None) -> AnswerOut:
        request = self._request("answer_from_frames", clip, AnswerOut, question=question, options=_options(choices))
        return self._ask("answer_from_frames", [request], _answer_parser(choices))[0]


class PromptedLanguage(_Prompted):
    """Every text protocol of `models/tasks/` (`Summarising`, `EpisodicTasks`, `CaptionRanking`,
    `SemanticTasks`, `EntityMerging`, `CaptionObjects`, `StepPlanning`, `Answering`,
    `RetrievalAgent`, `Translation`) on a text engine (any generative backend; images are never
    sent)."""

    role = "llm"

    # ------------------------------------------------------------ Summarising

    def summarise(self, groups: Sequence[Sequence[str]]) -> list[str]:
        schema = SummaryOut.model_json_schema()
        prompts = [render("summarise", captions=_numbered(group, start=1)) for group in groups]
        requests = [LMRequest(prompt, json_schema=schema) for prompt in prompts]
        return [out.summary.strip() for out in self._ask_model("summarise", requests, SummaryOut)]

    # ------------------------------------------------------------ EpisodicTasks, CaptionRanking

    def extract_entities(self, texts: Sequence[str]) -> list[list[str]]:
        schema = EntitiesOut.model_json_schema()
        requests = [LMRequest(render("extract_entities", text=text), json_schema=schema) for text in texts]
        outs = self._ask_model("extract_entities", requests, EntitiesOut)
        return [list(dict.fromkeys(e.strip() for e in out.entities if e.strip())) for out in outs]

    def extract_triplets(self, texts: Sequence[str], entities: Sequence[Sequence[str]]) -> list[list[Triplet]]:
        schema = TripletsOut.model_json_schema()
        requests = [
            LMRequest(render("extract_triplets", text=text, entities=json.dumps(list(names), ensure_ascii=False)),
                      json_schema=schema)
            for text, names in zip(texts, entities, strict=True)
        ]
        return [out.triplets for out in self._ask_model("extract_triplets", requests, TripletsOut)]

    def rerank(self, query: str, candidates: Sequence[RankCandidate]) -> list[int]:
        known = {c.id for c in candidates}
        lines = "\n".join(
            f"[{c.id}] {c.scale:g} s window, {format_clock(c.t_start)}-{format_clock(c.t_end)}: {' '.join(c.text.split())}"
            for c in candidates
        )
        request = LMRequest(render("rerank_captions", query=query, captions=lines), json_schema=RankingOut.model_json_schema())

        def parse(text: str) -> list[int]:
            # Ids the model invented are dropped rather than re-asked: the rest of its ranking stands.
            return [i for i in dict.fromkeys(validate_reply(text, RankingOut).ids) if i in known]

        return self._ask("rerank_captions", [request], parse)[0]

    # ------------------------------------------------------------ SemanticTasks

    def induce_semantic(self, facts: Sequence[EpisodicFact], min_segments: int) -> list[SemanticTriplet]:
        lines = "\n".join(
            f"{n}. [segment {f.segment}, {f.when}] {f.triplet.subject} | {f.triplet.relation} | {f.triplet.object}"
            for n, f in enumerate(facts)
        )
        prompt = render("induce_semantic", facts=lines, min_segments=min_segments)
        request = LMRequest(prompt, json_schema=SemanticOut.model_json_schema())

        def parse(text: str) -> list[SemanticTriplet]:
            # Evidence pointing past the facts is dropped rather than re-asked: the triplet
            # itself is still usable, only its pointer is wrong. A triplet left without
            # support in the segment being added is not new knowledge of it.
            out = []
            for t in validate_reply(text, SemanticOut).triplets:
                evidence = [i for i in dict.fromkeys(t.evidence) if 0 <= i < len(facts)]
                if any(facts[i].segment == 0 for i in evidence):
                    out.append(t.model_copy(update={"evidence": evidence}))
            return out

        return self._ask("induce_semantic", [request], parse)[0]

    def consolidate(self, items: Sequence[NewTriplet]) -> list[ConsolidationOut]:
        requests, known_ids = [], []
        for item in items:
            t = item.triplet
            known = "\n".join(
                f"[{k.id}] {k.triplet.subject} | {k.triplet.relation} | {k.triplet.object} ({k.support} segment(s))"
                for k in item.known
            )
            prompt = render("consolidate_semantic", new=f"{t.subject} | {t.relation} | {t.object}",
                            support=item.support, known=known or "(none)")
            requests.append(LMRequest(prompt, json_schema=ConsolidationOut.model_json_schema()))
            known_ids.append({k.id for k in item.known})

        def parser(known: set[int]) -> Callable[[str], ConsolidationOut]:
            def parse(text: str) -> ConsolidationOut:
                # Ids the model invented are dropped rather than re-asked, as in `rerank`.
                out = validate_reply(text, ConsolidationOut)
                same = out.same_as if out.same_as in known else None
                retire = [i for i in dict.fromkeys(out.retire) if i in known and i != same]
                return out.model_copy(update={"same_as": same, "retire": retire})

            return parse

        return [self._ask("consolidate_semantic", [request], parser(known))[0] for request, known in zip(requests, known_ids)]

    # ------------------------------------------------------------ EntityMerging, CaptionObjects

    def same_entity(self, pairs: Sequence[tuple[ObjectRecord, ObjectRecord]]) -> list[bool]:
        requests = [
            LMRequest(
                prompt=render("same_entity", first=a.model_dump_json(), second=b.model_dump_json()),
                json_schema=MergeDecision.model_json_schema(),
            )
            for a, b in pairs
        ]
        return [out.same for out in self._ask_model("same_entity", requests, MergeDecision)]

    def extract_objects_from_text(self, captions: Sequence[str]) -> list[list[ObjectRecord]]:
        schema = ObjectsOut.model_json_schema()
        requests = [LMRequest(render("extract_objects_from_text", caption=c), json_schema=schema) for c in captions]
        return [out.objects for out in self._ask_model("extract_objects_from_text", requests, ObjectsOut)]

    # ------------------------------------------------------------ agent: StepPlanning, Answering, RetrievalAgent

    def plan_step(self, state: AgentState) -> ToolCall:
        tools = {tool["name"]: tool for tool in state.tools}
        prompt = render(
            "plan_step",
            question=state.question,
            options=_listed_options(state.choices),
            query_time=format_clock(state.until) if state.until is not None else "none",
            tools="\n".join(_tool_line(tool) for tool in state.tools),
            history="\n\n".join(_step_block(n, step) for n, step in enumerate(state.history, start=1)) or "(none yet)",
            step=state.step,
            max_steps=state.max_steps,
        )

        def parse(text: str) -> ToolCall:
            call = validate_reply(text, ToolCall)
            if call.tool == FINISH:
                return call
            if call.tool not in tools:
                raise ValueError(f"unknown tool {call.tool!r}; use one of {', '.join([*tools, FINISH])}")
            parameters = tools[call.tool].get("parameters")
            if parameters:
                jsonschema.validate(call.arguments, parameters)
            return call

        request = LMRequest(prompt=prompt, json_schema=ToolCall.model_json_schema())
        return self._ask("plan_step", [request], parse)[0]

    def answer(
        self, question: str, choices: list[str] | None, evidence: Sequence[Evidence], now: float | None = None
    ) -> AnswerOut:
        prompt = render(
            "answer", evidence=_evidence_block(evidence), question=question, options=_options(choices),
            query_time=_query_time(now),
        )
        request = LMRequest(prompt=prompt, json_schema=AnswerOut.model_json_schema())
        return self._ask("answer", [request], _answer_parser(choices))[0]

    def decide_retrieval(self, state: RetrievalState) -> RetrievalDecision:
        prompt = render(
            "decide_retrieval",
            question=state.question,
            options=_listed_options(state.choices),
            query_time=format_clock(state.until) if state.until is not None else "none",
            memories="\n".join(f"- {name}: {description}" for name, description in state.memories.items()),
            history=rounds_block(state.history) or "(none yet)",
            round=state.round,
            max_rounds=state.max_rounds,
        )

        def parse(text: str) -> RetrievalDecision:
            decision = validate_reply(text, RetrievalDecision)
            if decision.decision == "answer":
                return decision
            if decision.memory not in state.memories:
                raise ValueError(f"unknown memory {decision.memory!r}; choose one of {', '.join(state.memories)}")
            if not (decision.query or "").strip():
                raise ValueError("a search needs a non-empty 'query'")
            return decision

        request = LMRequest(prompt=prompt, json_schema=RetrievalDecision.model_json_schema())
        return self._ask("decide_retrieval", [request], parse)[0]

    def respond(
        self, question: str, choices: list[str] | None, rounds: Sequence[RoundRecord], now: float | None = None
    ) -> AnswerOut:
        prompt = render(
            "respond", rounds=rounds_block(rounds) or "(no round retrieved anything)", question=question,
            options=_options(choices), query_time=_query_time(now),
        )
        request = LMRequest(prompt=prompt, json_schema=AnswerOut.model_json_schema())
        return self._ask("respond", [request], _answer_parser(choices))[0]

    # ------------------------------------------------------------ Translation

    def translate(self, texts: Sequence[str], language: str) -> list[str]:
        schema = TranslationOut.model_json_schema()
        requests = [LMRequest(render("translate", language=language, text=text), json_schema=schema) for text in texts]
        return [out.translation.strip() for out in self._ask_model("translate", requests, TranslationOut)]


def _numbered(texts: Sequence[str], start: int) -> str:
    return "\n".join(f"{n}. {' '.join(text.split())}" for n, text in enumerate(texts, start=start))


def _listed_options(choices: list[str] | None) -> str:
    if not choices:
        return ""
    return "Options:\n" + _option_lines(choices)


def _tool_line(tool: dict[str, Any]) -> str:
    parameters = json.dumps(tool.get("parameters", {}), separators=(",", ":"))
    return f"- {tool['name']}: {tool.get('description', '').strip()} Arguments (JSON schema): {parameters}"


def _step_block(number: int, step: StepRecord) -> str:
    arguments = json.dumps(step.arguments, ensure_ascii=False)
    observation = step.observation.strip()
    return f"Step {number}\nThought: {step.thought}\nCall: {step.tool} {arguments}\nObservation: {observation}"


def rounds_block(rounds: Sequence[RoundRecord]) -> str:
    """WorldMM's round history: "Round N / Decision / Memory / Search Query / Retrieved"."""
    return "\n\n".join(
        f"### Round {n}\nDecision: {r.decision}\nMemory: {r.memory}\nSearch Query: {r.query}\n"
        f"Retrieved: {r.retrieved.strip()}"
        for n, r in enumerate(rounds, start=1)
    )


def _evidence_block(evidence: Sequence[Evidence]) -> str:
    if not evidence:
        return "(no evidence was found)"
    lines = []
    for n, item in enumerate(evidence, start=1):
        span = f"{format_clock(item.t_start)}-{format_clock(item.t_end)}"
        lines.append(f"[{n}] {span} ({item.video_id}, {item.source}): {' '.join(item.text.split())}")
    return "\n".join(lines)


def _query_time(now: float | None) -> str:
    """The moment the question is asked, for relative times ("how long ago"), as evidence prints times."""
    return format_clock(now) if now is not None else "not given"
