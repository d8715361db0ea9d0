"""Recency beside relevance (`memory/recency.py`): a question asked at a moment of the recording
finds the recent of two equally relevant captions first; a video asked as a whole, and the
caption-RAG baselines, rank by relevance alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from memory_stores import built, events_store, hand_store, offline_models
from test_episodic import CFG, HOUR, write_events

from videomem.config import AgentConfig, load_agent
from videomem.memory import recency
from videomem.memory.episodic import EpisodicMemory
from videomem.memory.events import EventMemory
from videomem.memory.objects import ObjectMemory, write_records
from videomem.memory.registry import open_memory
from videomem.models.tasks.objects import ObjectRecord
from videomem.store import Store
from videomem.store.clips import clips_of

DAY = 86400.0


def test_a_recent_candidate_leads_an_old_one_that_is_a_little_more_relevant() -> None:
    ranked = [(1, 0.9), (2, 0.85), (3, 0.2)]
    ends = {1: 0.0, 2: 6 * DAY, 3: 6 * DAY}
    reranked = recency.reranked(ranked, ends, until=7 * DAY, half_life_s=DAY)
    assert [i for i, _ in reranked] == [2, 1, 3]
    assert reranked[0][1] == 1.0 and all(0 <= s <= 1 for _, s in reranked)


def test_relevance_still_decides_between_candidates_of_the_same_age() -> None:
    ranked = [(1, 0.3), (2, 0.9), (3, 0.5)]
    reranked = recency.reranked(ranked, {1: 10.0, 2: 10.0, 3: 10.0}, until=100.0, half_life_s=60.0)
    assert [i for i, _ in reranked] == [2, 3, 1]


def test_seconds_between_candidates_are_no_days_of_recency() -> None:
    """With a day's half-life, clips ten seconds apart are equally recent: the more relevant one
    leads. Stretching recency over the candidates (as Generative Agents normalise it) made the
    later clip as much more recent as a day is than a week, and it led."""
    ranked = [(1, 1.0), (2, 0.9), (3, 0.0)]
    ends = {1: 100.0, 2: 110.0, 3: 50.0}
    assert [i for i, _ in recency.reranked(ranked, ends, until=120.0, half_life_s=DAY)] == [1, 2, 3]


def test_no_moment_of_asking_or_no_half_life_keeps_the_relevance_order() -> None:
    ranked = [(1, 0.9), (2, 0.85)]
    ends = {1: 0.0, 2: 5 * DAY}
    assert recency.reranked(ranked, ends, until=None, half_life_s=DAY) == ranked
    assert recency.reranked(ranked, ends, until=6 * DAY, half_life_s=None) == ranked
    assert recency.pool_size(5, None, DAY) == 5 and recency.pool_size(5, 6 * DAY, DAY) == recency.POOL


def test_event_memory_finds_the_recent_of_two_like_captions_first_for_a_question_asked_later(tmp_path: Path) -> None:
    captions = ["I put the keys in the blue drawer.", "Bob repairs the red bicycle.", "I make coffee in the kitchen.",
                "Carol reads a newspaper.", "I put the keys in the drawer."]
    store = events_store(tmp_path, captions)
    question = "Where did I put the keys in the blue drawer?"
    plain = EventMemory(store, offline_models(), recency_half_life_s=None).retrieve(question, 2, until=50)
    recent = EventMemory(store, offline_models(), recency_half_life_s=20.0).retrieve(question, 2, until=50)
    assert [e.t_start for e in plain] == [0, 40], "by relevance: the blue drawer's caption first"
    assert [e.t_start for e in recent] == [40, 0], "the recent caption about the keys leads"
    asked_whole = EventMemory(store, offline_models(), recency_half_life_s=20.0).retrieve(question, 2)
    assert [e.t_start for e in asked_whole] == [0, 40], "no moment of asking: relevance alone"


def test_object_memory_finds_the_recently_seen_of_two_like_objects_first(tmp_path: Path) -> None:
    store = hand_store(tmp_path, [None] * 5)
    clips = clips_of(store, ["v"])
    with store.transaction() as tx:
        write_records(tx, clips[0], [ObjectRecord(name="red mug", kind="object", value="on the kitchen table")])
        write_records(tx, clips[4], [ObjectRecord(name="mug", kind="object", value="on the table")])
        for clip, name in zip(clips[1:4], ("bicycle", "newspaper", "umbrella")):
            write_records(tx, clip, [ObjectRecord(name=name, kind="object", value="in the garage")])
    question = "Where is the red mug on the kitchen table?"

    def first(half_life_s: float | None, until: float | None) -> float:
        memory = ObjectMemory(store, offline_models(), recency_half_life_s=half_life_s)
        memory.index.ensure()
        return memory.retrieve(question, 1, until)[0].t_start

    assert first(None, 50) == 0, "by relevance: the red mug"
    assert first(20.0, 50) == 40, "asked later: the mug seen last leads"
    assert first(20.0, None) == 0, "no moment of asking: relevance alone"


@pytest.fixture(scope="module")
def plants(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("recency") / "store"
    texts = ["Alice waters the tomato plants in the garden.", "Alice waters the tomato plants in the garden.",
             "Bob repairs the red bicycle in the garage.", "I make coffee in the kitchen."]
    with Store(root, create=True) as store:
        write_events(store, "h1", HOUR, texts)
        built(EpisodicMemory(store, offline_models()), CFG)
    return root


def test_episodic_memory_ranks_the_later_of_two_like_windows_first_at_a_scale(plants: Path) -> None:
    question = "Who waters the tomato plants?"
    with Store(plants, read_only=True) as store:
        def finest(half_life_s: float | None, until: float | None) -> list[float]:
            found = EpisodicMemory(store, offline_models(), recency_half_life_s=half_life_s).retrieve(question, 10, until)
            return [e.t_start - HOUR for e in found if e.scale == 10.0 and "plants" in e.text]

        assert finest(None, HOUR + 40) == [0.0, 10.0]
        assert finest(15.0, HOUR + 40) == [10.0, 0.0]
        assert finest(15.0, None) == [0.0, 10.0]


def test_agent_profiles_say_who_ranks_by_recency(plants: Path) -> None:
    assert AgentConfig().recency_half_life_hours == 24.0
    assert load_agent("worldmm").recency_half_life_hours == 24.0
    for baseline in ("caption-rag", "caption-rag-question"):
        assert load_agent(baseline).recency_half_life_hours is None, f"{baseline}: plain caption RAG"
    with Store(plants, read_only=True) as store:
        assert open_memory("events", store, offline_models(), load_agent("worldmm")).recency_half_life_s == 24 * 3600.0
        assert open_memory("episodic", store, offline_models(), load_agent("caption-rag")).recency_half_life_s is None
    with pytest.raises(ValueError, match="recency_half_life_hours"):
        AgentConfig(recency_half_life_hours=0)
