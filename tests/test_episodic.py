"""Episodic memory (WorldMM, issue 9): multi-scale captions, per-scale graphs, PPR retrieval and
the cross-scale re-rank, with the offline models.

Most tests build the stage on hand-written clip captions (rows in `events`), so no video is
decoded; one test runs a generated video through the real ingest."""

from __future__ import annotations

import dataclasses

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from memory_stores import built, offline_models

from videomem.config import AgentConfig, PipelineConfig
from videomem.synth.render import Shot, encode
from videomem.memory import graph as graph_module
from videomem.memory.episodic import EpisodicMemory
from videomem.memory.graph import PassageGraph
from videomem.memory.registry import MEMORIES
from videomem.models.tasks.episodic import RankCandidate
from videomem.models.offline.rerank import rerank
from videomem.pipeline.runner import ingest
from videomem.store import Store
from videomem.timeline import UNTIL_SLACK

SCALES = (10.0, 30.0, 60.0, 90.0)
CFG = PipelineConfig(stages=("sample", "caption", "episodic"), episodic_scales=SCALES, episodic_batch_size=4)
AGENT = AgentConfig(tools=("memory.episodic",))
HOUR = 3600.0
PART_ONE = [
    "Alice waters the tomato plants in the garden.",
    "Alice waters the tomato plants in the garden.",
    "Bob repairs the red bicycle in the garage.",
    "Bob repairs the red bicycle in the garage.",
    "Bob repairs the red bicycle in the garage.",
    "I put the keys in the blue drawer.",
    "On-screen text reads 'ROOM 418'. A courier rings the doorbell.",
    "I make coffee in the kitchen.",
    "I make coffee in the kitchen.",
    "Carol reads a newspaper on the sofa.",
    "Carol reads a newspaper on the sofa.",
    "I water the plants on the balcony.",
]
PART_TWO = [
    "Emma paints the garden fence.",
    "Emma paints the garden fence.",
    "I lock the front door.",
    "A taxi waits at the gate.",
    "I carry a suitcase to the taxi.",
    "The taxi drives away.",
]


def write_events(store: Store, video_id: str, t_offset: float, texts: Sequence[str]) -> None:
    """One video of 10-s clips whose captions (events) are `texts`."""
    with store.transaction() as tx:
        tx.execute(
            "INSERT INTO videos (id, path, t_offset, duration, fps, n_frames, width, height, rotation, probe_json)"
            " VALUES (?, ?, ?, ?, 25, 1, 320, 180, 0, '{}')",
            (video_id, f"{video_id}.mp4", t_offset, 10.0 * len(texts)),
        )
        for idx, text in enumerate(texts):
            t0 = t_offset + 10.0 * idx
            clip = tx.execute(
                "INSERT INTO clips (video_id, idx, t_start, t_end) VALUES (?, ?, ?, ?)", (video_id, idx, t0, t0 + 10)
            ).lastrowid
            tx.execute(
                "INSERT INTO events (clip_id, video_id, t_start, t_end, text) VALUES (?, ?, ?, ?, ?)",
                (clip, video_id, t0, t0 + 10, text),
            )


class Recording:
    """The offline language tasks, recording what `summarise` is asked."""

    def __init__(self, language: object) -> None:
        self.language = language
        self.groups: list[list[str]] = []

    def summarise(self, groups: Sequence[Sequence[str]]) -> list[str]:
        self.groups += [list(g) for g in groups]
        return self.language.summarise(groups)

    def __getattr__(self, name: str) -> object:
        return getattr(self.language, name)


def recording_models() -> SimpleNamespace:
    models = offline_models()
    return SimpleNamespace(language=Recording(models.language), text_embedder=models.text_embedder, cfg=models.cfg)


def snapshot(store: Store) -> dict:
    """Everything the stage wrote, without row ids; and each scale's graph, by caption text."""
    captions = [
        tuple(r) for r in store.query(
            "SELECT scale, scope, idx, video_id, n_videos, t_start, t_end, text, inputs_hash FROM episodic_captions "
            "ORDER BY scale, scope, idx"
        )
    ]
    entities = [tuple(r) for r in store.query(
        "SELECT c.scale, c.idx, e.position, e.name FROM episodic_entities e JOIN episodic_captions c ON c.id = e.caption_id "
        "ORDER BY 1, 2, 3"
    )]
    triplets = sorted(tuple(r) for r in store.query(
        "SELECT c.scale, c.idx, t.subject, t.relation, t.object FROM episodic_triplets t "
        "JOIN episodic_captions c ON c.id = t.caption_id"
    ))
    memory = EpisodicMemory(store, offline_models())
    graphs = {}
    for scale in memory.scales():
        graph = memory.graph(scale)
        graphs[scale] = (graph.entities, graph.facts, graph.passage_texts, graph.adjacency().toarray().round(6).tolist())
    return {"captions": captions, "entities": entities, "triplets": triplets, "graphs": graphs}


@pytest.fixture(scope="module")
def at_once(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """Two EgoLife-style files on one corpus timeline, built in one run: (store dir, snapshot)."""
    root = tmp_path_factory.mktemp("episodic") / "at_once"
    with Store(root, create=True) as store:
        write_events(store, "h1", HOUR, PART_ONE)
        write_events(store, "h2", HOUR + 10 * len(PART_ONE), PART_TWO)
        result = built(EpisodicMemory(store, offline_models()), CFG)
        assert not result.failures
        return root, snapshot(store)


def test_scales_nest_and_the_finest_is_the_clip_captions(at_once: tuple[Path, dict]) -> None:
    root, snap = at_once
    by_scale: dict[float, list[tuple]] = {}
    for row in snap["captions"]:
        by_scale.setdefault(row[0], []).append(row)
    texts = PART_ONE + PART_TWO
    assert [r[7] for r in by_scale[10.0]] == texts, "the 10-s scale is the clip captions, unchanged"
    assert [len(by_scale[s]) for s in SCALES] == [18, 6, 3, 2]
    assert all(r[1] == "" for r in snap["captions"]), "a corpus timeline has corpus-wide windows"
    for scale, rows in by_scale.items():
        for idx, t_start, t_end in ((r[2], r[5], r[6]) for r in rows):
            assert idx * scale <= t_start < t_end <= (idx + 1) * scale, "a window holds only its own footage"
    across = [r for r in snap["captions"] if r[4] == 2]
    assert [(r[0], r[5], r[6]) for r in across] == [(90.0, HOUR + 90, HOUR + 180)], "one window spans both files"
    assert snap["triplets"] and all(t[2] and t[3] and t[4] for t in snap["triplets"])
    assert ("I" in {t[2] for t in snap["triplets"]}), "the first person is kept as I"
    with Store(root) as store:
        stats = MEMORIES["episodic"].factory(store, offline_models(), AGENT).stats()
    assert [stats[f"captions {s:g}s"] for s in SCALES] == [18, 6, 3, 2]
    assert stats["triplets"] == len(snap["triplets"]) > 0
    assert stats["graph nodes"] == sum(len(g[0]) + len(g[2]) for g in snap["graphs"].values())
    assert stats["graph edges"] > stats["graph nodes"] // 2


def test_the_finest_scale_takes_the_caption_vectors_the_caption_index_holds(tmp_path: Path) -> None:
    """The clip captions are the 10-s scale's passages: their vectors come from the caption
    index the caption stage built, not from embedding a week of captions a second time."""
    from videomem.memory.events import EventMemory

    models = offline_models()
    embedded: list[str] = []

    class Recording:
        dim = models.text_embedder.dim

        def embed(self, texts):
            embedded.extend(texts)
            return models.text_embedder.embed(texts)

    seen = SimpleNamespace(text_embedder=Recording(), language=models.language, vision=models.vision, cfg=models.cfg)
    with Store(tmp_path / "s", create=True) as store:
        write_events(store, "h1", HOUR, PART_ONE)
        EventMemory(store, seen).refresh()
        assert set(PART_ONE) <= set(embedded)
        embedded.clear()
        assert not built(EpisodicMemory(store, seen), CFG).failures
        assert embedded and not set(PART_ONE) & set(embedded)
        graph = EpisodicMemory(store, models).graph(10.0)
        fresh = np.asarray(models.text_embedder.embed(graph.passage_texts))
        assert np.allclose(graph.passage_vectors, fresh, atol=1e-5)


def test_coarse_windows_summarise_the_finer_scale_that_nests_in_them(tmp_path: Path) -> None:
    with Store(tmp_path / "s", create=True) as store:
        write_events(store, "v", 0.0, PART_ONE[:9])
        models = recording_models()
        built(EpisodicMemory(store, models), CFG)
        rows = store.query("SELECT scale, text FROM episodic_captions ORDER BY scale, idx")
    caption_of = {(r["scale"], r["text"]) for r in rows}
    assert all(len(g) > 1 for g in models.language.groups), "a window of one input costs no model call"
    sizes = sorted(len(g) for g in models.language.groups)
    # 30 s from 3 clips (x3), 60 s from 2 windows of 30 s (one full, one partial),
    # 90 s from 3 windows of 30 s (90 is no multiple of 60) -- never from the clips directly
    assert sizes == [2, 3, 3, 3, 3]
    thirty = {t for s, t in caption_of if s == 30.0}
    assert sum(all(x in thirty for x in g) for g in models.language.groups) == 2, "the 60-s and the 90-s window"


def test_until_inside_a_coarse_window_hides_it_and_a_finer_caption_answers(at_once: tuple[Path, dict]) -> None:
    root, _ = at_once
    until = HOUR + 75  # inside the 90-s window [3600, 3690) and the 60-s window [3660, 3720)
    with Store(root) as store:
        memory = EpisodicMemory(store, offline_models())
        everything = memory.retrieve("courier rings the doorbell at room 418", 10)
        scoped = memory.retrieve("courier rings the doorbell at room 418", 10, until=until)
    assert any(e.t_end > until + UNTIL_SLACK for e in everything), "without until, later windows answer too"
    assert scoped and all(e.t_end <= until + UNTIL_SLACK for e in scoped)
    assert (scoped[0].scale, scoped[0].t_start) == (10.0, HOUR + 60), "the moment itself, from the finest scale"
    assert "ROOM 418" in scoped[0].text


def test_a_time_range_query_returns_the_finest_windows_from_its_start_on_in_time_order(at_once: tuple[Path, dict]) -> None:
    """What came right after the courier (HOUR + 60) is what was recorded next, whatever its
    words: the 10-s windows from the range's start, in time order, consecutive windows that say
    the same as one (two windows of making coffee are one happening), as many as asked for,
    none the question may not see yet."""
    root, _ = at_once
    with Store(root) as store:
        memory = EpisodicMemory(store, offline_models())
        after = memory.retrieve("DAY1 01:01:10 - DAY1 02:00:00", 3)
        seen = memory.retrieve("DAY1 01:01:10 - DAY1 02:00:00", 3, until=HOUR + 85)
        across = memory.retrieve("01:01:50 - 01:02:30", 10)
    assert [(e.scale, e.t_start, e.t_end, e.text) for e in after] == [
        (10.0, HOUR + 70, HOUR + 90, PART_ONE[7]), (10.0, HOUR + 90, HOUR + 110, PART_ONE[9]),
        (10.0, HOUR + 110, HOUR + 120, PART_ONE[11])]
    assert all(e.score == 1.0 for e in after), "time ranks them, not a similarity"
    assert [(e.t_start, e.t_end) for e in seen] == [(HOUR + 70, HOUR + 80)], "nothing recorded after the query time"
    assert [e.text for e in across] == [PART_ONE[11], PART_TWO[0], PART_TWO[2]], "a range runs on into the next file"


def test_a_coarse_window_carries_the_finer_captions_inside_it_as_intervals(at_once: tuple[Path, dict]) -> None:
    root, snap = at_once
    with Store(root) as store:
        found = EpisodicMemory(store, offline_models()).retrieve("Bob repairs the red bicycle in the garage", 10)
    finer_of = {30.0: 10.0, 60.0: 30.0, 90.0: 30.0}  # the coarsest finer scale that nests (90 s is no multiple of 60)
    coarse = [e for e in found if e.scale in finer_of]
    assert coarse and any(e.scale == 10.0 for e in found)
    for e in found:
        if e.scale == 10.0:
            assert e.intervals == (), "the finest scale is its own one interval"
            continue
        inside = [(r[5], r[6], r[7]) for r in snap["captions"]
                  if r[0] == finer_of[e.scale] and e.t_start <= r[5] and r[6] <= e.t_end]
        if len(inside) > 1:
            assert [(s.t_start, s.t_end, s.text) for s in e.intervals] == inside
        else:
            assert e.intervals == (), "a window of one finer caption is its own one interval"
    assert any(len(e.intervals) > 1 for e in coarse)


def test_two_part_ingest_equals_one_part(tmp_path: Path, at_once: tuple[Path, dict]) -> None:
    with Store(tmp_path / "parts", create=True) as store:
        write_events(store, "h1", HOUR, PART_ONE)
        memory = EpisodicMemory(store, offline_models())
        built(memory, CFG)
        before = {(r["scale"], r["idx"]): (r["id"], r["t_end"]) for r in store.query("SELECT * FROM episodic_captions")}
        write_events(store, "h2", HOUR + 10 * len(PART_ONE), PART_TWO)
        result = built(memory, CFG)
        after = {(r["scale"], r["idx"]): (r["id"], r["t_end"]) for r in store.query("SELECT * FROM episodic_captions")}
        assert snapshot(store) == at_once[1]
    kept = [k for k in before if after[k] == before[k]]
    rewritten = [k for k in before if after[k] != before[k]]
    # the first file ends on a 30-s and a 60-s boundary: only the partial 90-s window is rewritten
    assert rewritten == [(90.0, 41)]
    assert len(kept) == len(before) - 1 and result.skipped == len(kept)
    assert after[(90.0, 41)][1] == HOUR + 180 > before[(90.0, 41)][1], "the partial window filled"


def test_sigkill_during_the_stage_then_rerun_completes_without_duplicates(
    tmp_path: Path, at_once: tuple[Path, dict]
) -> None:
    root = tmp_path / "killed"
    with Store(root, create=True) as store:
        write_events(store, "h1", HOUR, PART_ONE)
        write_events(store, "h2", HOUR + 10 * len(PART_ONE), PART_TWO)
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from memory_stores import built, offline_models
        from videomem.memory.episodic import EpisodicMemory
        from videomem.store import Store
        from test_episodic import CFG
        models = offline_models()
        language, calls = models.language, []
        real = language.extract_triplets
        def dying(texts, entities):
            calls.append(len(texts))
            if len(calls) == 3:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(texts, entities)
        language.extract_triplets = dying
        built(EpisodicMemory(Store({str(root)!r}), models), CFG)
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1] / "src"), os.environ.get("PYTHONPATH", "")])}
    killed = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()[-2000:]
    with Store(root) as store:
        written = store.query("SELECT COUNT(*) AS n FROM episodic_captions")[0]["n"]
        assert written == 8, "two batches of 4 windows were committed before the kill"
        result = built(EpisodicMemory(store, offline_models()), CFG)
        assert not result.failures and result.skipped == 8
        assert snapshot(store) == at_once[1]
        duplicates = store.query(
            "SELECT COUNT(*) AS n FROM (SELECT caption_id, subject, relation, object FROM episodic_triplets "
            "GROUP BY 1, 2, 3, 4 HAVING COUNT(*) > 1)"
        )
        assert duplicates[0]["n"] == 0


def test_a_second_question_loads_the_saved_graphs(at_once: tuple[Path, dict], monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = at_once
    saved = sorted((root / "index").glob("episodic_*s.npz"))
    assert [p.name for p in saved] == ["episodic_10s.npz", "episodic_30s.npz", "episodic_60s.npz", "episodic_90s.npz"]
    stamps = [p.stat().st_mtime_ns for p in saved]
    graph_module._LOADED.clear()  # as in a new process

    def no_rebuild(*args: object, **kwargs: object) -> PassageGraph:
        raise AssertionError("a graph was rebuilt")

    monkeypatch.setattr(PassageGraph, "build", no_rebuild)
    with Store(root) as store:
        memory = EpisodicMemory(store, offline_models())
        first = memory.retrieve("Bob repairs the bicycle", 3)
        assert [memory._graph(s).ensure() for s in SCALES] == ["cached"] * 4
        second = EpisodicMemory(store, offline_models())
        assert [second._graph(s).ensure() for s in SCALES] == ["cached"] * 4, "held once per process"
        assert second.retrieve("Bob repairs the bicycle", 3) == first
    assert [p.stat().st_mtime_ns for p in saved] == stamps
    assert "bicycle" in first[0].text


def test_offline_rerank_keeps_a_moment_fine_and_lifts_an_activity_to_the_window_covering_it() -> None:
    class Words:
        """Bag of words: similarity is shared vocabulary, so the test controls it exactly."""

        dim = 8

        def embed(self, texts: Sequence[str]) -> np.ndarray:
            vocab = ["fence", "paint", "taxi", "gate", "lunch", "kitchen", "dog", "sofa"]
            rows = np.array([[t.lower().count(w) for w in vocab] for t in texts], dtype=np.float32)
            return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)

    fine = [RankCandidate(i, "I paint the fence", 10.0 * i, 10.0 * i + 10, 10.0, i + 1) for i in range(3)]
    moment = RankCandidate(9, "A taxi at the gate", 200.0, 210.0, 10.0, 4)
    coarse = RankCandidate(20, "I paint the fence. Lunch in the kitchen", 0.0, 180.0, 180.0, 1)
    diluted = RankCandidate(21, "Lunch in the kitchen. A dog on the sofa. A taxi", 180.0, 360.0, 180.0, 2)
    candidates = [*fine, moment, coarse, diluted]
    assert rerank("paint the fence", candidates, Words())[0] == 20, "three fine matches inside: the activity"
    # each scale's graph ranks what the query names first: for the taxi, the moment and the diluted window
    asked = {9: 1, 0: 2, 1: 3, 2: 4, 21: 1, 20: 2}
    for_taxi = [dataclasses.replace(c, rank=asked[c.id]) for c in candidates]
    assert rerank("taxi at the gate", for_taxi, Words())[0] == 9, "one match, diluted above: the moment"

    class Counting(Words):
        def __init__(self) -> None:
            self.texts: list[str] = []

        def embed(self, texts: Sequence[str]) -> np.ndarray:
            self.texts += texts
            return super().embed(texts)

    held = Counting()
    vectors = Words().embed([c.text for c in candidates])
    stored = [dataclasses.replace(c, vector=v) for c, v in zip(candidates, vectors)]
    assert rerank("paint the fence", stored, held) == rerank("paint the fence", candidates, Words())
    assert held.texts == ["paint the fence"], "candidates that carry their vector are not embedded again"


def test_offline_rerank_chooses_the_scales_and_keeps_each_scales_own_order() -> None:
    """The similarity of the re-rank decides which scale each place goes to; which caption of a
    scale fills it is the scale's own ranking (graph, keywords, recency), not the similarity."""
    class Words:
        dim = 4

        def embed(self, texts: Sequence[str]) -> np.ndarray:
            vocab = ["fence", "paint", "lunch", "kitchen"]
            rows = np.array([[t.lower().count(w) for w in vocab] for t in texts], dtype=np.float32)
            return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)

    # the scale ranked a recent, less similar caption first, as recency does for a question asked later
    recent = RankCandidate(1, "I paint the fence by the kitchen", 500.0, 510.0, 10.0, 1)
    older = RankCandidate(2, "I paint the fence", 100.0, 110.0, 10.0, 2)
    window = RankCandidate(3, "Lunch in the kitchen", 0.0, 180.0, 180.0, 1)
    order = rerank("paint the fence", [older, window, recent], Words())
    assert order == [1, 2, 3], "the fine scale first, in its own order; the unrelated window last"
    assert rerank("lunch in the kitchen", [older, window, recent], Words()) == [3, 1, 2]


def test_generated_video_short_event_from_fine_scale_long_activity_from_coarse(tmp_path: Path) -> None:
    """A 5-s on-screen event and a 10-min activity across 60 clips, through the real ingest."""
    activity, event = (0.0, 600.0), (620.0, 625.0)
    shots = [
        (Shot("GARDEN", "WE PAINT THE GARDEN FENCE"), 600.0),
        (Shot("KITCHEN", "LUNCH IN THE KITCHEN"), 20.0),
        (Shot("HALLWAY", "TAXI AT THE GATE", "YELLOW"), 5.0),
        (Shot("KITCHEN", "LUNCH IN THE KITCHEN"), 35.0),
    ]
    video = tmp_path / "day.mp4"
    encode(video, shots, (320, 180), 1)
    cfg = PipelineConfig(stages=("sample", "caption", "episodic"), frame_max_side=320)
    with Store(tmp_path / "store", create=True) as store:
        report = ingest([video], store, cfg, offline_models, show_progress=False)
        assert report.ok, report.all_failures()
        memory = MEMORIES["episodic"].factory(store, offline_models(), AGENT)
        short = memory.retrieve("taxi at the gate", 3)[0]
        long = memory.retrieve("we paint the garden fence", 3)[0]
    assert short.scale == 10.0 and tiou((short.t_start, short.t_end), event) >= 0.5
    assert long.scale >= 180.0 and tiou((long.t_start, long.t_end), activity) >= 0.5
    assert json.loads(json.dumps(long.scale)) == long.scale


def tiou(a: tuple[float, float], b: tuple[float, float]) -> float:
    overlap = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    return overlap / (max(a[1], b[1]) - min(a[0], b[0]))


def test_keywords_fused_into_each_scale_find_a_word_past_the_embedders_window(tmp_path: Path) -> None:
    """A clip whose caption says what I did (yawn, a verb: no entity node of the graph) only past
    MiniLM's 256-token window: PPR over meaning proposes other clips; fused with each scale's
    keyword ranking (`lexical`, the agents' default), the clip that holds the words is proposed too."""
    tidying = " ".join(["I wipe the table, stack the plates and put the cups back on the shelf."] * 20)
    texts = [
        "I check the time on the wall clock above the door.",
        "Tasha looks at her wristwatch and says we are late.",
        "Alice sets a timer on her phone for the oven.",
        f"{tidying} Then I yawn and stretch.",
        "The clock on the shelf shows half past three.",
        "Katrina counts the seconds out loud during the game.",
    ]
    settings = AgentConfig().episodic.model_copy(update={"per_scale_k": 2})
    with Store(tmp_path / "s", create=True) as store:
        write_events(store, "v", 0.0, texts)
        built(EpisodicMemory(store, offline_models()), CFG)

        def fine(lexical: bool) -> list[float]:
            found = EpisodicMemory(store, offline_models(), settings, lexical).retrieve("When did I yawn and stretch?", 10)
            return [e.t_start for e in found if e.scale == 10.0]

        assert 30.0 not in fine(False)
        assert 30.0 in fine(True)
