"""The agent: tools, the ReAct loop's mechanics, the caption-RAG baseline, and end-to-end
answers on a scripted video with the offline models."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from memory_stores import SINGLE_EVENT, captioned_store, late_question, offline_models, scripted_store

from videomem.agent.react import Agent
from videomem.agent.tools import Memories, ToolCallError, Toolbox
from videomem.config import AgentConfig, default_path, load_agent
from videomem.errors import MalformedOutputError, ModelError
from videomem.evidence import Evidence
from videomem.models.tasks.agent import AgentState, AnswerOut, ToolCall
from videomem.models.usage import Usage
from videomem.core import ClipView
from videomem.store import Store

TEXTS = ["RED BALLOON", "TRAIN TO PARIS", "BLUE BICYCLE", "OPEN MARKET", "NIGHT FIREWORKS", "SNOWY MOUNTAIN"]


class ScriptedLanguage:
    """`StepPlanning` and `Answering` double for the loop: plans come from a script; every call costs 10 + 5 tokens."""

    def __init__(self, plans: list[ToolCall | Exception], meter) -> None:
        self.plans = list(plans)
        self.meter = meter
        self.states: list[AgentState] = []
        self.answered: list[tuple[str, list[str] | None, list[Evidence]]] = []

    def plan_step(self, state: AgentState) -> ToolCall:
        self.meter.add("llm", Usage(10, 5, 0.0, 1))
        self.states.append(AgentState(**{**state.__dict__, "history": list(state.history)}))
        plan = self.plans.pop(0) if self.plans else ToolCall(thought="keep looking", tool="video.retrieval", arguments={"query": "x"})
        if isinstance(plan, Exception):
            raise plan
        return plan

    def answer(self, question: str, choices: list[str] | None, evidence: Sequence[Evidence], now: float | None = None) -> AnswerOut:
        self.meter.add("llm", Usage(10, 5, 0.0, 1))
        self.answered.append((question, choices, list(evidence)))
        return AnswerOut(answer="the train", choice="B" if choices else None)


class FrameVision:
    """`FrameAnswering` double for video.qa: reports which frames it was shown."""

    def __init__(self) -> None:
        self.views: list[ClipView] = []

    def answer_from_frames(self, question: str, clip: ClipView, choices=None) -> AnswerOut:
        self.views.append(clip)
        return AnswerOut(answer=f"{len(clip.frames)} frames from {clip.t_start:g} to {clip.t_end:g}")


class _Models:
    """The offline models (embedder, meter) with scripted task roles."""

    def __init__(self, plans: list[ToolCall]) -> None:
        real = offline_models()
        self.cfg, self.meter, self.text_embedder = real.cfg, real.meter, real.text_embedder
        self.language = ScriptedLanguage(plans, real.meter)
        self.vision = FrameVision()


@pytest.fixture
def events_store(tmp_path: Path) -> Store:
    return captioned_store(tmp_path, TEXTS)


def _call(tool: str, thought: str = "", **arguments) -> ToolCall:
    return ToolCall(thought=thought, tool=tool, arguments=arguments)


# ------------------------------------------------------------------ tools


def test_tool_schemas_come_from_signatures(events_store: Store) -> None:
    models = _Models([])
    toolbox = Toolbox(events_store, models, Memories.open(events_store, models), AgentConfig())
    schemas = {s["name"]: s for s in toolbox.schemas()}
    assert set(schemas) == {"video.retrieval", "video.rag", "video.qa"}
    qa = schemas["video.qa"]["parameters"]
    assert qa["required"] == ["question", "t_start", "t_end"] and qa["additionalProperties"] is False
    assert schemas["video.retrieval"]["parameters"]["properties"]["top_k"]["anyOf"][0]["maximum"] == 50
    assert "time range" in schemas["video.qa"]["description"]

    with pytest.raises(ToolCallError, match="unknown tool 'video.search'"):
        toolbox.call("video.search", {"query": "x"})
    with pytest.raises(ToolCallError, match="t_end: Field required"):
        toolbox.call("video.qa", {"question": "what colour?", "t_start": 10})
    with pytest.raises(ToolCallError, match="top_k"):
        toolbox.call("video.retrieval", {"query": "train", "top_k": 0})
    with pytest.raises(ToolCallError, match="not a time"):
        toolbox.call("video.qa", {"question": "q", "t_start": "ten", "t_end": 20})
    with pytest.raises(ToolCallError, match="before t_start"):
        toolbox.call("video.qa", {"question": "q", "t_start": 30, "t_end": 20})
    only_retrieval = Toolbox(
        events_store, models, Memories.open(events_store, models), AgentConfig(tools=("video.retrieval",))
    )
    with pytest.raises(ToolCallError, match="unknown tool 'video.qa'"):
        only_retrieval.call("video.qa", {"question": "q", "t_start": 0, "t_end": 10})


def test_qa_samples_stored_frames_within_budget_and_query_time(events_store: Store) -> None:
    models = _Models([])
    cfg = AgentConfig(qa_max_frames=4, qa_fps=1.0)
    toolbox = Toolbox(events_store, models, Memories.open(events_store, models), cfg)
    result = toolbox.call("video.qa", {"question": "what is shown?", "t_start": "00:00:00", "t_end": "00:01:00"})
    view = models.vision.views[-1]
    assert len(view.frames) == 4  # 12 stored frames, budget 4, evenly spaced from first to last
    assert view.frame_times == [2.5, 22.5, 37.5, 57.5]
    assert result.evidence[0].source == "qa" and (result.evidence[0].t_start, result.evidence[0].t_end) == (0, 60)

    toolbox.call("video.qa", {"question": "q", "t_start": 10, "t_end": 12})
    assert len(models.vision.views[-1].frames) == 2  # 2 s at 1 fps

    hidden = Toolbox(events_store, models, Memories.open(events_store, models), cfg, until=25)
    result = hidden.call("video.qa", {"question": "q", "t_start": 0, "t_end": 60})
    assert max(models.vision.views[-1].frame_times) < 20 and result.evidence[0].t_end == 20
    result = hidden.call("video.qa", {"question": "q", "t_start": 30, "t_end": 60})
    assert result.evidence == [] and "before the query time" in result.observation


def test_retrieval_and_rag_cite_time_ranges(events_store: Store) -> None:
    models = _Models([])
    toolbox = Toolbox(events_store, models, Memories.open(events_store, models), AgentConfig(), until=45)
    result = toolbox.call("video.retrieval", {"query": "train to Paris", "top_k": 3})
    assert result.evidence[0].t_start == 10 and "00:00:10-00:00:20" in result.observation
    assert len(result.evidence) == 3 and all(e.t_end <= 45 for e in result.evidence)
    result = toolbox.call("video.rag", {"query": "train to Paris"})
    assert result.observation.startswith("the train") and "00:00:10-00:00:20" in result.observation
    question, choices, evidence = models.language.answered[-1]
    assert question == "train to Paris" and choices is None and len(evidence) == 4  # 4 visible clips


def test_each_registered_memory_is_a_tool_named_after_it(events_store: Store) -> None:
    models = _Models([])
    cfg = AgentConfig(tools=("memory.events", "memory.objects"))
    toolbox = Toolbox(events_store, models, Memories.open(events_store, models, cfg), cfg, until=45)
    schemas = {s["name"]: s for s in toolbox.schemas()}
    assert set(schemas) == {"memory.events", "memory.objects"}
    assert schemas["memory.events"]["description"].startswith("Event memory: one caption per short clip")
    assert schemas["memory.events"]["parameters"]["required"] == ["query"]
    result = toolbox.call("memory.events", {"query": "train to Paris", "top_k": 2})
    assert result.observation.startswith("From events memory:\n1. 00:00:10-00:00:20 (event, ")
    assert [e.t_start for e in result.evidence][0] == 10 and all(e.t_end <= 45 for e in result.evidence)
    assert "No memory entries found before the query time" in toolbox.call("memory.objects", {"query": "x"}).observation
    with pytest.raises(ValueError, match="unknown tool 'memory.dreams'"):
        AgentConfig(tools=("memory.dreams",))


def test_a_memory_search_may_look_before_an_earlier_moment_never_after_the_query_time(events_store: Store) -> None:
    models = _Models([])
    cfg = AgentConfig(tools=("memory.events",))
    toolbox = Toolbox(events_store, models, Memories.open(events_store, models, cfg), cfg, until=45)
    earlier = toolbox.call("memory.events", {"query": "train to Paris", "before": "00:00:15"})
    assert earlier.evidence and all(e.t_end <= 15 for e in earlier.evidence)
    later = toolbox.call("memory.events", {"query": "train to Paris", "before": 500})
    assert max(e.t_end for e in later.evidence) > 15 and all(e.t_end <= 45 for e in later.evidence), "no later than until"
    assert "before 00:00:05" in toolbox.call("memory.events", {"query": "train", "before": 5}).observation
    clips = Toolbox(events_store, models, Memories.open(events_store, models), AgentConfig(), until=45)
    found = clips.call("video.retrieval", {"query": "train to Paris", "before": 15}).evidence
    assert found and all(e.t_end <= 15 for e in found)


# ------------------------------------------------------------------ the ReAct loop


def _agent(store: Store, plans: list[ToolCall], **cfg) -> tuple[Agent, _Models]:
    models = _Models(plans)
    return Agent(store, models, AgentConfig(**cfg)), models


def test_forced_finish_at_max_steps(events_store: Store) -> None:
    agent, models = _agent(events_store, [_call("video.retrieval", query=t) for t in TEXTS], max_steps=3)
    answer = agent.ask("Which train?", until=None)
    tools = [step["tool"] for step in answer.trace]
    assert tools == ["video.retrieval", "video.retrieval", "finish", "answer"]
    assert answer.trace[2]["forced"] is True and len(models.language.states) == 2
    assert [s.step for s in models.language.states] == [1, 2] and models.language.states[1].max_steps == 3
    assert len(models.language.states[1].history) == 1
    _, _, evidence = models.language.answered[-1]
    assert {e.t_start for e in evidence} >= {0.0, 10.0}  # evidence of both steps reaches the answer


def test_malformed_calls_are_reasked_with_the_error_then_recover(events_store: Store) -> None:
    plans = [
        _call("video.search", "try a search", query="train"),
        _call("video.qa", "look at it", question="which train?", t_start=10),
        _call("video.retrieval", "search properly", query="train to Paris", top_k=2),
        _call("finish", "enough"),
    ]
    agent, models = _agent(events_store, plans, call_retries=2)
    answer = agent.ask("Which train is shown?", ["A bus", "A train to Paris"])
    errors = [s for s in answer.trace if s.get("error")]
    assert [e["attempt"] for e in errors] == [1, 2] and all(e["step"] == 1 for e in errors)
    second, third = models.language.states[1], models.language.states[2]
    assert "unknown tool 'video.search'" in second.history[-1].observation
    assert "t_end: Field required" in third.history[-1].observation and len(third.history) == 2
    retrieval = next(s for s in answer.trace if s["tool"] == "video.retrieval")
    assert retrieval["step"] == 1 and retrieval["evidence"][0]["t_start"] == 10
    assert answer.trace[-2]["tool"] == "finish" and answer.trace[-2]["step"] == 2
    assert (answer.choice, answer.text) == ("B", "B. A train to Paris")


def test_retries_exhausted_forces_finish(events_store: Store) -> None:
    agent, models = _agent(events_store, [_call("video.nothing")] * 5, call_retries=1)
    answer = agent.ask("Which train?")
    assert len(models.language.states) == 2
    assert [s["tool"] for s in answer.trace] == ["video.nothing", "video.nothing", "finish", "answer"]
    assert answer.trace[2]["forced"] is True and "malformed" in answer.trace[2]["observation"]


def test_planner_output_unusable_after_its_reasks_counts_as_a_malformed_call(events_store: Store) -> None:
    unusable = MalformedOutputError("plan_step: the llm model 'x' gave unusable output 3 time(s); last error: not JSON")
    plans = [unusable, _call("video.retrieval", "search", query="train to Paris", top_k=2), _call("finish")]
    agent, _ = _agent(events_store, plans, call_retries=2)
    answer = agent.ask("Which train is shown?", ["A bus", "A train to Paris"])
    assert answer.trace[0]["error"] is True and "unusable output" in answer.trace[0]["observation"]
    assert [s["tool"] for s in answer.trace] == ["plan", "video.retrieval", "finish", "answer"]
    assert answer.choice == "B"


def test_a_backend_failure_fails_the_question_at_once(events_store: Store) -> None:
    down = ModelError("llm (openai backend) at http://127.0.0.1:9/v1: no answer by the request deadline (240 s)")
    agent, models = _agent(events_store, [down, _call("finish")], call_retries=2)
    with pytest.raises(ModelError, match="request deadline"):
        agent.ask("Which train is shown?", ["A bus", "A train to Paris"])
    assert len(models.language.states) == 1  # not re-asked as if the output were malformed


def test_a_question_past_its_deadline_fails_with_one_line(events_store: Store) -> None:
    agent, models = _agent(events_store, [])
    models.cfg = models.cfg.model_copy(update={"question_deadline_s": 0.3})
    plan = models.language.plan_step

    def slow_plan(state):
        time.sleep(0.2)
        return plan(state)

    models.language.plan_step = slow_plan
    with pytest.raises(ModelError, match=r"not answered within 0.3 s \(question_deadline_s of the models profile\)"):
        agent.ask("Which train?")
    assert len(models.language.states) <= 2 and models.language.answered == []  # stopped, not 5 steps and an answer


def test_trace_is_complete_and_tokens_add_up(events_store: Store) -> None:
    plans = [_call("video.retrieval", "find it", query="fireworks"), _call("video.qa", "check", question="what?", t_start=40, t_end=50)]
    agent, models = _agent(events_store, plans + [_call("finish")])
    answer = agent.ask("When are the fireworks?")
    for step in answer.trace:
        assert {"step", "tool", "observation", "tokens", "seconds"} <= set(step)
        if step["tool"] != "answer":
            assert {"thought", "arguments"} <= set(step)
    assert [s["tool"] for s in answer.trace] == ["video.retrieval", "video.qa", "finish", "answer"]
    assert answer.trace[0]["thought"] == "find it" and answer.trace[1]["arguments"]["t_start"] == 40
    assert "2 frame(s) at 00:00:40-00:00:50" in answer.trace[1]["observation"]
    assert answer.tokens == 4 * 15 == sum(s["tokens"] for s in answer.trace)
    assert answer.seconds >= sum(s["seconds"] for s in answer.trace) - 0.01
    data = answer.to_json()
    assert set(data) >= {"answer", "choice", "evidence", "trace", "tokens", "seconds"}
    assert {"t_start", "t_end", "text", "video_id", "source"} <= set(data["evidence"][0])


def test_a_question_is_charged_its_own_tokens_not_those_of_questions_answered_beside_it(events_store: Store) -> None:
    # `eval --jobs 2` and the server's readers answer questions on threads that share one meter
    plans = [_call("video.retrieval", "find it", query="fireworks"), _call("finish")]
    agent, models = _agent(events_store, plans)

    def beside(step: dict) -> None:
        other = threading.Thread(target=models.meter.add, args=("llm", Usage(1000, 200, 0.0, 1)))
        other.start()
        other.join()

    answer = agent.ask("When are the fireworks?", on_step=beside)
    assert [s["tool"] for s in answer.trace] == ["video.retrieval", "finish", "answer"]
    assert answer.tokens == 3 * 15 == sum(s["tokens"] for s in answer.trace)
    assert models.meter.total().total_tokens >= 3 * 15 + 3 * 1200  # the run's totals still count every thread


def test_on_step_sees_each_step_as_it_is_recorded(events_store: Store) -> None:
    plans = [_call("video.search", query="x"), _call("video.retrieval", "find it", query="fireworks"), _call("finish")]
    agent, models = _agent(events_store, plans)
    seen: list[tuple[dict, int, int]] = []
    answer = agent.ask(
        "When are the fireworks?",
        on_step=lambda step: seen.append((step, len(models.language.states), len(models.language.answered))),
    )
    assert [step for step, _, _ in seen] == answer.trace  # every step, malformed ones too, in order
    assert [s["tool"] for s in answer.trace] == ["video.search", "video.retrieval", "finish", "answer"]
    # each step arrives before the next plan is asked for, and the loop's before the answer is written
    assert [(plans, answers) for _, plans, answers in seen] == [(1, 0), (2, 0), (3, 0), (3, 1)]
    assert seen[1][0]["evidence"][0]["t_start"] == 40


def test_the_same_option_twice_is_asked_as_written_and_answered_by_letter(events_store: Store) -> None:
    """EgoLifeQA has records whose options repeat (ID 118: Choiszt, Choiszt, Nicous, Choiszt)."""
    agent, models = _agent(events_store, [_call("finish")])
    answer = agent.ask("Which train?", ["train", "Train", "bus"])
    assert models.language.answered[-1][1] == ["train", "Train", "bus"]
    assert (answer.choice, answer.text) == ("B", "B. Train")
    offline = Agent(events_store, offline_models(), load_agent()).ask("Who was there?", ["Choiszt", "Choiszt", "Nicous", "Choiszt"])
    assert offline.trace[-1]["tool"] == "answer"  # asked through, not refused


def test_caption_rag_retrieves_with_the_agents_first_query(events_store: Store) -> None:
    options = ["a bus", "a train to Paris"]
    fair = Agent(events_store, _Models([]), load_agent(default_path("agents", "caption-rag")))
    plain = Agent(events_store, _Models([]), load_agent(default_path("agents", "caption-rag-question")))
    react = Agent(events_store, offline_models(), load_agent())
    query = fair.ask("Which train?", options).trace[0]["arguments"]["query"]
    assert query == "Which train? a bus a train to Paris"
    assert react.ask("Which train?", options).trace[0]["arguments"]["query"] == query  # the planner's first step
    assert plain.ask("Which train?", options).trace[0]["arguments"]["query"] == "Which train?"


def test_the_offline_agent_searches_a_count_without_its_numbers(events_store: Store) -> None:
    """Options that are quantities would pull the search towards any text that says "two"; the
    baseline keeps its one query, question and options."""
    options = ["Twice", "Four times", "Six times"]
    question = "How many times did the train stop?"
    trace = Agent(events_store, offline_models(), load_agent()).ask(question, options).trace
    searches = [s["arguments"]["query"] for s in trace if s["tool"] == "video.retrieval"]
    assert searches == [question], "one search, for the question alone: none per option"
    fair = Agent(events_store, _Models([]), load_agent(default_path("agents", "caption-rag")))
    assert fair.ask(question, options).trace[0]["arguments"]["query"] == " ".join([question, *options])


def test_caption_rag_is_one_shot_over_events(events_store: Store) -> None:
    cfg = load_agent(default_path("agents", "caption-rag"))
    assert (cfg.kind, cfg.top_k) == ("caption_rag", 10)
    models = _Models([])
    answer = Agent(events_store, models, cfg).ask("Which train?", until=35)
    assert models.language.states == []  # no planning
    _, _, evidence = models.language.answered[-1]
    assert len(evidence) == 3 and {e.source for e in evidence} == {"event"} and all(e.t_end <= 35 for e in evidence)
    assert [s["tool"] for s in answer.trace] == ["caption_retrieval", "answer"]


# ------------------------------------------------------------------ end to end (offline models)


@pytest.fixture(scope="module")
def scripted(tmp_path_factory):
    store_dir, corpus = scripted_store(tmp_path_factory.getbasetemp())
    with Store(store_dir) as store:
        yield store, corpus


def _overlaps(e: Evidence, t_start: float, t_end: float) -> bool:
    return e.t_start < t_end and e.t_end > t_start


def test_retrieval_finds_the_event_clip_in_top_3(scripted) -> None:
    store, corpus = scripted
    models = offline_models()
    toolbox = Toolbox(store, models, Memories.open(store, models), load_agent())
    hits = []
    for event in corpus.events:
        ranked = toolbox.call("video.retrieval", {"query": event.text.capitalize(), "top_k": 3}).evidence
        # A recurring event (a habit) shows the same text each time: any of its clips is right.
        same = [e for e in corpus.events if e.text == event.text]
        hits.append(any(_overlaps(r, e.t_start, e.t_end) for r in ranked for e in same))
    rate = sum(hits) / len(hits)
    print(f"retrieval top-3 hit rate: {rate:.2f} over {len(hits)} event queries")
    assert rate >= 0.9


def test_ask_answers_multiple_choice_about_events(scripted) -> None:
    store, corpus = scripted
    agent = Agent(store, offline_models(), load_agent())
    questions = [q for q in corpus.questions if set(q.categories) <= SINGLE_EVENT][:8]
    assert len(questions) == 8
    correct = 0
    for q in questions:
        answer = agent.ask(q.question, list(q.choices), q.until, q.video_id)
        correct += answer.choice == q.answer
        assert answer.evidence and answer.tokens == sum(step["tokens"] for step in answer.trace) > 0
    print(f"multiple-choice accuracy: {correct}/{len(questions)}")
    assert correct >= 0.8 * len(questions)


def test_until_before_an_event_hides_it_from_every_tool(scripted) -> None:
    store, corpus = scripted
    question, event = late_question(corpus)
    agent = Agent(store, offline_models(), load_agent())

    seen = agent.ask(question.question, list(question.choices), None, question.video_id)
    assert seen.choice == question.answer
    assert any(_overlaps(e, event.t_start, event.t_end) for e in seen.evidence)

    until = event.t_start - 20
    hidden = agent.ask(question.question, list(question.choices), until, question.video_id)
    assert hidden.evidence and all(e.t_end <= until for e in hidden.evidence)
    tool_steps = [s for s in hidden.trace if s["tool"] not in ("finish", "answer")]
    assert tool_steps
    for step in tool_steps:
        for e in step["evidence"]:
            assert e["t_end"] <= until and event.text.lower() not in e["text"].lower()
        assert event.text.lower() not in step["observation"].lower()
