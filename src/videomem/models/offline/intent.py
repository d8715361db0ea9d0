"""What a question asks for — a count, an order, a duration, a time, a person, a state — read
from its parse, not from any benchmark's phrasing.

English marks these with its interrogative phrase, whatever else the question says: "how" with
a quantity word asks for a count ("how many", "how often", "how frequently"); "how long" for a
duration, or for a time when the question also says "ago" or "since" (the time from a happening
up to now); a unit of time counted ("how many minutes") or "how much time" for a duration too; "when" / "what time" / "what day" for a time; "who" / "whom" /
"whose" for a person; "where" for a state (where something is). A question that weighs one
happening against another — a comparative or superlative of time ("earlier", "first", "later")
or "before" / "after", together with an alternative ("or") — asks for an order. A question with
none of these (what, why, which thing) has no intent here: it is answered by content. "Which" or
"what" asking for a person noun ("which person", "what guest") asks for a person, as "who" does.

Apart from the intent, a question may ask for one end of the timeline (`time_position`): the
first, earliest, original, initial occurrence, or the last, latest, final, most recent, current
one — by a word that places a happening at an end of time, or by a phrase naming the start or
the end ("at the very start", "to begin with", "in the end") — or an occasion counted from one
end by an ordinal ("the second time", "the third occasion", "the second-to-last time", "the
penultimate visit"), or a place in the sequence of the happenings the options name ("which did I
do second?", "the third thing I did").

A question may also be placed in time by another happening (`placing_clause`): a clause its
conjunction opens ("when the bell rang", "while we ate", "right before she locked the gate") or
"before" / "after" with a happening said of its verb or put before the question ("just after
feeding the goats", "after lunch, who washed up?"). A "where" said of "be" asks where something
is at a moment (`asks_whereabouts`: "right after my coffee, where were the keys?"), not what
was done then ("where did I put them?"). And it may ask about a part of the recording, its middle or a part from one end
(`recording_part`). A "when" that opens
such a clause does not ask for a time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from videomem.models.offline.daytime import MEALS, PERIODS
from videomem.models.offline.nlp import WEARER, lemmas, load_spacy, number_value, unit_seconds

Intent = Literal["count", "order", "duration", "when", "who", "state"]
End = Literal["earliest", "latest"]
_PERSON_NOUNS = frozenset(
    {"person", "people", "man", "woman", "boy", "girl", "guy", "friend", "guest", "colleague", "member", "participant",
     "speaker", "roommate", "housemate", "neighbour", "neighbor", "child", "kid", "adult", "individual"}
)
_EARLIEST_WORDS = frozenset({"first", "firstly", "earliest", "initially", "initial", "originally", "original", "soonest"})
_PRESENT_ADVERBS = frozenset({"now", "currently", "presently"})
"""Adverbs of the present: the latest occurrence ("where is it now?"), or said of what goes on
as the question is asked (`marks_present`)."""
_LATEST_WORDS = frozenset(
    {"last", "lastly", "latest", "final", "finally", "recent", "recently", "lately", "newest", "eventually",
     "ultimately", "current", "nowadays"}
) | _PRESENT_ADVERBS
_STOP_VERBS = frozenset({"stop", "quit"})
"""Verbs whose gerund names an old habit ("what did I stop eating?")."""
_CHANGE_VERBS = frozenset({"switch", "change", "replace", "swap"})
"""Verbs of a change whose "to" / "with" names the new thing."""
_ORDINALS = {"second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
             "tenth": 10, "2nd": 2, "3rd": 3, "4th": 4, "5th": 5, "6th": 6, "7th": 7, "8th": 8, "9th": 9, "10th": 10}
"""Ordinals past the first, which place an occasion inside the timeline rather than at an end."""
_OCCASION_NOUNS = frozenset({"time", "occasion", "instance", "visit", "trip", "attempt", "round"})
"""Nouns an ordinal counts occasions of the question's happening by ("the second time I cooked")."""
_SEQUENCE_NOUNS = frozenset({"thing", "activity", "task", "chore", "step", "event", "happening"})
"""Nouns an ordinal counts the different happenings by ("the second thing I did")."""
_START_NOUNS = frozenset({"start", "beginning", "outset", "onset"})
_END_NOUNS = frozenset({"end", "close", "finish"})
_BOUNDARY_PREPOSITIONS = frozenset({"at", "in", "from", "by", "towards", "toward", "near"})
_START_VERBS = frozenset({"begin", "start"})
_SEQUENCE_WORDS = frozenset({"order", "sequence", "succession"})
_NOW_NOUNS = frozenset({"moment", "present"})
"""Nouns of "at the moment", "at present": now, the latest occurrence."""
PRESENT_CUES = _PRESENT_ADVERBS | _NOW_NOUNS
"""`TimePosition.words` that name the present itself: "where is the umbrella now?" asks for the
latest occurrence, not for the one before the occasion in progress."""
_A_WHILE = frozenset({"while", "moment", "bit", "second", "seconds", "minute", "minutes"})
"""Nouns of a short, unmeasured time back ("a little while ago", "a minute ago", "a few minutes
ago"): the latest occurrence, as "just now" is; not "an hour ago" (a place in time), "two
minutes ago" (an amount) nor "how long ago"."""
_FEW = frozenset({"a", "an", "little", "few", "couple", "of", "short", "brief"})
"""Words before such a noun that keep the time short and unmeasured ("a few", "a couple of")."""
_ABSENT = frozenset({"away", "gone", "absent", "missing", "out"})
"""Words saying someone or something was not there ("how long was the car gone?")."""
_STAY_VERBS = frozenset({"stay", "remain", "keep", "be", "go", "take"})
"""Verbs before an absence word that say nothing of who was away ("how long did Ravi stay away?")."""
_OPEN_VERBS = frozenset({"open", "commence"})
_END_VERBS = frozenset({"end", "finish", "conclude", "close"})
_MIDDLE_NOUNS = frozenset({"middle", "midpoint"})
_MIDWAY = frozenset({"halfway", "midway"})
_PART_SHARES = {"half": 1 / 2, "third": 1 / 3, "quarter": 1 / 4, "part": 1 / 3, "section": 1 / 3, "segment": 1 / 3,
                "portion": 1 / 3}
"""A part of the recording named from one end, and the share of it that the part is."""
_PART_SIDES: dict[str, End] = {
    "first": "earliest", "opening": "earliest", "early": "earliest", "earlier": "earliest", "initial": "earliest",
    "former": "earliest", "beginning": "earliest", "last": "latest", "final": "latest", "closing": "latest",
    "late": "latest", "later": "latest", "latter": "latest", "second": "latest", "concluding": "latest",
    "ending": "latest"}
"""Words naming the end of the recording a part lies at ("the second half" is the later one)."""
PART_WORDS = frozenset(_PART_SHARES) | frozenset(_PART_SIDES) | _MIDDLE_NOUNS | _MIDWAY
"""Words by which a question names a part of the recording (`recording_part`): cues, not content."""
_UNIT_NOUNS = frozenset({"second", "minute", "hour"})
_SUMMARY_WORDS = frozenset({"summary", "summarize", "summarise", "overview", "gist", "recap", "synopsis"})
_MOSTLY = frozenset({"mainly", "mostly", "overall", "largely", "chiefly", "primarily", "predominantly"})
_MAIN = frozenset({"main", "primary", "central", "overall", "general"})
_HAPPEN = frozenset({"happen", "occur", "unfold"})
_TOPIC_NOUNS = frozenset({"topic", "theme", "idea", "activity", "content", "focus", "subject"})
_RELATIVE_DAYS = frozenset({"today", "yesterday", "tonight"})
_RELATIVE_PARTS = frozenset({"this", "last", "yesterday"})
"""Words before a part of the day that place it relative to now ("this morning", "last night")."""
_SPAN_PREPOSITIONS = frozenset({"before", "after", "since", "until", "till"})
_MOVE_VERBS = frozenset({"move", "shift", "relocate"})
_DESTINATIONS = frozenset({"to", "into", "onto", "in", "on", "under", "inside", "behind", "beside", "by", "near", "next",
                           "from", "off", "out", "above", "below", "over", "towards", "toward", "between"})
"""Prepositions that say where a thing was moved to or from ("move the keys to the shelf")."""
_AT_MEAL = frozenset({"at", "during", "over", "through"})
"""Prepositions that put what is asked at a meal ("during lunch")."""
_MEAL_VERBS = frozenset({"have", "eat", "cook", "make", "drink", "serve"})
"""Verbs whose "for dinner" is the meal itself ("what did we eat for dinner?"), not what it is
for ("what did I buy for dinner?")."""
_RECORDING_NOUNS = frozenset({"video", "recording", "clip", "footage", "film", "movie", "show", "episode", "stream"})
"""Nouns that name the recording itself ("the middle of the video")."""
_STRETCHES = _RECORDING_NOUNS | frozenset(PERIODS) | frozenset(_PART_SHARES) | frozenset(
    {"day", "hour", "minute", "part", "half", "section", "segment", "stretch", "session", "today", "yesterday"})
"""What "describes" may be said of for a summary: the recording or a stretch of time."""
_STRETCH_NOUNS = frozenset({"start", "beginning", "end", "middle", "midpoint", "half", "part", "rest", "remainder",
                            "course", "minute", "second", "moment", "portion", "section"})
"""Nouns of a stretch of the recording ("the last few minutes of the video")."""
SPEECH_VERBS = frozenset(
    {"say", "tell", "mention", "speak", "talk", "ask", "hear", "announce", "reply", "whisper", "shout", "suggest",
     "propose", "explain", "remind", "complain", "discuss", "recommend", "comment", "remark", "claim", "joke", "chat"}
)
"""English verbs of speech (lemmas)."""
_SPEECH_PHRASAL = frozenset({("bring", "up"), ("point", "out"), ("speak", "up"), ("call", "out")})
"""Verb + particle pairs that mean saying something."""
SPEECH_CUES = SPEECH_VERBS | {verb for verb, _ in _SPEECH_PHRASAL}
"""Lemmas that say a question is about speech: not content to look for in what was said."""
_QUANTITY = frozenset({"many", "much", "often", "frequently"})
_TIME_UNITS = frozenset({"second", "minute", "hour", "day", "week", "month", "year"})
_TIME_NOUNS = frozenset({"time", "day", "hour", "date", "moment", "point"})
DAY_NOUNS = frozenset({"day", "night", "morning", "afternoon", "evening", "week"})
"""Nouns whose ordinal names a day or a part of one, not an occurrence."""
_TEMPORAL = frozenset({"early", "late", "soon", "first", "last", "before", "after", "previously", "then"})
_TEMPORAL_FORMS = frozenset({"earlier", "earliest", "later", "latest", "sooner", "soonest"})
"""Comparatives and superlatives the lemmatiser may leave as they are."""
LIGHT_VERBS = frozenset({"use", "utilise", "utilize"})
"""Verbs that name no action of their own: the knife was "used" whenever something was done
with it (cut with, picked up), and a caption says what was done."""
_MODIFIER_DEPS = frozenset({"prep", "amod", "acl", "relcl", "appos"})
"""Dependencies by which a phrase describes a noun (which one is meant), not the happening."""


@lru_cache(maxsize=1024)
def _parse(question: str):  # noqa: ANN202 - spacy.tokens.Doc
    """One parse per question: the intent, the end of time and the scorer all read it."""
    return load_spacy()(question)


def question_intent(question: str) -> Intent | None:
    """The intent of a question, or None when its interrogative phrase names none."""
    doc = _parse(question)
    tokens = [t for t in doc if not t.is_punct]
    lower = [t.lower_ for t in tokens]
    lemma = [t.lemma_.lower() for t in tokens]
    # "ago", or "since" a happening with nothing after it: the time from then up to now
    ago = "ago" in lower or "since" in lower
    for i, word in enumerate(lower):
        following = lower[i + 1] if i + 1 < len(lower) else ""
        if word == "how":
            if following == "long":
                return "when" if ago else "duration"
            if following in _QUANTITY:
                unit = lemma[i + 2] if i + 2 < len(lemma) else ""
                if unit in _TIME_UNITS or (following == "much" and unit == "time"):
                    return "when" if ago else "duration"
                return "count"
        if word == "when" and _opens_clause(tokens[i]):
            continue  # "what was she doing when he came in?": a clause placing the question, not asking a time
        if word == "when" or (word in ("what", "which") and lemma[i + 1 : i + 2] and lemma[i + 1] in _TIME_NOUNS):
            return "order" if _weighs_two(tokens) else "when"
        if word in ("who", "whom", "whose") or (word in ("which", "what") and lemma[i + 1 : i + 2]
                                                  and lemma[i + 1] in _PERSON_NOUNS):
            return "who"
        if word == "where":
            return "state"
    if _weighs_two(tokens):
        return "order"
    return "count" if any(_asks_number(t) for t in tokens) else None


def _opens_clause(token) -> bool:  # noqa: ANN001 - spacy.tokens.Token
    """Whether a "when" / "while" opens a clause that places the question ("when he came in")
    rather than asks: the parse hangs its verb on another (an adverbial clause), and no verb
    follows it at once as in a question's inverted order ("…, when was the last time …?", which
    the parser may hang on the sentence before it)."""
    after = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
    return token.head.dep_ == "advcl" and not (after is not None and after.pos_ == "AUX")


def counted_unit(question: str) -> str | None:
    """The unit of time a question counts ("how many minutes …", "for how many hours …"), whose
    options may be bare numbers ("4"); None when it counts none."""
    counted = _counted_time(question)
    return counted[0].lemma_.lower() if counted else None


def _counted_time(question: str):  # noqa: ANN202 - (spacy.tokens.Token, Token | None) | None
    """The unit token of "how many <unit of time>" and the word after it (punctuation aside)."""
    tokens = [t for t in _parse(question) if not t.is_punct]
    for i, (how, many, unit) in enumerate(zip(tokens, tokens[1:], tokens[2:])):
        if how.lower_ == "how" and many.lower_ == "many" and unit.lemma_.lower() in _TIME_UNITS:
            return unit, (tokens[i + 3] if i + 3 < len(tokens) else None)
    return None


def asks_sequence(question: str) -> bool:
    """Whether the question asks for the order of several happenings: "in what order …?", "the
    sequence of events", "chronologically" (not "what did she order?", a verb)."""
    doc = _parse(question)
    return any((t.pos_ == "NOUN" and t.lemma_.lower() in _SEQUENCE_WORDS and not _in_order_to(t))
               or t.lower_ == "chronologically" for t in doc)


def _in_order_to(token) -> bool:  # noqa: ANN001 - spacy.tokens.Token
    """"in order to": a purpose, not an order."""
    doc = token.doc
    return 0 < token.i < len(doc) - 1 and doc[token.i - 1].lower_ == "in" and doc[token.i + 1].lower_ == "to"


def counted_thing(question: str) -> str | None:
    """The thing a question counts, as a lemma ("how many clothes hangers …" → "hanger", "how
    many pairs of gloves …" → "pair"); None when it counts occasions ("how many times"), units of
    time or people, which are counted otherwise, or nothing."""
    for token in _parse(question):
        if token.lower_ == "many" and token.i and token.doc[token.i - 1].lower_ == "how" and token.dep_ == "amod" \
                and token.head.pos_ in ("NOUN", "PROPN"):
            thing = token.head.lemma_.lower()
            return None if thing in _OCCASION_NOUNS | _TIME_UNITS | _PERSON_NOUNS | {"other"} else thing
    return None


def moved_thing(question: str) -> tuple[str, str] | None:
    """The verb and the thing of a count of how often a thing was moved ("how many times did I
    move the keys on DAY2?" → ("move", "key"), "how often were the chairs shifted?"), lemmas;
    None when the question says where it went ("move the keys to the shelf": moves to one place,
    counted as any happening is) or counts nothing moved."""
    if question_intent(question) != "count":
        return None
    for token in _parse(question):
        if token.pos_ != "VERB" or token.lemma_.lower() not in _MOVE_VERBS:
            continue
        # the parser may take "were shifted" for active with "chairs" its subject
        passive = any(c.dep_ in ("aux", "auxpass") and c.lemma_.lower() == "be" for c in token.children) \
            or (token.tag_ == "VBN" and token.head.lemma_.lower() == "be")
        things = [c for c in token.children if (c.dep_ in ("dobj", "nsubjpass") or (passive and c.dep_ == "nsubj"))
                  and c.pos_ in ("NOUN", "PROPN") and not any(m.lower_ == "many" for m in c.children)]
        places = [c for t in (token, *things) for c in t.children
                  if c.dep_ == "prep" and c.lower_ in _DESTINATIONS and not _names_time(c)]
        if things and not places:
            return token.lemma_.lower(), things[0].lemma_.lower()
    return None


def counts_people(question: str) -> bool:
    """Whether the question counts people: "how many (different) people / friends / others …",
    "how many of us …", "the number of guests …"."""
    for token in _parse(question):
        if token.lower_ == "many" and token.i and token.doc[token.i - 1].lower_ == "how":
            if token.dep_ == "amod" and token.head.lemma_.lower() in _PERSON_NOUNS | {"other"}:
                return True
            if any(c.lower_ == "of" and any(p.lower_ in ("us", "them", "you") for p in c.children) for c in token.children):
                return True
        if token.lemma_.lower() == "number" and _asks_number(token) and any(
                c.lower_ == "of" and any(p.lemma_.lower() in _PERSON_NOUNS for p in c.children) for c in token.children):
            return True
        if token.lemma_.lower() == "count" and _asks_number(token) and any(
                c.dep_ == "dobj" and c.lemma_.lower() in _PERSON_NOUNS for c in token.children):
            return True
    return False


def absent_words(question: str) -> frozenset[str] | None:
    """For "how long was the grey car gone?", "for how long was Jonas away from home?": the
    lemmas of who or what was away (the content words before the word that says so: "away",
    "gone", "absent", "missing", "out"; not "long" nor a verb of staying); None for any other
    question, or when they name no one ("how long were we out?"). The tagger may read a name
    there as a verb ("was Ama away"), so parts of speech are not asked."""
    if question_intent(question) != "duration":
        return None
    tokens = [t for t in _parse(question) if not t.is_punct]
    for i, token in enumerate(tokens):
        if token.lower_ in _ABSENT and token.dep_ != "prt":  # not "sort out the drawer"
            said = frozenset(t.lemma_.lower() for t in tokens[:i] if not t.is_stop and t.pos_ != "AUX"
                             and t.lower_ != "long" and t.lemma_.lower() not in _STAY_VERBS)
            return said or None
    return None


def adverb_places(question: str) -> frozenset[str]:
    """"inside" and "outside" said of a verb with nothing after them ("who brought the box
    inside?", "when did the dog go outside?"): where something went, content to look for, unlike
    a place a preposition opens ("inside the box"), which an option as easily holds."""
    return frozenset(t.lower_ for t in _parse(question)
                     if t.lower_ in ("inside", "outside") and not any(c.dep_ == "pobj" for c in t.children))


def counts_into(question: str) -> bool:
    """Whether the unit a question counts measures a place in the recording, not a duration:
    "how many minutes into the video …?", "how many seconds in does …?"."""
    counted = _counted_time(question)
    if counted is None or counted[1] is None:
        return False
    after = counted[1]
    objects = [c for c in after.children if c.dep_ == "pobj"]
    if after.lower_ == "into" and all(o.lemma_.lower() in _RECORDING_NOUNS for o in objects):
        return True
    # "how many seconds in does …": the parser may take the verb's auxiliary for the object of "in"
    return after.lower_ == "in" and all(o.pos_ in ("AUX", "VERB") for o in objects)


def _asks_number(token) -> bool:  # noqa: ANN001 - spacy.tokens.Token
    """"the number of times …", "the number of people …", or the imperative "count the times …"."""
    if token.lemma_.lower() == "number":
        return any(c.dep_ == "prep" and c.lower_ == "of" for c in token.children) \
            and not any(c.dep_ == "compound" for c in token.children)  # not "the phone number of"
    return token.lemma_.lower() == "count" and token.i == 0  # an imperative opens the sentence


def _weighs_two(tokens: list) -> bool:
    """An alternative ("or") and a word that places one thing in time relative to another."""
    if not any(t.lower_ == "or" for t in tokens):
        return False
    return any(t.lower_ in _TEMPORAL_FORMS or (t.lemma_.lower() in _TEMPORAL and t.tag_ in ("JJR", "RBR", "JJS", "RBS", "IN", "RB", "JJ"))
               for t in tokens)


def modifier_words(question: str) -> frozenset[str]:
    """Lemmas of the words that only pick out a thing the question names, not the happening it
    asks about, and of light verbs (`LIGHT_VERBS`): "on the counter" in "when was the kettle on
    the counter last used?", "red" and "in the garage" in "when was the red bicycle in the garage
    last ridden?". A moment the kettle was filled is a moment it was used, whether or not its
    caption names the counter. A phrase attached to a noun of time ("the last time I used the
    knife") is the happening itself. A word also said outside any such phrase stays content."""
    modifier: set[str] = set()
    core: set[str] = set()
    for token in _parse(question):
        lemma = token.lemma_.lower()
        if token.is_punct or (token.is_stop and lemma not in LIGHT_VERBS):  # spaCy lists "used" as a stopword
            continue
        describes = any(
            t.dep_ in _MODIFIER_DEPS and t.head.pos_ in ("NOUN", "PROPN") and t.head.lemma_.lower() not in _TIME_NOUNS
            for t in (token, *token.ancestors)
        )
        (modifier if describes or lemma in LIGHT_VERBS else core).add(lemma)
    return frozenset(modifier - core)


def noun_lemmas(question: str) -> frozenset[str]:
    """Lemmas of the question's nouns ("calibration" in "the calibration board")."""
    return frozenset(t.lemma_.lower() for t in _parse(question) if t.pos_ == "NOUN")


@dataclass(frozen=True)
class TimePosition:
    """The end of the timeline a question asks about, and the words that said so (cue words,
    not content to look for in the evidence); `nth` counts from that end (2: "the second time",
    "the second-to-last time"). `sequence` says what is counted: the different happenings the
    options name ("which did I do second?", "the third thing I did") rather than the occasions
    of the one happening the question names ("where did I eat the second time?")."""

    end: End
    words: frozenset[str]
    nth: int = 1
    sequence: bool = False
    change: bool = False
    """Whether the words speak of a habit that changed ("used to", "these days"): the end is of
    the days, even where the question names a part of the day ("what did I use to drink in the
    morning?"), not the earliest or latest hour of it."""


def time_position(question: str) -> TimePosition | None:
    """Whether the question asks for the earliest or the latest occurrence; None when it asks
    for neither, or for both ("first or last" weighs two ends: an order, not a position).

    "last" is a verb, not a position, in a question about how long something lasted; an
    ordinal of a day ("the first day", "last night") names a day (`daytime.question_window`),
    one of a part of the recording names that part ("the last part of the video",
    `recording_part`), and one of a thing that is not an occasion names that thing ("the second
    floor"). The recording's own verb of an end asks for that end ("how does the video end?");
    a short, unmeasured time back, "a little while ago", asks for the latest (`_a_while`)."""
    tokens = [t for t in _parse(question) if not t.is_punct]
    lower = [t.lower_ for t in tokens]
    duration = question_intent(question) == "duration"
    found: dict[End, set[str]] = {"earliest": set(), "latest": set()}
    changed = False
    counted = _ordinal(tokens)
    if counted is not None:
        end, nth, sequence, said = counted
        return TimePosition(end, said, nth, sequence)
    for i, token in enumerate(tokens):
        word = lower[i]
        change = _habit_change(token)
        if change is not None:
            found[change].add(token.lemma_.lower())
            changed = True
            continue
        if token.head is not token and token.head.lemma_.lower() in DAY_NOUNS:
            continue  # "on the first day", "last night": which day, not which occurrence
        if _names_part(token):
            continue  # "the last part of the video": a stretch of the recording (`recording_part`)
        if word in _EARLIEST_WORDS:
            found["earliest"] |= {word, token.lemma_.lower()}
        elif word in _LATEST_WORDS and not (word == "last" and duration):
            found["latest"] |= {word, token.lemma_.lower()}
        elif token.lemma_.lower() in _START_NOUNS | _END_NOUNS and token.head.lower_ in _BOUNDARY_PREPOSITIONS \
                and any(t.lower_ == "the" for t in token.children):
            found["earliest" if token.lemma_.lower() in _START_NOUNS else "latest"].add(token.lemma_.lower())
        elif token.lemma_.lower() in _START_VERBS and i and lower[i - 1] == "to" and lower[i + 1 : i + 2] == ["with"]:
            found["earliest"].add(token.lemma_.lower())
        elif word == "ago" and (recent := _a_while(tokens[:i])):
            found["latest"] |= recent
        elif word in _NOW_NOUNS and i and lower[i - 1] in ("the", "at") and token.head.lower_ == "at" \
                and (token.i + 1 == len(token.doc) or token.doc[token.i + 1].is_punct):
            found["latest"].add(word)  # "at the moment?", "at present"; not "at the moment she left"
        elif token.lemma_.lower() in _START_VERBS | _OPEN_VERBS | _END_VERBS and any(
                c.dep_ in ("nsubj", "compound") and c.lemma_.lower() in _RECORDING_NOUNS for c in token.children):
            # "how does the video end?", "how does the clip open?": the recording's own ends
            found["latest" if token.lemma_.lower() in _END_VERBS else "earliest"].add(token.lemma_.lower())
    ends = [end for end, said in found.items() if said]
    if len(ends) != 1:
        return None
    return TimePosition(ends[0], frozenset(found[ends[0]]), change=changed)


def _a_while(before) -> set[str]:  # noqa: ANN001 - list of spacy.tokens.Token
    """The words of "a little while", "a few minutes" ending `before` (the words before an "ago"),
    with "ago"; empty when they say no short, unmeasured time ("two hours", "how many minutes")."""
    lower = [t.lower_ for t in before]
    if not lower or lower[-1] not in _A_WHILE:
        return set()
    start = len(lower) - 1
    while start and lower[start - 1] in _FEW:
        start -= 1
    if lower[start] not in ("a", "an"):  # "two minutes", "how many minutes": an amount
        return set()
    return {"ago", *(t.lower_ for t in before[start:]), *(t.lemma_.lower() for t in before[start:])}


Relation = Literal["during", "before", "after"]
_PLACING: dict[str, Relation] = {"when": "during", "while": "during", "as": "during", "whilst": "during",
                                 "before": "before", "until": "before", "till": "before", "after": "after",
                                 "once": "after"}
"""Words that open a clause placing a question by another happening, and where they place it."""


@dataclass(frozen=True)
class Placing:
    """A clause placing the question in time by another happening ("when the man walks in",
    "while we were eating", "right before she boils the pasta", "after feeding the cat", "after
    lunch"): what is asked happens during, before or after it. `text`: the clause's words but
    the one that opens it (the happening to find, not what is asked)."""

    relation: Relation
    text: str


def placing_clause(question: str) -> Placing | None:
    """The clause that places the question in time, read from the parse: a subordinate clause
    its conjunction opens ("when …", "while …", "before she …"), or "before" / "after" with a
    happening ("after feeding the cat", "before lunch") said of the verb, or put before the
    question ("right after my coffee, where were the keys?", which the parser may make the root
    and hang the question on). The happening is told without a time that places it ("my coffee",
    not "my coffee on the morning of DAY3": the time is the question's, and no caption of the
    happening says it). None for a question weighing two happenings ("before or after lunch?": an
    order) or asking a time or a duration, and for "before" / "after" a time ("after 10:00")."""
    if question_intent(question) in ("order", "when", "duration"):
        return None
    for token in _parse(question):
        word = token.lower_
        if word not in _PLACING:
            continue
        clause = None
        fronted = token.dep_ == "ROOT" and word in ("before", "after")
        if token.dep_ in ("mark", "advmod") and _opens_clause(token):
            clause = token.head
        elif fronted or (token.dep_ == "prep" and word in ("before", "after") and (
                token.head.pos_ == "VERB" or (token.head.pos_ == "AUX" and token.head.dep_ == "ROOT"))):
            clause = token
        if clause is not None:
            # the opening word, and a word before it saying how near ("right before", "just after")
            near = {t.i for t in clause.subtree if t.i < token.i and t.dep_ == "advmod" and t.head in (clause, token)}
            opening = near | {token.i} | ({t.i for t in token.subtree} if clause.i != token.i else set())
            if clause is token and _names_time(token):
                return None  # "before noon", "after 10:00": a time, not a happening
            timed = {t.i for c in clause.subtree if c is not token and c.dep_ == "prep" and _names_time(c) for t in c.subtree}
            words = []
            for t in sorted(clause.subtree, key=lambda t: t.i):  # a misparse need not keep the words' order
                if fronted and t.is_punct and t.i > token.i:
                    break  # the question the parser hung on the fronted phrase
                if t.i not in opening and t.i not in timed and not t.is_punct:
                    words.append(t.text)
            if words:
                return Placing(_PLACING[word], " ".join(words))
    return None


def _names_time(token) -> bool:  # noqa: ANN001 - spacy.tokens.Token
    """Whether a preposition's object is a time: a day, a part of it, a number ("on the morning
    of DAY3", "on day 2", "at 10:00", "before noon")."""
    return any(
        o.dep_ == "pobj" and (o.lemma_.lower() in DAY_NOUNS or o.lemma_.lower() in PERIODS or any(ch.isdigit() for ch in o.text))
        for o in token.children)


def asks_whereabouts(question: str) -> bool:
    """Whether a question asks where something is or was ("where were the keys?", "where is my
    phone now?"): "where" said of "be" — a state at a moment, not a doing ("where did I put the
    keys?", "where was I sitting?", which ask what happened)."""
    return any(t.lower_ == "where" and t.head.lemma_.lower() == "be" and t.head.dep_ != "aux" for t in _parse(question))


def relative_day(question: str) -> str | None:
    """The words by which a question places what it asks on a day relative to now ("what did we
    have for lunch yesterday?", "where did I go yesterday afternoon?", "who did I play cards
    with today?", "what did I buy last night?"): a relative day, or a part of the day said
    with one, said of the question's main verb (`_of_main_verb`). None where it is said of a
    thing ("Katrina's plans for today", "yesterday's dance") or of a clause inside the question
    ("who found out that the dog was not collected yesterday?" asks about now)."""
    for token in _parse(question):
        relative = token.lower_ in _RELATIVE_DAYS or (
            token.lemma_.lower() in PERIODS and any(c.lower_ in _RELATIVE_PARTS for c in token.children))
        if not relative:
            continue
        if token.dep_ == "pobj" and token.head.lower_ in _SPAN_PREPOSITIONS:
            if token.lower_ == "yesterday" and token.head.lower_ == "before" and _of_main_verb(token.head.head):
                return "the day before yesterday"
            continue  # "since yesterday", "after yesterday's game": a stretch from or to that day
        if _of_main_verb(token):
            said = [token, *(c for c in token.children if c.dep_ in ("det", "amod", "compound"))]
            return " ".join(t.lower_ for t in sorted(said, key=lambda t: t.i))
    return None


def question_actor(question: str) -> str | None:
    """Whose doing the question asks about, lower case: the person its main verb's subject
    names ("what did I get?" → i, "what did we eat?" → we, "which drink did Nicous take?" →
    nicous); None when the subject is what is asked ("who took the cola?"), a thing, or "you"."""
    for token in _parse(question):
        if token.dep_ in ("nsubj", "nsubjpass") and token.head.dep_ == "ROOT":
            if token.lower_ in WEARER or (token.pos_ == "PROPN" and token.is_title):
                return token.lower_
            return None
    return None


def asks_summary(question: str) -> bool:
    """Whether the question asks what a stretch of footage was mostly about: a summary, a sum
    up or a recap ("which best sums up the afternoon?"), what it was mainly, mostly or overall
    ("what was the morning mostly about?", "overall, how did I spend today?"), its main topic
    or theme, what best describes a stretch of time or the recording ("which best describes
    the first ten minutes?"; not "the woman's coat"), or what happens over such a stretch
    ("what happens in the last part of the video?", "what went on between 9:00 and 11:00?",
    "from minute 4 to minute 9, what took place?"; not "at 14:10", nor "between lunch and
    dinner", which names no stretch of the clock). Not a question that
    asks for a count, a time, a person or an order ("who mostly washes up?", "which happened earlier
    in the video, A or B?")."""
    if question_intent(question) in ("who", "count", "when", "order"):
        return False
    for token in _parse(question):
        word = token.lemma_.lower()
        if word in _SUMMARY_WORDS or token.lower_ in _SUMMARY_WORDS:
            return True
        if word == "sum" and any(c.dep_ == "prt" and c.lower_ == "up" for c in token.children):
            return True
        if token.lower_ in _MOSTLY:
            return True
        if word in _MAIN and token.head.lemma_.lower() in _TOPIC_NOUNS:
            return True
        if word == "describe" and any(c.dep_ in ("dobj", "npadvmod") and c.lemma_.lower() in _STRETCHES for c in token.children):
            return True
        if _happens(token) and token.dep_ == "ROOT" and any(
                (c.lower_ in ("between", "from") and any(t.like_num or t.pos_ == "NUM" for t in c.subtree))
                or any(o.lemma_.lower() in _STRETCHES for o in c.children if o.dep_ == "pobj")
                for c in token.children if c.dep_ == "prep" and c.lower_ in ("in", "during", "over", "between", "from")):
            return True  # "what happens in the last part of the video?", "what went on from 9:00 to 11:00?"
    return False


def _happens(verb) -> bool:  # noqa: ANN001 - spacy.tokens.Token
    """Whether a verb says that something happened: "happen", "occur", "unfold", "go on",
    "take place"."""
    word = verb.lemma_.lower()
    return word in _HAPPEN or (word == "go" and any(c.dep_ == "prt" and c.lower_ == "on" for c in verb.children)) \
        or (word == "take" and any(c.dep_ == "dobj" and c.lemma_.lower() == "place" for c in verb.children))


def meal_time(question: str) -> str | None:
    """The meal at whose hours a question places what it asks ("what did we have for lunch?",
    "who spilled juice during dinner?", "where did I eat breakfast?"), said of its main verb
    (`_of_main_verb`); None for a meal said of a thing or of a clause inside it ("what do we
    plan to eat for lunch?" may be planned at any hour, "tonight's dinner"), one the question
    is before or after ("what did I finish after lunch?"), or one something is for ("what did
    I buy for dinner?" may be bought at noon)."""
    for token in _parse(question):
        if token.lemma_.lower() not in MEALS or not _of_main_verb(token):
            continue
        verb = token.head.head if token.dep_ == "pobj" else token.head
        if token.dep_ == "pobj":
            preposition = token.head.lower_
            at_meal = preposition in _AT_MEAL or (preposition == "for" and verb.lemma_.lower() in _MEAL_VERBS)
        else:
            at_meal = token.dep_ in ("ROOT", "npadvmod") or verb.lemma_.lower() in _MEAL_VERBS
        if at_meal:
            return token.lemma_.lower()
    return None


def _of_main_verb(token) -> bool:  # noqa: ANN001 - spacy.tokens.Token
    """Whether a time word is said of the question's main verb: hung on it as an adverbial, or
    as the object of a preposition hung on it ("with today", "during lunch"). A fronted time
    ("During lunch today, who took …?") the parser may make the root itself, the question
    hung on it."""
    if token.dep_ == "ROOT":
        return True
    verb = token.head.head if token.dep_ == "pobj" and token.head.dep_ == "prep" else token.head
    said = ("npadvmod", "advmod", "pobj", "dobj", "nsubj", "attr")  # "how did I spend yesterday?", "what was today about?"
    return token.dep_ in said and verb.dep_ == "ROOT"  # the small model may tag the verb a noun


def asks_negated(question: str) -> bool:
    """Whether the question asks where or when something did not happen: its main verb is
    negated ("on which day did I not water the plants?", "which room has nobody cleaned?" is
    not: its negation is the subject's)."""
    return any(token.dep_ == "neg" and token.head.dep_ == "ROOT" for token in _parse(question))


def recording_words(question: str) -> frozenset[str]:
    """The words by which a question names the recording itself: a recording noun after a
    stretch of it ("the last few minutes of the video", "the end of the clip") or "throughout"
    ("throughout the film"). They are no content to look for, as every item is of the
    recording; "what did we see in the video on the phone?" names a video watched."""
    out = set()
    for token in _parse(question):
        word = token.lemma_.lower()
        if word not in _RECORDING_NOUNS or token.dep_ != "pobj":
            continue
        preposition = token.head
        if preposition.lower_ == "throughout" or (
                preposition.lower_ == "of" and preposition.head.lemma_.lower() in _STRETCH_NOUNS):
            out.add(word)
    return frozenset(out)


def recording_part(question: str) -> tuple[float, float] | None:
    """The share of the recording a question asks about, as (from, to) fractions of it: its
    middle third ("in the middle of the video", "at the midpoint of the recording", "halfway
    through"), or a part named from one end ("the last part of the video", "the second half",
    "the opening section", "the final quarter of the film": a half, a quarter, or a third for
    a part, section, segment or portion). None for the middle or a part of anything else (of
    a night, of a sofa, of cooking, "the first half of the match")."""
    for token in _parse(question):
        word = token.lemma_.lower()
        named = _of_nouns(token)
        of_recording = named <= _RECORDING_NOUNS
        if word in _MIDDLE_NOUNS and named and of_recording:
            return (1 / 3, 2 / 3)
        if word in _PART_SHARES and of_recording:
            share = _PART_SHARES[word]
            for side in (c.lower_ for c in token.children if c.dep_ == "amod" or c.lower_ in _PART_SIDES):
                if side in _PART_SIDES:
                    return (0.0, share) if _PART_SIDES[side] == "earliest" else (1 - share, 1.0)
                if side == "middle":
                    return (1 / 3, 2 / 3)
        if word in _MIDWAY:
            rest = [t for t in token.doc[token.i + 1 : token.i + 4] if t.lower_ not in ("the", "this")]
            if rest and rest[0].lower_ == "through" and (len(rest) == 1 or rest[1].is_punct
                                                          or rest[1].lemma_.lower() in _RECORDING_NOUNS):
                return (1 / 3, 2 / 3)
    return None


def recording_stretch(question: str) -> tuple[End, float] | None:
    """A stretch of time named from one end ("the first ten minutes", "the last hour of the
    video", "the opening minute"): that end and the seconds it lasts. None where it is of
    something other than the recording ("the first ten minutes of the match")."""
    for token in _parse(question):
        if token.lemma_.lower() not in _UNIT_NOUNS:
            continue
        sides = [_PART_SIDES[c.lower_] for c in token.children if c.dep_ == "amod" and c.lower_ in _PART_SIDES]
        if not sides or not _of_nouns(token) <= _RECORDING_NOUNS:
            continue
        count = [c for c in token.children if c.dep_ == "nummod"]
        try:
            n = number_value(count[0].lower_) if count else 1.0
        except (KeyError, ValueError):
            continue
        return sides[0], n * unit_seconds(token.lemma_.lower())
    return None


def _of_nouns(token) -> frozenset[str]:  # noqa: ANN001 - spacy.tokens.Token
    """The lemmas of what an "of" after a word names ("the middle of the video" → video)."""
    return frozenset(o.lemma_.lower() for c in token.children if c.lower_ == "of" for o in c.children if o.dep_ == "pobj")


def _names_part(token) -> bool:  # noqa: ANN001 - spacy.tokens.Token
    """Whether an ordinal or end word picks out a part of the recording ("the last part")."""
    return token.head is not token and token.head.lemma_.lower() in _PART_SHARES and token.head.i > token.i


def _ordinal(tokens: list) -> tuple[End, int, bool, frozenset[str]] | None:
    """(end, nth, sequence, words) for an ordinal past the first that counts occasions or
    happenings: on a noun of occasions ("the second time") or of happenings ("the third thing"),
    or on the verb ("which did I do second?"); counted from the latest end when "to last" / "from
    last" / "from the end" follows it or it is "penultimate". None for an ordinal of anything
    else ("the second floor", "the third day")."""
    for token in tokens:
        word = token.lower_
        # "second-to-last", "the third from last time": read on the words, which the parser links
        # in many ways
        rest = [t for t in token.doc[token.i + 1 : token.i + 5] if not t.is_punct and t.lower_ != "the"]
        from_end = len(rest) >= 2 and rest[0].lower_ in ("to", "from") and rest[1].lower_ in ("last", "end")
        if word == "penultimate":
            nth, latest = 2, True
        elif word in _ORDINALS:
            nth, latest = _ORDINALS[word], from_end
        else:
            continue
        head = token.head
        near = [*token.subtree, *(rest[2:3] if from_end else [])] + ([head] if head is not token else [])
        occasion = any(t.lemma_.lower() in _OCCASION_NOUNS and t.pos_ == "NOUN" for t in near)
        sequence = head is not token and (head.lemma_.lower() in _SEQUENCE_NOUNS or head.pos_ in ("VERB", "AUX"))
        if occasion or sequence:
            said = {word, token.lemma_.lower()} | ({"last", "end"} if latest else set())
            return ("latest" if latest else "earliest"), nth, not occasion, frozenset(said)
    return None


def _habit_change(token) -> End | None:  # noqa: ANN001 - spacy.tokens.Token
    """The end of the timeline a word asks about when it speaks of a habit that changed: the
    old one ("what did I use to drink?", "what do I no longer drink?", "not … anymore", "what
    did I stop eating?") is the earliest, the new one ("these days", "over the past two days",
    "what did I switch to?", "what did I replace coffee with?") the latest."""
    lemma = token.lemma_.lower()
    children = list(token.children)
    deps = {c.dep_ for c in children}
    if lemma == "use" and token.tag_ in ("VB", "VBD") and "nsubj" in deps and "auxpass" not in deps \
            and not any(c.dep_ == "dobj" and not _wh(c) for c in children) \
            and any(c.dep_ == "xcomp" and any(a.lower_ == "to" for a in c.children)
                    and not any(o.dep_ == "dobj" and not _wh(o) for o in c.children) for c in children):
        # "what did I use to drink?"; not "the oven was used to bake", "I used my phone to pay",
        # "what did I use to rinse the car?" (a tool: the verb has its own object)
        return "earliest"
    if (token.lower_ == "longer" and any(c.lower_ == "no" for c in children)) or token.lower_ == "anymore":
        return "earliest"
    if lemma in _STOP_VERBS and any(c.dep_ == "xcomp" and c.tag_ == "VBG" for c in children):
        return "earliest"
    if lemma in DAY_NOUNS and token.tag_ == "NNS" and any(
            c.lower_ in ("these", "past", "last", "recent") for c in children):
        return "latest"
    if lemma in _CHANGE_VERBS and any(c.dep_ == "prep" and c.lower_ in ("to", "with") and _asks_object(c)
                                      for c in children):
        return "latest"
    return None


def _wh(token) -> bool:  # noqa: ANN001 - spacy.tokens.Token
    """A question word, or a noun it determines ("what", "which lunch")."""
    return token.tag_ in ("WP", "WDT") or any(d.tag_ in ("WP", "WDT") for d in token.children)


def _asks_object(preposition) -> bool:  # noqa: ANN001 - spacy.tokens.Token
    """Whether a preposition's object is what the question asks for: none follows it ("what did
    I replace coffee with?"), or it is the question word ("to what"), or a verb ("change to
    drinking tea", "with what lunch"); not "switch the lamp to the desk"."""
    objects = [c for c in preposition.children if c.dep_ in ("pobj", "pcomp")]
    return not objects or any(_wh(c) or c.pos_ == "VERB" for c in objects)


@dataclass(frozen=True)
class Extreme:
    """A question asking which happening took the most or the least time: `longest` says which,
    `total` whether time is added up over every occasion ("spent the most time on") or measured on
    one ("took the longest")."""

    longest: bool
    total: bool


def duration_extreme(question: str) -> Extreme | None:
    """Whether the question asks which happening lasted longest or shortest: a superlative or
    comparative of "long" / "short" said of a verb ("which took the longest?", "what lasted
    longer, …?"), or "the most / least time", "the least amount of time", "most of my time"
    spent or taken; not one said of a thing ("the longest rope")."""
    for token in _parse(question):
        lemma, head = token.lemma_.lower(), token.head
        spent = head.lemma_.lower() == "spend" or any(t.lemma_.lower() == "spend" for t in head.ancestors)
        if lemma in ("long", "short") and token.tag_ in ("JJS", "RBS", "JJR", "RBR") and head.pos_ in ("VERB", "AUX"):
            return Extreme(longest=lemma == "long", total=spent)
        if lemma in ("most", "least", "much", "little") and token.tag_ == "JJS" and head.tag_ != "NNS":  # not "most times"
            of_time = head.lemma_.lower() in ("time", "amount") or (
                head.pos_ == "VERB" and any(c.lower_ == "of" for c in token.children))
            if of_time:
                return Extreme(longest=lemma in ("most", "much"), total=True)
    return None


_FREQUENT = frozenset({"often", "frequently", "times", "occasions"})
_RECUR = frozenset({"recur", "repeat", "return"})


def asks_every_day(question: str) -> bool:
    """Whether the question asks what happened on every day: "every day", "each morning", "on all
    three days", "every one of the days", "each of the days", "daily" ("all day" is the length
    of one day)."""
    for token in _parse(question):
        lemma = token.lemma_.lower()
        if lemma == "daily":
            return True
        if lemma not in DAY_NOUNS - {"week"}:
            continue
        determiners = {c.lower_ for c in token.children if c.dep_ in ("det", "predet")}
        if determiners & _EACH or ("all" in determiners and token.tag_ == "NNS"):
            return True
        if token.dep_ == "pobj" and token.head.lower_ == "of" and token.tag_ == "NNS":
            whole = token.head.head  # "each of the days", "every one of the days"
            if whole.lower_ in _EACH or (whole.lower_ == "one" and any(c.lower_ in _EACH for c in whole.children)):
                return True
    return False


_EACH = frozenset({"every", "each"})


def marks_present(question: str) -> bool:
    """Whether the question says it is asked while something goes on ("Now that I'm sitting on
    the sofa, …", "Tasha is flipping the egg tart now, …", "This time I came back to the claw
    machine, …", "…, currently"): "now" (not "just now", a moment ago), "currently",
    "presently", "at the moment" or "this time" said in it."""
    for token in _parse(question):
        word = token.lower_
        if word in _PRESENT_ADVERBS and not (token.i > 0 and token.nbor(-1).lower_ == "just"):
            return True  # "just now" is a moment ago
        if word == "time" and any(c.lower_ == "this" for c in token.children):
            return True
        if word == "moment" and token.head.lower_ == "at" and any(c.lower_ == "the" for c in token.children):
            return True
    return False


def frequency_extreme(question: str) -> bool | None:
    """Whether the question asks which happening came most often (True) or least often (False):
    a superlative or comparative of "often", "frequently" or "times" ("which did I do the most
    times?", "what happened more often, …?", "the fewest times"), or a happening that keeps
    coming back or recurs ("which activity keeps coming back?"). None for any other question
    ("the most time" is a duration, `duration_extreme`)."""
    for token in _parse(question):
        lemma, head = token.lemma_.lower(), token.head
        if lemma in ("most", "more", "least", "less", "few", "many") and token.tag_ in ("JJS", "RBS", "JJR", "RBR") \
                and head.lower_ in _FREQUENT:
            return lemma in ("most", "more", "many")
        if lemma == "keep" and any(c.dep_ == "xcomp" and (c.lemma_.lower() in _RECUR or (
                c.lemma_.lower() == "come" and any(p.lower_ == "back" for p in c.children))) for c in token.children):
            return True
        if lemma in _RECUR and token.dep_ == "ROOT" and not any(c.dep_ == "neg" for c in token.children):
            return True
    return None


_LATER = frozenset({"late", "later", "latter", "after", "afterwards", "afterward", "subsequently"})


def asks_later(question: str) -> bool:
    """Whether a question weighing two happenings asks for the later one: an end of time that is
    the latest ("which did I do last"), or a comparative of lateness ("later", "after")."""
    position = time_position(question)
    if position is not None:
        return position.end == "latest"
    return any(t.lemma_.lower() in _LATER or t.lower_ in _LATER for t in _parse(question))


_OCCUR = frozenset({"come", "happen", "occur", "take"})
"""Verbs that say only that something happened ("which came first?", "what took place?")."""


def occurrence_words(question: str) -> frozenset[str]:
    """The verb of a question whose subject is "which" or "what" and which says only that
    something happened ("which of these came first?", "what happened next?", "which took place
    last?"): a cue for the options' order or time, not content any of them must hold (one that
    says "comes to visit" would take it as support)."""
    doc = _parse(question)
    out = set()
    for token in doc:
        if token.lemma_.lower() in _OCCUR and token.pos_ in ("VERB", "AUX") and any(
                c.dep_ in ("nsubj", "nsubjpass") and (c.lower_ in ("which", "what")
                                                      or any(d.lower_ in ("which", "what") for d in c.children))
                for c in token.children):
            out.add(token.lemma_.lower())
            if token.lemma_.lower() == "take":
                out.add("place")
    return frozenset(out)


_FIRST_TO_LAST = re.compile(
    r"\b(?:first|earliest)\b(?:\s+\w+){0,6}?\s+(and|to|until|till)\s+(?:(?:the|my|his|her|their|our|your)\s+)?"
    r"(?:very\s+)?(?:last|latest|final)\b",
    re.IGNORECASE,
)
_APART = re.compile(r"\b(?:between|separat\w*|apart|elapsed?|passed)\b", re.IGNORECASE)


def first_to_last(question: str) -> bool:
    """Whether the question spans one happening from its first occasion to its last ("how much
    time separates Omar's first and last swim?", "how long from the first to the final call?"):
    two ordinals of one happening joined by "to", or by "and" in a question about the time
    between or apart ("how long were the first and the last walk?" asks for two durations)."""
    match = _FIRST_TO_LAST.search(question)
    return match is not None and (match.group(1).lower() != "and" or _APART.search(question) is not None)


def between_phrases(question: str) -> list[tuple[str, str]]:
    """The two happenings a question measures the time between: the words after "between" or
    "separate" ("how long between my lunch and the walk?", "how much time separated the call and
    the visit?"), split at an "and", every way it can be split ("Bob and Emma" may be one of
    them); or, for "how long after (before) X did Y?", X and Y (`_after_phrases`). [] when it
    names no two."""
    said = re.split(r"\b(?:between|separat(?:e|es|ed|ing))\b", question, maxsplit=1, flags=re.IGNORECASE)
    if len(said) < 2:
        return _after_phrases(question)
    parts = [p.strip(" ,") for p in re.split(r"\band\b", said[1].strip(" ?.!"), flags=re.IGNORECASE)]
    return [(" and ".join(parts[:k]), " and ".join(parts[k:])) for k in range(1, len(parts))]


def _after_phrases(question: str) -> list[tuple[str, str]]:
    """For a duration asked from one happening to another ("how long after the keys went into
    the drawer were they moved?", "how many minutes before lunch did I walk the dog?"): the
    happening after "after" / "before", up to the auxiliary that opens the question's own clause
    (hung on its main verb: "were", "did"), and that clause. [] for any other question."""
    if question_intent(question) != "duration":
        return []
    tokens = [t for t in _parse(question) if not t.is_punct]
    start = next((k for k, t in enumerate(tokens) if t.lower_ in ("after", "before")), None)
    if start is None:
        return []
    opens = next((k for k in range(start + 1, len(tokens))
                  if tokens[k].dep_ in ("aux", "auxpass") and tokens[k].head.dep_ == "ROOT"), None)
    if opens is None or opens == start + 1:
        return []
    happening = " ".join(t.text for t in tokens[start + 1 : opens])
    asked = " ".join(t.text for t in tokens[opens + 1 :])
    return [(happening, asked)] if asked else []


_SAID_DEPS = frozenset({"ccomp", "xcomp", "dobj", "attr", "oprd"})
"""Dependents of a verb of speech that hold what was said ("said [it was not jade]", "suggested
[ordering pizza]"); and a preposition of topic (`_ABOUT`: "told me [about the toothache]")."""
_ABOUT = frozenset({"about", "of", "on", "over", "regarding", "concerning"})


def what_was_said(question: str) -> frozenset[str]:
    """The lemmas of what the question says was said, by the subtrees a verb of speech governs
    (`_SAID_DEPS`), without the clauses that place it in time ("while I was fixing the bangle",
    "when we were hungry") nor who was told ("me"); empty when no verb of speech governs any."""
    out: set[str] = set()
    for token in _parse(question):
        if token.lemma_.lower() not in SPEECH_VERBS:
            continue
        for child in token.children:
            if child.pos_ == "PRON" or not (child.dep_ in _SAID_DEPS or (child.dep_ == "prep" and child.lower_ in _ABOUT)):
                continue
            placed = {t.i for c in child.subtree if c.dep_ == "advcl" for t in c.subtree}
            out |= {t.lemma_.lower() for t in child.subtree if t.i not in placed and not t.is_punct}
    return frozenset(out)


def asks_about_speech(question: str) -> bool:
    """Whether the question asks about something said: a verb of speech among its lemmas
    ("mention", "told", "was talking about") or a phrasal verb that means one ("brought up",
    "pointed out")."""
    if SPEECH_VERBS & set(lemmas(question)):
        return True
    return any((t.lemma_.lower(), c.lower_) in _SPEECH_PHRASAL for t in _parse(question) for c in t.children if c.dep_ == "prt")
