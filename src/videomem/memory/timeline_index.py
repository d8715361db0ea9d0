"""The temporal entity index behind timeline memory: who or what appears when, doing what.

**Facts.** Every (subject, relation, object) the store knows about a moment becomes one fact
with that moment's time range: the triplets of the finest episodic scale's captions, each
object-memory observation as (name, `state`, what was recorded about it), and each transcript
line with a speaker as (speaker, `say`, the words). Names are normalised (case, punctuation,
a leading article), so "The red phone" and "red phone" are one entity.

**Intervals.** Facts with the same subject, relation and object in consecutive windows form a
run; each fact stores its run's first fact id, so an interval is a `GROUP BY run` over the
facts a question may see. An interval therefore ends at the last window recorded by the
question's `until`, never later, and its duration is what had been seen by then.

**Vocabulary.** Entities (with a category: person, place or object) and relations are kept as
terms, appended to and never renumbered, so their embedding index only grows. A person is a
speaker, an object-memory record of kind person, or a capitalised name that does something; a
place is where something happens (the object of a relation ending in a locative preposition).

**Matching.** A query names an entity and optionally an action and its target. Each is matched
strictly (the normalised term), then by synonyms (terms whose embedding is within
`SYNONYM_SIMILARITY`), then by text (terms containing its words); the first level that finds
facts answers, and the answer says which level it was.

Building reads SQLite only and rewrites the facts in one transaction when their inputs changed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Literal

from videomem.store import Store
from videomem.store.clips import scope_sql
from videomem.timeline import UNTIL_SLACK

INPUTS_META = "timeline_inputs"
"""`meta` key of the digest of the rows the facts were built from."""
MERGE_GAP = 1.0
"""Seconds between two windows of one activity that still count as consecutive (frame times
moved onto keyframes leave small gaps)."""
SYNONYM_SIMILARITY = 0.8
"""Cosine from which a term is a synonym of a query's name (as episodic memory's synonym edges)."""
SYNONYM_K = 8
STATE = "state"
"""Relation of an object-memory observation: its object is what was recorded about the thing."""
SAY = "say"
"""Relation of a transcript line: its subject is the speaker."""
Level = Literal["exact", "synonym", "text"]
LEVELS: tuple[Level, ...] = ("exact", "synonym", "text")
Category = Literal["person", "place", "object"]

_WORD = re.compile(r"[\w']+")
_LEADING = {"a", "an", "the", "this", "that", "these", "those", "his", "her", "their", "its", "my", "our", "your", "some"}
_LOCATIVE = {"in", "at", "into", "inside", "to", "toward", "towards", "near", "through"}


def normalise(text: str) -> str:
    """Casefolded words, without a leading article or possessive: the key of a term."""
    words = _WORD.findall(text.casefold())
    while len(words) > 1 and words[0] in _LEADING:
        words = words[1:]
    return " ".join(words)


def stem(text: str) -> str:
    """Each word without a regular English inflection (-s, -es, -ed, -ing, a final -e), so that
    "picked up", "picks up" and "pick up" meet."""
    out = []
    for word in text.split():
        for suffix in ("ing", "ed", "es", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
        out.append(word[:-1] if word.endswith("e") and len(word) > 3 else word)
    return " ".join(out)


@dataclass(frozen=True)
class Fact:
    scope: str
    video_id: str
    subject: str
    relation: str
    object: str
    source: str
    t_start: float
    t_end: float

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.scope, self.subject, self.relation, self.object


@dataclass(frozen=True)
class Interval:
    """Consecutive windows of one fact, as far as the question may see them."""

    video_id: str
    subject: str
    relation: str
    object: str
    source: str
    t_start: float
    t_end: float
    windows: int

    @property
    def duration(self) -> float:
        return self.t_end - self.t_start

    @property
    def text(self) -> str:
        return " ".join(p for p in (self.subject, self.relation, self.object) if p)


@dataclass
class Answer:
    """What an operation found: its result (a count, a duration, an order), the level at which
    names matched, and the intervals the result was computed from."""

    operation: str
    intervals: list[Interval] = field(default_factory=list)
    count: int | None = None
    duration: float | None = None
    order: list[str] = field(default_factory=list)
    """For `order`: the events' labels, earliest first."""
    match: Level | None = None
    """The loosest level a name had to be matched at; None when nothing matched."""


# ---------------------------------------------------------------- building


def _scope(video_id: str, corpus: bool) -> str:
    return "" if corpus else video_id


def collect(store: Store, corpus: bool) -> tuple[list[Fact], dict[str, Category]]:
    """Every fact the store's memories hold, and the category of each entity named."""
    facts: list[Fact] = []
    persons: set[str] = set()
    capitalised_subjects: set[str] = set()
    places: set[str] = set()
    finest = store.query("SELECT MIN(scale) AS s FROM episodic_captions")[0]["s"]
    if finest is not None:
        rows = store.query(
            "SELECT c.scope, c.video_id, c.t_start, c.t_end, t.subject, t.relation, t.object FROM episodic_triplets t "
            "JOIN episodic_captions c ON c.id = t.caption_id WHERE c.scale = ?",
            (finest,),
        )
        for r in rows:
            subject, relation, obj = normalise(r["subject"]), normalise(r["relation"]), normalise(r["object"])
            if not subject or not relation:
                continue
            facts.append(Fact(r["scope"], r["video_id"], subject, relation, obj, "episodic", r["t_start"], r["t_end"]))
            if r["subject"].strip()[:1].isupper():
                capitalised_subjects.add(subject)
            if relation.split()[-1] in _LOCATIVE and obj:
                places.add(obj)
    for r in store.query("SELECT video_id, t_start, t_end, name, kind, value FROM object_observations"):
        name = normalise(r["name"])
        if not name:
            continue
        facts.append(Fact(_scope(r["video_id"], corpus), r["video_id"], name, STATE, " ".join(r["value"].split()),
                          "objects", r["t_start"], r["t_end"]))
        if r["kind"] == "person":
            persons.add(name)
    for r in store.query("SELECT video_id, t_start, t_end, speaker, text FROM transcripts WHERE speaker IS NOT NULL"):
        speaker = normalise(r["speaker"])
        if speaker and r["text"].strip():
            facts.append(Fact(_scope(r["video_id"], corpus), r["video_id"], speaker, SAY, " ".join(r["text"].split()),
                              "transcript", r["t_start"], r["t_end"]))
            persons.add(speaker)
    persons |= capitalised_subjects
    categories: dict[str, Category] = {}
    for f in facts:
        for name in (f.subject, f.object if f.relation not in (STATE, SAY) else ""):
            if name and name not in categories:
                categories[name] = "person" if name in persons else "place" if name in places else "object"
    return facts, categories


def runs(facts: Sequence[Fact]) -> list[int]:
    """For facts sorted by time: the index of the first fact of each one's run of consecutive
    windows with the same subject, relation and object."""
    order = sorted(range(len(facts)), key=lambda i: (facts[i].key, facts[i].t_start, facts[i].t_end))
    first = [0] * len(facts)
    for _, members in groupby(order, key=lambda i: facts[i].key):
        start = end = None
        for i in members:
            if start is None or facts[i].t_start - end > MERGE_GAP:
                start = i
                end = facts[i].t_end
            first[i] = start
            end = max(end, facts[i].t_end)
    return first


def digest(store: Store) -> str:
    """What the facts are built from, summarised cheaply: a change to any input table changes it."""
    parts = [
        store.query("SELECT COUNT(*), MAX(id), TOTAL(t_end) FROM episodic_captions")[0],
        store.query("SELECT COUNT(*), MAX(id) FROM episodic_triplets")[0],
        store.query("SELECT COUNT(*), MAX(id), TOTAL(t_end) FROM object_observations")[0],
        store.query("SELECT COUNT(*), MAX(id), TOTAL(t_end), COUNT(speaker) FROM transcripts")[0],
    ]
    return hashlib.sha1(repr([tuple(p) for p in parts]).encode()).hexdigest()


def build(store: Store, corpus: bool) -> int:
    """Rewrite the facts when their inputs changed (one transaction). Returns facts written, 0 if
    nothing changed."""
    inputs = digest(store)
    if store.meta(INPUTS_META) == inputs:
        return 0
    facts, categories = collect(store, corpus)
    facts.sort(key=lambda f: (f.t_start, f.t_end, f.scope, f.subject, f.relation, f.object))
    first = runs(facts)
    relations = sorted({f.relation for f in facts})
    with store.transaction() as tx:
        tx.execute("DELETE FROM timeline_facts")
        tx.executemany(
            "INSERT INTO timeline_facts (id, scope, video_id, subject, relation, object, source, t_start, t_end, run) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(i + 1, f.scope, f.video_id, f.subject, f.relation, f.object, f.source, f.t_start, f.t_end, first[i] + 1)
             for i, f in enumerate(facts)],
        )
        tx.executemany("INSERT OR IGNORE INTO timeline_terms (kind, text, category) VALUES ('entity', ?, ?)",
                       sorted(categories.items()))
        tx.executemany("UPDATE timeline_terms SET category = ? WHERE kind = 'entity' AND text = ?",
                       [(c, n) for n, c in sorted(categories.items())])
        tx.executemany("INSERT OR IGNORE INTO timeline_terms (kind, text, category) VALUES ('relation', ?, '')",
                       [(r,) for r in relations])
        Store.set_meta(tx, INPUTS_META, inputs)
    return len(facts)


def reset(store: Store) -> None:
    """Forget the facts so the next build rewrites them (the terms stay: they only name things)."""
    with store.transaction() as tx:
        tx.execute("DELETE FROM timeline_facts")
        tx.execute("DELETE FROM meta WHERE key = ?", (INPUTS_META,))


# ---------------------------------------------------------------- querying

Synonyms = Callable[[str, str], list[str]]
"""(term kind, name) → terms of that kind closest in meaning to the name (above the threshold)."""


@dataclass(frozen=True)
class Event:
    """What a question asks about: an entity, optionally what it does and to what."""

    entity: str
    action: str | None = None
    target: str | None = None

    @property
    def label(self) -> str:
        return " ".join(p for p in (self.entity, self.action, self.target) if p)


class TimelineIndex:
    """Queries over the facts a question may see (`until`, `video_id`), strict to relaxed."""

    def __init__(self, store: Store, synonyms: Synonyms) -> None:
        self.store = store
        self.synonyms = synonyms
        self._terms: dict[str, set[str]] | None = None
        self._stems: dict[str, dict[str, set[str]]] = {}

    def terms(self, kind: str) -> set[str]:
        if self._terms is None:
            self._terms = {"entity": set(), "relation": set()}
            for r in self.store.query("SELECT kind, text FROM timeline_terms"):
                self._terms[r["kind"]].add(r["text"])
        return self._terms[kind]

    def persons(self) -> set[str]:
        return {r[0] for r in self.store.query("SELECT text FROM timeline_terms WHERE kind = 'entity' AND category = 'person'")}

    def match(self, kind: str, name: str, level: Level) -> set[str]:
        """Terms of `kind` a name stands for at `level` and every stricter one: exact, then the
        same words inflected otherwise or a synonym by embedding, then terms containing it."""
        key = normalise(name)
        if not key:
            return set()
        terms = self.terms(kind)
        found = {key} & terms
        if level == "exact":
            return found
        found |= self._stemmed(kind).get(stem(key), set()) | set(self.synonyms(kind, key))
        if level == "synonym":
            return found
        pattern = re.compile(rf"\b{re.escape(key)}\b")
        return found | {t for t in terms if pattern.search(t) or re.search(rf"\b{re.escape(t)}\b", key)}

    def _stemmed(self, kind: str) -> dict[str, set[str]]:
        if kind not in self._stems:
            self._stems[kind] = {}
            for term in self.terms(kind):
                self._stems[kind].setdefault(stem(term), set()).add(term)
        return self._stems[kind]

    def _readings(self, event: Event) -> list[Event]:
        """The event as given, then, for an action that names its target too ("play guitar"),
        each split of it into a leading action and the rest as the target, longest action first."""
        readings = [event]
        if event.action and not event.target:
            words = normalise(event.action).split()
            readings += [Event(event.entity, " ".join(words[:cut]), " ".join(words[cut:]))
                         for cut in range(len(words) - 1, 0, -1)]
        return readings

    def intervals(
        self, event: Event, until: float | None, video_id: str | None, after: float | None = None
    ) -> tuple[list[Interval], Level | None]:
        """The intervals of an event visible to the question, in time order, at the strictest
        matching level that finds any."""
        for level in LEVELS:
            for reading in self._readings(event):
                found = self._intervals(reading, level, until, video_id, after)
                if found:
                    return found, level
        return [], None

    def _intervals(
        self, event: Event, level: Level, until: float | None, video_id: str | None, after: float | None
    ) -> list[Interval]:
        entities = self.match("entity", event.entity, level)
        if not entities:
            return []
        terms, params = self._visible(until, video_id, after)
        names = sorted(entities)
        marks = ",".join("?" * len(names))
        if event.target:
            targets = sorted(self.match("entity", event.target, level) | {normalise(event.target)})
            tmarks = ",".join("?" * len(targets))
            terms.append(f"((subject IN ({marks}) AND object IN ({tmarks})) OR (object IN ({marks}) AND subject IN ({tmarks})))")
            params += [*names, *targets, *names, *targets]
        else:
            terms.append(f"(subject IN ({marks}) OR object IN ({marks}))")
            params += [*names, *names]
        if event.action:
            relations = sorted(self.match("relation", event.action, level))
            if not relations:
                return []
            terms.append(f"relation IN ({','.join('?' * len(relations))})")
            params += relations
        return self._grouped(" AND ".join(terms), params)

    def _grouped(self, where: str, params: Sequence[object]) -> list[Interval]:
        rows = self.store.query(
            "SELECT video_id, subject, relation, object, source, MIN(t_start) AS t0, MAX(t_end) AS t1, COUNT(*) AS n "
            f"FROM timeline_facts WHERE {where} GROUP BY run ORDER BY t0, t1, subject, relation, object",
            tuple(params),
        )
        return [Interval(r["video_id"], r["subject"], r["relation"], r["object"], r["source"], r["t0"], r["t1"], r["n"])
                for r in rows]

    @staticmethod
    def _visible(until: float | None, video_id: str | None, after: float | None = None) -> tuple[list[str], list[object]]:
        scope, scope_params = scope_sql(until, video_id)
        terms: list[str] = [scope] if scope else []
        params: list[object] = list(scope_params)
        if after is not None:
            terms.append("t_start >= ?")
            params.append(after)
        return terms, params

    # ------------------------------------------------------------ operations

    def occurrences(self, event: Event, until: float | None, video_id: str | None) -> Answer:
        found, level = self.intervals(event, until, video_id)
        return Answer("occurrences", found, count=len(found), match=level)

    def count(self, event: Event, until: float | None, video_id: str | None) -> Answer:
        """Separate intervals of the event (a run of consecutive windows counts once)."""
        found, level = self.intervals(event, until, video_id)
        return Answer("count", found, count=len(found), match=level)

    def first(self, event: Event, until: float | None, video_id: str | None) -> Answer:
        found, level = self.intervals(event, until, video_id)
        return Answer("first", found[:1], count=len(found), match=level)

    def last(self, event: Event, until: float | None, video_id: str | None) -> Answer:
        found, level = self.intervals(event, until, video_id)
        latest = max(found, key=lambda i: (i.t_end, i.t_start)) if found else None
        return Answer("last", [latest] if latest else [], count=len(found), match=level)

    def order(self, events: Sequence[Event], until: float | None, video_id: str | None) -> Answer:
        """The events by their first visible interval, earliest first; an event never seen is left out."""
        firsts: list[tuple[Interval, str]] = []
        levels: list[Level] = []
        for event in events:
            found, level = self.intervals(event, until, video_id)
            if found:
                firsts.append((found[0], event.label))
                levels.append(level)  # type: ignore[arg-type]
        firsts.sort(key=lambda pair: (pair[0].t_start, pair[0].t_end))
        return Answer("order", [i for i, _ in firsts], order=[label for _, label in firsts], match=_loosest(levels))

    def duration(self, event: Event, until: float | None, video_id: str | None) -> Answer:
        """How long the event lasted: its latest interval's duration (`duration`), with every
        interval it was computed from; the total is the sum of theirs."""
        found, level = self.intervals(event, until, video_id)
        latest = max(found, key=lambda i: (i.t_end, i.t_start)) if found else None
        return Answer("duration", found, count=len(found), duration=latest.duration if latest else None, match=level)

    def state(self, entity: str, at: float, until: float | None, video_id: str | None) -> Answer:
        """What the entity was doing or how it was at `at`: the intervals holding that moment,
        or else those of the latest moment before it that recorded the entity."""
        limit = at if until is None else min(at, until)
        found, level = self.intervals(Event(entity), None, video_id)
        seen = [i for i in found if i.t_start <= limit + UNTIL_SLACK]
        if until is not None:  # an interval still going on at `until` was seen up to its last window by then
            seen = [self._cut(i, until, video_id) for i in seen]
            seen = [i for i in seen if i is not None]
        holding = [i for i in seen if i.t_start - UNTIL_SLACK <= at <= i.t_end + UNTIL_SLACK]
        if not holding and seen:
            latest = max(i.t_end for i in seen)
            holding = [i for i in seen if i.t_end == latest]
        return Answer("state", holding, count=len(holding), match=level if holding else None)

    def _cut(self, interval: Interval, until: float, video_id: str | None) -> Interval | None:
        if interval.t_end <= until + UNTIL_SLACK:
            return interval
        rows = self.store.query(
            "SELECT MIN(t_start) AS t0, MAX(t_end) AS t1, COUNT(*) AS n FROM timeline_facts WHERE subject = ? AND "
            "relation = ? AND object = ? AND video_id = ? AND t_start >= ? AND t_end <= ?",
            (interval.subject, interval.relation, interval.object, interval.video_id, interval.t_start, until + UNTIL_SLACK),
        )
        r = rows[0]
        if not r["n"]:
            return None
        return Interval(interval.video_id, interval.subject, interval.relation, interval.object, interval.source,
                        r["t0"], r["t1"], r["n"])

    def together(self, entity: str, other: str | None, until: float | None, video_id: str | None) -> Answer:
        """Who was with the entity: with `other`, the intervals in which both appear; without,
        the intervals shared with each person seen in the same windows, the person with the most
        shared time first (`count`: how many people)."""
        found, level = self.intervals(Event(entity), until, video_id)
        if not found:
            return Answer("with", match=None)
        mine = self._windows(self.match("entity", entity, level or "exact"), until, video_id)
        if other is not None:
            theirs, other_level = self._windows_matched(other, until, video_id)
            shared = _merge(sorted(set(mine) & set(theirs)))
            label = f"{normalise(entity)} with {normalise(other)}"
            together = [Interval(v, label, "", "", "co-presence", s, e, n) for v, s, e, n in shared]
            return Answer("with", together, count=len(together), match=_loosest([level, other_level]) if together else None)
        me = self.match("entity", entity, level or "exact")
        people = sorted(self.persons() - me)
        if not people or not mine:
            return Answer("with", match=level)
        per_person: dict[str, list[tuple[str, float, float]]] = {}
        mine_set = set(mine)
        for person, windows in self._windows_by(people, until, video_id).items():
            shared = sorted(mine_set & windows)
            if shared:
                per_person[person] = shared
        ranked = sorted(per_person.items(), key=lambda kv: (-sum(e - s for _, s, e in kv[1]), kv[0]))
        out = [Interval(v, f"{normalise(entity)} with {person}", "", "", "co-presence", s, e, n)
               for person, windows in ranked for v, s, e, n in _merge(windows)]
        return Answer("with", out, count=len(ranked), match=level)

    def _windows_matched(self, name: str, until: float | None, video_id: str | None) -> tuple[set, Level | None]:
        for level in LEVELS:
            windows = self._windows(self.match("entity", name, level), until, video_id)
            if windows:
                return windows, level
        return set(), None

    def _windows(self, names: Iterable[str], until: float | None, video_id: str | None) -> set[tuple[str, float, float]]:
        return set().union(*self._windows_by(sorted(names), until, video_id).values()) if names else set()

    def _windows_by(self, names: Sequence[str], until: float | None, video_id: str | None) -> dict[str, set]:
        """Entity → the (video, start, end) of every window naming it, among `names`."""
        if not names:
            return {}
        terms, params = self._visible(until, video_id)
        marks = ",".join("?" * len(names))
        where = " AND ".join(terms) or "1"
        out: dict[str, set] = {}
        for column in ("subject", "object"):
            rows = self.store.query(
                f"SELECT DISTINCT {column} AS name, video_id, t_start, t_end FROM timeline_facts "
                f"WHERE {column} IN ({marks}) AND relation != ? AND {where}",
                (*names, STATE if column == "object" else "", *params),
            )
            for r in rows:
                out.setdefault(r["name"], set()).add((r["video_id"], r["t_start"], r["t_end"]))
        return out

    def mentioned(self, kind: str, text: str) -> list[str]:
        """Terms of `kind` that a free-text query contains as whole words, longest first."""
        words = normalise(text).split()
        grams = {" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, min(len(words), i + 5) + 1)}
        return sorted(grams & self.terms(kind), key=lambda t: (-len(t.split()), t))

    def facts_of(self, entities: Sequence[str], until: float | None, video_id: str | None, limit: int | None) -> list[Interval]:
        """Every visible interval naming one of these entities, latest first (the first `limit`
        of them; all when `limit` is None)."""
        if not entities:
            return []
        terms, params = self._visible(until, video_id)
        marks = ",".join("?" * len(entities))
        terms.append(f"(subject IN ({marks}) OR object IN ({marks}))")
        found = self._grouped(" AND ".join(terms), [*params, *entities, *entities])
        return sorted(found, key=lambda i: (-i.t_end, i.t_start))[:limit]

    def stats(self) -> dict[str, int]:
        facts = self.store.query("SELECT COUNT(*) AS n, COUNT(DISTINCT run) AS runs FROM timeline_facts")[0]
        terms = {r["kind"]: r["n"] for r in self.store.query("SELECT kind, COUNT(*) AS n FROM timeline_terms GROUP BY kind")}
        persons = self.store.query("SELECT COUNT(*) AS n FROM timeline_terms WHERE category = 'person'")[0]["n"]
        return {
            "facts": facts["n"],
            "intervals": facts["runs"],
            "entities": terms.get("entity", 0),
            "persons": persons,
            "relations": terms.get("relation", 0),
        }


def separate(intervals: Iterable[Interval]) -> int:
    """How many separate times these intervals cover: those that overlap or touch (within
    `MERGE_GAP`) in one video are one."""
    by_video: dict[str, list[tuple[str, float, float]]] = {}
    for i in intervals:
        by_video.setdefault(i.video_id, []).append((i.video_id, i.t_start, i.t_end))
    return sum(len(_merge(windows)) for windows in by_video.values())


def _loosest(levels: Iterable[Level | None]) -> Level | None:
    seen = [level for level in levels if level is not None]
    return max(seen, key=LEVELS.index) if seen else None


def _merge(windows: Sequence[tuple[str, float, float]]) -> list[tuple[str, float, float, int]]:
    """Sorted (video, start, end) windows → runs of consecutive ones: (video, start, end, windows)."""
    out: list[list] = []
    for video, start, end in sorted(windows, key=lambda w: (w[1], w[2], w[0])):
        if out and start - out[-1][2] <= MERGE_GAP:
            out[-1][2] = max(out[-1][2], end)
            out[-1][3] += 1
        else:
            out.append([video, start, end, 1])
    return [(v, s, e, n) for v, s, e, n in out]

