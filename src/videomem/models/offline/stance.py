"""When two semantic triplets say the same thing, and when a newer one contradicts an older one.

The offline consolidation has no reader to judge "I dislike tea" against "I like tea", so it
uses a general rule over the relation's lemmas:

* **Same knowledge**: the triplet read as a sentence has the same lemmas ("I drank coffee" and
  "I drink coffee").
* **Stance family**: a relation speaks of a preference when one of its lemmas is a liking or
  aversion verb (`LIKING`, `AVERSION`); any other relation's family is its lemmas without
  habit adverbs and negations ("usually drink" and "never drink" are both "drink").
* **Polarity**: negative when a lemma is an aversion verb or a negation.
* **Contradiction**: same subject and family, and either the same object with the opposite
  polarity ("like tea" → "dislike tea"), or a related object (the caller decides, by meaning)
  where the newer relation is exclusive (`EXCLUSIVE`: "prefer", "usually", ...) and both are
  positive ("like tea" → "prefers coffee"). Different but compatible knowledge ("like tea",
  "like cake"; "like tea", "prefers cycling") stands.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from videomem.models.tasks.episodic import Triplet
from videomem.models.offline.nlp import lemmas, lemmas_of

LIKING = frozenset({"like", "love", "enjoy", "prefer", "favour", "favor", "favourite", "favorite", "adore", "fond"})
AVERSION = frozenset({"dislike", "hate", "detest", "avoid", "loathe"})
NEGATION = frozenset({"not", "never", "no", "nt", "n't", "stop", "quit"})
HABIT_ADVERBS = frozenset(
    {"usually", "often", "always", "normally", "typically", "generally", "regularly", "frequently", "sometimes",
     "mostly", "rarely", "seldom"}
)
EXCLUSIVE = frozenset({"prefer", "favourite", "favorite", "usually", "always", "normally", "mostly", "typically"})


def _lemma_text(text: str) -> str:
    return " ".join(lemmas(text))


def triplet_keys(triplets: Sequence[Triplet]) -> list[str]:
    """Each triplet read as one sentence, in lemmas (parsed together, so "drank" is a verb):
    equal keys state the same knowledge. The sentences are tagged together."""
    return [" ".join(said) for said in lemmas_of([f"{t.subject} {t.relation} {t.object}" for t in triplets])]


def read_parts(triplets: Sequence[Triplet]) -> None:
    """Lemmatise the subjects, relations and objects of `triplets` together, so that the rules
    below, which read them one at a time, find them read (a consolidation compares hundreds)."""
    lemmas_of([part for t in triplets for part in (t.subject, t.relation, t.object)])


def family(relation: str) -> str:
    said = lemmas(relation)
    if set(said) & (LIKING | AVERSION):
        return "preference"
    return " ".join(w for w in said if w not in HABIT_ADVERBS | NEGATION)


def negative(relation: str) -> bool:
    return bool(set(lemmas(relation)) & (AVERSION | NEGATION))


def contradicts(new: Triplet, old: Triplet, related: Callable[[str, str], bool]) -> bool:
    """Whether `new`, observed later, retires `old` (see the module docstring); `related(a, b)`:
    whether two different objects are alternatives of one kind (tea, coffee)."""
    if _lemma_text(new.subject) != _lemma_text(old.subject) or family(new.relation) != family(old.relation):
        return False
    if _lemma_text(new.object) == _lemma_text(old.object):
        return negative(new.relation) != negative(old.relation)
    exclusive = bool(set(lemmas(new.relation)) & EXCLUSIVE)
    positive = not negative(new.relation) and not negative(old.relation)
    return exclusive and positive and related(new.object, old.object)
