"""WorldMM's retrieval and response agents: the round loop with a scripted language model
(history format, malformed decisions re-asked, the round limit), the prompted decision task,
and the offline planner's choice of memory by the kind of question."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from memory_stores import captioned_store, offline_models
from test_prompted import ScriptedEngine, role

from videomem.agent.react import Agent
from videomem.config import AgentConfig
from videomem.errors import MalformedOutputError
from videomem.evidence import Evidence
from videomem.models.tasks.agent import AnswerOut, RetrievalDecision, RetrievalState, RoundRecord
from videomem.models.usage import Usage
from videomem.models.offline.intent import question_intent
from videomem.models.offline.planner import choose_memory
from videomem.models.prompted import PromptedLanguage, rounds_block
from videomem.store import Store
from videomem.timeline import DAY, parse_range

TEXTS = ["RED BALLOON", "TRAIN TO PARIS", "BLUE BICYCLE"]
WORLDMM = AgentConfig(name="worldmm", kind="worldmm", tools=("memory.events", "memory.objects"), max_steps=3,
                      call_retries=1)


def _search(memory: str, query: str) -> RetrievalDecision:
    return RetrievalDecision(decision="search", memory=memory, query=query, reason=f"look in {memory}")


ANSWER = RetrievalDecision(decision="answer", reason="enough")


class ScriptedRounds:
    """`RetrievalAgent` double: decisions from a script (or a search forever); records what it saw."""

    def __init__(self, decisions: list[RetrievalDecision | Exception], meter) -> None:
        self.decisions = list(decisions)
        self.meter = meter
        self.states: list[RetrievalState] = []
        self.responded: list[list[RoundRecord]] = []

    def decide_retrieval(self, state: RetrievalState) -> RetrievalDecision:
        self.meter.add("llm", Usage(10, 5, 0.0, 1))
        self.states.append(RetrievalState(**{**state.__dict__, "history": list(state.history)}))
        decision = self.decisions.pop(0) if self.decisions else _search("events", "train")
        if isinstance(decision, Exception):
            raise decision
        return decision

    def respond(self, question: str, choices: list[str] | None, rounds: Sequence[RoundRecord], now: float | None = None) -> AnswerOut:
        self.meter.add("llm", Usage(10, 5, 0.0, 1))
        self.responded.append(list(rounds))
        return AnswerOut(answer="the train", choice="B" if choices else None)


class _Models:
    def __init__(self, decisions: list[RetrievalDecision | Exception]) -> None:
        real = offline_models()
        self.cfg, self.meter, self.text_embedder = real.cfg, real.meter, real.text_embedder
        self.language = ScriptedRounds(decisions, real.meter)


@pytest.fixture
def events_store(tmp_path: Path) -> Store:
    return captioned_store(tmp_path, TEXTS)


def test_rounds_feed_the_next_decision_and_the_response(events_store: Store) -> None:
    models = _Models([_search("events", "train"), _search("objects", "balloon"), ANSWER])
    answer = Agent(events_store, models, WORLDMM).ask("Where does the train go?", ["Rome", "Paris"])
    language = models.language

    assert answer.choice == "B" and answer.text == "B. Paris"
    second = language.states[1]
    assert second.round == 2 and second.max_rounds == 3 and set(second.memories) == {"events", "objects"}
    assert "short clip" in second.memories["events"], "each memory is described to the agent"
    first = second.history[0]
    assert (first.decision, first.memory, first.query) == ("search", "events", "train")
    assert "TRAIN TO PARIS" in first.retrieved and first.evidence[0].t_start == 10.0
    rendered = rounds_block(second.history)
    assert rendered.startswith("### Round 1\nDecision: search\nMemory: events\nSearch Query: train\nRetrieved: From events")

    assert [len(r) for r in language.responded] == [2]
    assert [step.get("memory") for step in answer.trace] == ["events", "objects", None, None]
    assert [step["tool"] for step in answer.trace] == ["memory.events", "memory.objects", "finish", "answer"]
    assert answer.trace[0]["thought"] == "look in events"
    assert any("TRAIN TO PARIS" in e.text for e in answer.evidence)
    assert answer.tokens == 4 * 15 and sum(step["tokens"] for step in answer.trace) == answer.tokens


def test_a_decision_before_an_earlier_moment_reaches_the_memory_search(events_store: Store) -> None:
    earlier = RetrievalDecision(decision="search", memory="events", query="train", before="00:00:15", reason="day one")
    models = _Models([earlier, _search("events", "train"), ANSWER])
    answer = Agent(events_store, models, WORLDMM).ask("Where did the train go first?", until=40)
    first, second = models.language.responded[0]
    assert first.evidence and all(e.t_end <= 15 for e in first.evidence)
    assert max(e.t_end for e in second.evidence) > 15, "without `before` the search sees up to the query time"
    assert answer.trace[0]["arguments"] == {"query": "train", "before": 15.0}


def test_malformed_decisions_are_shown_back_then_forced_to_answer(events_store: Store) -> None:
    unusable = MalformedOutputError("decide_retrieval: unusable output")
    models = _Models([_search("visual", "red"), _search("events", "balloon"), _search("semantic", "x"), unusable, ANSWER])
    answer = Agent(events_store, models, WORLDMM).ask("What colour is the balloon?")
    language = models.language

    retry = language.states[1]
    assert retry.round == 1, "a malformed decision is re-asked in the same round"
    assert retry.history[0].error and "unknown tool 'memory.visual'" in retry.history[0].retrieved
    assert rounds_block(retry.history).startswith("### Round 1\nDecision: search\nMemory: visual\nSearch Query: red")
    assert [step.get("error", False) for step in answer.trace] == [True, False, True, True, False, False]
    assert answer.trace[-2]["forced"] and "2 malformed decisions in a row" in answer.trace[-2]["observation"]
    assert [r.memory for r in language.responded[0]] == ["events"], "errors never reach the response agent"


def test_round_limit(events_store: Store) -> None:
    models = _Models([])
    answer = Agent(events_store, models, WORLDMM).ask("Where does the train go?")
    assert len(models.language.states) == WORLDMM.max_steps
    assert [step["tool"] for step in answer.trace] == ["memory.events"] * 3 + ["finish", "answer"]
    assert answer.trace[-2]["forced"] and len(models.language.responded[0]) == 3


def test_worldmm_needs_a_memory_to_choose() -> None:
    with pytest.raises(ValueError, match="at least one memory"):
        AgentConfig(kind="worldmm", tools=("video.retrieval",))


def test_prompted_decision_is_validated_and_rendered() -> None:
    engine = ScriptedEngine([
        '{"decision": "search", "memory": "visual", "query": "red"}',
        '{"decision": "search", "memory": "semantic", "query": " "}',
        '{"decision": "search", "memory": "semantic", "query": "tea", "reason": "a habit"}',
        '{"answer": "tea", "choice": "A"}',
    ])
    language = PromptedLanguage(engine, role())
    history = [RoundRecord("search", "episodic", "breakfast", "00:10:00-00:10:10 I drink tea.",
                           [Evidence(600.0, 610.0, "I drink tea.", "episodic", 1.0, "v")])]
    state = RetrievalState("What do I usually drink?", ["tea", "milk"], {"episodic": "events", "semantic": "habits"},
                           history, 2, 5, until=3600.0)
    decision = language.decide_retrieval(state)
    assert (decision.memory, decision.query, decision.reason) == ("semantic", "tea", "a habit")
    prompt = engine.batches[0][0].prompt
    assert "### Round 1\nDecision: search\nMemory: episodic\nSearch Query: breakfast\nRetrieved: 00:10:00" in prompt
    assert "- semantic: habits" in prompt and "round 2 of at most 5" in prompt and "01:00:00" in prompt
    assert "unknown memory 'visual'; choose one of episodic, semantic" in engine.batches[1][0].prompt
    assert "non-empty 'query'" in engine.batches[2][0].prompt
    assert language.respond("What do I usually drink?", ["tea", "milk"], history).choice == "A"
    assert "Search Query: breakfast" in engine.batches[3][0].prompt and "A. tea" in engine.batches[3][0].prompt


def test_a_prompted_decision_may_search_before_an_earlier_moment() -> None:
    engine = ScriptedEngine([
        '{"decision": "search", "memory": "episodic", "query": "keys", "before": "soon"}',
        '{"decision": "search", "memory": "episodic", "query": "keys", "before": "DAY1 10:00:00"}',
    ])
    state = RetrievalState("Where were the keys at 10:00 on day 1?", None, {"episodic": "events"}, [], 1, 5,
                           until=2 * 86400.0)
    decision = PromptedLanguage(engine, role()).decide_retrieval(state)
    assert decision.before == 36000.0
    assert "before" in engine.batches[1][0].prompt and "soon" in engine.batches[1][0].prompt, "a bad time is re-asked"


def _state(question: str, memories: Sequence[str], history: list[RoundRecord] | None = None) -> RetrievalState:
    return RetrievalState(question, ["A thing", "Another"], {m: m for m in memories}, history or [], 1, 5)


def test_offline_planner_searches_episodic_memory_for_the_happening_a_question_is_placed_after() -> None:
    question = "What did Kofi do right after the goats got out?"
    history = [RoundRecord("search", "episodic", question, "")]
    decision = choose_memory(_state(question, ["episodic"], history))
    assert (decision.decision, decision.memory, decision.query) == ("search", "episodic", "the goats got out")
    history.append(RoundRecord("search", "episodic", decision.query, ""))
    assert choose_memory(_state(question, ["episodic"], history)).decision == "answer"
    during = "What was Kofi doing when the goats got out?"
    assert choose_memory(_state(during, ["episodic"], [RoundRecord("search", "episodic", during, "")])).decision == "answer"


def test_offline_planner_asks_for_what_was_recorded_right_after_the_happening_found() -> None:
    """After the first round, "right after the kettle boiled" sends a round for the kettle, then
    one for the episodic windows from the end of the clip that shows it on (a time range, two
    hours at most and no later than the day the question names), then the other memories."""
    question = "On day 2, what did Ines do right after the kettle boiled?"
    memories = ["episodic", "semantic"]
    history = [RoundRecord("search", "episodic", question, "", [Evidence(DAY + 300, DAY + 330, "Ines reads.", "episodic",
                                                                          1.0, "v")])]
    decision = choose_memory(_state(question, memories, history))
    assert (decision.memory, decision.query) == ("episodic", "the kettle boiled")
    boiling = Evidence(DAY + 22 * 3600 + 600, DAY + 22 * 3600 + 630, "The kettle boils on the stove.", "episodic", 1.0, "v")
    hour = Evidence(DAY + 22 * 3600, DAY + 23 * 3600, "Ines boils the kettle and pours tea.", "episodic", 0.9, "v")
    history.append(RoundRecord("search", "episodic", decision.query, "", [hour, boiling]))
    decision = choose_memory(_state(question, memories, history))
    assert (decision.memory, decision.query) == ("episodic", "DAY2 22:10:30-DAY3 00:00:00")
    assert parse_range(decision.query) == (boiling.t_end, 2 * DAY), "up to the named day's end, not two hours on"
    history.append(RoundRecord("search", "episodic", decision.query, ""))
    assert choose_memory(_state(question, memories, history)).memory == "semantic"
    lost = [history[0], RoundRecord("search", "episodic", "the kettle boiled", "", [hour])]
    assert choose_memory(_state(question, memories, lost)).memory == "semantic", "no clip holds it: nothing to follow"
    before = "What did Ines do right before the kettle boiled?"
    first = [RoundRecord("search", "episodic", before, "")]
    assert choose_memory(_state(before, memories, first)).memory == "semantic", "before: found once all are searched"


@pytest.mark.parametrize(
    ("question", "memory", "cue"),
    [
        ("What do I usually eat for breakfast?", "semantic", "usually"),
        ("Which drink does Alice prefer?", "semantic", "prefer"),
        ("What colour was the mug on the desk?", "visual", "colour"),
        ("What was Bob wearing at the market?", "visual", "wear"),
        ("What did I do last at the fridge?", "episodic", "last"),
        ("What happened after lunch?", "episodic", "after"),
    ],
)
def test_offline_planner_picks_the_memory_by_question_kind(question: str, memory: str, cue: str) -> None:
    decision = choose_memory(_state(question, ["episodic", "semantic", "visual"]))
    assert (decision.decision, decision.memory) == ("search", memory)
    assert f"'{cue}'" in decision.reason
    assert ("Another" in decision.query) == (memory != "visual"), "options stay out of a visual query"


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("How frequently did Lucia refill the kettle this afternoon?", "count"),
        ("Did Tasha water the flowers before or after the guests came?", "order"),
        ("Which came later, the rain or the barbecue?", "order"),
        ("How long did the board game with Shure go on?", "duration"),
        ("How many minutes did the cake spend in the oven?", "duration"),
        ("How long ago did I put the scissors away?", "when"),
        ("How long is it since Shure last fed the cat?", "when"),  # since then, up to now
        ("About how much time did the soup need on the stove?", "duration"),
        ("How much time went by from breakfast to the car ride?", "duration"),
        ("How many times did Nicous sneeze?", "count"),
        ("At what time did the courier ring?", "when"),
        ("Whom did I go shopping with?", "who"),
        ("Where did the charger end up?", "state"),
        ("Why did we skip the barbecue?", None),
        ("What colour is the umbrella?", None),
    ],
)
def test_question_intent_is_read_from_the_interrogative_phrase(question: str, intent: str | None) -> None:
    assert question_intent(question) == intent


@pytest.mark.parametrize(
    ("question", "options", "kept"),
    [
        ("How frequently did Lucia refill the kettle?", ["Twice", "Five times"], False),
        ("At what point did Kofi last climb the ladder?", ["This morning", "Last night"], False),
        ("How long did the board game go on?", ["20 minutes", "An hour"], False),
        ("Which came first, the rain or the barbecue?", ["The rain", "The barbecue"], True),
        ("What did Lucia put in the fridge?", ["The watermelon", "The milk"], True),
        ("Which shade did Kofi paint the gate?", ["Green", "Dark blue"], False),
        ("Which hat did Kofi wear?", ["The green one", "The straw hat"], True),
    ],
)
def test_options_that_are_quantities_or_colours_stay_out_of_the_query(question: str, options: list[str], kept: bool) -> None:
    """A count's, a duration's or a time's options would pull the search towards any text that
    says "five" or "night", colours towards any text that says "green"; an order's options are
    the happenings to find."""
    state = RetrievalState(question, options, {"episodic": "episodic"}, [], 1, 5)
    decision = choose_memory(state)
    assert decision.query.startswith(question)
    assert (options[1] in decision.query) == kept


def test_offline_planner_routes_counts_orders_durations_and_times_to_timeline_first() -> None:
    memories = ["episodic", "semantic", "timeline", "visual"]
    first = choose_memory(_state("How frequently did Lucia refill the kettle?", memories))
    assert first.memory == "timeline" and "a count" in first.reason
    history = [RoundRecord("search", "timeline", first.query, "")]
    assert choose_memory(_state("How frequently did Lucia refill the kettle?", memories, history)).memory == "semantic"
    chosen, history = [], []
    for _ in range(5):
        decision = choose_memory(_state("Why did we skip the barbecue?", memories, history))
        if decision.decision == "answer":
            break
        chosen.append(decision.memory)
        history.append(RoundRecord("search", decision.memory, decision.query, ""))
    assert "timeline" not in chosen, "a question with no structured intent does not search the intervals"
    assert choose_memory(_state("How long did the game last?", ["episodic", "semantic"])).memory == "episodic"


@pytest.mark.parametrize(
    ("question", "before"),
    [
        ("What did Lucia bake on the second day?", 2 * 86400.0),  # that day's end
        ("Where was the ladder at 09:30 on day 3?", 2 * 86400.0 + 9.5 * 3600),  # where it was by then
        ("What was Kofi doing at 09:30 on day 3?", 3 * 86400.0),  # a happening at that time: the day
        ("What did Lucia bake?", None),
        ("Which chores did Kofi do from 2 pm to 4 pm on day 3?", 2 * 86400.0 + 16 * 3600),  # the stretch's end
    ],
)
def test_a_question_about_an_earlier_day_searches_memory_recorded_by_then(question: str, before: float | None) -> None:
    decision = choose_memory(_state(question, ["episodic", "semantic"]))
    assert decision.before == before


def test_a_stretch_of_the_clock_gets_one_more_episodic_round_up_to_its_end_read_from_what_was_found() -> None:
    """"Between 05:00 and 07:00" is minutes into a half-hour video, but hours of a day in a week
    of footage: the first round cannot be bounded, the next is, by the reading of what the
    first round found; it comes once, and not where an episodic round already looked no later."""
    question = "Which of these went on between 05:00 and 07:00?"
    memories = ["episodic", "semantic", "visual"]
    video = [Evidence(1200, 1800, "A cyclist fixes a tyre.", "episodic", 1.0, "v")]
    week = [Evidence(3 * 86400 + 6 * 3600, 3 * 86400 + 6 * 3600 + 30, "Ana feeds the hens.", "episodic", 1.0, "v")]
    assert choose_memory(_state(question, memories)).before is None
    for found, end in ((video, 420.0), (week, 3 * 86400 + 7 * 3600.0)):
        history = [RoundRecord("search", "episodic", question, "", found)]
        decision = choose_memory(_state(question, memories, history))
        assert (decision.decision, decision.memory, decision.before) == ("search", "episodic", end)
        history.append(RoundRecord("search", "episodic", decision.query, "", found, before=decision.before))
        assert choose_memory(_state(question, memories, history)).memory == "semantic", "once"
        assert choose_memory(_state(question, memories, history)).before == end, "the later rounds look no later either"
    plain = [RoundRecord("search", "episodic", "q", "", video)]
    assert choose_memory(_state("Which of these went on in the garage?", memories, plain)).memory == "semantic"


def test_a_day_named_by_what_happened_on_it_gets_one_more_episodic_round_up_to_its_end() -> None:
    question = "On the day Lucia baked bread, who came round in the afternoon?"
    bread = Evidence(86400 + 45000, 86400 + 45030, "Lucia bakes bread in the kitchen.", "visual", 1.0, "v")
    history = [RoundRecord("search", m, question, "", [bread] if m == "visual" else []) for m in ("episodic", "semantic", "visual")]
    decision = choose_memory(_state(question, ["episodic", "semantic", "visual"], history))
    assert (decision.decision, decision.memory, decision.before) == ("search", "episodic", 2 * 86400.0)
    history.append(RoundRecord("search", "episodic", decision.query, ""))
    assert choose_memory(_state(question, ["episodic", "semantic", "visual"], history)).decision == "answer", "once"
    plain = [RoundRecord("search", m, "q", "", [bread]) for m in ("episodic", "semantic", "visual")]
    assert choose_memory(_state("Who came round in the afternoon?", ["episodic", "semantic", "visual"], plain)).decision == "answer"


def test_the_moment_of_the_item_that_holds_the_happening_gets_one_episodic_round_when_it_names_no_option() -> None:
    """A frame's words say the umbrella was bought, not where; the windows recorded at that
    moment say the shop. The other items name shops, at other times."""
    question = "Which shop was I in when I bought the umbrella?"
    options = ["The bakery", "The pharmacy", "The bookshop"]
    memories = ["episodic", "semantic", "visual"]
    umbrella = Evidence(DAY + 600, DAY + 630, "I pay for a blue umbrella at the counter.", "visual", 1.0, "v")
    shops = [Evidence(DAY + 60 * m, DAY + 60 * m + 30, f"I walk past {o.lower()}.", "episodic", 1.0, "v")
             for m, o in ((30, options[0]), (40, options[1]), (50, options[2]))]
    history = [RoundRecord("search", m, question, "", [umbrella] if m == "visual" else shops) for m in memories]
    decision = choose_memory(RetrievalState(question, options, {m: m for m in memories}, history, 1, 5))
    assert (decision.decision, decision.memory) == ("search", "episodic")
    assert parse_range(decision.query) == (DAY + 600, DAY + 630)
    history.append(RoundRecord("search", "episodic", decision.query, ""))
    assert choose_memory(RetrievalState(question, options, {m: m for m in memories}, history, 1, 5)).decision == "answer"
    told = Evidence(DAY + 600, DAY + 630, "I pay for a blue umbrella in the pharmacy.", "visual", 1.0, "v")
    history = [RoundRecord("search", m, question, "", [told] if m == "visual" else shops) for m in memories]
    assert choose_memory(RetrievalState(question, options, {m: m for m in memories}, history, 1, 5)).decision == "answer"
    bare = RetrievalState("How many umbrellas did I buy?", ["1", "2"], {m: m for m in memories},
                          [RoundRecord("search", m, "q", "", [umbrella]) for m in memories], 1, 5)
    assert choose_memory(bare).decision == "answer", "a count's options are no content to find beside it"
    again = "Now that I am buying an umbrella again, which shop was I in when I last bought one?"
    history = [RoundRecord("search", m, again, "", [umbrella] if m == "visual" else shops) for m in memories]
    now = RetrievalState(again, options, {m: m for m in memories}, history, 1, 5, until=DAY + 900)
    assert choose_memory(now).decision == "answer", "the umbrella bought minutes ago is the purchase going on now"
    later = RetrievalState(again, options, {m: m for m in memories}, history, 1, 5, until=DAY + 7200)
    assert choose_memory(later).memory == "episodic"


def test_option_words_nothing_from_a_named_day_holds_get_one_episodic_round_up_to_its_end() -> None:
    """Both summaries share the chess game; their visitors are nowhere in what the memories
    returned from the second day (Lena's visit on the first day is another day's), so the next
    round looks for both visitors, whichever option comes first, before that day's end."""
    question = "Which of these sums up the second day best?"
    options = ["chess with Omar; a visit from Lena", "chess with Omar; a visit from Yusuf"]
    chess = Evidence(86400 + 36000, 86400 + 36030, "Omar and I play chess.", "episodic", 1.0, "v")
    lena = Evidence(36000, 36030, "Lena visits.", "episodic", 1.0, "v")
    memories = {m: m for m in ("episodic", "semantic", "visual")}
    history = [RoundRecord("search", m, question, "", [chess, lena]) for m in memories]
    for order in (options, options[::-1]):
        decision = choose_memory(RetrievalState(question, order, memories, history, 4, 6))
        assert (decision.decision, decision.memory, decision.before) == ("search", "episodic", 2 * 86400.0)
        said = set(re.findall(r"[a-z]+", decision.query.lower()))
        assert {"lena", "yusuf"} <= said and not {"chess", "omar"} & said, "the words that tell the options apart"
    history.append(RoundRecord("search", "episodic", decision.query, ""))
    assert choose_memory(RetrievalState(question, order, memories, history, 5, 7)).decision == "answer", "once"
    unnamed = "Which of these sums up my weekend best?"
    assert choose_memory(RetrievalState(unnamed, options, memories, history[:3], 4, 6)).decision == "answer", (
        "only for a day named by its number"
    )
    colours = ["green", "blue"]
    assert choose_memory(RetrievalState("What colour was Omar's scarf on day 2?", colours, memories, history[:3], 4, 6)
                         ).decision == "answer", "no round for colours"


def test_offline_planner_then_searches_the_rest_once_and_answers() -> None:
    memories = ["episodic", "semantic", "visual"]
    history: list[RoundRecord] = []
    chosen = []
    for _ in range(5):
        decision = choose_memory(_state("What do I usually drink?", memories, history))
        if decision.decision == "answer":
            break
        chosen.append(decision.memory)
        history.append(RoundRecord("search", decision.memory, decision.query, ""))
    assert chosen == ["semantic", "episodic", "visual"]
    assert choose_memory(_state("Who is there?", ["semantic", "objects"])).memory == "semantic", "no kind: first enabled"
