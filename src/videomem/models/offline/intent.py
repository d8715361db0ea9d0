"""What a question asks for — a count, an order, a duration, a time, a person, a state — read
from its parse, not from any benchmark's phrasing.

English marks these with its interrogative phrase, whatever else the question says: "how" with
a quantity word asks for a count ("how many", "how often", "how frequently"); "how long" for a
duration, or for a time when the question also says "ago"; a unit of time counted ("how many
minutes") for a duration too; "when" / "what time" / "what day" for a time; "who" / "whom" /
"whose" for a person; "where" for a state (where something is). A question that weighs one
happening against another — a comparative or superlative of time ("earlier", "first", "later")
or "before" / "after", together with an alternative ("or") — asks for an order. A question with
none of these (what, why, which thing) has no intent here: it is answered by content.
"""

from __future__ import annotations

from typing import Literal

from videomem.models.offline.nlp import load_spacy

Intent = Literal["count", "order", "duration", "when", "who", "state"]
_QUANTITY = frozenset({"many", "much", "often", "frequently"})
_TIME_UNITS = frozenset({"second", "minute", "hour", "day", "week", "month", "year"})
_TIME_NOUNS = frozenset({"time", "day", "hour", "date", "moment", "point"})
_TEMPORAL = frozenset({"early", "late", "soon", "first", "last", "before", "after", "previously", "then"})
_TEMPORAL_FORMS = frozenset({"earlier", "earliest", "later", "latest", "sooner", "soonest"})
"""Comparatives and superlatives the lemmatiser may leave as they are."""


def question_intent(question: str) -> Intent | None:
    """The intent of a question, or None when its interrogative phrase names none."""
    doc = load_spacy()(question)
    tokens = [t for t in doc if not t.is_punct]
    lower = [t.lower_ for t in tokens]
    lemma = [t.lemma_.lower() for t in tokens]
    ago = "ago" in lower
    for i, word in enumerate(lower):
        following = lower[i + 1] if i + 1 < len(lower) else ""
        if word == "how":
            if following == "long":
                return "when" if ago else "duration"
            if following in _QUANTITY:
                unit = lemma[i + 2] if i + 2 < len(lemma) else ""
                if unit in _TIME_UNITS:
                    return "when" if ago else "duration"
                return "count"
        if word == "when" or (word in ("what", "which") and lemma[i + 1 : i + 2] and lemma[i + 1] in _TIME_NOUNS):
            return "order" if _weighs_two(tokens) else "when"
        if word in ("who", "whom", "whose"):
            return "who"
        if word == "where":
            return "state"
    return "order" if _weighs_two(tokens) else None


def _weighs_two(tokens: list) -> bool:
    """An alternative ("or") and a word that places one thing in time relative to another."""
    if not any(t.lower_ == "or" for t in tokens):
        return False
    return any(t.lower_ in _TEMPORAL_FORMS or (t.lemma_.lower() in _TEMPORAL and t.tag_ in ("JJR", "RBR", "JJS", "RBS", "IN", "RB", "JJ"))
               for t in tokens)
