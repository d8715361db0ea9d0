"""Timeline memory: intervals per entity built from episodic triplets, object records and
transcripts; counts, first / last, order, durations, states and company, strict to relaxed,
each answer citing its intervals and seeing nothing recorded after the query time."""

from __future__ import annotations

from pathlib import Path

import pytest
from memory_stores import built, hand_store, offline_models

from videomem.agent.react import Agent
from videomem.agent.tools import Memories, ToolCallError, Toolbox
from videomem.config import AgentConfig, load_pipeline
from videomem.evidence import Count
from videomem.memory.registry import MEMORIES, open_memory
from videomem.memory.timeline_index import runs, stem
from videomem.memory.timeline_memory import Request, TimelineMemory
from videomem.store import Store

TRIPLETS = {
    0: [("Lucia", "wash", "dishes")],
    1: [("Lucia", "wash", "dishes"), ("Jake", "play", "guitar")],
    2: [("Jake", "play", "guitar")],
    3: [("Jake", "play", "the guitar"), ("Jake", "pick up", "red phone")],
    5: [("Jake", "play", "guitar")],
    6: [("Jake", "play", "guitar"), ("Lucia", "talk to", "Jake")],
    8: [("Jake", "sit in", "kitchen")],
}
"""Clip index (10-s clips) → triplets of its finest-scale episodic caption."""


def _timeline_store(root: Path, triplets: dict[int, list[tuple[str, str, str]]] = TRIPLETS) -> Store:
    store = hand_store(root, [None] * 10)
    clips = store.query("SELECT * FROM clips ORDER BY idx")
    with store.transaction() as tx:
        for c in clips:
            caption = tx.execute(
                "INSERT INTO episodic_captions (scale, scope, idx, video_id, n_videos, t_start, t_end, text, inputs_hash)"
                " VALUES (10, 'v', ?, 'v', 1, ?, ?, 'caption', 'digest')",
                (c["idx"], c["t_start"], c["t_end"]),
            ).lastrowid
            for subject, relation, obj in triplets.get(c["idx"], []):
                tx.execute(
                    "INSERT INTO episodic_triplets (caption_id, subject, relation, object) VALUES (?, ?, ?, ?)",
                    (caption, subject, relation, obj),
                )
        tx.execute(
            "INSERT INTO transcripts (clip_id, video_id, t_start, t_end, speaker, text) VALUES (?, 'v', 41, 44, 'Katrina', ?)",
            (clips[4]["id"], "Shall we order pizza?"),
        )
        tx.execute(
            "INSERT INTO object_observations (clip_id, video_id, t_start, t_end, name, kind, appearance_json, identity_json,"
            " value) VALUES (?, 'v', 70, 80, 'kettle', 'object', '[]', '[]', 'on the stove, steaming')",
            (clips[7]["id"],),
        )
    built(TimelineMemory(store, offline_models()), load_pipeline())
    return store


@pytest.fixture
def timeline(tmp_path: Path) -> TimelineMemory:
    return TimelineMemory(_timeline_store(tmp_path / "store"), offline_models())


def _spans(evidence) -> list[tuple[float, float]]:
    return [(e.t_start, e.t_end) for e in evidence]


def test_consecutive_clips_merge_into_one_interval_with_its_duration(timeline: TimelineMemory) -> None:
    headline, found = timeline.ask(Request("count", "Jake", "play", "guitar"))
    assert _spans(found) == [(10, 40), (50, 70)], "'the guitar' is the same entity; clips 1-3 and 5-6 are two runs"
    assert headline.startswith("jake play guitar: 2 interval(s)") or "2 interval(s)" in headline
    headline, found = timeline.ask(Request("duration", "Jake", "play", "guitar"))
    assert "latest interval lasted 20 s" in headline and "50 s in all" in headline
    assert _spans(found) == [(10, 40), (50, 70)]


def test_answers_carry_their_count_and_intervals_typed(timeline: TimelineMemory) -> None:
    """What a reader computes with is in typed fields, not in the headline or the entry's text."""
    _, found = timeline.ask(Request("count", "Jake", "play", "guitar"))
    assert [e.counts for e in found] == [(Count("Jake play guitar", 2),)] * 2, "the event as asked, and its count"
    assert [[(s.t_start, s.t_end, s.duration) for s in e.intervals] for e in found] == [[(10, 40, 30)], [(50, 70, 20)]]
    _, last = timeline.ask(Request("last", "Jake", "play", "guitar"), until=45)
    assert last[0].counts == (Count("Jake play guitar", 1),), "the count of what the question may see"
    _, nothing = timeline.ask(Request("count", "Jake", "juggle"))
    assert nothing == []
    found = timeline.retrieve("Jake playing the guitar", 5)
    guitar = [e for e in found if e.text.startswith("jake play guitar")]
    assert guitar and all(e.counts == (Count("jake play guitar", 2), Count("jake", 3)) for e in guitar), (
        "the fact's intervals, and the separate times its subject appears (10-40 s, 50-70 s, 80-90 s)"
    )
    assert all(e.to_json()["intervals"][0]["text"] == e.intervals[0].text for e in found)


def test_a_search_finds_by_its_words_a_fact_older_than_the_latest_it_ranks(tmp_path: Path, monkeypatch) -> None:
    """A person who talks all day names hundreds of facts; the one that answers may be older
    than the latest few the search ranks by meaning. With keywords (`lexical`, the agents'
    default) the facts that share the query's words are ranked too."""
    chatter = [("Mia", relation, obj) for relation, obj in
               [("hold", "cup"), ("talk to", "Jake"), ("sit on", "sofa"), ("open", "window"), ("laugh at", "joke")]]
    store = _timeline_store(tmp_path / "store", {0: [("Mia", "said", "we bought seven lanterns in total")],
                                                 **{i: chatter[i % 5 : i % 5 + 1] for i in range(1, 10)}})
    monkeypatch.setattr("videomem.memory.timeline_memory.RANKED_TEXTS", 3)
    query = "How many lanterns did Mia buy in total?"
    by_meaning = TimelineMemory(store, offline_models(), lexical=False).retrieve(query, 3)
    with_words = TimelineMemory(store, offline_models(), lexical=True).retrieve(query, 3)
    assert not any("lanterns" in e.text for e in by_meaning), "only the latest three of Mia's facts are ranked"
    assert "lanterns" in with_words[0].text and with_words[0].t_start == 0
    assert open_memory("timeline", store, offline_models(), AgentConfig(lexical=False)).lexical is False


def test_until_hides_every_window_recorded_after_the_query_time(timeline: TimelineMemory) -> None:
    _, found = timeline.ask(Request("count", "Jake", "play", "guitar"), until=25)
    assert _spans(found) == [(10, 20)], "a run still going on at the query time ends at its last visible window"
    headline, found = timeline.ask(Request("last", "Jake", "play", "guitar"), until=45)
    assert _spans(found) == [(10, 40)] and "of 1 interval(s)" in headline
    headline, found = timeline.ask(Request("count", "Katrina", "say"), until=40)
    assert found == [] and headline.startswith("no interval")


def test_first_last_and_order(timeline: TimelineMemory) -> None:
    _, first = timeline.ask(Request("first", "guitar"))
    _, last = timeline.ask(Request("last", "guitar"))
    assert _spans(first) == [(10, 40)] and _spans(last) == [(50, 70)]
    headline, found = timeline.ask(Request("order", "Jake", "pick up", "red phone", other_entity="Lucia", other_action="wash"))
    assert headline.startswith("earliest first: Lucia wash") and _spans(found) == [(0, 20), (30, 40)]
    with pytest.raises(Exception, match="second event"):
        timeline.ask(Request("order", "Jake", "pick up"))


def test_matching_goes_from_exact_to_inflections_to_text(timeline: TimelineMemory) -> None:
    headline, found = timeline.ask(Request("count", "jake", "played", "guitar"))
    assert _spans(found) == [(10, 40), (50, 70)] and "(synonym match)" in headline
    headline, found = timeline.ask(Request("count", "Jake", "playing guitar"))
    assert _spans(found) == [(10, 40), (50, 70)], "an action naming its target is split into action and target"
    headline, found = timeline.ask(Request("first", "Jake", "pick up", "phone"))
    assert _spans(found) == [(30, 40)] and "(text match)" in headline, "'phone' is found inside 'red phone'"
    headline, found = timeline.ask(Request("count", "Jake", "juggle"))
    assert found == [] and headline.startswith("no interval")


def test_state_with_and_speakers(timeline: TimelineMemory) -> None:
    _, found = timeline.ask(Request("state", "Jake", at=85))
    assert [e.text.split(" (")[0] for e in found] == ["jake sit in kitchen"]
    _, found = timeline.ask(Request("state", "kettle", at=79))
    assert found and "on the stove" in found[0].text
    headline, found = timeline.ask(Request("with", "Jake"))
    assert "lucia" in headline and _spans(found) == [(10, 20), (60, 70)]
    _, found = timeline.ask(Request("with", "Jake", other_entity="Lucia"), until=30)
    assert _spans(found) == [(10, 20)]
    headline, found = timeline.ask(Request("count", "Katrina", "speak"))
    _, said = timeline.ask(Request("count", "Katrina", "say"))
    assert _spans(said) == [(41, 44)] and "pizza" in said[0].text, "a transcript line's speaker is a person who says it"


def test_runs_join_only_consecutive_windows() -> None:
    from videomem.memory.timeline_index import Fact

    facts = [Fact("", "v", "a", "b", "c", "episodic", t, t + 10) for t in (0, 10, 30, 40, 41)]
    assert runs(facts) == [0, 0, 2, 2, 2]
    assert stem("picked up") == stem("picks up") == stem("pick up") and stem("taking") == stem("take")


def test_stored_rows_survive_reopen_and_show_in_info(tmp_path: Path, run_cli) -> None:
    root = tmp_path / "store"
    _timeline_store(root).close()
    with Store(root, read_only=True) as store:
        memory = open_memory("timeline", store, offline_models())
        assert memory.stats()["intervals"] == 8 and memory.stats()["persons"] >= 3
        found = memory.retrieve("Jake playing the guitar", 3)
        assert found and all(e.source == "timeline" for e in found) and "guitar" in found[0].text
    assert "timeline" in MEMORIES
    out = run_cli("search", "Jake guitar", "--store", root, "--memory", "timeline", "--until", "00:00:30").output
    assert "jake play guitar" in out and "00:00:50" not in out
    info = run_cli("info", "--store", root).output
    assert "timeline" in info and "intervals" in info


def test_agent_tool_takes_typed_operations(tmp_path: Path) -> None:
    store = _timeline_store(tmp_path / "store")
    cfg = AgentConfig(tools=("memory.timeline",))
    models = offline_models()
    box = Toolbox(store, models, Memories(store, models, cfg), cfg, until=45)
    out = box.call("memory.timeline", {"operation": "count", "entity": "Jake", "action": "play", "target": "guitar"})
    assert "1 interval(s)" in out.observation and _spans(out.evidence) == [(10, 40)]
    out = box.call("memory.timeline", {"operation": "state", "entity": "Jake", "at": "00:00:35"})
    assert _spans(out.evidence) == [(10, 40), (30, 40)]
    out = box.call("memory.timeline", {"query": "Lucia washing dishes"})
    assert out.evidence and "lucia wash dishes" in out.evidence[0].text
    with pytest.raises(ToolCallError, match="operation"):
        box.call("memory.timeline", {"operation": "average", "entity": "Jake"})
    assert "needs an entity" in box.call("memory.timeline", {"operation": "count"}).observation


def test_an_agent_answers_a_count_with_the_typed_count_on_its_evidence(tmp_path: Path) -> None:
    """WorldMM's offline agent routes a count to timeline memory; the evidence the answer rests
    on carries the count typed (the reader's use of it: test_offline_reader.py)."""
    store = _timeline_store(tmp_path / "store")
    agent = Agent(store, offline_models(), AgentConfig(kind="worldmm", tools=("memory.timeline",)))
    answer = agent.ask("Jake played the guitar how many times?", ["Once", "Twice", "4 times"])
    assert answer.text == "B. Twice" and answer.trace[0]["tool"] == "memory.timeline"
    guitar = [e for e in answer.evidence if e.text.startswith("jake play guitar")]
    assert [e.counts for e in guitar] == [(Count("jake play guitar", 2), Count("jake", 3))] * 2
    seen = agent.ask("On how many separate occasions did Jake show up?", ["Twice", "3 times", "4 times"])
    assert seen.text == "B. 3 times", "the count of the entity asked about, not of one thing it did"
