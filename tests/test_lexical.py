"""Keyword search (BM25) beside the embedding search, and their fusion in the memories that read texts."""

from __future__ import annotations

from pathlib import Path

import pytest
from memory_stores import events_store, offline_models

from videomem.config import load_agent
from videomem.memory.events import EventMemory
from videomem.memory.registry import open_memory
from videomem.store.lexical import LexicalIndex, fuse, terms

TIDYING = " ".join(["I wipe the table, stack the plates and put the cups back on the shelf."] * 20)
CAPTIONS = [
    "I check the time on the wall clock above the door.",
    "Tasha looks at her wristwatch and says we are late.",
    "Alice sets a timer on her phone for the oven.",
    f"{TIDYING} Then I press the stopwatch.",  # its last words lie past MiniLM's 256-token window
    "The clock on the shelf shows half past three.",
    "Katrina counts the seconds out loud during the game.",
]


def test_words_match_across_inflections_and_skip_stopwords() -> None:
    index = LexicalIndex([10, 20, 30, 40], ["Shure cooks noodles", "Katrina plays the guitar", "", "I was cooking eggs"])
    assert terms("The COOKING of noodles") == terms("cooked noodle")  # stemmed, stopwords dropped
    assert [i for i, _ in index.search("who cooked the noodles?", 5)] == [10, 40]
    assert [i for i, _ in index.search("who cooked the noodles?", 5, allowed_ids=[40, 20])] == [40]
    assert index.search("the of and", 5) == []  # nothing but stopwords: no keyword to match
    assert index.search("zebra", 5) == []  # a word no text holds: nothing, not every row at zero
    assert LexicalIndex([], []).search("noodles", 3) == []


def test_fusion_puts_what_both_rankings_found_first() -> None:
    fused = fuse([1, 2, 3], [3, 4])
    assert [i for i, _ in fused] == [3, 1, 2, 4]  # 3 is in both; ties keep the first ranking's order
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 60)


def test_words_the_embedder_cannot_see_are_found_by_keyword(tmp_path: Path) -> None:
    """A long caption (a clip's description with its speech) names the stopwatch past the
    embedder's token window: by meaning alone the clips about clocks and watches come first;
    fused with the keyword ranking, the clip that holds the word does."""
    store = events_store(tmp_path, CAPTIONS)
    query = "When did I press the stopwatch?"
    by_meaning = EventMemory(store, offline_models(), lexical=False).retrieve(query, 3)
    fused = EventMemory(store, offline_models(), lexical=True).retrieve(query, 3)
    assert 30.0 not in [e.t_start for e in by_meaning]
    assert fused[0].t_start == 30.0 and fused[0].score == 1.0
    assert all(0 < e.score <= 1 for e in fused) and [e.score for e in fused] == sorted((e.score for e in fused), reverse=True)
    assert 30.0 not in [e.t_start for e in EventMemory(store, offline_models()).retrieve(query, 6, until=30.0)]


def test_the_caption_rag_baseline_searches_by_meaning_and_the_agents_fuse_keywords(tmp_path: Path) -> None:
    store = events_store(tmp_path, CAPTIONS)
    assert load_agent("caption-rag").lexical is False and load_agent("caption-rag-question").lexical is False
    assert load_agent("worldmm").lexical is True and load_agent("telemem").lexical is True
    assert open_memory("events", store, offline_models(), load_agent("caption-rag")).lexical is False
    assert open_memory("episodic", store, offline_models(), load_agent("worldmm")).lexical is True
