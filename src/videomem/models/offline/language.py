"""The offline language tasks: explicit algorithms where a prompted LLM would write text.

* summarise — extractive: MiniLM-embed the sentences, pick central, non-redundant ones by
  maximal marginal relevance, keep them in time order. It never writes a new sentence.
* extract_entities / extract_triplets — spaCy noun chunks, named entities and dependency
  rules (see `triplets.py`).
* induce_semantic / consolidate — semantic triplets are the episodic facts whose lemmas recur
  in at least `min_segments` segments; consolidation merges equal lemmas and retires a known
  triplet the new one contradicts (see `stance.py`).
* rerank — reciprocal-rank fusion and a rule for the time scale (see `rerank.py`).
* same_entity — names decide when both are real names; otherwise same colours and a high
  MiniLM similarity of the key fields.
* plan_step, decide_retrieval — rules (see `planner.py`); answer, respond — option scoring
  (see `scoring.py`).
* extract_objects_from_text — the people and things a caption mentions (see `mentions.py`).
* translate — Chinese into English word by word, by a segmenter and a dictionary (`gloss.py`);
  other languages are kept as written, and a warning says so.

Token counts in the usage meter are whitespace words (prompt = words read, completion = words
written), so reports can compare the offline backend with others in the same unit.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Sequence

import numpy as np

from videomem.choice import strip_label
from videomem.core import LETTERS, MAX_OPTIONS
from videomem.config import RoleConfig
from videomem.errors import ModelError
from videomem.evidence import Evidence
from videomem.models.engines import TextEmbedder
from videomem.models.tasks.agent import AgentState, AnswerOut, RetrievalDecision, RetrievalState, RoundRecord, ToolCall
from videomem.models.tasks.episodic import RankCandidate, Triplet
from videomem.models.tasks.objects import ObjectRecord
from videomem.models.tasks.semantic import ConsolidationOut, EpisodicFact, NewTriplet, SemanticTriplet
from videomem.models.usage import Usage, UsageMeter
from videomem.models.offline import require_no_options
from videomem.models.offline import triplets as triplet_rules
from videomem.models.offline.colours import PALETTE
from videomem.models.offline.gloss import gloss, has_han
from videomem.models.offline.mentions import records_from_captions
from videomem.models.offline.planner import choose_memory, plan
from videomem.models.offline.rerank import rerank as rerank_rule
from videomem.models.offline.scoring import OptionScorer, not_transcribed
from videomem.models.offline.nlp import split_sentences, words
from videomem.models.offline.stance import contradicts, read_parts, triplet_keys

ROLE = "llm"
log = logging.getLogger(__name__)
TIME_STAMP = re.compile(r"^At [^:]*\d(?::\d\d)*: ")
"""A sentence's leading time ('At DAY2 10:48:30: '), left out of what the summary compares: the
same words at two times say the same thing, and an object memory hands each sighting over with
its time (the words then embedded once for all the sightings that share them)."""
ENGLISH = frozenset({"english", "en"})
"""Target languages the offline translation writes (`gloss.py`: Chinese into English)."""
MMR_LAMBDA = 0.7
SAME_ENTITY_SIMILARITY = 0.8
"""MiniLM cosine of two records' key fields above which unnamed entities are merged."""
GENERIC_NAME = re.compile(
    r"^(?:a |an |the )?(?:person|man|woman|boy|girl|child|people|someone|somebody|object|thing|item|unknown|"
    r"entity)(?: \d+)?$",
    re.IGNORECASE,
)
RELATED_OBJECTS = 0.45
"""MiniLM cosine from which two objects are alternatives of one kind (tea and coffee 0.62;
coffee and cake 0.35), so that preferring one outdates liking the other."""
SCAFFOLD_SUBJECTS = frozenset({"scene", "view", "main colours", "imagenet tags", "it", "this", "that", "there", "they", "them"})
"""Subjects of the offline captioner's own framing sentences, which are never habits."""
_COLOURS = frozenset(PALETTE)


def _count(texts: Sequence[str]) -> int:
    return sum(len(t.split()) for t in texts)


class OfflineLanguage:
    """Every text protocol of `models/tasks/` (`Summarising`, `EpisodicTasks`, `CaptionRanking`,
    `SemanticTasks`, `EntityMerging`, `CaptionObjects`, `StepPlanning`, `Answering`,
    `RetrievalAgent`, `Translation`) by the algorithms above."""

    def __init__(self, cfg: RoleConfig, meter: UsageMeter, text_embedder: TextEmbedder) -> None:
        require_no_options(cfg, ROLE)
        self.cfg = cfg
        self.meter = meter
        self.embedder = text_embedder
        self.scorer = OptionScorer(text_embedder)
        self._said_no_translator = False

    def _meter(self, read: Sequence[str], written: Sequence[str], start: float, calls: int = 1) -> None:
        self.meter.add(ROLE, Usage(_count(read), _count(written), time.perf_counter() - start, calls))

    # ------------------------------------------------------------ summaries

    def summarise(self, groups: Sequence[Sequence[str]]) -> list[str]:
        """Per group, the central and mutually different sentences, in order (`_mmr`). Sentences
        that say the same at different times (`TIME_STAMP`) are one candidate, kept at its first time."""
        start = time.perf_counter()
        firsts = []  # per group: what a sentence says → the sentence that first said it
        for group in groups:
            first: dict[str, str] = {}
            for sentence in (s for text in group for s in split_sentences(text)):
                first.setdefault(TIME_STAMP.sub("", sentence, count=1), sentence)
            firsts.append(first)
        distinct = list(dict.fromkeys(said for first in firsts for said in first))
        row = {text: i for i, text in enumerate(distinct)}
        vectors = self.embedder.embed(distinct) if distinct else np.zeros((0, 1), np.float32)
        out = []
        for first in firsts:
            said = list(first)
            chosen = _mmr(vectors[[row[t] for t in said]]) if said else []
            out.append(" ".join(first[said[i]] for i in chosen))
        self._meter([t for g in groups for t in g], out, start, len(groups))
        return out

    # ------------------------------------------------------------ triplets

    def extract_entities(self, texts: Sequence[str]) -> list[list[str]]:
        start = time.perf_counter()
        out = triplet_rules.entities(texts)
        self._meter(texts, [name for names in out for name in names], start, len(texts))
        return out

    def extract_triplets(self, texts: Sequence[str], entities: Sequence[Sequence[str]]) -> list[list[Triplet]]:
        start = time.perf_counter()
        found = triplet_rules.extract(texts)
        out = [triplet_rules.conditioned(ts, names) for ts, names in zip(found, entities, strict=True)]
        self._meter(texts, [f"{t.subject} {t.relation} {t.object}" for ts in out for t in ts], start, len(texts))
        return out

    def rerank(self, query: str, candidates: Sequence[RankCandidate]) -> list[int]:
        start = time.perf_counter()
        out = rerank_rule(query, candidates, self.embedder)
        self._meter([query, *(c.text for c in candidates)], [str(i) for i in out], start)
        return out

    def induce_semantic(self, facts: Sequence[EpisodicFact], min_segments: int) -> list[SemanticTriplet]:
        """Facts of segment 0 that recur, same lemmas of subject, relation and object, in at
        least `min_segments` distinct segments; evidence = every occurrence, most supported first."""
        start = time.perf_counter()
        groups: dict[str, list[int]] = {}
        kept = [i for i, fact in enumerate(facts) if fact.triplet.subject.lower() not in SCAFFOLD_SUBJECTS]
        for i, key in zip(kept, triplet_keys([facts[i].triplet for i in kept])):
            groups.setdefault(key, []).append(i)
        out = []
        for members in groups.values():
            current = [i for i in members if facts[i].segment == 0]
            if current and len({facts[i].segment for i in members}) >= min_segments:
                out.append(SemanticTriplet(**facts[current[0]].triplet.model_dump(), evidence=members))
        out.sort(key=lambda t: (-len({facts[i].segment for i in t.evidence}), t.evidence[0]))
        read = [f"{f.triplet.subject} {f.triplet.relation} {f.triplet.object}" for f in facts]
        self._meter(read, [f"{t.subject} {t.relation} {t.object}" for t in out], start)
        return out

    def consolidate(self, items: Sequence[NewTriplet]) -> list[ConsolidationOut]:
        """Same lemmas as a known triplet: merged into the better-supported one (whose wording
        stays). A contradiction (`stance.py`): the known triplet is retired."""
        start = time.perf_counter()

        def related(a: str, b: str) -> bool:
            first, second = self.embedder.embed([a, b])
            return float(first @ second) >= RELATED_OBJECTS

        compared = [t for item in items for t in (item.triplet, *(k.triplet for k in item.known))]
        read_parts(compared)
        keys = iter(triplet_keys(compared))
        out = []
        for item in items:
            key, known_keys = next(keys), [next(keys) for _ in item.known]
            same = [k for k, known_key in zip(item.known, known_keys) if known_key == key]
            kept = max(same, key=lambda k: (k.support, k.similarity)) if same else None
            triplet = kept.triplet if kept is not None and kept.support >= item.support else item.triplet
            retire = [k.id for k in item.known if k not in same and contradicts(item.triplet, k.triplet, related)]
            out.append(ConsolidationOut(triplet=triplet, same_as=kept.id if kept else None, retire=retire))
        read = [f"{k.triplet.subject} {k.triplet.relation} {k.triplet.object}" for item in items for k in item.known]
        self._meter(read, [f"{o.triplet.subject} {o.triplet.relation} {o.triplet.object}" for o in out], start, len(items))
        return out

    # ------------------------------------------------------------ entities

    def same_entity(self, pairs: Sequence[tuple[ObjectRecord, ObjectRecord]]) -> list[bool]:
        start = time.perf_counter()
        keys = [_key_text(r) for pair in pairs for r in pair]
        vectors = self.embedder.embed(keys) if keys else np.zeros((0, 1), np.float32)
        out = []
        for n, (a, b) in enumerate(pairs):
            similarity = float(vectors[2 * n] @ vectors[2 * n + 1])
            out.append(_same(a, b, similarity))
        self._meter(keys, ["yes" if s else "no" for s in out], start, len(pairs))
        return out

    # ------------------------------------------------------------ agent

    def plan_step(self, state: AgentState) -> ToolCall:
        start = time.perf_counter()

        def margin_of(text: str) -> float:
            return self.scorer.margin(state.question, state.choices or [], [Evidence(0.0, 0.0, text, "memory", 1.0, "")])

        def mentions(option: str, text: str) -> bool:
            return self.scorer.mentions(option, state.choices or [], text)

        call = plan(state, margin_of, mentions)
        self._meter([state.question, *(h.observation for h in state.history)], [call.thought], start)
        return call

    def decide_retrieval(self, state: RetrievalState) -> RetrievalDecision:
        start = time.perf_counter()
        decision = choose_memory(state)
        self._meter([state.question, *(r.retrieved for r in state.history)], [decision.reason], start)
        return decision

    def respond(
        self, question: str, choices: list[str] | None, rounds: Sequence[RoundRecord], now: float | None = None
    ) -> AnswerOut:
        """The answer step over the evidence of every round, in round order."""
        return self.answer(question, choices, [e for r in rounds for e in r.evidence], now)

    def answer(
        self, question: str, choices: list[str] | None, evidence: Sequence[Evidence], now: float | None = None
    ) -> AnswerOut:
        start = time.perf_counter()
        if choices:
            if len(choices) > MAX_OPTIONS:
                raise ModelError(f"{len(choices)} options; multiple-choice answers allow at most {MAX_OPTIONS} (A-{LETTERS[-1]})")
            unheard = self.scorer.unheard(question, choices, evidence)
            if unheard:
                out = AnswerOut(answer=not_transcribed(unheard))
            else:
                best = self.scorer.choose(question, choices, evidence, now)
                out = AnswerOut(answer=strip_label(choices[best]), choice=LETTERS[best])
        else:
            sentence = self.scorer.best_sentence(question, evidence)
            out = AnswerOut(answer=sentence or "The memory holds no evidence for this question.")
        self._meter([question, *(choices or []), *(e.text for e in evidence)], [out.answer], start)
        return out

    # ------------------------------------------------------------ imported captions

    def translate(self, texts: Sequence[str], language: str) -> list[str]:
        """Chinese into English word by word (`gloss.py`); text in another language, or into
        another language, is kept as written (said once)."""
        start = time.perf_counter()
        if language.strip().casefold() in ENGLISH:
            out = [gloss(t) for t in texts]
        else:
            out = list(texts)
        left = [t for t, o in zip(texts, out) if o == t and has_han(t)]
        if left and not self._said_no_translator:
            log.warning("the offline backend translates only Chinese into English: imported captions are kept as "
                        "written, not in %s", language)
            self._said_no_translator = True
        self._meter(texts, out, start, len(texts))
        return out

    def extract_objects_from_text(self, captions: Sequence[str]) -> list[list[ObjectRecord]]:
        start = time.perf_counter()
        out = records_from_captions(captions)
        written = [" ".join([r.name, *r.appearance, r.value]) for records in out for r in records]
        self._meter(captions, written, start, len(captions))
        return out


def _mmr(vectors: np.ndarray) -> list[int]:
    """Indices (ascending, i.e. time order) of 2 + ⌈√n⌉ central, mutually different sentences."""
    n = len(vectors)
    budget = min(n, 2 + math.ceil(math.sqrt(n)))
    if budget == n:
        return list(range(n))
    centroid = vectors.mean(axis=0)
    centroid /= np.linalg.norm(centroid) or 1.0
    centrality = vectors @ centroid
    similarity = vectors @ vectors.T
    chosen: list[int] = []
    while len(chosen) < budget:
        redundancy = similarity[:, chosen].max(axis=1) if chosen else np.zeros(n)
        score = MMR_LAMBDA * centrality - (1 - MMR_LAMBDA) * redundancy
        score[chosen] = -np.inf
        chosen.append(int(np.argmax(score)))
    return sorted(chosen)


def _key_text(record: ObjectRecord) -> str:
    return ". ".join([record.name, ", ".join(record.appearance), ", ".join(record.identity)])


def _is_generic(record: ObjectRecord) -> bool:
    return bool(GENERIC_NAME.match(record.name.strip())) or record.name.strip().lower() == record.kind


def _colours(record: ObjectRecord) -> set[str]:
    return {w for text in [record.name, *record.appearance] for w in words(text) if w in _COLOURS}


def _same(a: ObjectRecord, b: ObjectRecord, similarity: float) -> bool:
    """Different kinds never merge; two real names merge only if they agree (a person's name may
    be given in full once: 'Alice' = 'Alice Smith'); otherwise colours must agree and the key
    fields must be close in meaning."""
    if a.kind != b.kind:
        return False
    if not _is_generic(a) and not _is_generic(b):
        name_a, name_b = set(words(a.name)), set(words(b.name))
        if a.kind == "person":
            return bool(name_a) and (name_a <= name_b or name_b <= name_a)
        return name_a == name_b
    colours_a, colours_b = _colours(a), _colours(b)
    if colours_a and colours_b and not colours_a & colours_b:
        return False
    return similarity >= SAME_ENTITY_SIMILARITY
