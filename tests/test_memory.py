"""Event memory, key-value object memory and their vector indexes."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest
from memory_stores import CountingEmbedder, built, events_store, hand_store, offline_models, scripted_store

from videomem.config import PipelineConfig
from videomem.errors import ModelError
from videomem.synth import MIN_MINUTES
from videomem.store.clips import clips_of, scope_sql
from videomem.evidence import Speech
from videomem.memory.events import EventMemory
from videomem.memory.objects import KEY_VALUE, KeyValueVectors, ObjectMemory, write_records
from videomem.models.engines import Batching
from videomem.models.tasks.objects import ObjectRecord
from videomem.core import ClipView, StageResult
from videomem.models.offline.language import OfflineLanguage
from videomem.models.recent import RecentTexts
from videomem.pipeline.caption import caption_videos
from videomem.store import Store

PIPELINE = PipelineConfig(caption_batch_size=3, object_batch_size=4)


class ScriptedVision:
    """`ClipCaptioning` and `ClipObjects` double: captions name the clip's start; objects come from a script per clip."""

    def __init__(self, objects: dict[float, list[ObjectRecord]] | None = None, fail_on_call: int | None = None) -> None:
        self.objects = objects or {}
        self.fail_on_call = fail_on_call
        self.batches: list[int] = []

    def _call(self, clips: Sequence[ClipView]) -> None:
        self.batches.append(len(clips))
        if self.fail_on_call == len(self.batches):
            raise ModelError("vision server went away")

    def batching(self, batch_size: int) -> Batching:
        return Batching(batch_size)

    def caption_clips(self, clips: Sequence[ClipView]) -> list[str]:
        self._call(clips)
        assert all(len(c.frames) == 2 and c.frames[0].size == (320, 180) for c in clips)
        return [f"caption of the clip starting at {c.t_start:g} s" for c in clips]

    def extract_objects(self, clips: Sequence[ClipView]) -> list[list[ObjectRecord]]:
        self._call(clips)
        return [self.objects.get(c.t_start, []) for c in clips]


class _Swapped:
    """The session's offline models with some task roles swapped for doubles (built lazily,
    so a test that swaps a role never loads the real one)."""

    def __init__(self, **doubles) -> None:
        self._doubles = {k: v for k, v in doubles.items() if v is not None}

    def __getattr__(self, name: str):
        return self._doubles[name] if name in self._doubles else getattr(offline_models(), name)


def _with(vision=None, language=None) -> _Swapped:
    return _Swapped(vision=vision, language=language)


def build_objects(store: Store, models, cfg: PipelineConfig, video_ids: list[str]) -> StageResult:
    """The objects stage over these videos, with these models."""
    return built(ObjectMemory(store, models), cfg, video_ids)


# ------------------------------------------------------------------ event memory and index


def test_events_caption_every_clip_in_batches_and_resume(tmp_path: Path) -> None:
    store = hand_store(tmp_path, [None] * 7)
    failing = ScriptedVision(fail_on_call=2)
    result = caption_videos(store, _with(vision=failing), PIPELINE, ["v"])
    assert result.done == 3 and len(result.failures) == 1 and "4 clips left" in result.failures[0][1]
    assert store.query("SELECT COUNT(*) FROM events")[0][0] == 3

    vision = ScriptedVision()
    result = caption_videos(store, _with(vision=vision), PIPELINE, ["v"])
    assert (result.done, result.skipped, result.failures) == (4, 3, [])
    assert vision.batches == [3, 1]
    rows = store.query("SELECT t_start, t_end, text FROM events ORDER BY t_start")
    assert [(r[0], r[1]) for r in rows] == [(i * 10.0, i * 10.0 + 10) for i in range(7)]
    assert rows[4][2] == "caption of the clip starting at 40 s"

    again = ScriptedVision()
    result = caption_videos(store, _with(vision=again), PIPELINE, ["v"])
    assert (result.done, result.skipped, again.batches) == (0, 7, [])
    assert store.query("SELECT COUNT(*) FROM events")[0][0] == 7


def _events_store(tmp_path: Path) -> Store:
    return events_store(
        tmp_path,
        [
            "A red balloon floats over a green field.",
            "A man repairs a bicycle in a garage.",
            "On-screen text reads 'TRAIN TO PARIS'.",
            "Two people cook pasta in a kitchen.",
        ],
    )


def test_query_time_scope_uses_end_time() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE m (t_end REAL, video_id TEXT)")
    db.executemany("INSERT INTO m VALUES (?, ?)", [(10.0, "a"), (10.1, "a"), (10.0, "b")])

    def seen(until: float | None, video_id: str | None = None) -> list[tuple]:
        where, params = scope_sql(until, video_id)
        return db.execute(f"SELECT * FROM m {'WHERE ' + where if where else ''} ORDER BY t_end, video_id", params).fetchall()

    assert seen(None) == [(10.0, "a"), (10.0, "b"), (10.1, "a")]
    assert seen(10.0) == [(10.0, "a"), (10.0, "b")]  # ends exactly at the query time: visible
    assert (10.1, "a") not in seen(10.0)
    assert seen(10.0, "b") == [(10.0, "b")]


def test_index_rebuilds_when_missing_or_rows_change(tmp_path: Path) -> None:
    store = _events_store(tmp_path)
    models = offline_models()
    index = EventMemory(store, models).index
    assert index.ensure() is True
    assert index.path.is_file() and index.meta_path.is_file()
    assert EventMemory(store, models).index.ensure() is False  # loaded from disk

    index.path.unlink()
    assert EventMemory(store, models).index.ensure() is True

    with store.transaction() as tx:
        tx.execute("UPDATE events SET text = 'A dog chases a frisbee on a beach.' WHERE t_start = 30")
    memory = EventMemory(store, models)
    assert memory.index.ensure() is True
    assert memory.retrieve("dog with a frisbee", 1)[0].t_start == 30

    with store.transaction() as tx:
        clip = tx.execute("INSERT INTO clips (video_id, idx, t_start, t_end) VALUES ('v', 4, 40, 50)").lastrowid
        tx.execute(
            "INSERT INTO events (clip_id, video_id, t_start, t_end, text) VALUES (?, 'v', 40, 50, 'Fireworks at night.')",
            (clip,),
        )
    counting = CountingEmbedder(models.text_embedder)
    memory = EventMemory(store, _Swapped(text_embedder=counting))
    assert memory.index.ensure() is True
    assert memory.index._index.ntotal == 5 and counting.texts == 1  # appended: only the new row embedded
    assert memory.retrieve("fireworks", 1)[0].t_start == 40

    meta = json.loads(memory.index.meta_path.read_text())
    memory.index.meta_path.write_text(json.dumps({**meta, "embedder": "openai:other-model:1536"}))
    assert EventMemory(store, models).index.ensure() is True

    meta = json.loads(memory.index.meta_path.read_text())
    memory.index.meta_path.write_text(json.dumps({"embedder": meta["embedder"], "count": meta["count"]}))
    assert EventMemory(store, models).index.ensure() is True  # a sidecar of another layout: rebuilt


def test_event_retrieve_honours_until_and_video(tmp_path: Path) -> None:
    store = _events_store(tmp_path)
    memory = EventMemory(store, offline_models())
    assert memory.retrieve("train to Paris", 1)[0].t_start == 20
    hidden = memory.retrieve("train to Paris", 10, until=25)
    assert len(hidden) == 2 and all(e.t_end <= 25 for e in hidden)
    assert len(memory.retrieve("train to Paris", 10, until=30)) == 3  # ends exactly at until: visible
    assert memory.retrieve("train", 3, video_id="other") == []
    assert {e.source for e in memory.retrieve("bicycle", 4)} == {"event"}


def test_event_evidence_carries_its_speech_typed(tmp_path: Path) -> None:
    """Who spoke and whether the words were transcribed come with the evidence as fields, from
    the stored transcript lines in its range, so a reader never parses 'Name: words'."""
    store = _events_store(tmp_path)
    clips = store.query("SELECT id, t_start, t_end FROM clips ORDER BY idx")
    lines = [  # (clip, start, end, speaker, text, source); a line over two clips is stored with each
        (clips[2], 22.0, 24.0, "Shure", "Mark a timestamp, right?", "egolifecap"),
        (clips[2], 28.0, 31.0, None, "(speech, not transcribed)", "vad"),
        (clips[3], 28.0, 31.0, None, "(speech, not transcribed)", "vad"),
    ]
    with store.transaction() as tx:
        for clip, start, end, speaker, text, source in lines:
            tx.execute(
                "INSERT INTO transcripts (clip_id, video_id, t_start, t_end, speaker, text, source) VALUES (?, 'v', ?, ?, ?, ?, ?)",
                (clip["id"], start, end, speaker, text, source),
            )
    found = {e.t_start: e for e in EventMemory(store, offline_models()).retrieve("train to Paris", 4)}
    assert found[20].speech == (
        Speech(22.0, 24.0, "Mark a timestamp, right?", "Shure", True),
        Speech(28.0, 31.0, "(speech, not transcribed)", None, False),
    )
    assert [line.transcribed for line in found[30].speech] == [False] and found[0].speech == ()
    assert found[20].to_json()["speech"][0] == {
        "t_start": 22.0, "t_end": 24.0, "text": "Mark a timestamp, right?", "speaker": "Shure", "transcribed": True
    }


# ------------------------------------------------------------------ object memory

ALICE = ["red coat", "long black hair"]
BOB = ["blue shirt", "short grey hair", "glasses"]


def _people_script() -> dict[float, list[ObjectRecord]]:
    woman = dict(name="woman in a red coat", kind="person", identity=["carries a brown handbag"])
    man = dict(name="man in a blue shirt", kind="person", identity=["older man"])
    return {
        0.0: [ObjectRecord(**woman, appearance=ALICE, value="walks towards the door")],
        10.0: [
            ObjectRecord(**woman, appearance=["red coat"], value="opens the door"),
            ObjectRecord(**man, appearance=BOB, value="sits on a bench"),
        ],
        20.0: [ObjectRecord(**man, appearance=["blue shirt"], value="reads a newspaper")],
        30.0: [ObjectRecord(**woman, appearance=["long black hair", "red coat"], value="leaves through the door")],
    }


def _objects(store: Store) -> list[tuple]:
    rows = store.query(
        "SELECT o.name, o.first_seen, o.last_seen, o.appearance_json, COUNT(b.id) AS n, GROUP_CONCAT(b.t_start) AS ts "
        "FROM objects o JOIN object_observations b ON b.object_id = o.id GROUP BY o.id ORDER BY o.first_seen"
    )
    return [tuple(r) for r in rows]


def test_consolidation_merges_one_person_and_keeps_two_apart(tmp_path: Path) -> None:
    store = hand_store(tmp_path, [None] * 5)
    models = _with(vision=ScriptedVision(_people_script()))
    memory = ObjectMemory(store, models)
    result = build_objects(store, models, PIPELINE, ["v"])
    assert result.failures == [] and result.done == 5
    objects = _objects(store)
    assert len(objects) == 2, objects
    woman, man = objects
    assert woman[0] == "woman in a red coat" and woman[4] == 3
    assert (woman[1], woman[2]) == (0.0, 40.0)  # earliest first_seen, latest last_seen
    assert set(json.loads(woman[3])) == set(ALICE)
    assert man[0] == "man in a blue shirt" and man[4] == 2 and man[1] == 10.0
    assert store.query("SELECT COUNT(*) FROM object_observations WHERE object_id IS NULL")[0][0] == 0

    assert memory.consolidate(PIPELINE) == 0  # nothing pending: re-running creates nothing
    assert _objects(store) == objects


class FailingLanguage:
    """Delegates to the real language model but fails the n-th same_entity call (a killed run)."""

    def __init__(self, real, fail_on_call: int) -> None:
        self.real, self.fail_on_call, self.calls = real, fail_on_call, 0

    def same_entity(self, pairs):
        self.calls += 1
        if self.calls == self.fail_on_call:
            raise ModelError("language server went away")
        return self.real.same_entity(pairs)

    def summarise(self, groups):
        return self.real.summarise(groups)


def test_consolidation_resumes_to_the_same_result(tmp_path: Path) -> None:
    script = _people_script()
    small_batches = PipelineConfig(object_batch_size=2, object_summary_records=2)  # a transaction per batch
    clean = hand_store(tmp_path / "clean", [None] * 5)
    build_objects(clean, _with(vision=ScriptedVision(script)), small_batches, ["v"])

    killed = hand_store(tmp_path / "killed", [None] * 5)
    flaky = FailingLanguage(offline_models().language, fail_on_call=2)
    result = build_objects(killed, _with(vision=ScriptedVision(script), language=flaky), small_batches, ["v"])
    assert any("consolidation" in why for _, why in result.failures)
    pending = killed.query("SELECT COUNT(*) FROM object_observations WHERE object_id IS NULL")[0][0]
    assert 0 < pending < 6

    build_objects(killed, _with(vision=ScriptedVision(script)), small_batches, ["v"])
    assert _objects(killed) == _objects(clean)


class _CountingSummaries:
    def __init__(self, real) -> None:
        self.real, self.calls = real, 0

    def same_entity(self, pairs):
        return self.real.same_entity(pairs)

    def summarise(self, groups):
        self.calls += 1
        return self.real.summarise(groups)


@pytest.mark.parametrize("group", [2, 4, 512])
def test_objects_link_alike_whatever_records_are_summarised_together(tmp_path: Path, group: int) -> None:
    """Summaries fold every `object_summary_records` records, in batches of `object_batch_size`:
    the links and sightings do not depend on the group, only how often the summariser is called."""
    reference = hand_store(tmp_path / "reference", [None] * 5)
    build_objects(reference, _with(vision=ScriptedVision(_people_script())),
                  PipelineConfig(object_batch_size=2, object_summary_records=2), ["v"])
    store = hand_store(tmp_path / "store", [None] * 5)
    language = _CountingSummaries(offline_models().language)
    cfg = PipelineConfig(object_batch_size=2, object_summary_records=group)
    build_objects(store, _with(vision=ScriptedVision(_people_script()), language=language), cfg, ["v"])
    assert _objects(store) == _objects(reference)
    woman = store.query("SELECT summary FROM objects WHERE name = 'woman in a red coat'")[0][0]
    assert "opens the door" in woman and "leaves through the door" in woman
    # 5 records in time order (woman, woman, man, man, woman): a call per group with an object seen twice
    assert language.calls == {2: 3, 4: 2, 512: 1}[group]


class _Reading:
    """Language double over the offline one that records, per group of linked records (one
    summarise call each here), the characters the summariser reads and the characters embedded
    since the group before."""

    def __init__(self, real, embedder: CountingEmbedder) -> None:
        self.real, self.embedder = real, embedder
        self.read: list[int] = []
        self.embedded: list[int] = []
        self._seen = 0

    def same_entity(self, pairs):
        return self.real.same_entity(pairs)

    def summarise(self, groups):
        self.read.append(sum(len(line) for group in groups for line in group))
        out = self.real.summarise(groups)
        self.embedded.append(self.embedder.chars - self._seen)
        self._seen = self.embedder.chars
        return out


def test_consolidation_work_per_batch_does_not_grow_with_the_history(tmp_path: Path) -> None:
    """One person seen in every clip, with values that are phrases (no full stop, as vision
    models write them): the summariser must read and embed as much in the last batches as in
    the first ones, not an object's whole history again (which made consolidation quadratic)."""
    store = hand_store(tmp_path, [None] * 32)
    with store.transaction() as tx:
        for clip in clips_of(store, ["v"]):
            record = ObjectRecord(name="woman in a red coat", kind="person", appearance=["red coat"],
                                  value=f"walks past shelf {clip.t_start:03.0f} with a basket")
            write_records(tx, clip, [record])
    models = offline_models()
    counted = CountingEmbedder(models.text_embedder.embedder)
    embedder = RecentTexts(counted)  # as ModelSet.text_embedder wraps every backend
    language = _Reading(OfflineLanguage(models.language.cfg, models.meter, embedder), counted)
    memory = ObjectMemory(store, _Swapped(language=language, text_embedder=embedder))
    assert memory.consolidate(PIPELINE.model_copy(update={"object_summary_records": 4})) == 32
    assert store.query("SELECT COUNT(*) FROM objects")[0][0] == 1
    assert len(language.read) == 8  # one summarise call per group of 4 records
    early, late = language.read[:4], language.read[4:]
    assert max(late) <= max(early), language.read
    assert max(language.embedded[4:]) <= max(language.embedded[:4]), language.embedded
    # the kept summary's sentences were embedded when they were new: a batch embeds less than it summarises
    assert all(e < r for e, r in zip(language.embedded[4:], language.read[4:])), (language.embedded, language.read)
    summary = store.query("SELECT summary FROM objects")[0][0]
    assert summary.count(" with a basket.") < 12  # a bounded digest, not the 32 values


def test_an_object_seen_all_day_parses_its_cues_once_not_per_sighting(tmp_path: Path, monkeypatch) -> None:
    """An object seen in every clip is described from all its visible sightings, but a set of
    cues repeated by every sighting is parsed once (the union across different sets is
    test_object_retrieval_shows_only_what_was_visible's)."""
    store = hand_store(tmp_path, [None] * 24)
    with store.transaction() as tx:
        for n, clip in enumerate(clips_of(store, ["v"])):
            write_records(tx, clip, [ObjectRecord(name="woman", kind="person", appearance=["red coat"],
                                                  identity=["carries a bag"], value=f"walks past shelf {n}")])
    memory = ObjectMemory(store, _with())
    memory.consolidate(PIPELINE)
    assert store.query("SELECT COUNT(*) FROM objects")[0][0] == 1
    memory.index.ensure()  # building the index reads every observation once; searching must not
    parsed = []
    real_loads = json.loads
    monkeypatch.setattr("videomem.memory.objects.json.loads", lambda text: parsed.append(text) or real_loads(text))
    early = memory.retrieve("woman walking past a shelf", 1, until=60)[0].text
    assert "(appearance: red coat; identity: carries a bag)" in early and "6 sightings" in early
    assert "Seen: " in early and "shelf 5" in early and "shelf 6" not in early
    full = memory.retrieve("woman walking past a shelf", 1)[0].text
    assert "24 sightings" in full and "Summary: " in full
    assert len(parsed) <= 2 * 2 * 2  # per retrieve: the hit's cues, then the one distinct set


class _Recording:
    """A text embedder that keeps each call's texts and gives every text a fixed random unit vector."""

    dim = 16

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def vector(self, text: str):
        import numpy as np

        row = np.random.default_rng(sum(map(ord, text))).standard_normal(self.dim).astype(np.float32)
        return row / np.linalg.norm(row)

    def embed(self, texts):
        import numpy as np

        self.calls.append(list(texts))
        return np.array([self.vector(t) for t in texts], dtype=np.float32).reshape(len(texts), self.dim)


def test_an_observation_is_indexed_as_its_key_and_value_each_embedded_once() -> None:
    import numpy as np

    inner = _Recording()
    caption = "I hold cell phone I face dining table I slide cell phone"
    payloads = [f"object: cell phone{KEY_VALUE}{caption}", f"object: dining table{KEY_VALUE}{caption}",
                f"person: Shure{KEY_VALUE}"]
    vectors = KeyValueVectors(inner).embed(payloads)
    assert inner.calls == [["object: cell phone", caption, "object: dining table", "person: Shure"]], (
        "the clip's shared value is embedded once, not once per record"
    )
    expected = inner.vector("object: cell phone") + inner.vector(caption)
    assert np.allclose(vectors[0], expected / np.linalg.norm(expected), atol=1e-6)
    assert np.allclose(vectors[2], inner.vector("person: Shure"), atol=1e-6), "no value: the key alone"
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_object_retrieval_shows_only_what_was_visible(tmp_path: Path) -> None:
    store = hand_store(tmp_path, [None] * 5)
    models = _with(vision=ScriptedVision(_people_script()))
    memory = ObjectMemory(store, models)
    build_objects(store, models, PIPELINE, ["v"])

    full = memory.retrieve("woman in a red coat", 1)[0]
    assert full.source == "object" and "3 sightings" in full.text
    assert "leaves" in full.text or "Summary" in full.text

    early = memory.retrieve("woman in a red coat leaving through the door", 2, until=20)
    assert early and all(e.t_end <= 20 for e in early)
    woman = next(e for e in early if "red coat" in e.text)
    assert "2 sightings" in woman.text and "leaves" not in woman.text and "00:00:40" not in woman.text
    assert "long black hair" in woman.text  # from the first observation, which is visible

    before_man = memory.retrieve("man reading a newspaper", 5, until=10)
    assert len(before_man) == 1 and "blue shirt" not in before_man[0].text


# ------------------------------------------------------------------ end to end on the offline models


@pytest.fixture(scope="module")
def scripted(tmp_path_factory):
    return scripted_store(tmp_path_factory.getbasetemp())


def test_ingest_writes_one_event_per_clip_with_on_screen_text(scripted) -> None:
    store_dir, corpus = scripted
    with Store(store_dir) as store:
        n_clips = store.query("SELECT COUNT(*) FROM clips")[0][0]
        assert n_clips == MIN_MINUTES * 6  # 10-s clips
        assert store.query("SELECT COUNT(*) FROM events")[0][0] == n_clips
        events = {r["t_start"]: r["text"] for r in store.query("SELECT t_start, text FROM events")}
        read = sum(e.text.lower() in events[e.t_start].lower() for e in corpus.events)
        assert read >= 0.9 * len(corpus.events)
        assert store.query("SELECT COUNT(*) FROM objects")[0][0] > 0
        assert store.query("SELECT COUNT(*) FROM object_observations WHERE object_id IS NULL")[0][0] == 0
        assert (store.index_dir / "events.faiss").is_file()
        assert (store.index_dir / "object_observations.faiss").is_file()
