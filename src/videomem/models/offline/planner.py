"""The offline planners: fixed rules instead of a language model.

ReAct (`plan`):

1. `video.retrieval` with the question and the options as the query (or `video.rag` when
   retrieval is not offered), the question alone when its options are quantities (a count's,
   a duration's, a time's: `QUANTITY_INTENTS`) or colours (`bare_question`);
2. each memory tool the profile offers (`memory.<name>`, e.g. `memory.episodic` in
   agents/worldmm.yaml), once, in the profile's order, with the same query: a profile names a
   memory tool to have it consulted, and the planner cannot tell in advance which memory
   holds the answer (a moment, an activity over minutes, an object's state);
3. `video.qa` on the moment the question names, if it names one;
4. for a multiple-choice question whose options are not quantities or colours, one more search for each
   option whose distinguishing words appear nowhere in what was found yet ("Walk the dog. What do I usually do in the evening?"),
   so that every option gets the chance to be supported, not only those the first query favoured;
5. `video.qa` on the best retrieved range, only for a multiple-choice question that the
   retrieved text does not settle (the two best options score within MARGIN of each other, all
   of it read as one item: retrieval rank alone settles nothing), so a closer look at the
   frames is spent where it can change the answer;
6. `finish` with no arguments — the response step writes the answer. The last allowed step is
   always `finish`.

Every search of steps 1, 2 and 4 looks no later than the moment the question is about when it
names a day of the recording or a stretch of it (`asked_by`, the tools' `before`; a clock time
with no day is read against what the steps before found).

What was found is the typed evidence the searches and memory tools returned (`StepRecord.evidence`);
the best range is the first of its items with a range shorter than a day. The observations'
text is read only for what it says about the options, never for times.

WorldMM retrieval rounds (`choose_memory`): the question's kind picks the memory, by general
English cue words in its lemmas (`KIND_CUES`): habits and preferences ("usually", "often",
"prefer", "habit") → semantic; appearance ("colour", "look", "wear") → visual; times and
happenings ("when", "happen", "first", "last") → episodic. The first round searches the kind's
memory, the next the other enabled memories in the order episodic, semantic, visual (each once),
then the agent answers; a question of no recognised kind starts with episodic. A question
that names a day by what happened on it ("the day the meal was pizza") gets one more episodic
round, no later than that day's end, once the rounds place the happening on one day; one that
names a day by its number ("the second day") gets one more episodic round, up to that day's
end, for the option words nothing retrieved from that day holds. A question that names a
stretch of the clock with no day ("between 05:00 and 07:00": minutes of a video, hours of a
week) gets, right after the first episodic round, one more up to the stretch's end as that
round's items place it (`_stretch_round`); the later rounds are bounded so too. A question placed before a
happening ("right before the guests left") gets one more episodic round, for the happening,
once every memory was searched; one placed after a happening ("right after the kettle
boiled"), right after the first round, that round and then one that asks episodic memory for
the windows recorded from the end of the happening found on, in time order (`_next_round`):
what came next is found by its time, not by its words. Last, when the best item of at most a
minute that holds the question's words names no option, one more episodic round asks for the
windows recorded at its moment (`_moment_round`). The reason names
the cue, so the trace says why each memory was chosen. Before the kind, the question's intent
(`intent.py`, read from its parse): a count, an order, a duration or a time sends the first
round to timeline memory when the profile offers it (arithmetic on intervals answers those);
a question of another intent does not search it (its intervals would only crowd out content).
A query is the question and its options, but the question alone for visual memory and where
the options are quantities or colours (`bare_question`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from videomem.choice import search_text, strip_label
from videomem.evidence import Evidence
from videomem.models.tasks.agent import AgentState, RetrievalDecision, RetrievalState, ToolCall
from videomem.models.offline.clocks import question_stretches, question_times
from videomem.models.offline.daytime import anchored_day, question_window
from videomem.models.offline.intent import marks_present, placing_clause, question_intent
from videomem.models.offline.nlp import forms, lemmas, stopwords, words
from videomem.models.offline.scoring import PRESENT_S, SPECIFIC_S, names_colour
from videomem.timeline import DAY, TimeText

RETRIEVAL, RAG, QA, FINISH = "video.retrieval", "video.rag", "video.qa", "finish"
MEMORY_PREFIX = "memory."
MARGIN = 0.1
NEXT_S = 2 * 3600.0
"""How far after a happening the windows asked for may lie: in a day of sparse footage the
next thing recorded may be an hour later; in continuous footage the first `top_k` windows are
the next minutes."""
AROUND = 5.0
"""Seconds either side of a time named in the question that video.qa looks at."""
QUANTITY_INTENTS = frozenset({"count", "duration", "when"})
"""Intents whose options are quantities (a number, an amount of time, a time), not content."""



def asked_by(question: str, evidence: Sequence[Evidence] = ()) -> float | None:
    """The latest moment a question is about, when it names a day of the recording
    (`daytime.question_window`) or a stretch of it (`clocks.question_stretches`): where
    something was at a clock time of that day (intent `state`: "where were the keys at 10:00 on
    the first day?") is what was recorded by then, what happened in a stretch ("between minute
    21 and minute 26", "from 2 pm to 4 pm on the second day") what was recorded by its end,
    anything else about a day what was recorded by its end. Memory searches look no later
    (their `before`), so later days and minutes, which recency and a query's other words
    favour, do not crowd the asked-about time out. A clock time with no day is read against
    `evidence` (what was found so far): "05:00" is a place in a half-hour video but 5 a.m. in a
    week of footage, which no reading of the question alone can tell."""
    day = question_window(question)
    if day is None:
        stretches = question_stretches(question, None, evidence) if evidence else []
        return max(end for _, end in stretches) if stretches else None
    times = question_times(question, day) if question_intent(question) == "state" else []
    if times:
        return max(times)
    stretches = [(a, b) for a, b in question_stretches(question, day) if b <= day[1]]
    return max(end for _, end in stretches) if stretches else day[1]


def bare_question(question: str, choices: Sequence[str] | None) -> bool:
    """Whether a search should carry the question alone, not its options: options that are
    quantities (a count's, a duration's, a time's: `QUANTITY_INTENTS`) or colours only pull the
    search towards any text that says "afternoon" or "blue", not towards what is asked about."""
    if question_intent(question) in QUANTITY_INTENTS:
        return True
    return bool(choices) and all(names_colour(words(strip_label(c))) for c in choices)


def tool_names(tools: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Tool name → its parameter names, from OpenAI-style or bare JSON tool schemas."""
    out = {}
    for tool in tools:
        spec = tool.get("function", tool)
        out[spec["name"]] = set(spec.get("parameters", {}).get("properties", {}))
    return out


def first_range(evidence: Sequence[Evidence]) -> tuple[float, float] | None:
    """The range of the first item that has one (a point or a range of a day or more is no
    place to look at frames)."""
    return next(((e.t_start, e.t_end) for e in evidence if e.t_start < e.t_end < e.t_start + DAY), None)


def _args(params: set[str], **values: Any) -> dict[str, Any]:
    """Only the arguments the tool declares (all of them when it declares none)."""
    return {k: v for k, v in values.items() if not params or k in params}


def plan(state: AgentState, margin_of: Callable[[str], float], mentions: Callable[[str, str], bool]) -> ToolCall:
    """Next step. `margin_of(text)`: the score gap between the two best options on that text;
    `mentions(option, text)`: whether the text holds the option's distinguishing words."""
    tools = tool_names(state.tools)
    if len(state.history) + 1 >= state.max_steps:
        return ToolCall(thought="Last allowed step: answer from what was gathered.", tool=FINISH, arguments={})
    used = {h.tool for h in state.history}
    search = RETRIEVAL if RETRIEVAL in tools else RAG if RAG in tools else None
    bare = bare_question(state.question, state.choices)
    query = state.question if bare else search_text(state.question, state.choices)
    by = asked_by(state.question, [e for h in state.history for e in h.evidence])
    scope = {"before": by} if by is not None else {}
    if search and search not in used:
        return ToolCall(
            thought="Search the memory for the question and its options.",
            tool=search,
            arguments=_args(tools[search], query=query, **scope),
        )
    for name in tools:
        if name.startswith(MEMORY_PREFIX) and name not in used:
            return ToolCall(
                thought=f"The profile offers {name}; search it for the question and its options too.",
                tool=name,
                arguments=_args(tools[name], query=query, **scope),
            )
    seen = [e for h in state.history for e in h.evidence]
    named = question_times(state.question, evidence=seen)
    if QA in tools and QA not in used and named:
        start, end = (question_stretches(state.question, evidence=seen) or [(named[0], named[0])])[0]
        return ToolCall(
            thought="The question names a moment or a stretch; look at the frames around it.",
            tool=QA,
            arguments=_args(tools[QA], question=state.question, t_start=max(0.0, start - AROUND), t_end=end + AROUND),
        )
    placing = placing_clause(state.question)
    if search and placing is not None and placing.relation != "during" \
            and placing.text not in {h.arguments.get("query") for h in state.history if h.tool == search}:
        return ToolCall(
            thought=f"The question is placed {placing.relation} another happening ('{placing.text}'); search for it too.",
            tool=search,
            arguments=_args(tools[search], query=placing.text, **scope),
        )
    searches = [h for h in state.history if h.tool == search or h.tool.startswith(MEMORY_PREFIX)]
    found = "\n".join(h.observation for h in searches)
    gathered = [e for h in searches for e in h.evidence]
    if search and state.choices and not bare:
        asked = {h.arguments.get("query") for h in state.history if h.tool == search}
        for option in state.choices:
            query = f"{option}. {state.question}"
            if query not in asked and not mentions(option, found):
                return ToolCall(
                    thought=f"Nothing found yet about the option '{option}'; search for it.",
                    tool=search,
                    arguments=_args(tools[search], query=query, **scope),
                )
    span = first_range(gathered)
    if state.choices and QA in tools and QA not in used and span and margin_of(found) < MARGIN:
        return ToolCall(
            thought="The memory does not settle the options; look at the frames of the best range.",
            tool=QA,
            arguments=_args(tools[QA], question=state.question, t_start=span[0], t_end=span[1]),
        )
    return ToolCall(thought="Enough evidence gathered; answer.", tool=FINISH, arguments={})


KIND_CUES: dict[str, frozenset[str]] = {
    "semantic": frozenset(
        {"usually", "often", "always", "normally", "typically", "generally", "regularly", "frequently", "habit",
         "habitually", "routine", "tend", "prefer", "preference", "favourite", "favorite", "like", "dislike", "enjoy",
         "relationship", "friend"}
    ),
    "visual": frozenset(
        {"colour", "color", "look", "appearance", "wear", "dress", "clothes", "clothing", "shape", "pattern", "shirt",
         "hair"}
    ),
    "episodic": frozenset({"when", "happen", "first", "last", "before", "after", "time", "moment", "start", "finish"}),
}
"""Memory → lemmas that mark a question of its kind (checked in this order: a habit question
that says "when" is still about a habit)."""
TIMELINE = "timeline"
TIMELINE_INTENTS = frozenset({"count", "order", "duration", "when"})
"""Intents (`intent.py`) whose answer is arithmetic on intervals: timeline memory goes first."""
_INTENT_WORDS = {"count": "a count", "order": "an order of events", "duration": "a duration", "when": "a time"}
ROUND_ORDER = ("episodic", "semantic", "visual")
"""Order in which the memories the question's kind did not pick are searched after it."""


def question_kind(question: str) -> tuple[str, str] | None:
    """(memory, cue word) for the first kind whose cue the question contains, else None."""
    said = set(lemmas(question))
    for memory, cues in KIND_CUES.items():
        found = sorted(said & cues)
        if found:
            return memory, found[0]
    return None


def choose_memory(state: RetrievalState) -> RetrievalDecision:
    """The next WorldMM retrieval round: the question kind's memory first, then the other
    enabled memories once each, then the rounds for a day the question names (`_anchored_round`,
    `_day_option_round`), then answer."""
    if len(state.history) + 1 >= state.max_rounds:
        return RetrievalDecision(decision="answer", reason="Last allowed round: answer from what was retrieved.")
    searched = {r.memory for r in state.history}
    if state.history and (next_round := _next_round(state) or _stretch_round(state)) is not None:
        return next_round
    kind = question_kind(state.question)
    intent = question_intent(state.question)
    if intent in TIMELINE_INTENTS and TIMELINE in state.memories and TIMELINE not in searched:
        memory = TIMELINE
        reason = f"The question asks for {_INTENT_WORDS[intent]}: search timeline memory's intervals."
    elif kind is not None and kind[0] in state.memories and kind[0] not in searched:
        memory, cue = kind
        reason = f"The question's '{cue}' asks about {_KIND_WORDS[memory]}: search {memory} memory."
    else:
        rest = [m for m in (*ROUND_ORDER, *state.memories) if m in state.memories and m not in searched
                and (m != TIMELINE or intent in TIMELINE_INTENTS)]
        if not rest:
            return _anchored_round(state) or _day_option_round(state) or _placing_round(state) or _moment_round(state) \
                or RetrievalDecision(
                decision="answer", reason="Every memory was searched: answer.")
        memory = rest[0]
        reason = f"Search {memory} memory as well, for what the question's kind did not cover."
    # Options are left out of a visual query (their colours or looks would pull the search
    # towards every option alike) and out of any query whose options are quantities or colours
    # (`bare_question`).
    question_only = memory == "visual" or bare_question(state.question, state.choices)
    query = state.question if question_only else search_text(state.question, state.choices)
    return RetrievalDecision(
        decision="search", memory=memory, query=query, before=asked_by(state.question, _gathered(state)), reason=reason
    )


def _gathered(state: RetrievalState) -> list[Evidence]:
    """Everything the rounds so far retrieved."""
    return [e for r in state.history for e in r.evidence]


def _stretch_round(state: RetrievalState) -> RetrievalDecision | None:
    """One more episodic search, no later than the end of the stretch the question names
    ("what happens between 05:00 and 07:00?"; `asked_by`), right after the first episodic round
    when that round looked later: a clock time with no day is read against what a round found,
    so the first round cannot be bounded, and its best windows may lie after the stretch (a
    10-min summary of minutes 20 to 30 holds what happened at minute 28 too). None when the
    question names no stretch, one read from its words alone (on a day it names: every round
    was bounded by it), or an episodic round already looked no later than its end."""
    episodic = [r for r in state.history if r.memory == "episodic"]
    if not episodic:
        return None
    by = asked_by(state.question, _gathered(state))
    if by is None or by == asked_by(state.question) or any(r.before is not None and r.before <= by for r in episodic):
        return None  # no stretch, or one read without the rounds (on a named day), which bounded every round
    question_only = bare_question(state.question, state.choices)
    return RetrievalDecision(
        decision="search", memory="episodic", before=by,
        query=state.question if question_only else search_text(state.question, state.choices),
        reason="The question names a stretch of time: search episodic memory up to its end.",
    )


def _anchored_round(state: RetrievalState) -> RetrievalDecision | None:
    """One more episodic search, no later than the end of the day the question names by what
    happened on it ("the day the meal was pizza: who came round?"), once the rounds place that
    happening on one day (`daytime.anchored_day`): ranked with recency up to the query time, the
    first search favoured later days. None when there is no such day or it was searched so."""
    episodic = [r for r in state.history if r.memory == "episodic"]
    if "episodic" not in state.memories or len(episodic) != 1:
        return None
    day = anchored_day(state.question, [e for r in state.history for e in r.evidence])
    if day is None:
        return None
    return RetrievalDecision(
        decision="search", memory="episodic", query=search_text(state.question, state.choices), before=day[1],
        reason="The rounds place the day the question names by what happened on it: search episodic memory up to "
        "that day's end.",
    )


def _placing_round(state: RetrievalState) -> RetrievalDecision | None:
    """One more episodic search, for the happening a clause places the question before or after
    ("right after feeding the cat"; `intent.placing_clause`): what is asked lies beside that
    happening in time, and a search for the question finds what is like the question, not what
    happened next to it. None when there is no such clause, it places the question during the
    happening (the items of what happened then hold it too), or it was searched for."""
    placing = placing_clause(state.question)
    if placing is None or placing.relation == "during" or "episodic" not in state.memories \
            or placing.text in {r.query for r in state.history}:
        return None
    return RetrievalDecision(
        decision="search", memory="episodic", query=placing.text, before=asked_by(state.question, _gathered(state)),
        reason=f"The question is placed {placing.relation} another happening ('{placing.text}'): search episodic "
        "memory for it.",
    )


def _next_round(state: RetrievalState) -> RetrievalDecision | None:
    """For a question placed after a happening ("what did Ines do right after the kettle
    boiled?"), right after the first round: the round that finds the happening
    (`_placing_round`), then one that asks episodic memory for the windows recorded from the
    end of the happening found on (a time range, `NEXT_S` long or up to the day the question
    names), in time order. What came next follows the happening in time; a search by the
    question's words finds what is like them, wherever it lies. None when the question is
    placed otherwise, the happening is not found, or its neighbours were asked for."""
    placing = placing_clause(state.question)
    if placing is None or placing.relation != "after" or "episodic" not in state.memories:
        return None
    if placing.text not in {r.query for r in state.history}:
        return _placing_round(state)
    anchor = _found(placing.text, [e for r in reversed(state.history) if r.memory == "episodic" for e in r.evidence])
    if anchor is None:
        return None
    by = asked_by(state.question, _gathered(state))
    end = anchor.t_end + NEXT_S if by is None else min(anchor.t_end + NEXT_S, by)
    query = TimeText("egolife" if end >= DAY else "single").span(anchor.t_end, end)
    if end <= anchor.t_end or query in {r.query for r in state.history}:
        return None
    return RetrievalDecision(
        decision="search", memory="episodic", query=query, before=by,
        reason=f"The question asks what came after '{placing.text}' ({query.split('-')[0]}): search episodic "
        "memory for the windows recorded from its end on.",
    )


def _moment_round(state: RetrievalState) -> RetrievalDecision | None:
    """One more episodic search, for the windows recorded at the moment of the best item that
    holds what the question asks about, when that item holds no option ("in which room was I
    having pizza?": a frame's words say the pizza but not the room; the window recorded then
    does). A search by the question's words finds what is like them, anywhere in the recording;
    what else was true at that moment lies beside it in time. None when the options are
    quantities or colours, no item of at most a minute holds the question's words, that item
    holds an option's words, or its moment was asked for. Where the question is asked while
    the happening goes on again ("now that …"), an item of the last `PRESENT_S` before the query
    time is no anchor."""
    if "episodic" not in state.memories or not state.choices or bare_question(state.question, state.choices):
        return None
    gathered = _gathered(state)
    anchors = gathered
    if state.until is not None and marks_present(state.question):
        # "now that I walk into the alley, what was I doing the last time …": the occasion going
        # on now is not the one asked about (as the answer step reads it, `scoring.PRESENT_S`)
        anchors = [e for e in gathered if e.t_end < state.until - PRESENT_S]
    anchor = _found(state.question, anchors)
    if anchor is None:
        return None
    held = forms(anchor.text)
    options = [{w for w in words(strip_label(c)) if w not in stopwords()} for c in state.choices]
    if any(option and all(forms(w) & held for w in option) for option in options):
        return None
    query = TimeText("egolife" if anchor.t_start >= DAY else "single").span(anchor.t_start, anchor.t_end)
    if query in {r.query for r in state.history}:
        return None
    return RetrievalDecision(
        decision="search", memory="episodic", query=query, before=asked_by(state.question, gathered),
        reason=f"The item that holds what the question asks about ({query}) names no option: search episodic "
        "memory for the windows recorded then.",
    )


def _found(happening: str, evidence: Sequence[Evidence]) -> Evidence | None:
    """The first item of at most a minute (`SPECIFIC_S`) that holds every word of the happening
    that some such item holds (a caption says "the safe code", not "appears")."""
    items = [e for e in evidence if e.t_end - e.t_start <= SPECIFIC_S]
    said = [forms(e.text) for e in items]
    wanted = [w for w in dict.fromkeys(words(happening)) if w not in stopwords() and any(forms(w) & f for f in said)]
    return next((e for e, f in zip(items, said) if wanted and all(forms(w) & f for w in wanted)), None)


def _day_option_round(state: RetrievalState) -> RetrievalDecision | None:
    """For a question about a day named by its number ("which of these sums up the second
    day?"), one more episodic search, up to that day's end, for the words of the options that
    nothing retrieved from that day holds, each once, before the question: a query of the
    question and all its options favours what most options share, so the part that tells them
    apart (the visitor of two day summaries) may never be looked for. Only for a named day: the
    answer step counts what other days' items say × 0.3 there, so an option found on another
    day does not win; for any question (tried at 1bc6528, a round for the first option nothing
    retrieved holds) such a round found support for wrong options. None when the options are
    quantities or colours (`bare_question`), or the day's items of at most a minute (what the
    answer step weighs in full, `scoring.SPECIFIC_S`) hold every option word."""
    day, by = question_window(state.question), asked_by(state.question, _gathered(state))
    if day is None or by is None or not state.choices or "episodic" not in state.memories \
            or bare_question(state.question, state.choices):
        return None
    # a word only a summary of more than a minute holds is not found: the answer step weighs such summaries little
    found = " ".join(e.text for r in state.history for e in r.evidence
                     if day[0] <= (e.t_start + e.t_end) / 2 < day[1] and e.t_end - e.t_start <= SPECIFIC_S)
    known = forms(found) | stopwords()
    missing = dict.fromkeys(w for option in state.choices for w in words(strip_label(option)) if w not in known)
    query = f"{' '.join(missing)}. {state.question}"
    if not missing or query in {r.query for r in state.history}:
        return None
    return RetrievalDecision(
        decision="search", memory="episodic", query=query, before=by,
        reason=f"Nothing retrieved from the day the question names holds the options' words {', '.join(missing)}: "
        "search episodic memory up to that day's end for them.",
    )


_KIND_WORDS = {
    "semantic": "a habit, preference or relation",
    "visual": "what something looks like",
    "episodic": "when or what happened",
}
