"""Semantic memory: induction across segments, consolidation with validity intervals, resumable
incremental builds, and PPR retrieval as the knowledge stood at a query time.

Stores are built from hand-written episodic rows (finest-scale captions and their triplets), so
no video is decoded; the offline language model and MiniLM do the induction and consolidation.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from memory_stores import CountingEmbedder, built, offline_models

from videomem.config import PipelineConfig, SemanticSettings
from videomem.errors import MalformedOutputError
from videomem.memory import semantic
from videomem.memory.graph import fact_text
from videomem.memory.registry import open_memory
from videomem.memory.semantic import SemanticMemory
from videomem.store import Store
from videomem.timeline import DAY

MORNING = 8 * 3600.0
PIPELINE = PipelineConfig(semantic_segment_seconds=300.0, min_support_segments=2)


def _store(root: Path, days: dict[int, list[tuple[str, str, str]]]) -> Store:
    """An EgoLife-timeline store whose footage on each day is one 10-s caption at 08:00 stating
    the given triplets (days from 1)."""
    store = Store(root, create=True)
    with store.transaction() as tx:
        tx.execute(
            "INSERT INTO videos (id, path, t_offset, duration, fps, n_frames, width, height, rotation, probe_json)"
            " VALUES ('week', 'week.mp4', 1, ?, 25, 1, 320, 180, 0, '{}')",
            (7 * DAY,),
        )
    _add_days(store, days)
    return store


def _add_days(store: Store, days: dict[int, list[tuple[str, str, str]]]) -> None:
    with store.transaction() as tx:
        for day, facts in days.items():
            t0 = (day - 1) * DAY + MORNING
            caption = tx.execute(
                "INSERT INTO episodic_captions (scale, scope, idx, video_id, n_videos, t_start, t_end, text, inputs_hash)"
                " VALUES (10, '', ?, 'week', 1, ?, ?, ?, ?)",
                (int(t0 // 10), t0, t0 + 10, "; ".join(" ".join(f) for f in facts), f"day{day}"),
            ).lastrowid
            tx.executemany(
                "INSERT INTO episodic_triplets (caption_id, subject, relation, object) VALUES (?, ?, ?, ?)",
                [(caption, *f) for f in facts],
            )


def _memory(store: Store) -> SemanticMemory:
    return SemanticMemory(store, offline_models(), SemanticSettings(top_k=10))


def _said(evidence) -> list[str]:
    return [e.text.split(".")[0] for e in evidence]


def test_habit_on_three_days_is_one_triplet_with_evidence_from_all_three(tmp_path: Path) -> None:
    store = _store(
        tmp_path,
        {
            1: [("I", "drink", "tea"), ("I", "open", "front door")],
            2: [("I", "drink", "tea"), ("Alice", "read", "newspaper")],
            3: [("I", "drink", "tea"), ("Bob", "fix", "bicycle")],
        },
    )
    memory = _memory(store)
    result = built(memory, PIPELINE)
    assert (result.done, result.skipped, result.failures) == (3, 0, [])

    rows = store.query("SELECT * FROM semantic_triplets")
    assert [(r["subject"], r["relation"], r["object"]) for r in rows] == [("I", "drink", "tea")]
    evidence_days = store.query(
        "SELECT c.t_start FROM semantic_evidence e JOIN episodic_triplets t ON t.id = e.episodic_triplet_id "
        "JOIN episodic_captions c ON c.id = t.caption_id ORDER BY c.t_start"
    )
    assert [int(r[0] // DAY) + 1 for r in evidence_days] == [1, 2, 3]
    # Established when it recurred (day 2), not before.
    assert rows[0]["valid_from"] == pytest.approx(DAY + MORNING + 10)

    found = memory.retrieve("what do I drink in the morning", 5)
    assert _said(found) == ["I drink tea"]
    assert (found[0].t_start, found[0].t_end) == (2 * DAY + MORNING, 2 * DAY + MORNING + 10), (
        "a triplet cites a moment that supports it (the latest), not the days its support spans"
    )
    assert found[0].text.count("DAY") >= 3, "each supporting time range is shown"
    assert [int(start // DAY) + 1 for start, _, _ in found[0].moments] == [1, 2, 3], (
        "the supporting moments are typed, for a reader to count"
    )
    assert memory.retrieve("tea", 5, until=DAY + 9 * 3600) != []
    assert memory.retrieve("tea", 5, until=MORNING + 3600) == [], "one morning is no habit yet"
    day_two = memory.retrieve("tea", 5, until=DAY + 9 * 3600)
    assert day_two[0].t_end == DAY + MORNING + 10, "support recorded after the query time is not shown"
    assert memory.stats()["triplets valid"] == 1 and memory.stats()["entities"] == 2

    # Resumable and incremental: nothing to do again; a new day adds only its own segment.
    assert (built(memory, PIPELINE).done, built(memory, PIPELINE).skipped) == (0, 3)
    _add_days(store, {4: [("I", "drink", "tea")]})
    assert built(memory, PIPELINE).done == 1
    assert store.query("SELECT COUNT(*) FROM semantic_triplets")[0][0] == 1
    assert store.query("SELECT COUNT(*) FROM semantic_evidence")[0][0] == 4

    # --force: forgotten, then rebuilt to the same knowledge.
    SemanticMemory.reset(store, ["week"])
    assert store.query("SELECT COUNT(*) FROM semantic_triplets")[0][0] == 0
    assert built(memory, PIPELINE).done == 4
    assert store.query("SELECT subject, relation, object FROM semantic_triplets")[0][:] == ("I", "drink", "tea")


def test_contradicted_preference_is_retired_yet_seen_before_the_change(tmp_path: Path, run_cli) -> None:
    store = _store(
        tmp_path,
        {
            1: [("I", "like", "green tea")],
            2: [("I", "like", "green tea"), ("I", "like", "cake")],
            3: [("I", "dislike", "green tea"), ("I", "like", "cake")],
            4: [("I", "dislike", "green tea")],
        },
    )
    memory = open_memory("semantic", store, offline_models())
    built(SemanticMemory(store, offline_models()), PIPELINE)
    rows = {(r["relation"], r["object"]): r for r in store.query("SELECT * FROM semantic_triplets")}
    assert set(rows) == {("like", "green tea"), ("like", "cake"), ("dislike", "green tea")}
    liked, disliked = rows[("like", "green tea")], rows[("dislike", "green tea")]
    assert liked["retired_at"] == disliked["valid_from"] == pytest.approx(3 * DAY + MORNING + 10)
    assert rows[("like", "cake")]["retired_at"] is None, "a different, compatible preference stands"

    assert set(_said(memory.retrieve("green tea", 10))) == {"I dislike green tea", "I like cake"}
    assert set(_said(memory.retrieve("green tea", 10, until=2 * DAY + 12 * 3600))) == {"I like green tea", "I like cake"}
    assert memory.stats()["triplets retired"] == 1

    found = run_cli("search", "green tea", "--store", store.root, "--memory", "semantic", "--json", "--until", "DAY3 12:00:00")
    assert found.code == 0, found.output
    assert {e["text"].split(".")[0] for e in json.loads(found.stdout)} == {"I like green tea", "I like cake"}
    info = run_cli("info", "--store", store.root)
    assert "memory semantic: triplets valid 2, triplets retired 1, entities 3" in info.stdout


def test_retrieval_ranks_by_edge_ppr_and_masks_other_videos(tmp_path: Path) -> None:
    store = _store(
        tmp_path,
        {
            1: [("Alice", "is friend of", "Bob"), ("I", "water", "plants"), ("Bob", "play", "guitar")],
            2: [("Alice", "is friend of", "Bob"), ("I", "water", "plants"), ("Bob", "play", "guitar")],
        },
    )
    memory = _memory(store)
    built(memory, PIPELINE)
    found = memory.retrieve("Who is Bob's friend?", 3)
    assert _said(found)[0] == "Alice is friend of Bob"
    assert "Bob play guitar" in _said(found)[:2], "the query's entity lifts its other edges above unrelated ones"
    assert memory.retrieve("Bob", 3, video_id="week") != []
    assert memory.retrieve("Bob", 3, video_id="other") == []
    assert memory.graph_file().ensure() == "cached"
    assert SemanticMemory(store, offline_models()).graph_file().ensure() == "cached", "one graph per process"


def test_a_triplet_that_relates_an_entity_to_itself_is_not_retrieved(tmp_path: Path) -> None:
    # A parse of "I speak, I nod" can make "I" the object of its own verb. Scored by both ends'
    # PPR, such a triplet counted the hub "I" twice and came before every real relation.
    facts = [("I", "speak", "I"), ("I", "nod", "I"), ("I", "sit beside", "Lucia"), ("Shure", "play", "guitar")]
    store = _store(tmp_path, {1: facts, 2: facts})
    memory = _memory(store)
    built(memory, PIPELINE)
    said = _said(memory.retrieve("Who do I sit beside?", 3))
    assert said[0] == "I sit beside Lucia"
    assert not {"I speak I", "I nod I"} & set(said)


def test_triplets_between_the_same_two_entities_come_in_order_of_closeness_to_the_query(tmp_path: Path) -> None:
    # Their edges score the same PPR; the tie used to go to the oldest triplet.
    facts = [("I", "laugh with", "Tasha"), ("I", "walk beside", "Tasha"), ("I", "eat lunch with", "Tasha")]
    store = _store(tmp_path, {1: facts, 2: facts})
    memory = _memory(store)
    built(memory, PIPELINE)
    assert _said(memory.retrieve("Who do I eat lunch with?", 3))[0] == "I eat lunch with Tasha"
    assert _said(memory.retrieve("Whom did I walk beside?", 3))[0] == "I walk beside Tasha"


class _FailingOnce:
    """The offline language, but `induce_semantic` fails once, at its `at`-th call."""

    def __init__(self, real, at: int) -> None:
        self.real, self.at, self.calls = real, at, 0

    def induce_semantic(self, facts, min_segments):
        self.calls += 1
        if self.calls == self.at:
            raise MalformedOutputError("induce_semantic: unusable output")
        return self.real.induce_semantic(facts, min_segments)

    def __getattr__(self, name: str):
        return getattr(self.real, name)


def test_an_unusable_reply_fails_its_segment_only_and_the_rerun_retries_it(tmp_path: Path) -> None:
    """One bad reply of a real model must not block semantic memory for the rest of the corpus:
    the segment is recorded as failed (listed by `info`), later segments go on, and the next
    run adds only that segment."""
    days = {d: [("I", "drink", "tea"), ("I", "cook", f"dish {d}")] for d in range(1, 5)}
    store = _store(tmp_path / "failed", days)
    real = offline_models()
    flaky = SimpleNamespace(cfg=real.cfg, text_embedder=real.text_embedder, language=_FailingOnce(real.language, at=3))
    result = built(SemanticMemory(store, flaky), PIPELINE)
    assert result.done == 3 and len(result.failures) == 1
    unit, why = result.failures[0]
    assert "unusable output" in why and "re-run ingest to retry" in why
    [failed] = store.failures()
    assert (failed["stage"], failed["unit"]) == ("semantic", unit)
    assert store.query("SELECT COUNT(*) FROM semantic_segments")[0][0] == 3, "the failed segment left no rows"
    resumed = built(SemanticMemory(store, offline_models()), PIPELINE)
    assert (resumed.done, resumed.skipped, resumed.failures) == (1, 3, [])
    assert store.failures() == [], "its success clears the recorded failure"


def test_adding_days_embeds_only_their_own_texts_however_long_the_history(tmp_path: Path) -> None:
    """Work per added segment is bounded: recall reads the earlier facts' stored vectors and
    consolidation the saved graph's, so two more days cost the same embeddings after two days
    of history as after eight (each history pair of days adds a habit that stays valid)."""
    def history(days: int) -> dict[int, list[tuple[str, str, str]]]:
        return {d: [("I", "drink", "tea"), ("I", "visit", f"museum {(d + 1) // 2}")] for d in range(1, days + 1)}

    new_days = [[("I", "drink", "tea"), ("Bob", "play", "guitar")], [("I", "drink", "tea"), ("Bob", "play", "guitar")]]
    counted = []
    for days in (2, 8):
        store = _store(tmp_path / f"history{days}", history(days))
        built(SemanticMemory(store, offline_models()), PIPELINE)
        assert store.query("SELECT COUNT(*) FROM semantic_triplets WHERE retired_at IS NULL")[0][0] == 1 + days // 2
        _add_days(store, {days + 1 + n: facts for n, facts in enumerate(new_days)})
        real = offline_models()
        embedder = CountingEmbedder(real.text_embedder)
        models = SimpleNamespace(cfg=real.cfg, text_embedder=embedder, language=real.language)
        assert built(SemanticMemory(store, models), PIPELINE).done == 2
        assert {tuple(r) for r in store.query("SELECT subject, relation, object FROM semantic_triplets")} >= {
            ("I", "drink", "tea"), ("Bob", "play", "guitar")
        }
        counted.append(embedder.texts)
    assert counted[0] == counted[1] > 0, f"texts embedded for two new days after 2 and 8 days of history: {counted}"


def test_recall_embeds_a_fact_as_the_episodic_graph_does(tmp_path: Path) -> None:
    """A fact goes to the text embedder as the graph's fact text (`fact_text`), whatever its
    case and punctuation, so semantic recall reuses the episodic graph's embedding of it."""
    days = {1: [("Tasha", "said", "Do you think this much is enough?")], 2: [("Tasha", "said", "Enough, thanks!")]}
    store = _store(tmp_path, days)
    real = offline_models()
    embedded: list[str] = []

    class Recorded(CountingEmbedder):
        def embed(self, texts):
            embedded.extend(texts)
            return super().embed(texts)

    models = SimpleNamespace(cfg=real.cfg, text_embedder=Recorded(real.text_embedder), language=real.language)
    SemanticMemory(store, models)._recall_index().ensure()
    assert sorted(embedded) == ["tasha said do you think this much is enough", "tasha said enough thanks"]
    assert [fact_text(*f) for f in days[1]] == ["tasha said do you think this much is enough"]


def test_a_habit_seen_all_week_is_shown_from_a_few_rows_not_its_whole_history(tmp_path: Path) -> None:
    days = {day: [("I", "drink", "tea"), ("someone", "reads", f"page {day}")] for day in range(1, 13)}
    store = _store(tmp_path, days)
    memory = _memory(store)
    built(memory, PIPELINE)
    memory.retrieve("what do I drink", 5)  # loads the graph
    handed, query = [], store.query

    def counting(sql, params=()):
        rows = query(sql, params)
        handed.append(len(rows))
        return rows

    store.query = counting
    found = memory.retrieve("what do I drink", 5, until=11 * DAY + MORNING + 60)
    assert _said(found) == ["I drink tea"]
    assert found[0].text.count("DAY") == 1 + 2 * (semantic.SHOWN_SUPPORT + 1) and "and 7 more" in found[0].text
    assert (found[0].t_start, found[0].t_end) == (11 * DAY + MORNING, 11 * DAY + MORNING + 10)
    assert sum(handed) <= semantic.SHOWN_SUPPORT + 4, "rows read for one triplet must not grow with its 12 days"
