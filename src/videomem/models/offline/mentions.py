"""Object records from a caption's words (offline `extract_objects_from_text`), by spaCy.

For a clip whose caption was imported rather than seen, the people and things it mentions
are its object records:

* a **person** per PERSON entity of one to three words ("Alice", "Lucia Chen"), and per noun
  phrase headed by a word for a person ("the tall woman" → "tall woman");
* an **object** per other noun phrase headed by a common noun ("the small screwdriver" →
  "small screwdriver"), determiners and pronouns left out;
* appearance = the phrase's adjectives; value = the sentence that mentions it, as written, or
  of a sentence longer than `LONG_SENTENCE` words the clause (between commas, semicolons or
  colons) that mentions it: a word-by-word translation strings a 30-s caption's clauses into
  one sentence, which every mention in it would otherwise repeat as its value.

Each entity is listed once per caption (its first mention), at most `MAX_RECORDS`. Of a caption
written in another script (EgoLifeCap's Chinese), the English model reads only its Latin-script
sentences (quoted speech); a capitalised Latin word standing alone inside the other script is a
record of its own (a person when written as a name, 'Katrina'; else an object, 'PPT') whose value
is its clause (`nlp.script_parts`).
"""

from __future__ import annotations

from collections.abc import Sequence

from videomem.models.offline.nlp import ScriptParts, load_spacy, script_parts
from videomem.models.tasks.objects import ObjectRecord

MAX_RECORDS = 12
"""Records per caption at most: a dense caption names a handful of things, a list more."""
PERSON_WORDS = frozenset({
    "person", "people", "man", "men", "woman", "women", "boy", "boys", "girl", "girls", "child", "children",
    "kid", "kids", "guy", "friend", "friends", "someone", "somebody", "everyone", "lady", "gentleman",
})
_SKIP_DETERMINERS = {"det", "poss", "predet"}
LONG_SENTENCE = 30
"""Words in a sentence beyond which a mention's value is its clause only."""
_CLAUSE_MARKS = frozenset(",;:")


def records_from_captions(captions: Sequence[str]) -> list[list[ObjectRecord]]:
    nlp = load_spacy()
    parts = [script_parts(" ".join(c.split())) for c in captions]
    return [_records(doc, part) for doc, part in zip(nlp.pipe([p.latin for p in parts]), parts)]


def _records(doc, parts: ScriptParts) -> list[ObjectRecord]:  # noqa: ANN001 - spacy Doc
    found: dict[str, ObjectRecord] = {}
    for name, clause in parts.names:
        kind = "person" if name[1:].islower() and len(name) > 1 else "object"
        if name.casefold() not in found and len(found) < MAX_RECORDS:
            found[name.casefold()] = ObjectRecord(name=name, kind=kind, value=clause)
    people = [e for e in doc.ents if e.label_ == "PERSON" and 1 <= len(e) <= 3 and all(t.is_alpha for t in e)]
    taken = {t.i for e in people for t in e}
    mentions = [(e.start, e.text, "person", [], _value(e)) for e in people]
    for chunk in doc.noun_chunks:
        root = chunk.root
        if root.pos_ not in ("NOUN", "PROPN") or root.i in taken or root.ent_type_ == "PERSON":
            continue
        words = [t for t in chunk if t.dep_ not in _SKIP_DETERMINERS and not t.is_punct and t.pos_ != "PRON"]
        name = " ".join(t.text for t in words).strip()
        if not name:
            continue
        kind = "person" if root.lemma_.lower() in PERSON_WORDS else "object"
        appearance = [t.text for t in words if t.dep_ == "amod"]
        mentions.append((chunk.start, name, kind, appearance, _value(chunk)))
    for _, name, kind, appearance, sentence in sorted(mentions, key=lambda m: m[0]):
        key = name.casefold()
        if key not in found and len(found) < MAX_RECORDS:
            found[key] = ObjectRecord(name=name, kind=kind, appearance=appearance, value=sentence.strip())
    return list(found.values())


def _value(span) -> str:  # noqa: ANN001 - spacy Span
    """The sentence that holds `span`, or its clause when the sentence is long."""
    sentence = span.sent
    if len(sentence) <= LONG_SENTENCE:
        return sentence.text
    start, end = span.start, span.end
    while start > sentence.start and span.doc[start - 1].text not in _CLAUSE_MARKS:
        start -= 1
    while end < sentence.end and span.doc[end].text not in _CLAUSE_MARKS:
        end += 1
    return span.doc[start:end].text
