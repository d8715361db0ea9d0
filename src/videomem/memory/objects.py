"""Key-value object memory (TeleMem).

Per clip, the vision model lists the people and objects it sees as records — key: name, kind,
appearance, identity cues; value: what the entity does or its state in that clip
(`pipeline/vision_pass.py`: from the same request as the clip's caption when a run builds both).
A clip whose caption was imported (EgoLifeCap) gets no vision pass: the text model reads its
records from that caption instead, and each named speaker of its transcript is a person record
whose value is what they said (`memory/speakers.py`). Each record
is kept as an observation (provenance, with its clip's time range). Consolidation links
observations of one entity to one object, in batches of `object_batch_size` so the language
model never sees the whole memory at once: a cheap embedding gate on the key text proposes
candidate pairs, the model decides each pair.

Consolidation state lives in the data itself (an observation is pending while its `object_id`
is NULL). Records are linked in (time, id) order with deterministic tie-breaks, and every
`object_summary_records` of them the changed objects' summaries are folded (TeleMem's
incremental merge) and the links written in one transaction: a killed run resumes with the same
records and never creates an object twice. (Summarising after every batch of 32 made a day of
EgoLife 332 small embedding calls whose fixed cost dominated the stage.)

Query time: an object's text is rebuilt at retrieval from the observations visible to the
question, and ranking runs over visible observations only, so nothing recorded after `until`
leaks through a consolidated summary.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from videomem.config import PipelineConfig
from videomem.core import ProgressFactory, StageResult, unit_rows
from videomem.errors import ModelError
from videomem.evidence import Evidence
from videomem.memory import recency
from videomem.memory.build import BuildContext
from videomem.memory.events import imported_captions
from videomem.memory.speakers import said_in_clip, with_speakers
from videomem.models.engines import TextEmbedder
from videomem.models.tasks import require
from videomem.models.tasks.objects import CaptionObjects, EntityMerging, ObjectRecord
from videomem.models.registry import ModelSet
from videomem.store import Store
from videomem.store.clips import ClipRow, clips_of, scope_sql, timeline_kind
from videomem.store.vectors import VectorIndex, embedder_identity
from videomem.timeline import TimeText

INDEX_NAME = "object_observations"
KEY_VALUE = "\x1f"
"""Between an observation's key and value in its index payload (no key or value holds it)."""
MAX_CANDIDATES = 3
"""Merge candidates put to the model per observation: the most similar ones above the gate."""
MAX_CUES = 12
"""Appearance / identity cues of a consolidated object shown to the model when deciding a merge."""
SHOWN_VALUES = 8
"""Most recent visible values quoted for an object whose stored summary covers hidden ones."""
SHOWN_MOMENTS = 200
"""Most recent visible sightings an object's evidence carries as typed moments."""


def key_text(name: str, kind: str, appearance: Sequence[str], identity: Sequence[str]) -> str:
    """The stable part of a record (no value), which decides whether two records match."""
    parts = [f"{kind}: {name}"]
    if appearance:
        parts.append("appearance: " + ", ".join(appearance))
    if identity:
        parts.append("identity: " + ", ".join(identity))
    return "; ".join(parts)


def _unit_vectors(embedder: TextEmbedder, texts: Sequence[str]) -> np.ndarray:
    """Unit-length embeddings of `texts`, in order, each distinct text embedded once (one call)."""
    distinct = list(dict.fromkeys(texts))
    vectors = unit_rows(np.asarray(embedder.embed(distinct)).reshape(len(distinct), embedder.dim))
    row = {text: i for i, text in enumerate(distinct)}
    return vectors[[row[t] for t in texts]]


class KeyValueVectors:
    """An observation's vector: the normalised sum of its key's vector and its value's.

    The records of one clip share their value when it is a clause of an imported caption (a
    glossed EgoLife caption is one long clause, quoted by every record read from it) and differ
    by key. Embedding each "key; value" as one text embedded that clause once per record: 35 %
    of a caption-only day's build. Keys are what consolidation embeds anyway, and each distinct
    value is embedded once. A query is compared with the sum as with any vector: it matches an
    observation by what the entity is and by what it does."""

    def __init__(self, embedder: TextEmbedder) -> None:
        self.embedder = embedder
        self.dim = embedder.dim

    def embed(self, payloads: Sequence[str]) -> np.ndarray:
        pairs = [[text for text in payload.partition(KEY_VALUE)[::2] if text] for payload in payloads]
        vectors = iter(_unit_vectors(self.embedder, [text for pair in pairs for text in pair]))
        out = np.zeros((len(pairs), self.dim), dtype=np.float32)
        for n, pair in enumerate(pairs):
            for _ in pair:
                out[n] += next(vectors)
        return unit_rows(out)


def _owner(row: sqlite3.Row) -> object:
    """An observation's object id, or ('record', id) while it is not consolidated yet."""
    return row["object_id"] if row["object_id"] is not None else ("record", row["id"])


def _union(first: Sequence[str], second: Sequence[str]) -> list[str]:
    seen = {s.casefold() for s in first}
    merged = list(first)
    for item in second:
        if item.casefold() not in seen:
            seen.add(item.casefold())
            merged.append(item)
    return merged


def _sentence(text: str) -> str:
    """`text` ending as a sentence does (a full stop added where it has no end mark)."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?")) else text + "."


@dataclass
class _Observation:
    id: int
    clip_id: int
    t_start: float
    t_end: float
    record: ObjectRecord

    @classmethod
    def from_row(cls, row) -> _Observation:
        record = ObjectRecord(
            name=row["name"],
            kind=row["kind"],
            appearance=json.loads(row["appearance_json"]),
            identity=json.loads(row["identity_json"]),
            value=row["value"],
        )
        return cls(row["id"], row["clip_id"], row["t_start"], row["t_end"], record)

    @property
    def key(self) -> str:
        r = self.record
        return key_text(r.name, r.kind, r.appearance, r.identity)


@dataclass
class _Entity:
    """A consolidated object while a consolidation run holds it in memory."""

    id: int | None
    name: str
    kind: str
    appearance: list[str]
    identity: list[str]
    first_seen: float
    last_seen: float
    summary: str
    clip_ids: set[int]
    new_values: list[tuple[float, str]] = field(default_factory=list)

    @property
    def key(self) -> str:
        return key_text(self.name, self.kind, self.appearance, self.identity)

    def as_record(self) -> ObjectRecord:
        """The entity as the model sees it in a merge question, its cues capped so the prompt
        stays bounded however often the entity was seen."""
        value = self.summary or (self.new_values[-1][1] if self.new_values else self.name)
        return ObjectRecord(
            name=self.name, kind=self.kind, appearance=self.appearance[:MAX_CUES],
            identity=self.identity[:MAX_CUES], value=value,
        )


class _Entities:
    """The consolidated objects of a run, with what the gate compares a record with kept in
    arrays that grow with them: the key embeddings of each object's first and latest
    observation (so an object whose union of cues grows long still matches its own next
    sighting), its kind and its name. Gating a record is then one vectorised pass over all
    objects (numpy, about `dim` multiply-adds an object) and a Python loop over the few that
    pass, and a group of batches writes and summarises only the objects it changed: no Python work per
    record grows with the number of objects already known."""

    def __init__(self, dim: int) -> None:
        self.items: list[_Entity] = []
        self.firsts = np.zeros((0, dim), np.float32)
        self.latests = np.zeros((0, dim), np.float32)
        self.kinds = np.zeros(0, np.int64)
        self.kind_codes: dict[str, int] = {}
        self.names: dict[tuple[str, str], list[int]] = {}
        self.changed: set[int] = set()

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> _Entity:
        return self.items[index]

    def add(self, entity: _Entity, first: np.ndarray, latest: np.ndarray) -> int:
        n = len(self.items)
        if n == len(self.firsts):  # grow by doubling: appending stays amortised O(1)
            capacity = max(64, 2 * n)
            self.firsts = np.resize(self.firsts, (capacity, self.firsts.shape[1]))
            self.latests = np.resize(self.latests, (capacity, self.latests.shape[1]))
            self.kinds = np.resize(self.kinds, capacity)
        self.firsts[n], self.latests[n] = first, latest
        self.kinds[n] = self.kind_codes.setdefault(entity.kind, len(self.kind_codes))
        self.items.append(entity)
        self.names.setdefault((entity.kind, entity.name.casefold()), []).append(n)
        return n

    def absorb(self, index: int, obs: _Observation, vector: np.ndarray) -> None:
        entity, r = self.items[index], obs.record
        entity.appearance = _union(entity.appearance, r.appearance)
        entity.identity = _union(entity.identity, r.identity)
        entity.first_seen = min(entity.first_seen, obs.t_start)
        entity.last_seen = max(entity.last_seen, obs.t_end)
        entity.clip_ids.add(obs.clip_id)
        entity.new_values.append((obs.t_start, r.value))
        self.latests[index] = vector
        self.changed.add(index)

    def similarities(self, vectors: np.ndarray) -> np.ndarray:
        """Gate similarity of each row of `vectors` with every object: the closer of its first
        and its latest observation."""
        n = len(self.items)
        return np.maximum(vectors @ self.firsts[:n].T, vectors @ self.latests[:n].T)

    def passing(self, similarity: np.ndarray, kind: str, name: str, threshold: float) -> np.ndarray:
        """Objects of this kind at or above the gate (`similarity`: a row of `similarities`) or
        with this very name, most similar first (ties: the older object first)."""
        code = self.kind_codes.get(kind)
        if code is None:
            return np.zeros(0, np.int64)
        gated = np.flatnonzero((similarity >= threshold) & (self.kinds[: len(self.items)] == code))
        found = np.union1d(gated, self.names.get((kind, name.casefold()), [])).astype(np.int64)
        return found[np.argsort(-similarity[found], kind="stable")]

    def take_changed(self) -> list[_Entity]:
        """The objects changed since the last call, in creation order (the order they are written)."""
        changed = [self.items[i] for i in sorted(self.changed)]
        self.changed.clear()
        return changed


class ObjectMemory:
    """Object memory: the people and things seen, each with its appearance, identity cues,
    first and last sighting, and what it did in each clip. Query by a person or an object."""

    name = "objects"

    def __init__(self, store: Store, models: ModelSet, recency_half_life_s: float | None = None) -> None:
        self.store = store
        self.models = models
        self.recency_half_life_s = recency_half_life_s
        """Rank observations for a question asked at a moment by recency as well (`memory/recency.py`)."""
        self._index: VectorIndex | None = None
        self._time = TimeText(timeline_kind(store))

    @property
    def index(self) -> VectorIndex:
        """Search runs over observations, so a query can be scoped to what was visible."""
        if self._index is None:
            embedder = self.models.text_embedder
            self._index = VectorIndex(
                self.store, INDEX_NAME, self._observation_texts, KeyValueVectors(embedder),
                embedder_identity(self.models.cfg.text_embedder, embedder.dim),
            )
        return self._index

    def _observation_texts(self):
        for row in self.store.query("SELECT * FROM object_observations ORDER BY id"):
            obs = _Observation.from_row(row)
            yield obs.id, f"{obs.key}{KEY_VALUE}{obs.record.value}"

    # ------------------------------------------------------------ build

    def build(self, ctx: BuildContext, video_ids: Sequence[str]) -> StageResult:
        """Record the objects of every clip of these videos not done yet, one transaction per
        clip: from the imported caption's text where there is one, else from the frames (the
        pipeline's vision pass); then consolidate every pending record and refresh the index.
        Records the caption stage's pass already wrote in this run are not asked again, and
        clips that failed there are left for the next run."""
        ahead = ctx.handed_over(self.name)
        failed = frozenset(unit for unit, _ in ahead.failures) if ahead else frozenset()
        imported = imported_captions(self.store, video_ids)
        result = self.read_imported(ctx.pipeline, video_ids, imported, failed)
        seen = ctx.object_records(self.name, write_records, video_ids, failed | frozenset(imported))
        result.done += seen.done
        result.skipped += seen.skipped
        result.failures += seen.failures
        try:
            self.consolidate(ctx.pipeline, ctx.progress)
        except ModelError as exc:
            result.failures.append((self.name, f"consolidation: {exc} (re-run ingest to resume)"))
        self.index.refresh()
        self.index.ensure(ctx.progress)
        if ahead is not None:
            result.done += ahead.done
            result.skipped -= ahead.done
            result.failures[:0] = ahead.failures
        return result

    def read_imported(
        self, cfg: PipelineConfig, video_ids: Sequence[str], imported: dict[str, str], exclude: frozenset[str]
    ) -> StageResult:
        """Records of the clips with an imported caption not done yet, read by the text model
        from it (the vision pass counts those already done as skipped)."""
        done = self.store.done_units(self.name)
        todo = [
            c for c in clips_of(self.store, video_ids) if c.unit in imported and c.unit not in done | exclude
        ]
        result = StageResult(self.name)
        for start in range(0, len(todo), cfg.caption_batch_size):
            batch = todo[start : start + cfg.caption_batch_size]
            try:
                found = require(self.models.language, CaptionObjects).extract_objects_from_text([imported[c.unit] for c in batch])
            except ModelError as exc:
                result.failures.append((self.name, f"{exc} ({len(todo) - start} clips left without objects; re-run ingest to resume)"))
                break
            if len(found) != len(batch):
                raise RuntimeError(f"extract_objects_from_text returned {len(found)} lists for {len(batch)} clips")
            for clip, records in zip(batch, found):
                records = with_speakers(records, said_in_clip(self.store, clip.id))
                with self.store.transaction() as tx:
                    write_records(tx, clip, records)
                    Store.mark_done(tx, self.name, clip.unit)
                result.done += 1
        return result

    def consolidate(self, cfg: PipelineConfig, progress: ProgressFactory | None = None) -> int:
        """Link every pending observation to an object. Returns how many were linked."""
        rows = self.store.query("SELECT * FROM object_observations WHERE object_id IS NULL ORDER BY t_start, id")
        if not rows:
            return 0
        pending = [_Observation.from_row(r) for r in rows]
        with self.store.transaction() as tx:  # objects whose clips were re-sampled away
            tx.execute("DELETE FROM objects WHERE id NOT IN (SELECT object_id FROM object_observations "
                       "WHERE object_id IS NOT NULL)")
        entities = self._load_entities()
        bar = progress(len(pending), "consolidate objects", unit="record") if progress else None
        step = cfg.object_batch_size
        for group in range(0, len(pending), cfg.object_summary_records):
            records = pending[group : group + cfg.object_summary_records]
            vectors = _unit_vectors(self.models.text_embedder, [o.key for o in records])
            linked = []
            for start in range(0, len(records), step):
                batch = records[start : start + step]
                linked.append((batch, self._link(batch, vectors[start : start + step], entities, cfg.object_merge_threshold)))
                if bar is not None:
                    bar.update(len(batch))
            changed = entities.take_changed()
            self._summarise(changed)
            self._write(linked, entities, changed)
            for entity in changed:
                entity.new_values.clear()
        if bar is not None:
            bar.close()
        return len(pending)

    def _load_entities(self) -> _Entities:
        rows = self.store.query("SELECT * FROM objects ORDER BY id")
        members: dict[int, list[_Observation]] = {}
        for r in self.store.query(
            "SELECT * FROM object_observations WHERE object_id IS NOT NULL ORDER BY t_start, id"
        ):
            members.setdefault(r["object_id"], []).append(_Observation.from_row(r))
        entities = _Entities(self.models.text_embedder.dim)
        if not rows:
            return entities
        ends = _unit_vectors(self.models.text_embedder, [o.key for r in rows for o in (members[r["id"]][0], members[r["id"]][-1])])
        for n, r in enumerate(rows):
            entity = _Entity(
                id=r["id"], name=r["name"], kind=r["kind"],
                appearance=json.loads(r["appearance_json"]), identity=json.loads(r["identity_json"]),
                first_seen=r["first_seen"], last_seen=r["last_seen"], summary=r["summary"],
                clip_ids={o.clip_id for o in members[r["id"]]},
            )
            entities.add(entity, ends[2 * n], ends[2 * n + 1])
        return entities

    def _candidates(
        self, batch: list[_Observation], vectors: np.ndarray, entities: _Entities, threshold: float
    ) -> list[list[tuple[float, str, int]]]:
        """Per observation, up to MAX_CANDIDATES (similarity, 'object'|'record', index), most
        similar first: those above the gate, and those with the very same name (a name is
        stronger evidence than any embedding, and the model still decides).

        Two records from one clip are never one entity, so such pairs are not proposed.
        """
        to_entities = entities.similarities(vectors)
        to_batch = vectors @ vectors.T
        candidates = []
        for i, obs in enumerate(batch):
            kind, name = obs.record.kind, obs.record.name.casefold()
            found = []
            for e in entities.passing(to_entities[i], kind, name, threshold):
                if obs.clip_id not in entities[e].clip_ids:
                    found.append((float(to_entities[i, e]), "object", int(e)))
                    if len(found) == MAX_CANDIDATES:
                        break
            found += [
                (float(to_batch[i, j]), "record", j)
                for j in range(i)
                if batch[j].record.kind == kind and batch[j].clip_id != obs.clip_id
                and (to_batch[i, j] >= threshold or batch[j].record.name.casefold() == name)
            ]
            found.sort(key=lambda c: (-c[0], c[1], c[2]))
            candidates.append(found[:MAX_CANDIDATES])
        return candidates

    def _link(self, batch: list[_Observation], vectors: np.ndarray, entities: _Entities, threshold: float) -> list[int]:
        """Link each observation of the batch to an object (a new one when the model finds no
        match); returns each one's object index. Nothing is written yet."""
        candidates = self._candidates(batch, vectors, entities, threshold)
        pairs = [
            (obs.record, entities[target].as_record() if kind == "object" else batch[target].record)
            for obs, found in zip(batch, candidates)
            for _, kind, target in found
        ]
        decided = require(self.models.language, EntityMerging).same_entity(pairs) if pairs else []
        if len(decided) != len(pairs):
            raise RuntimeError(f"same_entity returned {len(decided)} decisions for {len(pairs)} pairs")
        decisions = iter(decided)
        assigned: list[int] = []
        for i, (obs, found) in enumerate(zip(batch, candidates)):
            chosen = None
            for (_, kind, target), same in zip(found, [next(decisions) for _ in found]):
                entity = target if kind == "object" else assigned[target]
                if same and obs.clip_id not in entities[entity].clip_ids:
                    chosen = entity
                    break
            if chosen is None:
                r = obs.record
                chosen = entities.add(
                    _Entity(None, r.name, r.kind, [], [], obs.t_start, obs.t_end, "", set()), vectors[i], vectors[i]
                )
            entities.absorb(chosen, obs, vectors[i])
            assigned.append(chosen)
        return assigned

    def _summarise(self, changed: list[_Entity]) -> None:
        """Fold the values linked since the last fold into each changed object's summary (TeleMem's
        incremental merge).

        A new object seen once needs no model call: its one value is its summary. Each value is
        handed over as a sentence of its own: values are often phrases without a full stop, and
        a summariser that keeps sentences whole (the offline one) would otherwise fuse an
        object's whole history into one sentence that grows with every batch and is read again
        by every later one.
        """
        groups, targets = [], []
        for entity in changed:
            lines = ([entity.summary] if entity.summary else []) + [
                _sentence(f"At {self._time(t)}: {value}") for t, value in entity.new_values
            ]
            if len(lines) == 1:
                entity.summary = lines[0]
            else:
                groups.append(lines)
                targets.append(entity)
        if groups:
            for entity, summary in zip(targets, require(self.models.language, EntityMerging).summarise(groups)):
                entity.summary = summary.strip()

    def _write(
        self, linked: list[tuple[list[_Observation], list[int]]], entities: _Entities, changed: list[_Entity]
    ) -> None:
        """The changed objects and the links of these batches, in one transaction."""
        with self.store.transaction() as tx:
            for entity in changed:
                values = (
                    entity.name, entity.kind, json.dumps(entity.appearance), json.dumps(entity.identity),
                    entity.first_seen, entity.last_seen, entity.summary,
                )
                if entity.id is None:
                    cursor = tx.execute(
                        "INSERT INTO objects (name, kind, appearance_json, identity_json, first_seen, last_seen, "
                        "summary) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        values,
                    )
                    entity.id = cursor.lastrowid
                else:
                    tx.execute(
                        "UPDATE objects SET name = ?, kind = ?, appearance_json = ?, identity_json = ?, "
                        "first_seen = ?, last_seen = ?, summary = ? WHERE id = ?",
                        (*values, entity.id),
                    )
            tx.executemany(
                "UPDATE object_observations SET object_id = ? WHERE id = ?",
                [(entities[e].id, obs.id) for batch, assigned in linked for obs, e in zip(batch, assigned)],
            )

    # ------------------------------------------------------------ retrieve

    def stats(self) -> dict[str, int]:
        row = self.store.query(
            "SELECT (SELECT COUNT(*) FROM objects) AS objects, (SELECT COUNT(*) FROM object_observations) AS records"
        )[0]
        return {"objects": row["objects"], "records": row["records"]}

    def retrieve(
        self, query: str, top_k: int, until: float | None = None, video_id: str | None = None
    ) -> list[Evidence]:
        """The `top_k` objects whose visible observations best match `query` (for a question asked
        at `until`, by recency as well when the memory has a half-life); each evidence's range is
        the clip of its best observation."""
        where, params = scope_sql(until, video_id)
        allowed = (
            [r["id"] for r in self.store.query(f"SELECT id FROM object_observations WHERE {where}", params)]
            if where else None
        )
        best = self._best_per_object(query, top_k, allowed, until)
        return [self._evidence(obs_id, score, where, params) for obs_id, score in best]

    def _best_per_object(
        self, query: str, top_k: int, allowed: list[int] | None, until: float | None
    ) -> list[tuple[int, float]]:
        """Best observation per object; fetches more hits until top_k distinct objects are found."""
        k = max(top_k * 4, recency.pool_size(top_k, until, self.recency_half_life_s))
        vector = self.models.text_embedder.embed([query])
        while True:
            hits = self.index.search_vector(vector, k, allowed)
            observed = self._observed([obs_id for obs_id, _ in hits])
            ends = {obs_id: row["t_end"] for obs_id, row in observed.items()}
            best: dict[object, tuple[int, float]] = {}
            for obs_id, score in recency.reranked(hits, ends, until, self.recency_half_life_s):
                best.setdefault(_owner(observed[obs_id]), (obs_id, score))
            if len(best) >= top_k or len(hits) < k:
                return list(best.values())[:top_k]
            k *= 2

    def _observed(self, obs_ids: list[int]) -> dict[int, sqlite3.Row]:
        """Observation id → its row (id, object id, clip end)."""
        if not obs_ids:
            return {}
        marks = ",".join("?" * len(obs_ids))
        rows = self.store.query(
            f"SELECT id, object_id, t_end FROM object_observations WHERE id IN ({marks})", tuple(obs_ids)
        )
        return {r["id"]: r for r in rows}

    def _evidence(self, obs_id: int, score: float, where: str, params: tuple) -> Evidence:
        hit = self.store.query("SELECT * FROM object_observations WHERE id = ?", (obs_id,))[0]
        if hit["object_id"] is None:
            visible, obj, total = [hit], None, 1
        else:
            scope = f" AND {where}" if where else ""
            visible = self.store.query(
                f"SELECT * FROM object_observations WHERE object_id = ?{scope} ORDER BY t_start, id",
                (hit["object_id"], *params),
            )
            obj = self.store.query("SELECT * FROM objects WHERE id = ?", (hit["object_id"],))[0]
            total = self.store.query(
                "SELECT COUNT(*) AS n FROM object_observations WHERE object_id = ?", (hit["object_id"],)
            )[0]["n"]
        text = self._describe(visible, _Observation.from_row(hit), obj, total)
        moments = tuple((r["t_start"], r["t_end"], r["value"]) for r in visible[-SHOWN_MOMENTS:])
        return Evidence(hit["t_start"], hit["t_end"], text, "object", score, hit["video_id"], moments=moments)

    def _describe(self, visible: list[sqlite3.Row], hit: _Observation, obj, total: int) -> str:
        """An object as the question may see it: built from visible observations only; its stored
        name and summary are used only when every observation behind them is visible.

        `visible` are observation rows in time order. An object seen all week has thousands, so
        only each distinct set of cues is parsed (a repeated set adds nothing to the unions), and
        only the last SHOWN_VALUES values are shown."""
        everything = obj is not None and len(visible) == total
        name = obj["name"] if everything else visible[0]["name"]
        appearance: list[str] = []
        identity: list[str] = []
        for appearance_json, identity_json in dict.fromkeys((r["appearance_json"], r["identity_json"]) for r in visible):
            appearance = _union(appearance, json.loads(appearance_json))
            identity = _union(identity, json.loads(identity_json))
        cues = []
        if appearance:
            cues.append("appearance: " + ", ".join(appearance))
        if identity:
            cues.append("identity: " + ", ".join(identity))
        first, last = visible[0]["t_start"], max(r["t_end"] for r in visible)
        sightings = f"{len(visible)} sighting{'s' if len(visible) != 1 else ''}"
        lines = [
            f"{hit.record.kind.capitalize()} '{name}'" + (f" ({'; '.join(cues)})" if cues else "")
            + f", first seen {self._time(first)}, last seen {self._time(last)}, {sightings}.",
            f"Here: {hit.record.value}",
        ]
        if everything and len(visible) > 1:
            lines.append(f"Summary: {obj['summary']}")
        elif len(visible) > 1:
            recent = visible[-SHOWN_VALUES:]
            lines.append("Seen: " + " ".join(f"At {self._time(r['t_start'])}: {r['value']}" for r in recent))
        return " ".join(line.rstrip(".") + "." for line in lines)

    @staticmethod
    def reset(store: Store, video_ids: Sequence[str]) -> None:
        """Forget these videos' observations and all consolidation (objects span videos), so the
        next build re-extracts them and re-consolidates every observation deterministically."""
        units = [c.unit for c in clips_of(store, video_ids)]
        with store.transaction() as tx:
            tx.execute("UPDATE object_observations SET object_id = NULL")
            tx.execute("DELETE FROM objects")
            tx.executemany("DELETE FROM object_observations WHERE video_id = ?", [(v,) for v in video_ids])
            tx.executemany("DELETE FROM stage_progress WHERE stage = ? AND unit = ?", [(ObjectMemory.name, u) for u in units])
            tx.executemany("DELETE FROM stage_failures WHERE stage = ? AND unit = ?", [(ObjectMemory.name, u) for u in units])


def write_records(tx: sqlite3.Connection, clip: ClipRow, records: list[ObjectRecord]) -> None:
    tx.executemany(  # a record listed twice for one clip is one observation
        "INSERT OR IGNORE INTO object_observations (clip_id, video_id, t_start, t_end, name, kind, "
        "appearance_json, identity_json, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (clip.id, clip.video_id, clip.t_start, clip.t_end, r.name, r.kind,
             json.dumps(r.appearance), json.dumps(r.identity), r.value)
            for r in records
        ],
    )
