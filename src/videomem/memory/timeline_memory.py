"""Timeline memory: the temporal entity index (`memory/timeline_index.py`) as a memory.

It offers what every memory has (`build` as the `timeline` stage, `retrieve` for a free-text
query) and `ask`, the structured operations (`Operation`), which its own agent tool
(`memory.timeline`, `TimelineMemory.tool`) takes as typed arguments. Every answer is
evidence: one entry per interval it was computed from, after a first line stating the computed
result (a count, an order, a duration).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from videomem.errors import VideomemError
from videomem.evidence import Count, Evidence, Span
from videomem.memory import timeline_index
from videomem.memory.build import BuildContext
from videomem.timeline import TimeArgument, TimeText
from videomem.store.clips import timeline_kind
from videomem.memory.timeline_index import Answer, Event, Interval, TimelineIndex
from videomem.models.registry import ModelSet
from videomem.core import StageResult, unit_rows
from videomem.store import Store
from videomem.store.lexical import LexicalIndex, fused_top
from videomem.store.vectors import VectorIndex, embedder_identity

SOURCE = "timeline"
INDEX_NAME = "timeline_terms"
RANKED_TEXTS = 300
"""Most of the latest candidate intervals a free-text query embeds to rank them."""
KEYWORD_TEXTS = 100
"""Most older candidate intervals a query adds by its keywords (`lexical`): each is embedded
too, and MiniLM on a CPU is most of a search's time."""
Operation = Literal["search", "occurrences", "count", "first", "last", "order", "duration", "state", "with"]
OPERATIONS: tuple[str, ...] = Operation.__args__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Request:
    """One structured question to the timeline (see `TimelineMemory.ask`)."""

    operation: Operation
    entity: str | None = None
    action: str | None = None
    target: str | None = None
    other_entity: str | None = None
    other_action: str | None = None
    other_target: str | None = None
    at: float | None = None
    query: str | None = None


class TimelineMemory:
    """Timeline memory: for every person, object and place, the time intervals in which it
    appears and what it does or what state it is in (consecutive clips of one activity merged,
    with durations). Answers how many times, first / last time, which came first, how long,
    the state of something at a time, and who was with whom; each answer cites its intervals."""

    name = "timeline"

    def __init__(self, store: Store, models: ModelSet, lexical: bool = True) -> None:
        self.store = store
        self.models = models
        self.lexical = lexical
        """Fuse a keyword (BM25) ranking of the candidates with their ranking by meaning."""
        self._vectors: VectorIndex | None = None
        self._term_ids: dict[str, dict[int, str]] | None = None
        self._synonyms: dict[tuple[str, str], list[str]] = {}
        self.index = TimelineIndex(store, self._synonym_terms)
        self.time = TimeText(timeline_kind(store))

    # ------------------------------------------------------------ build

    def build(self, ctx: BuildContext, video_ids: Sequence[str]) -> StageResult:
        """Rewrite the facts from the stored memories when they changed, then embed new terms.
        The facts are built corpus-wide from what the caption, objects, episodic and transcribe
        stages stored, whatever `video_ids` holds."""
        result = StageResult(self.name)
        written = timeline_index.build(self.store, timeline_kind(self.store) == "egolife")
        if written:
            result.done = written
        else:
            result.skipped = 1
        self.term_vectors.refresh()
        self.term_vectors.ensure(ctx.progress)
        return result

    @property
    def term_vectors(self) -> VectorIndex:
        if self._vectors is None:
            embedder = self.models.text_embedder
            self._vectors = VectorIndex(
                self.store,
                INDEX_NAME,
                lambda: ((r["id"], r["text"]) for r in self.store.query("SELECT id, text FROM timeline_terms ORDER BY id")),
                embedder,
                embedder_identity(self.models.cfg.text_embedder, embedder.dim),
            )
        return self._vectors

    def _synonym_terms(self, kind: str, name: str) -> list[str]:
        """Terms of `kind` whose embedding is close to the name's (cached per name)."""
        if (kind, name) not in self._synonyms:
            if self._term_ids is None:
                self._term_ids = {"entity": {}, "relation": {}}
                for r in self.store.query("SELECT id, kind, text FROM timeline_terms"):
                    self._term_ids[r["kind"]][r["id"]] = r["text"]
            ids = self._term_ids[kind]
            hits = self.term_vectors.search(name, timeline_index.SYNONYM_K, list(ids)) if ids else []
            self._synonyms[kind, name] = [ids[i] for i, s in hits if s >= timeline_index.SYNONYM_SIMILARITY]
        return self._synonyms[kind, name]

    def stats(self) -> dict[str, int]:
        """Facts, intervals (runs of consecutive windows), entities, persons and relations."""
        return self.index.stats()

    # ------------------------------------------------------------ query

    def retrieve(
        self, query: str, top_k: int, until: float | None = None, video_id: str | None = None
    ) -> list[Evidence]:
        """The intervals of the entities a free-text query names (as whole words, else the
        closest by embedding), ranked by how close their fact is to the query. The candidates
        are their `RANKED_TEXTS` latest intervals and, when `lexical`, the `KEYWORD_TEXTS` older
        ones whose facts share most of the query's words (a person who talks all day names
        hundreds of facts an hour; "how many lanterns did Mia buy in total?" is answered by an
        older one that says "in total"); with keywords the ranking by meaning is fused with
        the candidates' keyword ranking. Each carries the count of its fact's intervals among
        the candidates and, for its subject when the query named it, the count of that
        entity's separate appearances among them ("how often did I set my keys down" counts
        the keys in every place, where each fact, "keys state on the shelf", counts one)."""
        entities = self.index.mentioned("entity", query)
        if not entities:
            entities = self._synonym_terms("entity", timeline_index.normalise(query))
        named = self.index.facts_of(entities, until, video_id, None)
        candidates = named[:RANKED_TEXTS]
        if self.lexical and len(named) > RANKED_TEXTS:
            older = list(dict.fromkeys(i.text for i in named[RANKED_TEXTS:]))
            hits = {older[n] for n, _ in LexicalIndex(range(len(older)), older).search(query, KEYWORD_TEXTS)}
            candidates += [i for i in named[RANKED_TEXTS:] if i.text in hits]
        if not candidates:
            return []
        texts = list(dict.fromkeys(i.text for i in candidates))
        vectors = unit_rows(self.models.text_embedder.embed([query, *texts]))
        similarity = dict(zip(texts, (vectors[1:] @ vectors[0]).tolist()))
        if self.lexical:
            meaning = sorted(range(len(texts)), key=lambda n: -similarity[texts[n]])
            words = [n for n, _ in LexicalIndex(range(len(texts)), texts).search(query, len(texts))]
            similarity = {texts[n]: score for n, score in fused_top(len(texts), meaning, words)}
        ranked = sorted(candidates, key=lambda i: (-similarity[i.text], -i.t_end))[:top_k]
        seen = Counter(i.text for i in candidates)
        appearances = {e: timeline_index.separate([i for i in candidates if i.subject == e]) for e in entities}
        return [
            self._evidence(i, similarity[i.text], Count(i.text, seen[i.text]),
                           *([Count(i.subject, appearances[i.subject])] if appearances.get(i.subject) else []))
            for i in ranked
        ]

    def ask(self, request: Request, until: float | None = None, video_id: str | None = None) -> tuple[str, list[Evidence]]:
        """Run one operation: (a first line stating its result, the intervals it came from)."""
        op = request.operation
        if op == "search":
            if not request.query and not request.entity:
                raise VideomemError("timeline search needs a query (or an entity)")
            found = self.retrieve(request.query or request.entity or "", 10, until, video_id)
            return (f"{len(found)} interval(s) found" if found else "nothing found"), found
        if not request.entity:
            raise VideomemError(f"timeline {op} needs an entity")
        event = Event(request.entity, request.action, request.target)
        index = self.index
        if op == "order":
            if not request.other_entity and not request.other_action:
                raise VideomemError("timeline order needs a second event (other_entity and/or other_action)")
            other = Event(request.other_entity or request.entity, request.other_action, request.other_target)
            answer = index.order([event, other], until, video_id)
        elif op == "state":
            if request.at is None and until is None:
                raise VideomemError("timeline state needs a time (at)")
            answer = index.state(request.entity, request.at if request.at is not None else until, until, video_id)  # type: ignore[arg-type]
        elif op == "with":
            answer = index.together(request.entity, request.other_entity, until, video_id)
        else:
            answer = getattr(index, op)(event, until, video_id)
        count = Count(event.label, answer.count) if answer.count is not None and answer.match is not None else None
        return self._headline(answer, event), [self._evidence(i, 1.0, count) for i in answer.intervals]

    def tool(
        self,
        until: float | None,
        video_id: str | None,
        operation: Annotated[Operation, Field(description="count / first / last / occurrences of an event; order of two "
                                              "events; duration of an activity; state of an entity at a time; with: "
                                              "who was with the entity; search: free text")] = "search",
        entity: Annotated[str | None, Field(description="person, object or place the question is about")] = None,
        action: Annotated[str | None, Field(description="what it does, e.g. 'pick up', 'play guitar'")] = None,
        target: Annotated[str | None, Field(description="what the action is done to or with")] = None,
        other_entity: Annotated[str | None, Field(description="order: the second event's entity; with: the other person")] = None,
        other_action: Annotated[str | None, Field(description="order: the second event's action")] = None,
        other_target: Annotated[str | None, Field(description="order: the second event's target")] = None,
        at: Annotated[TimeArgument | None, Field(description="state: the moment asked about (default: the query time)")] = None,
        query: Annotated[str | None, Field(description="search: free-text query")] = None,
    ) -> tuple[str, list[Evidence]]:
        """Timeline memory: when each person, object and place appeared and what it did, as time
        intervals (consecutive clips merged, with durations). Counts an event, finds its first or
        last time, orders two events, says how long an activity lasted, the state of an entity
        at a time, or who was with whom; every answer lists the intervals it came from."""
        request = Request(operation, entity, action, target, other_entity, other_action, other_target, at, query)
        return self.ask(request, until, video_id)

    def _headline(self, answer: Answer, event: Event) -> str:
        if answer.match is None:
            return f"no interval of {event.label!r} recorded"
        how = f" ({answer.match} match)"
        spans = answer.intervals
        if answer.operation == "order":
            return "earliest first: " + " < ".join(
                f"{label} at {self.time(i.t_start)}" for label, i in zip(answer.order, spans)) + how
        if answer.operation == "duration" and answer.duration is not None:
            total = sum(i.duration for i in spans)
            return (f"{event.label}: latest interval lasted {_seconds(answer.duration)}; {answer.count} interval(s), "
                    f"{_seconds(total)} in all" + how)
        if answer.operation in ("first", "last") and spans:
            return f"{answer.operation} {event.label}: {self.time.span(spans[0].t_start, spans[0].t_end)} " \
                   f"(of {answer.count} interval(s))" + how
        if answer.operation == "with":
            people = dict.fromkeys(i.subject for i in spans)
            return f"together: {'; '.join(people)}" + how if spans else "nobody recorded together" + how
        return f"{event.label}: {answer.count} interval(s)" + how

    def _evidence(self, interval: Interval, score: float, *counts: Count | None) -> Evidence:
        """One interval, typed: its span (with its duration) and the counts of the event and the
        entity it is one of."""
        text = f"{interval.text} ({interval.windows} window(s), {_seconds(interval.duration)})"
        return Evidence(
            interval.t_start, interval.t_end, text, SOURCE, score, interval.video_id,
            intervals=(Span(interval.t_start, interval.t_end, interval.text),), counts=tuple(c for c in counts if c),
        )

    @staticmethod
    def reset(store: Store, video_ids: Sequence[str]) -> None:
        """The facts are built corpus-wide; any reset rewrites them all."""
        timeline_index.reset(store)


def _seconds(value: float) -> str:
    """A duration as people say it: "45 s", "3 min 20 s", "1 h 05 min"."""
    total = int(round(value))
    if total < 60:
        return f"{total} s"
    if total < 3600:
        return f"{total // 60} min {total % 60:02d} s"
    return f"{total // 3600} h {total % 3600 // 60:02d} min"
