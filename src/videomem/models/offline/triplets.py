"""Subject–relation–object triplets from spaCy's dependency parse.

Rules, not a model: for each verb, its subjects (with conjuncts) × its direct objects, and
× the objects of its prepositions ("I put the keys on the table" → (I, put, keys),
(I, put on, table)); passives turn around ("the ball was kicked by Alice" → (Alice, kick,
ball)); copulas give (box, be, red) and (keys, be on, table). Relations are lemmas, so "drank" and
"drinks" recur as one habit. Noun phrases keep compounds, adjectives and numbers and drop
determiners. First person is always "I".

Quoted text ('ROOM 418', speech) is one entity in the sentence that quotes it, and is parsed on
its own as well, so on-screen sentences and speech yield triplets too.

Entities (the step before triplets in WorldMM) are the noun chunks, written like triplet
arguments, the named entities spaCy finds, and quoted text. Of text in another script only the
Latin-script sentences are parsed, and the Latin names standing alone in it are entities
(`nlp.script_parts`): the English parser reads a Chinese clause as one long noun. Triplets are
conditioned on the entities: one is kept only if its subject or its object is one of them.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence

from videomem.models.offline.nlp import FIRST_PERSON, load_spacy, quoted_spans, script_parts
from videomem.models.tasks.episodic import Triplet

_MODIFIERS = {"compound", "amod", "nummod", "poss", "nmod"}
_SUBJECTS = {"nsubj", "nsubjpass", "csubj"}
_OBJECTS = {"dobj", "attr", "acomp", "oprd", "dative", "xcomp"}
_PLACEHOLDER = "QUOTE{}"
_COUNTING = {"CARDINAL", "ORDINAL", "PERCENT", "QUANTITY", "MONEY"}
"""Named-entity labels that are amounts, not things a question asks about."""
PARSE_CACHE = 256
"""Parsed texts kept: entities and then triplets of one batch read the same parses. A parse
costs about 1 kB a token, so a week of summaries in a larger cache was half a gigabyte."""
PARSE_BATCH_CHARACTERS = 20_000
"""Characters parsed in one batch: spaCy's activations grow with a batch's tokens, and 32 hour-long
summaries of 12,000 characters at once took 1.7 GB (a week's episodic build peaked there); 64
clip captions of 300 characters still go together."""
_parsed: OrderedDict[str, object] = OrderedDict()


def _unit_texts(text: str) -> tuple[str, dict[str, str], list[str]]:
    """The text with each quote replaced by a placeholder word, the placeholder map, and the
    quoted texts worth parsing on their own (sentence case if written in capitals)."""
    mapping: dict[str, str] = {}
    inner: list[str] = []
    pieces, last = [], 0
    for n, (start, end) in enumerate(quoted_spans(text), 1):
        key = _PLACEHOLDER.format(n)
        quote = text[start + 1 : end - 1].strip()
        mapping[key] = quote
        pieces += [text[last:start], key]
        last = end
        if len(quote.split()) >= 2:
            inner.append(quote.capitalize() if quote.isupper() else quote)
    pieces.append(text[last:])
    return "".join(pieces), mapping, inner


def _conjuncts(token) -> list:  # noqa: ANN001 - spacy Token
    return [token, *token.conjuncts]


def _phrase(token, mapping: dict[str, str]) -> str:  # noqa: ANN001
    """The noun phrase headed by `token`: from its leftmost kept modifier to the head, so
    hyphens and possessives stay as written ("on-screen text", "sister's dog")."""
    if token.text in mapping:
        return mapping[token.text]
    if token.lower_ in FIRST_PERSON:
        return "I"
    start = token.i
    frontier = [token]
    while frontier:
        head = frontier.pop()
        for child in head.children:
            if child.i < token.i and child.dep_ in _MODIFIERS and not (child.dep_ == "poss" and child.pos_ == "PRON"):
                start = min(start, child.i)
                frontier.append(child)
    doc = token.doc
    while start >= 2 and doc[start - 1].text == "-" and not doc[start - 2].whitespace_:
        start -= 2
    while start < token.i and (doc[start].pos_ in ("DET", "PRON") or doc[start].is_punct):
        start += 1
    span = doc[start : token.i + 1]
    phrase = "".join(mapping[t.text] + t.whitespace_ if t.text in mapping else t.text_with_ws for t in span).strip()
    return phrase if token.pos_ == "PROPN" or phrase.isupper() else phrase.lower()


def _subjects(verb) -> tuple[list, bool]:  # noqa: ANN001
    """Subject tokens of a verb (inherited from the first verb of a coordination) and whether it is passive."""
    subjects = [t for c in verb.children if c.dep_ in _SUBJECTS for t in _conjuncts(c)]
    passive = any(c.dep_ in ("nsubjpass", "auxpass") for c in verb.children)
    head = verb
    while not subjects and head.dep_ in ("conj", "xcomp") and head.head is not head:
        head = head.head
        subjects = [t for c in head.children if c.dep_ in _SUBJECTS for t in _conjuncts(c)]
    return subjects, passive


def _relation(verb) -> str:  # noqa: ANN001
    words = [verb.lemma_.lower()]
    words += [c.lower_ for c in verb.children if c.dep_ == "prt"]
    negated = any(c.dep_ == "neg" for c in verb.children)
    return ("not " if negated else "") + " ".join(words)


def _verb_triplets(verb, mapping: dict[str, str]) -> Iterable[Triplet]:  # noqa: ANN001
    subjects, passive = _subjects(verb)
    relation = _relation(verb)
    objects = [t for c in verb.children if c.dep_ in _OBJECTS and c.pos_ != "VERB" for t in _conjuncts(c)]
    objects += [c for c in verb.children if c.dep_ == "npadvmod" and c.text in mapping]
    preps = [(c.lower_, t) for c in verb.children if c.dep_ == "prep" for p in c.children if p.dep_ == "pobj" for t in _conjuncts(p)]
    agents = [t for c in verb.children if c.dep_ == "agent" for p in c.children if p.dep_ == "pobj" for t in _conjuncts(p)]
    if passive and agents:
        subjects, objects = agents, subjects
    for subject in subjects:
        s = _phrase(subject, mapping)
        for obj in objects:
            yield Triplet(subject=s, relation=relation, object=_phrase(obj, mapping))
        for prep, obj in preps:
            yield Triplet(subject=s, relation=f"{relation} {prep}", object=_phrase(obj, mapping))


def triplets_of_docs(docs: Iterable, mappings: Sequence[dict[str, str]]) -> list[list[Triplet]]:
    out = []
    for doc, mapping in zip(docs, mappings):
        found = []
        for token in doc:
            if token.pos_ in ("VERB", "AUX") and token.dep_ not in ("aux", "auxpass"):
                found.extend(_verb_triplets(token, mapping))
        out.append(found)
    return out


def _units(texts: Sequence[str]) -> tuple[list[int], list, list[dict[str, str]]]:
    """Each text and each quote in it worth parsing alone: (text index, parsed doc, quote map)."""
    units: list[tuple[int, str, dict[str, str]]] = []
    for i, text in enumerate(texts):
        outer, mapping, inner = _unit_texts(script_parts(text).latin)
        units.append((i, outer, mapping))
        units.extend((i, quote, {}) for quote in inner)
    return [u[0] for u in units], _parse([u[1] for u in units]), [u[2] for u in units]


def _parse(texts: list[str]) -> list:
    """spaCy docs of `texts`, parsing only those not parsed recently (repeats are common:
    a still scene gives the same caption clip after clip)."""
    missing = list(dict.fromkeys(t for t in texts if t not in _parsed))
    nlp = load_spacy()
    for group in _by_characters(missing):
        for text, doc in zip(group, nlp.pipe(group, batch_size=len(group))):
            doc.tensor = doc.tensor[:0].copy()  # the tagger's activations, 40% of a kept parse; no rule reads them
            _parsed[text] = doc
    for text in texts:
        _parsed.move_to_end(text)
    docs = [_parsed[t] for t in texts]
    while len(_parsed) > PARSE_CACHE:
        _parsed.popitem(last=False)
    return docs


def _by_characters(texts: list[str]) -> list[list[str]]:
    """`texts` in order, cut into groups of at most `PARSE_BATCH_CHARACTERS` (a longer text alone)."""
    groups: list[list[str]] = []
    size = 0
    for text in texts:
        if not groups or size + len(text) > PARSE_BATCH_CHARACTERS:
            groups.append([])
            size = 0
        groups[-1].append(text)
        size += len(text)
    return groups


def _doc_entities(doc, mapping: dict[str, str]) -> Iterable[str]:  # noqa: ANN001
    yield from mapping.values()
    for chunk in doc.noun_chunks:
        root = chunk.root
        if root.pos_ == "PRON" and root.lower_ not in FIRST_PERSON:
            continue
        yield _phrase(root, mapping)
    for ent in doc.ents:
        if ent.label_ not in _COUNTING and ent.text not in mapping:
            yield "".join(mapping.get(t.text, t.text) + t.whitespace_ for t in ent).strip()


def entity_key(text: str) -> str:
    """Case- and punctuation-free form under which two spellings of an entity are one."""
    return " ".join(re.findall(r"\w+", text.casefold()))


def entities(texts: Sequence[str]) -> list[list[str]]:
    """Entities per text, in order of appearance, each once (compared by `entity_key`): the
    Latin names standing alone in another script first, then those of the parse."""
    owners, docs, mappings = _units(texts)
    result: list[list[str]] = [[] for _ in texts]
    seen: list[set[str]] = [set() for _ in texts]

    def add(i: int, name: str) -> None:
        key = entity_key(name)
        if key and key not in seen[i]:
            seen[i].add(key)
            result[i].append(name)

    for i, text in enumerate(texts):
        for name, _ in script_parts(text).names:
            add(i, name)
    for i, doc, mapping in zip(owners, docs, mappings):
        for name in _doc_entities(doc, mapping):
            add(i, name)
    return result


def conditioned(found: Sequence[Triplet], names: Sequence[str]) -> list[Triplet]:
    """The triplets whose subject or object is one of `names`."""
    keys = {entity_key(n) for n in names}
    return [t for t in found if entity_key(t.subject) in keys or entity_key(t.object) in keys]


def extract(texts: Sequence[str]) -> list[list[Triplet]]:
    """Triplets per text, in order of appearance, without duplicates."""
    owners, docs, mappings = _units(texts)
    per_unit = triplets_of_docs(docs, mappings)
    result: list[list[Triplet]] = [[] for _ in texts]
    seen: list[set[tuple[str, str, str]]] = [set() for _ in texts]
    for i, found in zip(owners, per_unit):
        for t in found:
            key = (t.subject.lower(), t.relation, t.object.lower())
            # a parse can make a word the object of its own verb ("I and Shure speak I laugh"):
            # an entity related to itself says nothing
            if key not in seen[i] and t.subject.strip() and t.object.strip() and entity_key(t.subject) != entity_key(t.object):
                seen[i].add(key)
                result[i].append(t)
    return result
